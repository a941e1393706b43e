/* Preloaded into the gateway under valgrind 3.19 (Debian 12) for `make bench`'s instruction counts only.
 * valgrind writes into the signal mask passed to rt_sigsuspend; libdispatch (the main thread of every Swift async
 * executable ends in dispatch_main) passes a mask in read-only memory, and valgrind dies. This passes a copy. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
