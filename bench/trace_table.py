#!/usr/bin/env python3
"""The trace tables on this host (figures, not a test): each sample's
lateness in its six terms, traced from the kernel (sleepacc.trace).

  1. nanosleep, clock_nanosleep_abs, timerfd, select, epoll_wait and futex at
     1 ms, with timer slack 50 us and 1 ns: per term median and p99 over the
     complete samples, the complete count, lateness traced against untraced;
  2. nanosleep at 1 ms, slack 1 ns, pinned to one CPU: without a spinner,
     then with a nice-19 spinner pinned to it (the timer interrupt of a
     halted vCPU against a running one).  Each table counts the samples
     whose CPU was idle and busy at the expiry and splits timer_irq so: on a
     shared machine "no spinner" is not "idle".

Needs root (or CAP_DAC_OVERRIDE) and tracefs.  The machine may be shared: say
so next to any figure quoted from here.
Usage: python3 bench/trace_table.py [-n N] [--json]
"""
import argparse
import json
import os
import subprocess
import sys
import time

import sleepacc
from sleepacc.trace import format_table

METHODS = ("nanosleep", "clock_nanosleep_abs", "timerfd", "select", "epoll_wait", "futex")
SLACKS = (50_000, 1)


def spinner(cpu):
    """A nice-19 busy loop pinned to cpu (bounded: 120 s), started now."""
    code = "import os, time\nos.sched_setaffinity(0, {%d})\nend = time.monotonic() + 120\n" \
           "while time.monotonic() < end: pass\n" % cpu
    return subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", code])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=300, help="samples per run (traced and untraced)")
    ap.add_argument("--json", action="store_true", help="the summaries as JSON")
    a = ap.parse_args()
    out = []

    def show(title, t):
        out.append({"title": title, **t.summary()})
        if not a.json:
            print(f"== {title}\n{format_table(t)}\n", flush=True)

    for slack in SLACKS:
        for m in METHODS:
            show(f"{m} 1 ms, slack {slack} ns", sleepacc.trace(m, 1e-3, n=a.n, slack=slack))
    cpu = sorted(os.sched_getaffinity(0))[0]
    show(f"nanosleep 1 ms, slack 1 ns, cpu {cpu}, no spinner (idle unless other work runs there)",
         sleepacc.trace("nanosleep", 1e-3, n=a.n, slack=1, cpu=cpu))
    spin = spinner(cpu)
    try:
        time.sleep(0.2)
        show(f"nanosleep 1 ms, slack 1 ns, cpu {cpu}, busy: a nice-19 spinner on it",
             sleepacc.trace("nanosleep", 1e-3, n=a.n, slack=1, cpu=cpu))
    finally:
        spin.kill()
        spin.wait()
    if a.json:
        print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
