#!/usr/bin/env python3
"""Benchmark: a 60 Hz frame loop, what users would pick instead of sleepacc
(`make bench-frames`; figures, not a test).

Side by side in one run, each row pacing an empty frame loop at 60 Hz:

  pygame tick(60)            pygame.time.Clock().tick(60): SDL_Delay in whole ms
  pygame tick_busy_loop(60)  pygame.time.Clock().tick_busy_loop(60): spins
  Pacer(1/60) auto           sleepacc.Pacer(1/60): timerfd + learned spin margin
  Pacer(1/60) clock_nanosleep  sleepacc.Pacer(1/60, method="clock_nanosleep")
  ... slice=100us            the same Pacers holding the thread's scheduler
                             slice at 100 us (opt-in, Linux 6.12+)
  Python spin                `while time.monotonic_ns() < deadline: pass` to
                             the ideal schedule: the limit seen from Python

Every row is timed the same way, from Python, right after its wait returns
(t_k = time.monotonic_ns()):

  interval error   |t_k - t_(k-1) - 1/60 s|       (what a frame-time graph shows)
  lateness         t_k - ideal_k: the Pacer's own deadlines (start + k/60 s),
                   the spin's, and for pygame t_0 + k/60 s from its first frame
  drift            the lateness of the last frame (a relative pacer walks off)
  CPU              thread CPU time / wall time over the row's frames

The rows take turns in ROUNDS rounds of FRAMES frames (each round starts a
new schedule, so drift is over FRAMES frames = FRAMES/60 s), so a change in
the host's load is shared by all rows.  Last line: auto's lateness as a ratio
to the Python spin's, the limit seen from Python.

Then the same rows under `stress-ng --cpu N` (N the CPU count; bounded by
its --timeout) when stress-ng is installed (--no-load skips it), with the
loaded auto Pacer's p99 interval error against the clock_nanosleep Pacer's;
and under the same load once more with WORK ms of busy work in each frame
(--work, default 2; 0 skips that table), as a game's frame has: a thread
that spends its share on work between waits is the one whose wake-ups wait
for a tick, and the one the slice is for.

    SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy python bench/frame_pacing.py [--rounds N] [--frames N] [--work MS] [--no-load]

pygame comes from PyPI (`pip install pygame`, the bench extra); without it
its rows are left out, saying so.
"""
import argparse
import os
import shutil
import sys
import time

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

import sleepacc  # noqa: E402
from _stress import cpu_hog  # noqa: E402

PERIOD_NS = 1_000_000_000 // 60   # 16.666 ms (the ideal schedule uses the exact k/60 s)
WARMUP = 10                       # frames per round not counted (auto learns from them)
SLICE = 100e-6                    # the slice rows' opt-in (the kernel's least slice)


def ideal_ns(t0, k):
    return t0 + (k * 1_000_000_000) // 60


def busy(ns):
    """A frame's own work: ns of busy CPU time in Python (0: none)."""
    if ns > 0:
        end = time.monotonic_ns() + ns
        while time.monotonic_ns() < end:
            pass


def run_pygame(busy_loop, frames, work_ns):
    import pygame
    clock = pygame.time.Clock()
    tick = clock.tick_busy_loop if busy_loop else clock.tick
    mono = time.monotonic_ns
    for _ in range(WARMUP):
        tick(60)
        busy(work_ns)
    ts = []
    c0 = time.thread_time_ns()
    for _ in range(frames + 1):
        tick(60)
        ts.append(mono())
        busy(work_ns)
    # its ideal schedule: from the first counted frame on, every 1/60 s
    return ts, [ideal_ns(ts[0], k) for k in range(len(ts))], time.thread_time_ns() - c0


def run_pacer(method, frames, work_ns, slice_s=0):
    mono = time.monotonic_ns
    with sleepacc.Pacer(1 / 60, method=method, slice=slice_s) as pacer:
        for _ in range(WARMUP):
            pacer.wait()
            busy(work_ns)
        ts, ideal = [], []
        c0 = time.thread_time_ns()
        for _ in range(frames + 1):
            ideal.append(pacer.wait())   # its schedule: start + k * period
            ts.append(mono())
            busy(work_ns)
        return ts, ideal, time.thread_time_ns() - c0


def run_spin(frames, work_ns):
    mono = time.monotonic_ns
    t0 = mono()
    for k in range(1, WARMUP + 1):
        d = ideal_ns(t0, k)
        while mono() < d:
            pass
        busy(work_ns)
    t0 = mono()
    ts, ideal = [], []
    c0 = time.thread_time_ns()
    for k in range(frames + 1):
        d = ideal_ns(t0, k + 1)
        while mono() < d:
            pass
        ts.append(mono())
        ideal.append(d)
        busy(work_ns)
    return ts, ideal, time.thread_time_ns() - c0


ROWS = {
    "pygame tick(60)": lambda n, w: run_pygame(False, n, w),
    "pygame tick_busy_loop(60)": lambda n, w: run_pygame(True, n, w),
    "Pacer(1/60) auto": lambda n, w: run_pacer("auto", n, w),
    "Pacer(1/60) clock_nanosleep": lambda n, w: run_pacer("clock_nanosleep", n, w),
    "Pacer(1/60) auto slice=100us": lambda n, w: run_pacer("auto", n, w, SLICE),
    "Pacer(1/60) clock_nanosleep slice=100us":
        lambda n, w: run_pacer("clock_nanosleep", n, w, SLICE),
    "Python spin": run_spin,
}


def pct(sorted_vals, q):
    """Nearest-rank percentile of a sorted list."""
    if not sorted_vals:
        return float("nan")
    i = min(len(sorted_vals) - 1, max(0, int(round(q / 100 * len(sorted_vals) + 0.5)) - 1))
    return sorted_vals[i]


def fmt_us(ns):
    return f"{ns / 1e3:,.1f} µs" if abs(ns) < 1e6 else f"{ns / 1e6:,.2f} ms"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--frames", type=int, default=120, help="frames per round (default 120 = 2 s)")
    ap.add_argument("--work", type=float, default=2.0,
                    help="ms of busy work per frame in the second loaded table (default 2; "
                         "0 skips it)")
    ap.add_argument("--no-load", action="store_true", help="skip the stress-ng tables")
    args = ap.parse_args(argv)
    if not 0 <= args.work < 16:
        ap.error(f"--work: must be 0 to 16 ms (a frame is 16.7 ms), got {args.work:g}")
    rows = dict(ROWS)
    try:
        import pygame
        pygame_note = f"pygame {pygame.version.ver} (SDL {'.'.join(map(str, pygame.get_sdl_version()))})"
    except ImportError:
        pygame_note = "pygame is not installed (pip install pygame): its rows are left out"
        rows = {k: v for k, v in rows.items() if not k.startswith("pygame")}
    table(args, rows, pygame_note, "idle", 0)
    if args.no_load:
        return
    stress = shutil.which("stress-ng")
    if not stress:
        print("\n== under load: skipped (stress-ng is not installed)")
        return
    ncpu = os.cpu_count() or 1
    tables = 2 if args.work > 0 else 1
    budget = int(tables * len(rows) * args.rounds * args.frames / 60 * 2) + 30  # bounded
    with cpu_hog(stress, ncpu, budget):
        time.sleep(1.0)
        print()
        table(args, rows, pygame_note, f"under stress-ng --cpu {ncpu}", 0)
        if args.work > 0:
            print()
            table(args, rows, pygame_note,
                  f"under stress-ng --cpu {ncpu}, {args.work:g} ms of work per frame",
                  int(args.work * 1e6))


def table(args, rows, pygame_note, title, work_ns):
    acc = {name: {"interval": [], "late": [], "drift": [], "cpu": 0, "wall": 0} for name in rows}
    for _ in range(args.rounds):
        for name, run in rows.items():
            ts, ideal, cpu = run(args.frames, work_ns)
            a = acc[name]
            a["interval"] += [abs(b - x - 1_000_000_000 / 60) for x, b in zip(ts, ts[1:])]
            late = [t - i for t, i in zip(ts[1:], ideal[1:])]
            a["late"] += late
            a["drift"].append(late[-1])
            a["cpu"] += cpu
            a["wall"] += ts[-1] - ts[0]
    print(f"== {title}: 60 Hz frame loop, {args.rounds} rounds x {args.frames} frames per row "
          f"(drift: after {args.frames} frames = {args.frames / 60:g} s); {pygame_note}")
    print(f"host: {os.uname().nodename}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    head = ("row", "interval err median", "interval err p99", "lateness median",
            "lateness p99", "drift median", "CPU")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    summary = {}
    for name, a in acc.items():
        iv, late, drift = sorted(a["interval"]), sorted(a["late"]), sorted(a["drift"])
        cpu = 100.0 * a["cpu"] / a["wall"] if a["wall"] else float("nan")
        summary[name] = (pct(late, 50), pct(late, 99), cpu, pct(iv, 99))
        print(f"| {name} | {fmt_us(pct(iv, 50))} | {fmt_us(pct(iv, 99))} | "
              f"{fmt_us(pct(late, 50))} | {fmt_us(pct(late, 99))} | {fmt_us(pct(drift, 50))} | "
              f"{cpu:.1f}% |")
    auto, spin = summary["Pacer(1/60) auto"], summary["Python spin"]
    cns = summary["Pacer(1/60) clock_nanosleep"]
    print(f"\nauto / Python spin lateness: {auto[0] / max(spin[0], 1):.2f}x at the median, "
          f"{auto[1] / max(spin[1], 1):.2f}x at p99; CPU {auto[2]:.1f}% vs {spin[2]:.1f}%")
    print(f"p99 interval error: Pacer auto {fmt_us(auto[3])} "
          f"{'<=' if auto[3] <= cns[3] else '>'} Pacer clock_nanosleep {fmt_us(cns[3])}"
          + "".join(f"; {k} {fmt_us(v[3])}" for k, v in summary.items()
                    if k.startswith("pygame") or "slice" in k))
    over = {name: sum(1 for v in acc[name]["interval"] if v > 500_000) for name in acc}
    print("frame intervals over 0.5 ms off, of " + str(len(acc["Python spin"]["interval"]))
          + ": " + "; ".join(f"{k} {v}" for k, v in over.items()))


if __name__ == "__main__":
    main()
