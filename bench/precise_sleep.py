#!/usr/bin/env python3
"""Benchmark of the precise sleep (`make bench`; figures, not a test).

One run on this host, side by side at 10 us, 100 us, 1 ms, 10 ms, 100 ms and 1 s:

  auto             sleepacc.Sleeper("auto"): learned per-band margin, the
                   default 50 us hand-off (the end is polled from Python)
  auto handoff=0   the same, spun to the end in C with the GIL released
  hybrid 125us     sleepacc.Sleeper("hybrid", margin=125e-6) (spin_sleep's default)
  comp             sleepacc.Sleeper("comp"): irtt's ratio compensation
  spin             sleepacc.Sleeper("spin")
  timerfd          sleepacc.Sleeper("timerfd"): the slack-free kernel wait (the
                   best kernel method here; auto must never lose to it)
  clock_nanosleep  sleepacc.Sleeper("clock_nanosleep"): plain relative kernel sleep
  time.sleep       Python's own
  irtt sleep       `irtt sleep` (Debian package irtt), parsed: it reports a
                   mean error only, so it is printed apart

Every row is measured the same way, from Python, as a user sees it:
deadline = time.monotonic_ns() + d, sleep to it, error = time.monotonic_ns()
- deadline (time.sleep: t0 + d).  A second table gives, for the same
sleeps, the error the core itself saw at its return (Sleeper.last_wake_ns -
deadline): what a C caller gets, without the interpreter's way back, which
is cold in the CPU caches after a wait of milliseconds on a shared VM.  Columns: median, p99,
p99.9 and max |error|, and CPU % = thread CPU time / wall time.  Statistics and the table
come from the C core (sleepacc._core.stats / table).  Every row first runs a
few warm-up sleeps that are not counted (auto and comp learn from them), and
the rows take turns in 5 rounds per duration, so a change in the host's load
during the run is shared by all rows.

Then the same table under `stress-ng --cpu N`, N the CPU count (bounded by
--timeout), when stress-ng is installed, with auto's decision and reason
(Sleeper.stats) and auto's p50/p99/p99.9 against timerfd's; then the time
auto takes to leave its contended state once the load ends (the recovery).
Under load too, the tail counted: how many of thousands of auto and timerfd
sleeps (taking turns) ended over 0.5 ms and 2 ms late, after 1.5 s of
warm-up; a p99.9 of 150 sleeps is only their largest.  Last, a partial
load (`stress-ng --cpu N/2`): whether auto flaps between its states when
only some CPUs are busy, and its 1 ms sleeps against timerfd's there.
Usage: python3 bench/precise_sleep.py [--quick] [--no-load]
"""
import argparse
import array
import os
import re
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import sleepacc  # noqa: E402
from _stress import cpu_hog  # noqa: E402
from sleepacc import _core  # noqa: E402

DURATIONS_NS = [10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000]
# samples per duration (about 0.1, 1, 1, 1.5, 2.5 and 5 s of sleeping per row)
SAMPLES = {10_000: 5000, 100_000: 3000, 1_000_000: 1000, 10_000_000: 150, 100_000_000: 25,
           1_000_000_000: 5}
WARMUP = {10_000: 200, 100_000: 100, 1_000_000: 60, 10_000_000: 20, 100_000_000: 5,
          1_000_000_000: 1}
# sleeps not counted when a row's turn comes again (auto re-settles after
# the rows before it); none at 1 s, where each costs a second per row
RESETTLE = {1_000_000_000: 0}
ROWS = ["auto", "auto handoff=0", "hybrid 125us", "comp", "spin", "timerfd", "clock_nanosleep",
        "time.sleep"]


def make_sleeper(row):
    if row == "hybrid 125us":
        return sleepacc.Sleeper("hybrid", margin=125e-6)
    if row == "auto handoff=0":
        return sleepacc.Sleeper("auto", handoff=0)
    if row == "time.sleep":
        return None
    return sleepacc.Sleeper(row)


def measure(row, sleeper, d_ns, n, warm):
    """Errors (ns, |actual - requested|) of n sleeps of d_ns as seen from
    Python and as seen by the core (None for time.sleep), thread CPU ns and
    wall ns of those n sleeps."""
    mono, cpu = time.monotonic_ns, time.thread_time_ns
    errs = array.array("q", bytes(8 * n))
    core = None
    if sleeper is None:
        d_s = d_ns / 1e9
        for _ in range(warm):
            time.sleep(d_s)
        c0, w0 = cpu(), mono()
        for i in range(n):
            t0 = mono()
            time.sleep(d_s)
            errs[i] = abs(mono() - t0 - d_ns)
    else:
        until = sleeper.sleep_until
        core = array.array("q", bytes(8 * n))
        for _ in range(warm):
            until(mono() + d_ns)
        c0, w0 = cpu(), mono()
        for i in range(n):
            dl = mono() + d_ns
            until(dl)
            errs[i] = abs(mono() - dl)
            core[i] = sleeper.last_wake_ns - dl
    c1, w1 = cpu(), mono()
    return errs, core, c1 - c0, w1 - w0


ROUNDS = 5


def run_table(scale):
    """Measure every row at every duration; returns {(row, d): (stats, cpu)}
    and the auto sleeper (for its margins).  Rows take turns in ROUNDS
    rounds per duration, so a change in the host's load during the run is
    shared by every row instead of landing on one."""
    sleepers = {row: make_sleeper(row) for row in ROWS}
    out = {}
    for d in DURATIONS_NS:
        n = max(min(ROUNDS * 2, SAMPLES[d]), int(SAMPLES[d] * scale)) // ROUNDS
        warm = max(min(2, WARMUP[d]), int(WARMUP[d] * scale))
        resettle = RESETTLE.get(d, 2)
        acc = {row: [array.array("q"), array.array("q"), 0, 0] for row in ROWS}
        for r in range(ROUNDS):
            for row in ROWS:
                # the first round warms up (auto and comp learn); later
                # rounds re-settle after the previous row
                errs, core, cpu_ns, wall_ns = measure(row, sleepers[row], d, n,
                                                      warm if r == 0 else resettle)
                a = acc[row]
                a[0].extend(errs)
                if core is not None:
                    a[1].extend(core)
                a[2] += cpu_ns
                a[3] += wall_ns
        for row in ROWS:
            errs, core, cpu_ns, wall_ns = acc[row]
            cpu = 100.0 * cpu_ns / wall_ns
            out[(row, d)] = (_core.stats(errs, 0), cpu, _core.stats(core, 0) if core else None)
    return out, sleepers["auto"]


def render(results, core=False):
    """The table: the core's statistics (its wide table's columns, and p99.9)."""
    fmt = _core.format_duration
    head = ("method", "requested", "n", "median err", "p99 err", "p99.9 err", "max err", "CPU %")
    cells = [head]
    for d in DURATIONS_NS:
        for row in ROWS:
            st, cpu, cst = results[(row, d)]
            if core:
                if cst is None:
                    continue
                st = cst
            cells.append((row, fmt(d), str(st["n"]), fmt(abs(st["median"])), fmt(abs(st["p99"])),
                          fmt(abs(st["p999"])), fmt(abs(st["max"])), f"{cpu:.1f}"))
    width = [max(len(r[c]) for r in cells) for c in range(len(head))]
    lines = ["  ".join(r[c].ljust(width[c]) if c == 0 else r[c].rjust(width[c])
                       for c in range(len(head))).rstrip() for r in cells]
    return "\n".join(lines) + "\n"


def margins_line(auto):
    m = auto.stats["margins"]
    parts = [f"{_core.format_duration(lo)}+: {_core.format_duration(v)}" for lo, v in sorted(m.items())]
    return "auto's learned margins per band (band lower bound: margin): " + ", ".join(parts)


def ratio(a, b):
    if b == 0:
        return "inf" if a else "1.0"
    return f"{a / b:.3g}"


def ratios(results, loaded):
    lines = []
    for d in DURATIONS_NS:
        auto = results[("auto", d)][0]["median"]
        ts = results[("time.sleep", d)][0]["median"]
        cns = results[("clock_nanosleep", d)][0]["median"]
        verdict = "<=" if auto <= cns else ">"
        lines.append(f"  {_core.format_duration(d):>6}: time.sleep/auto median error = "
                     f"{ratio(ts, max(auto, 1))}x; auto {_core.format_duration(auto)} {verdict} "
                     f"clock_nanosleep {_core.format_duration(cns)}")
    if loaded:
        # the tail against the slack-free kernel wait, seen by the core
        for d in DURATIONS_NS:
            a, t = results[("auto", d)][2], results[("timerfd", d)][2]
            parts = []
            for q in ("median", "p99", "p999"):
                av, tv = abs(a[q]), abs(t[q])
                parts.append(f"{'p50' if q == 'median' else q.replace('p999', 'p99.9')} "
                             f"{_core.format_duration(av)} {'<=' if av <= tv else '>'} "
                             f"{_core.format_duration(tv)} ({ratio(av, max(tv, 1))}x)")
            lines.append(f"  {_core.format_duration(d):>6}: auto vs timerfd (core): "
                         + "; ".join(parts))
    head = "ratios" + (" under load" if loaded else "") + ":"
    return "\n".join([head] + lines)


def decision_line(auto):
    st = auto.stats
    pressure = "unknown" if st["cpu_pressure"] < 0 else f"{st['cpu_pressure']:.2f}"
    return (f"auto's state: contended {st['contended']}, decision {st['decision']!r}, "
            f"reason {st['reason']!r}, CPU pressure {pressure}, run-queue wait per time on a CPU "
            f"{st['wake_delay_ns']} ns, contended episodes {st['contended_episodes']}")


def recovery(auto, limit_s=10.0):
    """Seconds from now (the load just ended) until auto leaves its contended
    state, sleeping 1 ms at a time; None when it did not within limit_s."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if not auto.stats["contended"]:
            return time.monotonic() - t0
        auto.sleep(1e-3)
    return None


IRTT_WANT = {"100µs": 100_000, "1ms": 1_000_000, "10ms": 10_000_000, "100ms": 100_000_000}


def irtt_sleep():
    """irtt sleep's mean error per duration (ns), or a note why not."""
    exe = shutil.which("irtt")
    if not exe:
        return None, "irtt sleep: skipped (irtt is not installed; apt-get install irtt)"
    try:
        proc = subprocess.run([exe, "sleep"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None, "irtt sleep: skipped (did not finish within 120 s)"
    got = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s*(\S+)\s+(\S+)\s+([\d.]+)\s*$", line)
        if m and m.group(1) in IRTT_WANT:
            got[IRTT_WANT[m.group(1)]] = m.group(2)
    if not got:
        return None, "irtt sleep: skipped (could not parse its output)"
    return got, None


def irtt_line(got, note):
    if note:
        return note
    parts = [f"{_core.format_duration(d)}: {got.get(d, '?')}" for d in DURATIONS_NS]
    return "irtt sleep (Go timer; irtt reports the MEAN error only): " + ", ".join(parts)


def harness_floor(n=20000):
    """Median ns seen from Python for a Sleeper call that does not sleep
    (a past deadline): the part of every row's error that is the harness."""
    s, mono = sleepacc.Sleeper(), time.monotonic_ns
    errs = array.array("q", bytes(8 * n))
    for i in range(n):
        dl = mono()
        s.sleep_until(dl - 1)
        errs[i] = mono() - dl
    return _core.stats(errs, 0)["median"]


def cold_floor(idle_s=0.01, n=30):
    """The same no-op call timed right after idling idle_s in time.sleep:
    what the interpreter's way back costs when the caches went cold during
    a wait, whatever the sleep (median ns)."""
    s, mono = sleepacc.Sleeper(), time.monotonic_ns
    errs = array.array("q", bytes(8 * n))
    for i in range(n):
        time.sleep(idle_s)
        t0 = mono()
        s.sleep_until(t0 - 1)
        errs[i] = mono() - t0
    return _core.stats(errs, 0)["median"]


def one_table(title, scale, loaded):
    t0 = time.monotonic()
    load1 = os.getloadavg()[0]
    results, auto = run_table(scale)
    got, note = irtt_sleep()
    print(f"== {title} (load average at start {load1:.2f}, {time.monotonic() - t0:.0f} s; "
          f"harness floor {harness_floor()} ns, {cold_floor()} ns right after idling 10 ms)")
    print("seen from Python (time.monotonic_ns() after the call returns):")
    print(render(results), end="")
    print("seen by the core at its return (Sleeper.last_wake_ns; what a C caller gets):")
    print(render(results, core=True), end="")
    print(irtt_line(got, note))
    print(margins_line(auto))
    print(decision_line(auto))
    print(ratios(results, loaded))
    print()
    return results, auto


# The tail, counted: sleeps that ended over 0.5 ms / 2 ms late (the core's
# own clock read), auto against timerfd taking turns in blocks, after
# WARM_S of sleeping under the load (so auto's start-up, before it saw
# the load, is left out).  A p99.9 of 150 sleeps is their largest; these
# counts over thousands say how often each loses a slice.
TAIL = [(100_000, 20000, 100), (1_000_000, 5000, 50), (10_000_000, 600, 10)]
WARM_S = 1.5


def tail_counts(scale):
    mono = time.monotonic_ns
    lines = ["the tail under load, counted by the core (auto and timerfd taking turns",
             f"in blocks, after {WARM_S:g} s of warm-up): sleeps over 0.5 ms and 2 ms late",
             "                      over 0.5 ms       over 2 ms            p99.9",
             "  requested      n   auto  timerfd    auto  timerfd       auto     timerfd"]
    for d, n, block in TAIL:
        n = max(block * 2, int(n * scale)) // block * block
        pair = {"auto": sleepacc.Sleeper("auto"), "timerfd": sleepacc.Sleeper("timerfd")}
        end = mono() + int(WARM_S * 1e9)
        while mono() < end:
            for s in pair.values():
                s.sleep_until(mono() + d)
        late = {k: array.array("q") for k in pair}
        for _ in range(n // block):
            for k, s in pair.items():
                for _ in range(block):
                    dl = mono() + d
                    s.sleep_until(dl)
                    late[k].append(s.last_wake_ns - dl)
        over = {k: (sum(x > 500_000 for x in v), sum(x > 2_000_000 for x in v))
                for k, v in late.items()}
        p999 = {k: _core.format_duration(_core.stats(v, 0)["p999"]) for k, v in late.items()}
        lines.append(f"  {_core.format_duration(d):>9} {n:>6} {over['auto'][0]:>6} "
                     f"{over['timerfd'][0]:>8} {over['auto'][1]:>7} {over['timerfd'][1]:>8} "
                     f"{p999['auto']:>10} {p999['timerfd']:>11}")
        for s in pair.values():
            s.close()
    return "\n".join(lines)


# Partial load: half the CPUs busy, so a woken thread usually finds a free
# CPU but not always.  auto and timerfd take turns in blocks of 1 ms sleeps;
# after each of auto's blocks its state is read, so a flapping state shows
# as many changes.
PARTIAL_BLOCK, PARTIAL_BLOCKS = 50, 100


def partial_load(stress, ncpu, scale):
    k = max(1, ncpu // 2)
    blocks = max(10, int(PARTIAL_BLOCKS * scale))
    mono = time.monotonic_ns
    with cpu_hog(stress, k, 60) as proc:
        time.sleep(1.0)
        if proc.poll() is not None:
            return "partial load: skipped (stress-ng exited at once)"
        pair = {"auto": sleepacc.Sleeper("auto"), "timerfd": sleepacc.Sleeper("timerfd")}
        late = {k_: array.array("q") for k_ in pair}
        states, t0 = [], mono()
        for _ in range(blocks):
            for name, s in pair.items():
                for _ in range(PARTIAL_BLOCK):
                    dl = mono() + 1_000_000
                    s.sleep_until(dl)
                    late[name].append(s.last_wake_ns - dl)
            states.append(pair["auto"].stats["contended"])
        took = (mono() - t0) / 1e9
        episodes = pair["auto"].stats["contended_episodes"]
        for s in pair.values():
            s.close()
    fmt = _core.format_duration
    changes = sum(a != b for a, b in zip(states, states[1:]))
    st = {k_: _core.stats(v, 0) for k_, v in late.items()}
    over = {k_: sum(x > 500_000 for x in v) for k_, v in late.items()}
    n = len(late["auto"])
    lines = [f"partial load (stress-ng --cpu {k} of {ncpu} CPUs), {took:.0f} s of 1 ms sleeps,",
             f"auto and timerfd taking turns in blocks of {PARTIAL_BLOCK}: auto contended after "
             f"{sum(states)} of {blocks} blocks,",
             f"{changes} changes of state, {episodes} contended episodes; seen by the core:"]
    for name in pair:
        lines.append(f"  {name:>8}: p50 {fmt(st[name]['median'])}, p99 {fmt(st[name]['p99'])}, "
                     f"p99.9 {fmt(st[name]['p999'])}, over 0.5 ms {over[name]} of {n}")
    return "\n".join(lines)


def thread_slack_ns():
    try:
        with open(f"/proc/{threading.get_native_id()}/timerslack_ns") as f:
            return int(f.read())
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="a tenth of the samples")
    ap.add_argument("--no-load", action="store_true", help="skip the stress-ng table")
    args = ap.parse_args()
    scale = 0.1 if args.quick else 1.0
    s = sleepacc.Sleeper()
    print(f"sleepacc {sleepacc.__version__}: precise sleep benchmark; auto's kernel wait is "
          f"{s.stats['kernel']}, clock read {s.stats['clock_cost_ns']} ns, timer slack "
          f"{thread_slack_ns()} ns, {os.cpu_count()} CPUs")
    print("errors are |actual - requested| seen from Python; p99 of n < 100 samples is "
          "close to the max;\nthe harness floor is the median error of a Sleeper call that does "
          "not sleep (Python's own overhead),\nwarm and right after a 10 ms time.sleep (the "
          "caches went cold: the floor of any wait that idles)\n")
    one_table("idle", scale, loaded=False)
    if args.no_load:
        return
    stress = shutil.which("stress-ng")
    if not stress:
        print("== under load: skipped (stress-ng is not installed; apt-get install stress-ng)")
        return
    budget = int(320 * max(scale, 0.2)) + 30  # bounded even if we die
    ncpu = os.cpu_count() or 1
    auto = None
    with cpu_hog(stress, ncpu, budget) as proc:
        time.sleep(1.0)
        if proc.poll() is not None:
            print("== under load: skipped (stress-ng exited at once)")
            return
        _, auto = one_table(f"under stress-ng --cpu {ncpu}", scale, loaded=True)
        if proc.poll() is None:
            print(tail_counts(scale))
            print()
    if auto is not None:
        took = recovery(auto)
        print("recovery: " + (f"auto left its contended state {took * 1e3:.0f} ms after the "
                              f"load ended" if took is not None else
                              "auto was still contended 10 s after the load ended (the host "
                              "is busy with other work?)") + "; " + decision_line(auto))
    print()
    print(partial_load(stress, ncpu, scale))


if __name__ == "__main__":
    main()
