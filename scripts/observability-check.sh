#!/usr/bin/env bash
# The monitoring files (infra/observability; docs/deploy.md, "Monitoring") checked without a running stack:
#   1. promtool check rules  infra/observability/prometheus/alerts.yaml
#   2. promtool test rules   infra/observability/prometheus/alerts.test.yaml (every alert has a firing test)
#   3. promtool check config infra/observability/prometheus/prometheus.yml (its scrape jobs = scrape.yaml's; the
#      Kubernetes job also replayed against the pods of Services/*/deploy/kubernetes.yaml)
#   4. the Grafana dashboard infra/observability/grafana/lantern.json: JSON, unique panel ids, a Prometheus
#      datasource variable used by every panel, every expr parsed by promtool
#   5. every metric name of every alert, test series and dashboard expr exists in MetricHelp.texts
#      (Shared/LanternHTTP/Observability.swift), or is `up`; `_bucket`/`_sum`/`_count` only on histograms (Timers).
# Installs nothing: promtool comes from Debian's prometheus package (scripts/lib.sh, ensure_packages --test).
# Exits non-zero, naming what is wrong, on the first step that fails.
source "$(dirname "$0")/lib.sh"

PROM="$ROOT/infra/observability/prometheus"
DASHBOARD="$ROOT/infra/observability/grafana/lantern.json"

command -v promtool >/dev/null 2>&1 || die "promtool is missing: install Debian's prometheus package (apt-get install prometheus; make test does it through ensure_packages --test)"
command -v python3 >/dev/null 2>&1 || die "python3 is missing"
python3 -c 'import yaml' 2>/dev/null || die "python3 cannot import yaml (PyYAML): pip install pyyaml"
for f in "$PROM/alerts.yaml" "$PROM/alerts.test.yaml" "$PROM/prometheus.yml" "$PROM/scrape.yaml" "$DASHBOARD"; do
  [ -f "$f" ] || die "missing ${f#$ROOT/}"
done

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

say "promtool check rules infra/observability/prometheus/alerts.yaml"
promtool check rules "$PROM/alerts.yaml" || die "alerts.yaml: promtool check rules failed (above)"

say "promtool test rules infra/observability/prometheus/alerts.test.yaml"
(cd "$PROM" && promtool test rules alerts.test.yaml) || die "alerts.test.yaml: a rule unit test failed (above: exp is the test's expectation, got what the rules produced)"

say "promtool check config infra/observability/prometheus/prometheus.yml"
if ! out="$(cd "$PROM" && promtool check config prometheus.yml 2>&1)"; then
  if grep -q "field kubernetes_sd_configs not found" <<< "$out"; then
    # Debian builds Prometheus without Kubernetes service discovery. Check everything else with promtool; the
    # Kubernetes job is replayed against the manifests by the Python step below.
    warn "this promtool has no Kubernetes service discovery (Debian's build): checking prometheus.yml without its kubernetes_sd_configs jobs"
    python3 - "$PROM/prometheus.yml" "$WORK/prometheus.yml" <<'PY' || die "could not write the reduced prometheus.yml"
import os, sys, yaml
source, target = sys.argv[1], sys.argv[2]
config = yaml.safe_load(open(source))
config["scrape_configs"] = [job for job in config.get("scrape_configs", []) if "kubernetes_sd_configs" not in job]
base = os.path.dirname(source)
config["rule_files"] = [f if os.path.isabs(f) else os.path.join(base, f) for f in config.get("rule_files", [])]
yaml.safe_dump(config, open(target, "w"), sort_keys=False)
PY
    promtool check config "$WORK/prometheus.yml" || die "prometheus.yml: promtool check config failed (above)"
  else
    printf '%s\n' "$out" >&2
    die "prometheus.yml: promtool check config failed (above)"
  fi
else
  printf '%s\n' "$out"
fi

say "dashboard, scrape jobs and metric names against MetricHelp.texts"
python3 - "$ROOT" "$WORK/dashboard-rules.yaml" <<'PY' || die "the checks above failed"
import glob, json, os, re, sys
import yaml

root, dashboard_rules = sys.argv[1], sys.argv[2]
prom = os.path.join(root, "infra/observability/prometheus")
dashboard_path = os.path.join(root, "infra/observability/grafana/lantern.json")
errors = []

def error(where, message):
    errors.append(f"{where}: {message}")

def rel(path):
    return os.path.relpath(path, root)

# ------------------------------------------------------------------------------ the metric names Lantern exposes
swift = os.path.join(root, "Shared/LanternHTTP/Observability.swift")
source = open(swift).read()
block = re.search(r"static let texts: \[String: String\] = \[(.*?)\n\s*\]", source, re.S)
if not block:
    sys.exit(f"xx {rel(swift)}: MetricHelp.texts not found (the regex expects `static let texts: [String: String] = [ … ]`)")
known = set(re.findall(r'^\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"\s*:', block.group(1), re.M))
if len(known) < 10:
    sys.exit(f"xx {rel(swift)}: only {len(known)} names parsed from MetricHelp.texts; the regex no longer matches the file")
# Each service's and app's own metrics: its `metricHelp` literal (registered with MetricHelp.register).
sources = glob.glob(os.path.join(root, "Shared/**/*.swift"), recursive=True) + glob.glob(os.path.join(root, "Services/*/Sources/**/*.swift"), recursive=True)
own = 0
for path in sources:
    for literal in re.findall(r"static let metricHelp: \[String: String\] = \[(.*?)\n\s*\]", open(path, errors="replace").read(), re.S):
        names = set(re.findall(r'^\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"\s*:', literal, re.M))
        own += len(names)
        known |= names
if own < 4:
    sys.exit("xx no `static let metricHelp: [String: String] = [ … ]` literals found in the services; the regex no longer matches them")
# Histograms are the swift-metrics Timers (LanternMetricsFactory.makeTimer); Recorders would be too, but none is used.
histograms = set()
for path in glob.glob(os.path.join(root, "Shared/**/*.swift"), recursive=True) + glob.glob(os.path.join(root, "Services/*/Sources/**/*.swift"), recursive=True):
    histograms |= set(re.findall(r'\b(?:Timer|Recorder)\(\s*label:\s*"([a-zA-Z_:][a-zA-Z0-9_:]*)"', open(path, errors="replace").read()))
for name in sorted(histograms - known):
    error(rel(swift), f"the histogram {name} (a Timer in the sources) has no entry in MetricHelp.texts")

FUNCTIONS = {
    # aggregation operators
    "sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk", "topk", "quantile",
    # functions (Prometheus 2.42)
    "abs", "absent", "absent_over_time", "acos", "acosh", "asin", "asinh", "atan", "atanh", "avg_over_time", "ceil",
    "changes", "clamp", "clamp_max", "clamp_min", "cos", "cosh", "count_over_time", "day_of_month", "day_of_week",
    "day_of_year", "days_in_month", "deg", "delta", "deriv", "exp", "floor", "histogram_count", "histogram_fraction",
    "histogram_quantile", "histogram_sum", "holt_winters", "hour", "idelta", "increase", "irate", "label_join",
    "label_replace", "last_over_time", "ln", "log10", "log2", "max_over_time", "min_over_time", "minute", "month", "pi",
    "predict_linear", "present_over_time", "quantile_over_time", "rad", "rate", "resets", "round", "scalar", "sgn", "sin",
    "sinh", "sort", "sort_desc", "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time", "tan", "tanh", "time",
    "timestamp", "vector", "year",
    # @ modifiers
    "start", "end",
}
KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset",
            "inf", "nan"}

def metric_names(expr):
    """The metric names an expression selects: PromQL with strings, label matchers, ranges and label lists removed;
    what is left that is neither a function (an identifier before `(`) nor a keyword is a metric name."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    text = re.sub(r"\$\{[^}]*\}|\$\w+", " ", text)             # Grafana variables ($__rate_interval, ${service})
    text = re.sub(r"#[^\n]*", " ", text)                        # comments
    text = re.sub(r"\{[^{}]*\}", " ", text)                     # label matchers
    text = re.sub(r"\[[^\[\]]*\]", " ", text)                   # ranges, subqueries
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", " ", text)
    names, unknown = [], []
    for match in re.finditer(r"(?<![\w.])[a-zA-Z_:][a-zA-Z0-9_:]*", text):
        word = match.group(0)
        if re.match(r"\s*\(", text[match.end():]):
            if word not in FUNCTIONS:
                unknown.append(word)
        elif word.lower() not in KEYWORDS:
            names.append(word)
    return names, unknown

def check_expr(where, expr):
    names, unknown = metric_names(expr)
    for function in unknown:
        error(where, f"unknown PromQL function {function}()")
    for name in names:
        base = re.sub(r"_(bucket|sum|count)$", "", name)
        if name == "up" or (name in known and name not in histograms):
            continue
        if name in histograms:
            error(where, f"{name} is a histogram: select {name}_bucket, _sum or _count")
        elif base != name and base in histograms:
            continue
        elif base != name and base in known:
            error(where, f"{name}: {base} is not a histogram (no {name[len(base):]} series)")
        else:
            close = sorted(k for k in known if k.split("_")[:2] == name.split("_")[:2])[:4]
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            error(where, f"metric {name} is not in MetricHelp.texts ({rel(swift)}){hint}")
    return names

# ------------------------------------------------------------------------------------------------- alert rules
alerts_path = os.path.join(prom, "alerts.yaml")
alerts = yaml.safe_load(open(alerts_path))
alert_names = []
for group in alerts.get("groups", []):
    for rule in group.get("rules", []):
        name = rule.get("alert") or rule.get("record")
        where = f"{rel(alerts_path)} {name}"
        check_expr(where, str(rule.get("expr", "")))
        if "alert" in rule:
            alert_names.append(rule["alert"])
            if rule.get("labels", {}).get("severity") not in ("critical", "warning", "info"):
                error(where, "labels.severity must be critical, warning or info")
            for key in ("summary", "description", "runbook"):
                if not rule.get("annotations", {}).get(key):
                    error(where, f"annotations.{key} is missing")
if len(set(alert_names)) != len(alert_names):
    error(rel(alerts_path), "an alert name is used twice")

# --------------------------------------------------------------------------------------------------- rule tests
tests_path = os.path.join(prom, "alerts.test.yaml")
tests = yaml.safe_load(open(tests_path))
fired = set()
for test in tests.get("tests", []):
    for series in test.get("input_series", []):
        name = re.match(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)", series["series"])
        check_expr(f"{rel(tests_path)} '{test.get('name')}'", name.group(1) if name else series["series"])
    for case in test.get("alert_rule_test", []):
        if case.get("exp_alerts"):
            fired.add(case["alertname"])
for name in alert_names:
    if name not in fired:
        error(rel(tests_path), f"no test expects {name} to fire")

# --------------------------------------------------------------------------------------------------- scrape jobs
scrape_path = os.path.join(prom, "scrape.yaml")
full_path = os.path.join(prom, "prometheus.yml")
jobs = yaml.safe_load(open(scrape_path)).get("scrape_configs", [])
full = yaml.safe_load(open(full_path))
if full.get("scrape_configs") != jobs:
    error(rel(full_path), "scrape_configs differ from scrape.yaml's (copy them over: scrape.yaml is the sample operators read)")
if "alerts.yaml" not in (full.get("rule_files") or []):
    error(rel(full_path), "rule_files does not name alerts.yaml")
for job in jobs:
    if not str(job.get("job_name", "")).startswith("lantern"):
        error(rel(scrape_path), f"job {job.get('job_name')}: the alerts select job=~\"lantern.*\"")

services = []
for line in open(os.path.join(root, "Services/services.tsv")):
    fields = line.split()
    if fields and not fields[0].startswith("#"):
        services.append((fields[0], int(fields[1])))

static = [job for job in jobs if "static_configs" in job]
if not static:
    error(rel(scrape_path), "no static job for make up")
for job in static:
    seen = {}
    for group in job["static_configs"]:
        for target in group.get("targets", []):
            seen[target] = group.get("labels", {}).get("service")
    for name, port in services:
        target = f"127.0.0.1:{port + 1000}"
        if seen.get(target) != name:
            error(rel(scrape_path), f"job {job['job_name']}: expected target {target} with service={name} (Services/services.tsv: operations port = port + 1000), found {seen.get(target)!r}")

def go_replacement(replacement):
    return re.sub(r"\$\{?(\d+)\}?", r"\\g<\1>", replacement)

def relabel(labels, rules):
    """Prometheus's relabeling (replace, keep, drop) over a dict; None when the target is dropped."""
    labels = dict(labels)
    for rule in rules:
        action = rule.get("action", "replace")
        value = rule.get("separator", ";").join(labels.get(s, "") for s in rule.get("source_labels", []))
        pattern = re.compile("^(?:" + str(rule.get("regex", "(.*)")) + ")$")
        match = pattern.match(value)
        if action == "keep" and not match:
            return None
        if action == "drop" and match:
            return None
        if action == "replace" and match:
            result = match.expand(go_replacement(str(rule.get("replacement", "$1"))))
            if result:
                labels[rule["target_label"]] = result
            else:
                labels.pop(rule["target_label"], None)
        if action not in ("keep", "drop", "replace"):
            raise ValueError(f"relabel action {action} is not simulated here")
    return labels

def sanitize(name):
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)

namespace = yaml.safe_load(open(os.path.join(root, "infra/k8s/base/kustomization.yaml"))).get("namespace", "default")
pod_jobs = [job for job in jobs if any(sd.get("role") == "pod" for sd in job.get("kubernetes_sd_configs", []))]
if not pod_jobs:
    error(rel(scrape_path), "no Kubernetes pod job")
manifests = sorted(glob.glob(os.path.join(root, "Services/*/deploy/kubernetes.yaml")))
for job in pod_jobs:
    where = f"{rel(scrape_path)} {job['job_name']}"
    for sd in job["kubernetes_sd_configs"]:
        names = sd.get("namespaces", {}).get("names")
        if names and namespace not in names:
            error(where, f"namespaces {names} leave out {namespace} (infra/k8s/base/kustomization.yaml)")
    found = set()
    for manifest in manifests:
        for doc in yaml.safe_load_all(open(manifest)):
            if not doc or doc.get("kind") != "Deployment":
                continue
            template = doc["spec"]["template"]
            meta = {"__meta_kubernetes_namespace": namespace, "__meta_kubernetes_pod_name": doc["metadata"]["name"] + "-7d9f8-abcde",
                    "__meta_kubernetes_pod_phase": "Running", "__metrics_path__": job.get("metrics_path", "/metrics"),
                    "__scheme__": job.get("scheme", "http")}
            for key, value in template["metadata"].get("labels", {}).items():
                meta["__meta_kubernetes_pod_label_" + sanitize(key)] = str(value)
            for key, value in template["metadata"].get("annotations", {}).items():
                meta["__meta_kubernetes_pod_annotation_" + sanitize(key)] = str(value)
            targets = []
            for container in template["spec"]["containers"]:
                for port in container.get("ports", []):
                    labels = dict(meta, __address__=f"10.1.2.3:{port['containerPort']}",
                                  __meta_kubernetes_pod_container_name=container["name"],
                                  __meta_kubernetes_pod_container_port_name=port.get("name", ""),
                                  __meta_kubernetes_pod_container_port_number=str(port["containerPort"]))
                    try:
                        result = relabel(labels, job.get("relabel_configs", []))
                    except (re.error, ValueError, KeyError) as problem:
                        error(where, f"relabel_configs: {problem}")
                        result = None
                    if result:
                        targets.append(result)
            name = template["metadata"].get("labels", {}).get("app.kubernetes.io/name")
            annotations = template["metadata"].get("annotations", {})
            ops = [p["containerPort"] for c in template["spec"]["containers"] for p in c.get("ports", []) if p.get("name") == "ops"]
            expected_address = f"10.1.2.3:{annotations.get('prometheus.io/port')}"
            if len(targets) != 1:
                error(where, f"{rel(manifest)} ({name}): {len(targets)} targets from one pod, expected 1")
                continue
            target = targets[0]
            found.add(target.get("service"))
            if ops and str(ops[0]) != str(annotations.get("prometheus.io/port")):
                error(rel(manifest), f"prometheus.io/port {annotations.get('prometheus.io/port')} is not the ops port {ops[0]}")
            if target["__address__"] != expected_address:
                error(where, f"{rel(manifest)}: scrapes {target['__address__']}, the annotation says {expected_address}")
            if target.get("__metrics_path__") != annotations.get("prometheus.io/path", "/metrics"):
                error(where, f"{rel(manifest)}: path {target.get('__metrics_path__')} instead of the annotation's")
            if target.get("service") != name:
                error(where, f"{rel(manifest)}: service label {target.get('service')!r}, expected {name!r} (app.kubernetes.io/name)")
    missing = {s for s, _ in services} - found
    if missing:
        error(where, f"no target for {', '.join(sorted(missing))}")

# ------------------------------------------------------------------------------------------------------ dashboard
try:
    dashboard = json.load(open(dashboard_path))
except json.JSONDecodeError as problem:
    sys.exit(f"xx {rel(dashboard_path)} is not valid JSON: {problem}")
where = rel(dashboard_path)
if not isinstance(dashboard.get("schemaVersion"), int) or dashboard["schemaVersion"] < 36:
    error(where, f"schemaVersion {dashboard.get('schemaVersion')} (36 or later expected)")
variables = {v.get("name"): v for v in dashboard.get("templating", {}).get("list", [])}
datasource = [n for n, v in variables.items() if v.get("type") == "datasource" and v.get("query") == "prometheus"]
if not datasource:
    error(where, "no datasource variable of type prometheus in templating.list")
references = {f"${{{n}}}" for n in datasource} | {f"${n}" for n in datasource}
if variables.get("service", {}).get("type") != "query":
    error(where, "no `service` query variable")
for name, variable in variables.items():
    if variable.get("type") == "query":
        query = variable.get("query")
        query = query.get("query", "") if isinstance(query, dict) else str(query or "")
        selector = re.match(r"\s*label_values\((.*),\s*\w+\)\s*$", query)
        check_expr(f"{where} variable {name}", selector.group(1) if selector else query)
        if (variable.get("datasource") or {}).get("uid") not in references:
            error(where, f"variable {name} does not use the datasource variable")

def walk(panels):
    for panel in panels:
        yield panel
        yield from walk(panel.get("panels", []))

ids, exprs = {}, []
panels = list(walk(dashboard.get("panels", [])))
if not panels:
    error(where, "no panels")
for panel in panels:
    title = panel.get("title", "?")
    if "id" not in panel:
        error(where, f"panel '{title}' has no id")
    elif panel["id"] in ids:
        error(where, f"panel id {panel['id']} is used by '{ids[panel['id']]}' and '{title}'")
    else:
        ids[panel["id"]] = title
    if "gridPos" not in panel:
        error(where, f"panel '{title}' has no gridPos")
    if panel.get("type") == "row":
        continue
    if (panel.get("datasource") or {}).get("uid") not in references:
        error(where, f"panel '{title}' does not use the datasource variable")
    if not panel.get("targets"):
        error(where, f"panel '{title}' has no query")
    for target in panel.get("targets", []):
        expr = target.get("expr", "")
        if not expr:
            error(where, f"panel '{title}' query {target.get('refId')} has no expr")
            continue
        check_expr(f"{where} panel '{title}'", expr)
        exprs.append((panel.get("id"), target.get("refId", "A"), title, expr))

# Every expr through promtool's parser, with Grafana's variables replaced by what they stand for.
rules = []
for panel_id, ref, title, expr in exprs:
    text = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m").replace("$__range", "6h")
    text = re.sub(r"\$\{?\w+(?::\w+)?\}?", ".*", text)
    rules.append({"record": f"dashboard:panel_{panel_id}_{ref}", "expr": text, "labels": {"panel": title}})
yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, open(dashboard_rules, "w"), sort_keys=False, allow_unicode=True)

if errors:
    print("\n".join("xx " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print(f"  {len(known)} metric names in MetricHelp.texts ({len(histograms)} histograms); "
      f"{len(alert_names)} alerts, all with a firing test; {len(exprs)} dashboard queries in {len(panels)} panels; "
      f"{len(jobs)} scrape jobs ({len(manifests)} Kubernetes manifests replayed)")
PY

say "promtool: every dashboard query parses"
out="$(promtool check rules "$WORK/dashboard-rules.yaml" 2>&1)" || { printf '%s\n' "$out" >&2; die "lantern.json: a dashboard expr is not valid PromQL (record dashboard:panel_<id>_<refId> above)"; }
grep -o "SUCCESS: .*" <<< "$out" | sed 's/^/  /'

say "observability files OK"
