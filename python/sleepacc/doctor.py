"""``sleepacc doctor``: what makes this host sleep worse than it could, the fix,
and what the fix is worth.

``diagnose()`` reads the host facts (``sleepacc.system_info``), fits the
oversleep model to a sweep (a short one it runs, or one given), and runs a
few A/B experiments with the one variable changed -- the same 1 ms
``nanosleep`` with the thread's settings, with a timer slack of 1 ns, under
SCHED_FIFO, and as a hybrid sleep -- so every expected gain is a measured
difference where it can be, and says so where it is an estimate.

Each finding is a dict:
    id        short name ("timer_slack", "clocksource", ...)
    status    "problem" (worth fixing), "option" (a trade-off), "ok", or
              "unknown" (could not be checked here)
    title     one line
    gain_us   expected saving per sleep in µs (None when unknown)
    gain_on   what the saving applies to: "median" (a typical sleep) or "p99"
              (the tail)
    estimate  True when gain_us is an estimate rather than a measured A/B
    evidence  list of one-line facts and measurements
    fix       what to do (None when there is nothing to do)
Findings are ranked: problems by gain, then options, then the rest.
"""

from __future__ import annotations

import os
import socket
import time

import sleepacc
from sleepacc._units import format_ns

__all__ = ["diagnose", "REFERENCE_NS", "SHORT_METHODS", "SHORT_DURATIONS_NS"]

REFERENCE_METHOD = "nanosleep"
REFERENCE_NS = 1_000_000
SHORT_METHODS = ("nanosleep", "clock_nanosleep_abs", "select", "poll", "epoll_wait",
                 "timerfd", "hybrid")
SHORT_DURATIONS_NS = (0, 10_000, 100_000, 1_000_000, 10_000_000)
BARE_METAL_WAKE_NS = 5_000   # a typical wake-up on an idle bare-metal x86 host
TSC_READ_NS = 20             # a vDSO clock read on the TSC
_RANK = {"problem": 0, "option": 1, "unknown": 2, "ok": 3}


def _us(ns):
    return "n/a" if ns is None else format_ns(ns, 3)


def _self_cpu():
    """CPU seconds this process has used (user + system)."""
    t = os.times()
    return t.user + t.system


def _cpu_times():
    """(busy, steal, total) jiffies from the "cpu" line of /proc/stat, or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            v = [int(x) for x in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    v += [0] * (8 - len(v))
    idle = v[3] + v[4]
    return sum(v[:8]) - idle - v[7], v[7], sum(v[:8])


class _Point:
    """The numbers of one measurement that the findings use (ns)."""

    def __init__(self, m):
        d = m.to_dict()
        d["samples"] = None    # the statistics are enough for a report
        st = d["stats"]
        self.d = d
        self.n = st["n"]
        req = d["requested_ns"] if d["mode"] == "relative" else 0
        self.median = st["median"] - req if self.n else None
        self.p99 = st["p99"] - req if self.n else None
        self.cpu = d.get("cpu_percent")
        self.invol = (d.get("ctx_switches") or {}).get("involuntary")


def _experiment(method, budget, **env):
    """One A/B arm at the reference duration; None when not permitted."""
    try:
        return _Point(sleepacc.measure(method, REFERENCE_NS / 1e9, budget=budget,
                                       warmup=2, keep_samples=True, **env))
    except PermissionError:
        return None


def short_sweep(budget, progress=None):
    """The doctor's sweep: a few common methods over five durations."""
    names = {m.name for m in sleepacc.methods() if m.available}
    methods = [m for m in SHORT_METHODS if m in names]
    report = None if progress is None else (
        lambda done, total, m, d: progress(done, total, m, round(d * 1e9)))
    return list(sleepacc.iter_sweep(methods, [d / 1e9 for d in SHORT_DURATIONS_NS],
                                    budget=budget, warmup=1, keep_samples=True,
                                    progress=report))


def _fit(sweep_or_points):
    try:
        from sleepacc import model
        fitted = model.fit(sweep_or_points)
    except Exception as exc:  # the model says why it cannot fit; findings go on
        return None, f"model fit failed: {exc}"
    if hasattr(fitted, "params"):
        return fitted, None
    # several groups (a file with more than one setting): take the first
    return next(iter(fitted.values()), None), None


def diagnose(sweep=None, *, budget=0.1, progress=None):
    """Run the checks; returns {"host", "reference", "experiments",
    "findings", "model"} (see the module doc for a finding's fields)."""
    facts = dict(sleepacc.system_info())
    facts.setdefault("hostname", socket.gethostname())
    stat0, t0, self0 = _cpu_times(), time.monotonic(), _self_cpu()
    if sweep is None:
        sweep = short_sweep(budget, progress)
    arm_budget = max(3 * budget, 0.05)
    base = _experiment(REFERENCE_METHOD, arm_budget)
    slack1 = _experiment(REFERENCE_METHOD, arm_budget, slack=1)
    fifo = _experiment(REFERENCE_METHOD, arm_budget, slack=1, policy="fifo", priority=1)
    hybrid = _experiment("hybrid", arm_budget)
    stat1, wall, self_cpu = _cpu_times(), time.monotonic() - t0, _self_cpu() - self0
    fitted, model_note = _fit(sweep)
    params = fitted.params.get(REFERENCE_METHOD) if fitted is not None else None

    ctx = dict(facts=facts, base=base, slack1=slack1, fifo=fifo, hybrid=hybrid,
               params=params, stat=(stat0, stat1), wall=wall, self_cpu=self_cpu)
    findings = [f(ctx) for f in (_timer_slack, _rt_policy, _clocksource, _idle,
                                 _tick, _virtualisation, _busy, _hybrid)]
    findings = [f for f in findings if f]
    findings.sort(key=lambda f: (_RANK[f["status"]], -(f["gain_us"] or 0)))

    explanation = None
    if fitted is not None and params is not None:
        try:
            explanation = fitted.explain(REFERENCE_METHOD, REFERENCE_NS / 1e9)
        except Exception as exc:
            model_note = f"model explanation failed: {exc}"
    return {
        "host": facts,
        "reference": {"method": REFERENCE_METHOD, "requested_ns": REFERENCE_NS,
                      "median_error_ns": base.median if base else None,
                      "p99_error_ns": base.p99 if base else None},
        "experiments": {k: (v.d if v else None) for k, v in
                        (("default", base), ("slack_1ns", slack1), ("fifo", fifo),
                         ("hybrid", hybrid))},
        "findings": findings,
        "model": {"explanation": explanation, "note": model_note,
                  "params": params.to_dict() if params is not None else None},
    }


def _finding(id, status, title, gain_ns=None, evidence=(), fix=None, estimate=False,
             gain_on="median"):
    return {"id": id, "status": status, "title": title,
            "gain_us": None if gain_ns is None else round(max(0.0, gain_ns) / 1e3, 1),
            "gain_on": gain_on, "estimate": bool(estimate),
            "evidence": [e for e in evidence if e], "fix": fix}


def _ref(p):
    return f"{REFERENCE_METHOD}({format_ns(REFERENCE_NS)})"


# ----------------------------------------------------------------- findings

def _timer_slack(c):
    slack = c["facts"].get("timer_slack_ns")
    base, s1 = c["base"], c["slack1"]
    ev = [f"this thread's timer slack: {slack} ns (/proc/self/timerslack_ns)"
          if slack is not None else "timer slack: unknown"]
    if base and s1:
        gain = base.median - s1.median
        ev.append(f"{_ref(base)} median error {_us(base.median)} with it, "
                  f"{_us(s1.median)} with slack 1 ns (measured now)")
    else:
        gain = None
    p = c["params"]
    if p is not None and p.slack_ns is not None:
        ev.append(f"model: {_us(p.slack_ns)} of the constant oversleep is timer slack "
                  f"({p.slack_source or 'fitted'})")
    if slack is not None and slack <= 1000 and (gain is None or gain < 2_000):
        return _finding("timer_slack", "ok", f"timer slack is already {slack} ns", gain, ev)
    return _finding(
        "timer_slack", "problem" if (gain or 0) >= 2_000 else "ok",
        f"timer slack delays every sleep by up to {_us(slack)}", gain, ev,
        "prctl(PR_SET_TIMERSLACK, 1) in the sleeping thread (measure with --slack 1), "
        "or a real-time policy (RT threads get no slack)")


def _rt_policy(c):
    policy = c["facts"].get("sched_policy")
    s1, fifo = c["slack1"], c["fifo"]
    ev = [f"this thread's policy: {policy}, priority {c['facts'].get('sched_priority')}"]
    if policy in ("fifo", "rr"):
        return _finding("rt_policy", "ok", f"already running under SCHED_{str(policy).upper()}",
                        None, ev)
    if fifo is None:
        ev.append("SCHED_FIFO could not be tried: no permission (needs CAP_SYS_NICE or root)")
        return _finding("rt_policy", "unknown", "a real-time policy could not be tried", None, ev,
                        "run as root or grant CAP_SYS_NICE, then try --policy fifo")
    gain = s1.median - fifo.median if s1 else None
    ev.append(f"{_ref(s1)} with slack 1 ns: median {_us(s1.median if s1 else None)}, "
              f"p99 {_us(s1.p99 if s1 else None)}; under SCHED_FIFO 1: median "
              f"{_us(fifo.median)}, p99 {_us(fifo.p99)}")
    tail = (s1.p99 - fifo.p99) if s1 else None
    if tail is not None and tail > 0:
        ev.append(f"the p99 improves by {_us(tail)}")
    status = "problem" if (gain or 0) >= 2_000 or (tail or 0) >= 20_000 else "ok"
    return _finding("rt_policy", status,
                    "a real-time policy wakes the thread sooner" if status == "problem"
                    else "a real-time policy changes little beyond removing slack",
                    gain, ev,
                    "chrt -f 1 <command>, or sched_setscheduler(SCHED_FIFO) for the timing "
                    "thread only (measure with --policy fifo); keep it short: an RT thread "
                    "that spins can starve the CPU")


def _clocksource(c):
    f = c["facts"]
    cs, avail = f.get("clocksource"), f.get("clocksources_available") or ""
    try:
        cost = sleepacc.clock_info().get("monotonic", {}).get("read_cost_ns")
    except Exception:
        cost = None
    ev = [f"clocksource {cs} (available: {avail or 'unknown'})",
          f"CLOCK_MONOTONIC read cost {cost} ns" if cost is not None and cost >= 0 else None,
          f"TSC flags: {f.get('tsc_flags') or 'none'}"]
    if cs == "tsc":
        return _finding("clocksource", "ok", "the clocksource is tsc", 0, ev)
    if cs is None:
        return _finding("clocksource", "unknown", "the clocksource could not be read", None, ev)
    gain = 2 * (cost - TSC_READ_NS) if cost is not None and cost > TSC_READ_NS else None
    if "tsc" in avail.split():
        fix = ("echo tsc > /sys/devices/system/clocksource/clocksource0/current_clocksource "
               "(or boot with clocksource=tsc tsc=reliable)")
    else:
        fix = ("the kernel does not offer tsc here (it judged the TSC unstable); on a VM the "
               "hypervisor must expose an invariant TSC")
    return _finding("clocksource", "problem" if (gain or 0) >= 500 else "option",
                    f"the clocksource is {cs}, not tsc: every clock read costs more",
                    gain, ev, fix, estimate=True)


def _idle(c):
    f = c["facts"]
    driver, states = f.get("cpuidle_driver"), f.get("cpuidle_states") or ""
    exits = []
    for item in str(states).split(","):
        name, _, lat = item.partition(":")
        if lat.strip().isdigit() and name.strip().upper() != "POLL":
            exits.append((name.strip(), int(lat)))
    deepest = max(exits, key=lambda e: e[1]) if exits else None
    p = c["params"]
    model_exit = None
    if p is not None and p.idle_exit_ns:
        model_exit = p.idle_exit_ns * REFERENCE_NS / (REFERENCE_NS + p.idle_exit_half_ns)
    ev = [f"cpuidle driver {driver or 'none'}, governor {f.get('cpuidle_governor') or 'none'}",
          f"idle states (exit latency µs): {states}" if states else None,
          f"model: idle exit adds {_us(model_exit)} at {format_ns(REFERENCE_NS)}"
          if model_exit else "model: no idle-exit component identified"]
    if deepest and deepest[1] * 1000 >= 2_000:
        gain = model_exit if model_exit else deepest[1] * 1000
        return _finding("idle_states", "problem",
                        f"deep idle state {deepest[0]} takes {deepest[1]} µs to leave", gain, ev,
                        "hold /dev/cpu_dma_latency open with 0 while timing matters (tuned's "
                        "latency-performance profile does), or limit C-states "
                        "(intel_idle.max_cstate=1 / processor.max_cstate=1)",
                        estimate=not model_exit)
    if driver in (None, "", "none"):
        ev.append("no cpuidle driver: an idle CPU halts (HLT); in a VM each halt exits to the "
                  "hypervisor, so the wake-up cost shows up under virtualisation")
        return _finding("idle_states", "problem" if model_exit and model_exit >= 2_000 else "ok",
                        "no deep idle states to avoid (no cpuidle driver)", model_exit, ev,
                        "in a KVM guest the haltpoll cpuidle driver (cpuidle_haltpoll) polls "
                        "briefly before halting" if model_exit else None, estimate=True)
    return _finding("idle_states", "ok", "idle states are shallow", model_exit, ev)


def _tick(c):
    f = c["facts"]
    hz, hres, nohz = f.get("hz"), f.get("high_res_timers"), f.get("nohz")
    p = c["params"]
    ev = [f"HZ={hz} ({f.get('hz_source') or 'unknown source'}), high-resolution timers "
          f"{hres}, tickless mode {nohz}, nohz_full CPUs {f.get('nohz_full') or 'none'}"]
    if p is not None:
        ev.append(f"model: tick quantisation {'of ' + _us(p.tick_ns) if p.tick_ns else 'none'} "
                  f"for {REFERENCE_METHOD}")
    if hres == "no" or (p is not None and p.tick_ns):
        tick = p.tick_ns if p is not None and p.tick_ns else (1e9 / hz if hz else None)
        return _finding("tick", "problem",
                        "sleeps are rounded up to the kernel tick", None if tick is None
                        else tick / 2, ev,
                        "a kernel with high-resolution timers (CONFIG_HIGH_RES_TIMERS=y, not "
                        "booted with highres=off); a higher HZ shortens the tick meanwhile",
                        estimate=True)
    note = (" (tickless idle lets CPUs sleep longer and deeper: see idle states)"
            if nohz == "idle" else "")
    return _finding("tick", "ok", f"the tick does not quantise sleeps: high-resolution timers "
                                  f"are on{note}", 0, ev)


def _virtualisation(c):
    f = c["facts"]
    virt = f.get("virtualization")
    best = c["fifo"] or c["slack1"]
    ev = [f"CPU flag hypervisor: {'yes' if virt == 'hypervisor' else 'no'}; hypervisor "
          f"{f.get('hypervisor_type') or 'unknown'}; product {f.get('dmi_product') or 'unknown'}"]
    if virt != "hypervisor":
        return _finding("virtualisation", "ok", "not running under a hypervisor", 0, ev)
    gain = None
    if best:
        gain = best.median - BARE_METAL_WAKE_NS
        ev.append(f"best wake-up measured here: {_ref(best)} median error {_us(best.median)} "
                  f"without slack; idle bare metal typically takes about "
                  f"{_us(BARE_METAL_WAKE_NS)}")
    return _finding(
        "virtualisation", "problem" if (gain or 0) >= 5_000 else "ok",
        "a virtual CPU: timer interrupts and wake-ups pass through the hypervisor", gain, ev,
        "inside the guest: the hybrid method (spin the last part) or haltpoll; on the host: "
        "dedicated vCPUs, posted interrupts/APICv, or bare metal for timing-critical work",
        estimate=True)


def _busy(c):
    f = c["facts"]
    try:
        load = float(f.get("loadavg_1m"))
    except (TypeError, ValueError):
        load = None
    cpus = f.get("cpus_online_count") or os.cpu_count() or 1
    s0, s1 = c["stat"]
    steal = None
    if s0 and s1 and s1[2] > s0[2]:
        steal = 100.0 * (s1[1] - s0[1]) / (s1[2] - s0[2])
    # CPUs' worth of work by OTHER processes during the checks (all busy
    # time minus the doctor's own): unlike the 1-minute load average it sees
    # load that started a few seconds ago
    others = None
    if s0 and s1 and s1[2] > s0[2] and c.get("wall"):
        others = cpus * (s1[0] - s0[0]) / (s1[2] - s0[2]) - c.get("self_cpu", 0.0) / c["wall"]
    base = c["base"]
    ev = [f"load average {load} on {cpus} CPUs" if load is not None else None,
          f"other work used {max(0.0, others):.1f} of {cpus} CPUs during the checks"
          if others is not None else None,
          f"steal time during the checks: {steal:.1f}% ({c['wall']:.1f} s)"
          if steal is not None else None,
          f"{_ref(base)}: {base.invol} involuntary context switches, median error "
          f"{_us(base.median)}, p99 {_us(base.p99)}" if base else None]
    busy = ((load is not None and load / cpus > 0.5) or (steal is not None and steal > 2.0)
            or (others is not None and others >= 0.5))
    gain = (base.p99 - base.median) if base else None
    if not busy:
        return _finding("busy_host", "ok", "the host is quiet", 0, ev)
    return _finding("busy_host", "problem",
                    "the host is busy: other work delays wake-ups (the tail shows it)", gain, ev,
                    "measure and time on an idle host; pin the timing thread (--cpu) to a CPU "
                    "kept free of other work (isolcpus/nohz_full, cpusets); ask for less "
                    "steal on a VM", estimate=True, gain_on="p99")


def _hybrid(c):
    base, hyb = c["base"], c["hybrid"]
    if not base or not hyb:
        return None
    gain = base.median - hyb.median
    ev = [f"{_ref(base)} median error {_us(base.median)} at {base.cpu:.1f}% CPU; "
          f"hybrid({format_ns(REFERENCE_NS)}) {_us(hyb.median)} at {hyb.cpu:.1f}% CPU"]
    return _finding("hybrid", "option" if gain >= 2_000 else "ok",
                    "a hybrid sleep (kernel sleep, then spin) trades CPU for accuracy",
                    gain, ev,
                    "sleepacc.sleep(seconds) or sleepacc.Sleeper() (auto: timerfd, then a spin "
                    "whose margin it learns on this host) for waits that must end on time; keep "
                    "kernel sleeps for everything else")
