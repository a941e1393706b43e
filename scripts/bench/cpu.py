#!/usr/bin/env python3
"""Where a wrk run's CPU went: CPU time per request of each process of the stack, from /proc.

A request through the gateway costs CPU in the gateway, the service, PostgreSQL, Redis, the service's outbox relay
and event consumers, and wrk itself, all on the same cores. Throughput and latency say how much; this says where.

usage: cpu.py snapshot FILE        the cumulative user + system time of every process, by command name, into FILE
       cpu.py report NAME BEFORE AFTER WRK_OUTPUT WRK_CPU_SECONDS
                                   prints `cpu.NAME requests=… cores=… gateway=…µs …`: µs of CPU per request by
                                   command (the most first), `cores` the CPUs busy on average during the run, and
                                   `other` what no named process took (the kernel's softirqs, other tenants)
"""
import os, re, sys, time

TICKS = os.sysconf("SC_CLK_TCK")


def processes():
    """{command: seconds of user + system time}, summed over the processes (threads included) of each command."""
    totals = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # gone meanwhile
        # comm is in parentheses and may hold spaces; the fields after it are space-separated.
        command = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        seconds = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
        totals[command] = totals.get(command, 0.0) + seconds
    return totals


def busy_seconds():
    """Seconds all CPUs were busy since boot (everything but idle and iowait), from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return (sum(values) - values[3] - values[4]) / TICKS


def snapshot(path):
    with open(path, "w") as f:
        f.write(f"@busy {busy_seconds()} {time.monotonic()}\n")
        for command, seconds in processes().items():
            f.write(f"{seconds}\t{command}\n")


def read(path):
    busy, at, totals = 0.0, 0.0, {}
    with open(path) as f:
        for line in f:
            if line.startswith("@busy "):
                busy, at = (float(v) for v in line.split()[1:3])
                continue
            seconds, command = line.rstrip("\n").split("\t", 1)
            totals[command] = float(seconds)
    return busy, at, totals


def report(name, before_path, after_path, wrk_output, wrk_cpu):
    busy_before, start, before = read(before_path)
    busy_after, end, after = read(after_path)
    with open(wrk_output) as f:
        text = f.read()
    requests = int(re.search(r"(\d+) requests in ", text).group(1))
    used = {command: after.get(command, 0.0) - before.get(command, 0.0) for command in after}
    used["wrk"] = float(wrk_cpu)  # wrk ran and ended between the snapshots: its time is the shell's, not /proc's
    used = {command: value for command, value in used.items() if value > 0}
    busy = busy_after - busy_before
    used["other"] = max(0.0, busy - sum(used.values()))
    per_request = sorted(((value / requests * 1e6, command) for command, value in used.items()), reverse=True)
    shown = " ".join(f"{command}={micros:.0f}µs" for micros, command in per_request if micros >= 5)
    print(f"cpu.{name} requests={requests} cores={busy / (end - start):.2f} total={busy / requests * 1e6:.0f}µs {shown}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "snapshot":
        snapshot(sys.argv[2])
    elif len(sys.argv) == 7 and sys.argv[1] == "report":
        report(*sys.argv[2:])
    else:
        sys.exit(__doc__)
