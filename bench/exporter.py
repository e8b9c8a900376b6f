#!/usr/bin/env python3
"""The exporter's cost: figures for the closing note, never a gate.

1. Memory and CPU with the defaults, doctor included: `sleepacc exporter`
   as a service starts it (nanosleep, timerfd, auto at 1 ms, 1% budget, the
   doctor's first run just after the first round of turns, in a child
   process) runs --seconds (60) on 127.0.0.1.  Its resident size (VmRSS)
   is read twice a second, and so is that of any child (the doctor's run);
   the CPU is the measuring thread's and the doctor's
   (sleepacc_measuring_cpu_seconds_total, of which
   sleepacc_doctor_cpu_seconds_total), and the whole process's from
   /proc/PID/stat (utime + stime + the reaped children's, in clock ticks:
   coarse), each divided by the wall time.
2. Rest or starvation: 10 methods at 1 ms, --doctor-every 0, and
   --windows (4) windows of --window (20 s) each, alternately quiet (one
   scrape a second, to see the samples arrive) and scraping (GETs of
   /metrics one after the other).  The measuring thread rests inside its
   CPU budget for up to seconds at a time, so a short window can hold no
   sample while nothing is wrong; windows this long span many rests.  Per
   window: samples, samples/s, the thread's CPU share, and the longest
   stretch without a new sample (1 s grid); then the ratio of samples
   taken while scraping to those taken in equal quiet windows (near 1: the
   scrapes cost the measuring nothing; well below 1: starvation), and the
   scrape latency.

    python bench/exporter.py [--seconds 60] [--window 20] [--windows 4]

About 2.5 minutes with the defaults.  The machine may be shared: run it in a
quiet moment.
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
TICK = os.sysconf("SC_CLK_TCK")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port, *args):
    p = subprocess.Popen([sys.executable, "-m", "sleepacc", "exporter", "--listen",
                          f"127.0.0.1:{port}", *args],
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
    """utime + stime of the process and of its reaped children (s)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / TICK


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def children(pid):
    """The pids whose parent is pid (the doctor's runs)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    out.append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return out


def scrape(port):
    t0 = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        body = r.read()
    return time.perf_counter() - t0, body.decode()


def value(text, name):
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else 0.0


def samples(text):
    return sum(float(v) for v in re.findall(r"^sleepacc_lateness_seconds_count\{.*\} (\S+)$",
                                             text, re.M))


def memory_and_cpu(seconds):
    print(f"== 1. memory and CPU with the defaults (nanosleep,timerfd,auto at 1ms, budget 1%, "
          f"the doctor on), {seconds:g} s ==")
    port = free_port()
    p = start(port)
    cpu0, t0 = proc_cpu_s(p.pid), time.monotonic()
    _, first = scrape(port)
    rss, child_peak, child_seen = [], 0.0, set()
    while time.monotonic() - t0 < seconds:
        r = rss_mb(p.pid)
        if r is not None:
            rss.append((time.monotonic() - t0, r))
        for c in children(p.pid):
            cr = rss_mb(c)
            if cr is not None:
                child_seen.add(c)
                child_peak = max(child_peak, cr)
        time.sleep(0.5)
    _, last = scrape(port)
    cpu1, t1 = proc_cpu_s(p.pid), time.monotonic()
    stop(p)
    late = [r for t, r in rss if t >= 15]
    print(f"exporter VmRSS: {rss[0][1]:.1f} MB at start, max {max(r for _, r in rss):.1f} MB, "
          f"{statistics.median(late):.1f} MB median from 15 s, {rss[-1][1]:.1f} MB at "
          f"{rss[-1][0]:.0f} s")
    ran = value(last, "sleepacc_doctor_last_run_timestamp_seconds") > 0
    print(f"the doctor: {'ran' if ran else 'did not run'} "
          f"({value(last, 'sleepacc_doctor_failures_total'):.0f} failures); its child seen "
          f"{len(child_seen)} time(s), VmRSS peak seen {child_peak:.1f} MB (gone when it ends)")
    d = lambda name: value(last, name) - value(first, name)   # noqa: E731
    th_cpu, th_wall = d("sleepacc_measuring_cpu_seconds_total"), \
        d("sleepacc_measuring_seconds_total")
    doc = d("sleepacc_doctor_cpu_seconds_total")
    n = samples(last) - samples(first)
    print(f"measuring thread + doctor: {th_cpu:.3f} s CPU in {th_wall:.1f} s = "
          f"{100 * th_cpu / th_wall:.2f}% of one CPU (the doctor {doc:.3f} s of it); "
          f"{n:.0f} samples ({n / th_wall:.0f}/s)")
    print(f"whole process and its children: {cpu1 - cpu0:.2f} s CPU in {t1 - t0:.1f} s = "
          f"{100 * (cpu1 - cpu0) / (t1 - t0):.2f}% of one CPU (clock ticks of "
          f"{1000 / TICK:.0f} ms: coarse)")


def window(port, seconds, scraping):
    """One window: (samples, thread CPU s, thread wall s, scrapes, latencies,
    longest stretch without a new sample in s, bytes a scrape)."""
    _, text = scrape(port)
    n0, c0, w0 = samples(text), value(text, "sleepacc_measuring_cpu_seconds_total"), \
        value(text, "sleepacc_measuring_seconds_total")
    t0 = time.monotonic()
    lat, size, marks, nscrapes = [], 0, [(0.0, n0)], 0
    next_mark = 1.0
    while True:
        now = time.monotonic() - t0
        if now >= seconds:
            break
        if scraping or now >= next_mark:
            dt, text = scrape(port)
            nscrapes += 1
            if scraping:
                lat.append(dt)
                size = len(text)
            now = time.monotonic() - t0
            if now >= next_mark:
                marks.append((now, samples(text)))
                next_mark += 1.0
        else:
            time.sleep(min(next_mark, seconds) - now)
    _, text = scrape(port)
    marks.append((time.monotonic() - t0, samples(text)))
    gap, since = 0.0, 0.0
    for (ta, na), (tb, nb) in zip(marks, marks[1:]):
        if nb > na:
            since = tb
        gap = max(gap, tb - since)
    return (samples(text) - n0, value(text, "sleepacc_measuring_cpu_seconds_total") - c0,
            value(text, "sleepacc_measuring_seconds_total") - w0, nscrapes, lat, gap, size)


def rest_or_starvation(width, count):
    print(f"== 2. rest or starvation: 10 methods at 1ms, --doctor-every 0, {count} windows of "
          f"{width:g} s, quiet and scraping in turn ==")
    port = free_port()
    p = start(port, "--methods", TEN, "--doctor-every", "0")
    time.sleep(3)
    rows, lat, size = [], [], 0
    for i in range(count):
        scraping = i % 2 == 1
        n, cpu, wall, k, l, gap, sz = window(port, width, scraping)
        rows.append((scraping, n, cpu, wall, k, gap))
        lat += l
        size = sz or size
    stop(p)
    print(f"{'window':10} {'scrapes':>8} {'samples':>8} {'samples/s':>10} {'thread CPU':>11} "
          f"{'longest stretch without a sample':>33}")
    for scraping, n, cpu, wall, k, gap in rows:
        print(f"{'scraping' if scraping else 'quiet':10} {k:>8} {n:>8.0f} {n / wall:>10.0f} "
              f"{100 * cpu / wall:>10.2f}% {gap:>32.0f} s")
    quiet = sum(r[1] for r in rows if not r[0])
    busy = sum(r[1] for r in rows if r[0])
    ratio = busy / quiet if quiet else float("nan")
    print(f"samples while scraping / samples in as many quiet windows: {busy:.0f} / {quiet:.0f} "
          f"= {ratio:.2f} (near 1: the scrapes cost the measuring nothing; well below 1: "
          "starvation); a stretch without a sample in a quiet window is a rest inside the "
          "budget, not starvation")
    if lat:
        lat.sort()
        q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))] * 1e3  # noqa: E731
        print(f"scrapes: {size} bytes each; latency median {statistics.median(lat) * 1e3:.2f} ms, "
              f"p90 {q(0.9):.2f} ms, p99 {q(0.99):.2f} ms, max {lat[-1] * 1e3:.2f} ms "
              f"({len(lat)} scrapes)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0,
                    help="length of part 1, memory and CPU (default 60)")
    ap.add_argument("--window", type=float, default=20.0,
                    help="length of each window of part 2 (default 20)")
    ap.add_argument("--windows", type=int, default=4,
                    help="windows in part 2, quiet and scraping in turn (default 4)")
    a = ap.parse_args()
    if a.seconds <= 0 or a.window <= 0 or a.windows < 2:
        ap.error("--seconds and --window must be above 0, --windows at least 2")
    memory_and_cpu(a.seconds)
    print()
    rest_or_starvation(a.window, a.windows)


if __name__ == "__main__":
    main()
