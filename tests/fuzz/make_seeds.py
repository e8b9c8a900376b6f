#!/usr/bin/env python3
"""Write the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/seed-*.

Run from the repository root (python3 tests/fuzz/make_seeds.py).  The input
layouts mirror the readers in tests/fuzz/fuzz_*.c (little-endian fields).
Existing crash-* regression inputs are left alone.
"""
import os
import struct
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
METHODS = ["select", "pselect", "poll", "ppoll", "epoll_wait", "epoll_pwait2", "usleep",
           "nanosleep", "clock_nanosleep", "clock_nanosleep_abs", "timerfd", "timer_signal",
           "sigtimedwait", "futex", "cond_timedwait", "sched_yield", "spin", "hybrid",
           "syscall", "clock"]
I64 = lambda v: struct.pack("<q", v)  # noqa: E731
I32 = lambda v: struct.pack("<i", v)  # noqa: E731
U8 = lambda v: struct.pack("<B", v & 0xFF)  # noqa: E731
F64 = lambda v: struct.pack("<d", v)  # noqa: E731


def write(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def method_lookup():
    names = METHODS + ["auto", "spin", "comp", "other", "batch", "idle", "fifo", "rr",
                       "relative", "periodic", "skip", "burst", "delay", "", "nanosleep\0x",
                       "NANOSLEEP", "nanosleep "]
    for i, n in enumerate(names):
        write("method_lookup", f"{i:02d}", n.encode())
    write("method_lookup", "ints", I32(-2**31) + I32(-22) + I32(2**31 - 1) + I32(4))


def run_config():
    # flags, pick, mode, duration, n, budget, warmup, margin, chunk, [env], shape
    def cfg(flags, pick, mode, dur, n, budget, warmup=0, margin=0, chunk=0, env=b"", shape=0):
        return (U8(flags) + U8(pick) + U8(mode) + I64(dur) + I64(n) + I64(budget) + I64(warmup)
                + I64(margin) + I64(chunk) + env + U8(shape))
    for i in range(len(METHODS) + 1):  # every row (and NULL) at 1 us, run for real
        write("run_config", f"run-{i:02d}", cfg(1, i, 0, 1000, 3, 0, 1, shape=8 | 3))
        write("run_config", f"periodic-{i:02d}", cfg(1, i, 1, 5000, 2, 1000000))
    big = 86400 * 10**9
    write("run_config", "day-validate", cfg(0, 7, 0, big, 10**9, big))
    write("run_config", "overflow", cfg(0, 7, 1, 1, 2**62, 2**63 - 1, 2**62))
    write("run_config", "negative", cfg(0, 7, 0, -1, -1, -1, -1, -1, -1))
    env = I64(1) + I32(3) + I32(1) + I32(0) + I32(0) + I32(-1)  # slack 1, fifo 1, cpu 0
    write("run_config", "fifo-spin-nobudget", cfg(8 | 1, 17, 0, 1000, 2, 0, env=env))
    write("run_config", "fifo-spin-budget", cfg(8 | 1, 17, 0, 1000, 0, 1000000, env=env))
    env = I64(0) + I32(9) + I32(200) + I32(4096) + I32(7) + I32(-5)  # all invalid
    write("run_config", "env-invalid", cfg(8, 7, 0, 1000, 1, 0, env=env))
    small = U8(51) + U8(2) + U8(0) + U8(0)  # slack 50, idle, prio 0, cpu -1
    write("run_config", "env-idle", cfg(16 | 1, 7, 0, 1000, 2, 0, env=small))
    write("run_config", "by-name", U8(2) + U8(0) + U8(7) + b"timerfd" + U8(0)
          + I64(1000) + I64(2) + I64(0) + I64(0) * 3 + U8(0))


def hist():
    write("hist", "empty", I64(0) + U8(0))
    write("hist", "small-ties", I64(5) + U8(1) + b"".join(struct.pack("<h", v) for v in
                                                        [0, 1, 1, 2, -3, 5, 5, 5, 127, -128, 300]))
    write("hist", "extremes", I64(0) + U8(0) + I64(-2**63) + I64(2**63 - 1) + I64(0) + I64(1))
    write("hist", "octaves", I64(1000) + U8(2) + b"".join(I64(1 << k) for k in range(0, 48, 3))
          + F64(0.5) + F64(0.99) + F64(float("nan")) + F64(-1.0))
    write("hist", "sleeps", I64(1000000) + U8(0) + b"".join(
        I64(1000000 + 50000 + (k * 7919) % 20000) for k in range(200)))


def table():
    def row(kind, name, requested, mode_bits, stats, cpu):
        b = U8(kind)
        if kind % 3 == 2:
            b += U8(len(name)) + name
        b += I64(requested)
        if kind & 0x80:
            b += I32(mode_bits)
        n, mn, mx, mean, std, med, p90, p99, p999, und = stats
        return (b + I64(n) + I64(mn) + I64(mx) + F64(mean) + F64(std) + I64(med) + I64(p90)
                + I64(p99) + I64(p999) + I64(und) + F64(cpu))
    ok = (100, 1050000, 1200000, 1080000.0, 20000.0, 1070000, 1100000, 1150000, 1190000, 0)
    write("table", "one", struct.pack("<H", 4096) + U8(1) + row(1 + 3 * 7, b"", 10**6, 0, ok, 1.5))
    write("table", "names", struct.pack("<H", 300) + U8(3)
          + row(2, "µs-метод".encode(), 1, 0, ok, -1.0)
          + row(0, b"", 0, 0, ok, 100.0)
          + row(2 | 0x80, b"x" * 40, -5, 7, ok, float("nan")))
    bad = (-1, 2**63 - 1, -2**63, float("inf"), float("nan"), -2**63, 2**63 - 1, 0, -1, -7)
    write("table", "extremes", struct.pack("<H", 65535) + U8(6)
          + b"".join(row(k, b"", (-2**63) if k % 2 else 2**63 - 1, 0, bad, float("-inf"))
                     for k in (1, 4, 7, 10, 13, 16)))


if __name__ == "__main__":
    for fn in (method_lookup, run_config, hist, table):
        fn()
    print("seeds written under", ROOT, file=sys.stderr)
