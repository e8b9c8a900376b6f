#!/usr/bin/env python3
"""The oversleep model on live runs here (not a test).

Conditions, each a sweep of nanosleep, select and timerfd over a ladder of
durations (10 µs .. 20 ms):

  slack 1 ns, 10 µs, 100 µs, 1 ms     prctl(PR_SET_TIMERSLACK) for the run
  dma latency not held / held at 0    /dev/cpu_dma_latency (needs root)
  under stress-ng --cpu 2             bounded by --timeout

For each condition and method: the verdict, the causes at 1 ms with their
95 % intervals, and the points within max(5 % of the oversleep, 5 µs): in-sample and leave
one duration out.  The four slack settings are also fitted together (slack
separated from wake-up across settings).

Then `sleepacc doctor` on this host next to `cyclictest -m -i 1000 -l 5000`
and `cyclictest -i 1000 -l 5000 --laptop` (rt-tests; --laptop does not hold
cpu_dma_latency) from the same run.

The machine may be shared: say so next to any figure quoted from here.
Usage: python3 bench/model_live.py [--budget S] [--quick] [--no-stress] [--no-cyclictest]
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import sleepacc  # noqa: E402
from sleepacc import doctor, model  # noqa: E402
from model_datasets import causes_text as causes  # noqa: E402  (bench/, beside this file)

METHODS = ("nanosleep", "select", "timerfd")
DURATIONS = (10e-6, 30e-6, 100e-6, 300e-6, 1e-3, 2e-3, 5e-3, 10e-3, 20e-3)


def sweep(budget, durations, **env):
    ms = list(sleepacc.iter_sweep(list(METHODS), list(durations), budget=budget,
                                  warmup=2, **env)) if hasattr(sleepacc, "iter_sweep") else \
        list(sleepacc._api.iter_sweep(list(METHODS), list(durations), budget=budget,
                                      warmup=2, **env))
    return sleepacc.Sweep(ms, host=sleepacc.system_info())


def rows_of(label, fitted):
    out = []
    for name, p in fitted.params.items():
        ok, lo = p.within_tolerance(), p.lodo()
        med1 = next((y - r for r, y in zip(p.requested_ns, p.measured_ns) if r == 1e6), None)
        out.append((label, name, p.verdict, causes(p), f"{int(ok.sum())}/{ok.size}",
                    f"{int(lo.sum())}/{lo.size}", model.explain._us(med1) if med1 is not None else "-",
                    p.verdict_note))
    return out


def print_rows(rows):
    print("| condition | method | oversleep at 1 ms | verdict | causes at 1 ms | in-sample | LODO | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r[0]} | {r[1]} | {r[6]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[7]} |")


def cyclictest(args, timeout=60):
    exe = shutil.which("cyclictest")
    if exe is None:
        return None, "cyclictest not installed (Debian package rt-tests)"
    try:
        r = subprocess.run([exe, *args, "-q"], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    text = r.stdout + r.stderr
    m = re.search(r"Min:\s*(\d+)\s+Act:\s*(\d+)\s+Avg:\s*(\d+)\s+Max:\s*(\d+)", text)
    if not m:
        return None, text.strip()[-300:] or f"exit {r.returncode}"
    mn, act, avg, mx = (int(x) for x in m.groups())
    return {"min_us": mn, "avg_us": avg, "max_us": mx}, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--budget", type=float, default=0.15, help="seconds per point (default 0.15)")
    ap.add_argument("--quick", action="store_true", help="fewer durations, smaller budget")
    ap.add_argument("--no-stress", action="store_true")
    ap.add_argument("--no-cyclictest", action="store_true")
    a = ap.parse_args()
    durations = DURATIONS[::2] if a.quick else DURATIONS
    budget = min(a.budget, 0.05) if a.quick else a.budget
    t_start = time.monotonic()
    info = dict(sleepacc.system_info())
    import socket
    info.setdefault("hostname", socket.gethostname())
    print(f"# model_live on {info.get('hostname', '?')}, Linux {info.get('kernel_release')}, "
          f"{info.get('cpus_online_count')} CPUs, load average {info.get('loadavg_1m')} "
          f"(the machine may be shared), budget {budget} s a point\n")
    rows = []
    slack_runs = []
    for slack in (1, 10_000, 100_000, 1_000_000):
        sw = sweep(budget, durations, slack=slack)
        slack_runs.extend(sw)
        rows += rows_of(f"slack {sleepacc._units.format_ns(slack)}", model.fit(sw))
    for dma in (None, 0):
        label = "dma latency held at 0" if dma == 0 else "dma latency not held"
        try:
            sw = sweep(budget, durations, dma_latency=dma) if dma is not None else \
                sweep(budget, durations)
        except (PermissionError, TypeError) as exc:
            rows.append((label, "-", "-", f"not measured: {exc}", "-", "-", "-", ""))
            continue
        rows += rows_of(label, model.fit(sw))
    if not a.no_stress:
        exe = shutil.which("stress-ng")
        if exe is None:
            rows.append(("stress-ng --cpu 2", "-", "-", "not measured: stress-ng not installed",
                         "-", "-", "-", ""))
        else:
            need = len(METHODS) * len(durations) * (budget + 0.05) + 5
            proc = subprocess.Popen([exe, "--cpu", "2", "--timeout", f"{int(need) + 5}s"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                time.sleep(1.0)
                sw = sweep(budget, durations)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
            rows += rows_of("under stress-ng --cpu 2", model.fit(sw))
    print("## Live fits\n")
    print_rows(rows)
    # the four slack settings fitted together: slack separated from wake-up
    print("\n## Slack separated from wake-up across the four settings (nanosleep)\n")
    ms = model.fit(sleepacc.Sweep(slack_runs, host=info))
    print("| applied slack | fitted slack [interval] | wake-up [interval] | verdict |")
    print("|---|---|---|---|")
    for key, m in ms.items():
        p = m.params.get("nanosleep")
        if p is None:
            continue
        s = p.parameters.get("timer_slack_ns", {})
        w = p.parameters.get("wakeup_ns", {})

        def fmt(x):
            if not x:
                return "-"
            iv = x.get("interval")
            return model.explain._us(x["value"]) + (f" [{model.explain._us(iv[0])}, {model.explain._us(iv[1])}]" if iv else "")
        print(f"| {m.label} | {fmt(s)} | {fmt(w)} | {p.verdict} |")

    print("\n## doctor, next to cyclictest (same run)\n")
    res = doctor.diagnose(budget=0.05)
    ref = res["reference"]
    print(f"doctor reference: nanosleep(1 ms) oversleeps {model.explain._us(ref['median_error_ns'])} "
          f"(median), {model.explain._us(ref['p99_error_ns'])} (p99)")
    for f in res["findings"]:
        gain = "" if f["gain_us"] is None else f", gain {'~' if f['estimate'] else ''}{f['gain_us']} µs"
        print(f"  [{f['status']}] {f['title']}{gain}")
    print()
    print(doctor.format_cyclictest(res["cyclictest"]))
    if not a.no_cyclictest:
        print()
        for args in (["-m", "-i", "1000", "-l", "5000"], ["-i", "1000", "-l", "5000", "--laptop"]):
            r, why = cyclictest(args)
            cmd = "cyclictest " + " ".join(args)
            if r is None:
                print(f"{cmd}: not measured: {why}")
            else:
                print(f"{cmd}: min {r['min_us']} µs, avg {r['avg_us']} µs, max {r['max_us']} µs")
    print(f"\n(total {time.monotonic() - t_start:.0f} s)")


if __name__ == "__main__":
    main()
