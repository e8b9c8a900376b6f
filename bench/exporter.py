#!/usr/bin/env python3
"""The exporter's cost: figures for the closing note, never a gate.

1. CPU per second of wall time: `sleepacc exporter` with its defaults
   (nanosleep, timerfd, auto at 1 ms, 1% budget) runs --seconds (60) on
   127.0.0.1; the measuring thread's CPU (sleepacc_measuring_cpu_seconds_total,
   from the thread's CPU clock) and the whole process's (utime + stime from
   /proc/PID/stat, so the HTTP server and Python's start-up count too) are
   divided by the wall time.
2. Its own scrape latency with 10 methods: --scrapes (200) GETs of /metrics
   one after the other, timed from connect to the last byte.

    python bench/exporter.py [--seconds 60] [--scrapes 200]

The machine may be shared: run it in a quiet moment.
"""
import argparse
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

TEN = "nanosleep,clock_nanosleep,clock_nanosleep_abs,timerfd,select,poll,epoll_wait,usleep,futex,auto"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port, *args):
    p = subprocess.Popen([sys.executable, "-m", "sleepacc", "exporter", "--listen",
                          f"127.0.0.1:{port}", "--doctor-every", "0", *args],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    line = p.stderr.readline()
    if "publishing to" not in line:
        p.kill()
        raise SystemExit(f"the exporter did not start: {line}{p.stderr.read()}")
    return p


def stop(p):
    p.send_signal(signal.SIGTERM)
    try:
        return p.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()[1]


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scrape(port):
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        body = r.read()
    return time.perf_counter() - t0, body.decode()


def value(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def samples(text):
    return sum(float(v) for v in re.findall(r"^sleepacc_lateness_seconds_count\{.*\} (\S+)$",
                                             text, re.M))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--scrapes", type=int, default=200)
    a = ap.parse_args()

    print(f"== exporter CPU, defaults (nanosleep,timerfd,auto at 1ms, budget 1%), "
          f"{a.seconds:g} s ==")
    port = free_port()
    p = start(port)
    cpu0, t0 = proc_cpu_s(p.pid), time.monotonic()
    _, first = scrape(port)
    time.sleep(a.seconds)
    _, last = scrape(port)
    cpu1, t1 = proc_cpu_s(p.pid), time.monotonic()
    stop(p)
    th_cpu = value(last, "sleepacc_measuring_cpu_seconds_total") - \
        value(first, "sleepacc_measuring_cpu_seconds_total")
    th_wall = value(last, "sleepacc_measuring_seconds_total") - \
        value(first, "sleepacc_measuring_seconds_total")
    n = samples(last) - samples(first)
    print(f"measuring thread: {th_cpu:.3f} s CPU in {th_wall:.1f} s = "
          f"{100 * th_cpu / th_wall:.2f}% of one CPU; {n:.0f} samples ({n / th_wall:.0f}/s)")
    print(f"whole process:    {cpu1 - cpu0:.2f} s CPU in {t1 - t0:.1f} s = "
          f"{100 * (cpu1 - cpu0) / (t1 - t0):.2f}% of one CPU (clock ticks of 10 ms: coarse)")

    print()
    print(f"== scrape latency, 10 methods at 1ms, {a.scrapes} scrapes one after the other ==")
    port = free_port()
    p = start(port, "--methods", TEN)
    time.sleep(3)
    before = samples(scrape(port)[1])
    lat, size = [], 0
    t0 = time.monotonic()
    for _ in range(a.scrapes):
        dt, body = scrape(port)
        lat.append(dt)
        size = len(body)
    span = time.monotonic() - t0
    after = samples(scrape(port)[1])
    stop(p)
    lat.sort()
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1e3  # noqa: E731
    print(f"{size} bytes a scrape; latency median {statistics.median(lat) * 1e3:.2f} ms, "
          f"p90 {q(0.9):.2f} ms, p99 {q(0.99):.2f} ms, max {lat[-1] * 1e3:.2f} ms")
    print(f"the measuring thread took {after - before:.0f} samples during the {span:.1f} s "
          f"of scraping")


if __name__ == "__main__":
    main()
