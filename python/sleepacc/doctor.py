"""``sleepacc doctor``: what makes this host sleep worse than it could, the fix,
and what the fix is worth.

``diagnose()`` reads the host facts (``sleepacc.system_info``), fits the
oversleep model to a sweep (a short one it runs, or one given), and runs a
few A/B experiments with the one variable changed -- the same 1 ms
``nanosleep`` with the thread's settings, with a timer slack of 1 ns, under
SCHED_FIFO, with ``/dev/cpu_dma_latency`` held at 0, and as a hybrid sleep --
so every expected gain is a measured difference where it can be, and says so
(with the reason) where it could not be measured.  The hybrid sleep is
weighed against the slack-free kernel wait (``timerfd``, measured in the same
run) at the median and at the p99: it is recommended only where its p99
beats the kernel wait's now (a spin under CPU contention loses the CPU for a
time slice, so on a busy host the tail can be the kernel wait's), and on a
busy host the finding says which wins at p50 and which at p99.

``result["cyclictest"]`` accounts for the difference between a plain
``nanosleep`` and a cyclictest-like setup term by term: each row adds one
setting (slack 1 ns, SCHED_FIFO, mlockall, cpu_dma_latency 0, absolute
periodic deadlines) to the row above and gives the measured change, with
an interval from interleaved blocks of the two settings (``interval_ns``);
a change whose interval holds 0 is ``within_noise``, not a gain.

Where a trace can run (Linux tracefs, root or CAP_DAC_OVERRIDE), the same
1 ms ``nanosleep`` and ``timerfd`` are traced from the kernel
(``sleepacc.trace``): ``result["trace"]`` holds each one's parts, the halt
cost is the timer interrupt's lateness on an idle CPU against a busy one,
and the model's causes are checked against the traced terms.

Every finding and every cause of the model says its ``basis``: "traced"
(the kernel's events, now), "measured" (an A/B run or a host fact, now) or
"inferred" (the model, or an estimate).  A measurement beats an inference:
the model's advice for a fix that an A/B here measured as changing nothing
is dropped, and where the trace and the model disagree on a term by more
than max(3 us, 20 %) the report says so and uses the trace.

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
    delta_ns  the signed measured A/B difference (None when not measured)
    basis     "traced", "measured" or "inferred" (see above)
Findings are ranked: problems by gain, then options, then the rest.
"""

from __future__ import annotations

import os
import socket
import time

import sleepacc
from sleepacc._units import format_ns
# the traced parts and the model held against the measurements (the
# constants and helpers the findings below share with them)
from sleepacc.reconcile import (REFERENCE_METHOD, REFERENCE_NS, TRACE_METHODS, TRACE_N,
                                _FIX_WORDS, _consistent, _data_os, _measured_nothing,
                                _median_interval, _reconcile, _trace_section, _trace_summaries,
                                cyclictest_term, format_causes, format_cyclictest, format_trace)

__all__ = ["diagnose", "format_cyclictest", "format_trace", "format_causes", "cyclictest_term", "CYCLICTEST_STEPS", "REFERENCE_NS",
           "SHORT_METHODS", "SHORT_DURATIONS_NS", "TRACE_METHODS", "BASES"]

#: The slack-free kernel wait a hybrid sleep must beat at the tail (auto's own).
KERNEL_METHOD = "timerfd"
SHORT_METHODS = ("nanosleep", "clock_nanosleep_abs", "select", "poll", "epoll_wait",
                 "timerfd", "hybrid")
SHORT_DURATIONS_NS = (0, 10_000, 100_000, 1_000_000, 10_000_000)
BARE_METAL_WAKE_NS = 5_000   # a typical wake-up on an idle bare-metal x86 host
TSC_READ_NS = 20             # a vDSO clock read on the TSC
_RANK = {"problem": 0, "option": 1, "unknown": 2, "ok": 3}
#: Where a finding's or a cause's figure comes from, strongest first.
BASES = ("traced", "measured", "inferred")

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
        self.median = m.error("median") if self.n else None   # the one error rule
        self.p99 = m.error("p99") if self.n else None
        self.cpu = d.get("cpu_percent")
        self.invol = (d.get("ctx_switches") or {}).get("involuntary")
        # where the p99 lies (95 %: the order statistics k = 0.99 n -/+ 2 sqrt(n 0.99 0.01)):
        # a few hundred samples put it near the maximum, so a tail moves a lot by chance
        self.p99_ci = None
        errs = m.errors_ns
        if errs is not None and len(errs) >= 20:
            import numpy as np
            xs, n = np.sort(errs), len(errs)
            h = 2.0 * (n * 0.99 * 0.01) ** 0.5
            self.p99_ci = (float(xs[max(int(0.99 * n - h), 0)]),
                           float(xs[min(int(np.ceil(0.99 * n + h)), n - 1)]))


#: A measured A/B gain is a finding only when it is at least MIN_GAIN_NS and
#: three times the uncertainty of the difference of the two medians (each the
#: model's: the median's standard error from its spread and n, with a floor
#: of 1 µs and 2 % of the oversleep for the drift between two runs).
MIN_GAIN_NS = 2_000


def _sigma(pt):
    """The uncertainty (ns) of one arm's median error."""
    from sleepacc.model.solve import point_sigma
    d = pt.d or {}
    st = d.get("stats") or {}
    rec = {"mode": d.get("mode"), "requested_ns": d.get("requested_ns", REFERENCE_NS), "n": pt.n,
           "p25_ns": st.get("p25"), "p75_ns": st.get("p75"), "std_ns": st.get("std")}
    return point_sigma(rec, REFERENCE_NS + max(pt.median or 0.0, 0.0), REFERENCE_NS)[0]


def _beyond_noise(gain, a, b):
    """Whether gain (a's median error less b's) is more than the two arms'
    noise: >= MIN_GAIN_NS and >= 3 sigma of the difference."""
    if gain is None or a is None or b is None:
        return False
    return gain >= max(MIN_GAIN_NS, 3.0 * (_sigma(a) ** 2 + _sigma(b) ** 2) ** 0.5)


#: A p99 that improves by at least this (ns) is a finding, when the two p99s'
#: 95 % intervals (_Point.p99_ci) do not overlap.
MIN_TAIL_NS = 20_000


def _tail_beyond_noise(tail, a, b):
    """Whether a's p99 is above b's by tail >= MIN_TAIL_NS with their
    intervals apart (unknown intervals: the size alone)."""
    if tail is None or tail < MIN_TAIL_NS:
        return False
    ca, cb = getattr(a, "p99_ci", None), getattr(b, "p99_ci", None)
    return ca is None or cb is None or ca[0] > cb[1]


def _measure(method, budget, mode="relative", **env):
    # samples kept: exact medians (the streaming histogram is within 1 %, too
    # coarse for differences of a few µs on a 1 ms sleep); a few hundred values;
    # the warm-up is the core's default
    return sleepacc.measure(method, REFERENCE_NS / 1e9, budget=budget,
                            keep_samples=True, mode=mode, **env)


def _why(exc, env):
    if isinstance(exc, FileNotFoundError):
        return "/dev/cpu_dma_latency does not exist here (no PM QoS device)"
    if isinstance(exc, PermissionError):
        text = str(exc)
        if env.get("policy") and "cpu.rt_runtime_us" in text:   # the core's sentence: the group
            start = text.find("the thread's cgroup")
            end = text.find("; asked", start)
            return f"no permission: SCHED_FIFO: {text[start:end if end > 0 else None]}"
        what = ("dma_latency: /dev/cpu_dma_latency is not writable (needs root)"
                if "dma_latency" in env else
                "SCHED_FIFO needs CAP_SYS_NICE or root" if env.get("policy") else
                "mlockall needs CAP_IPC_LOCK or a higher RLIMIT_MEMLOCK"
                if env.get("lock_memory") else str(exc))
        return f"no permission: {what}"
    return f"{type(exc).__name__}: {exc}"


def _arm(method, budget, mode="relative", **env):
    """One A/B arm at the reference duration: (_Point or None, reason)."""
    try:
        return _Point(_measure(method, budget, mode, **dict(env))), None
    except OSError as exc:      # PermissionError naming the setting, ENOENT, ...
        return None, _why(exc, env)


def _experiment(method, budget, **env):
    """One A/B arm at the reference duration; None when not permitted."""
    return _arm(method, budget, **env)[0]


#: The cyclictest-like ladder: each row adds one setting to the row above.
CYCLICTEST_STEPS = (
    ("plain", "nanosleep(1 ms), this thread's settings", "nanosleep", "relative", {}),
    ("timer_slack", "+ timer slack 1 ns", "nanosleep", "relative", {"slack": 1}),
    ("rt_policy", "+ SCHED_FIFO priority 1", "nanosleep", "relative",
     {"policy": "fifo", "priority": 1}),
    ("lock_memory", "+ mlockall (cyclictest -m)", "nanosleep", "relative", {"lock_memory": True}),
    ("idle_exit", "+ cpu_dma_latency held at 0", "nanosleep", "relative", {"dma_latency": 0}),
    ("periodic", "+ absolute periodic deadlines (clock_nanosleep TIMER_ABSTIME)",
     "clock_nanosleep_abs", "periodic", {}),
)


#: Interleaved blocks per ladder term: the row before and the row, each
#: measured in turn (which goes first alternates), LADDER_BLOCKS times.
LADDER_BLOCKS = 4


def _blocks(before, after, budget, blocks=LADDER_BLOCKS):
    """The differences of the median error (after - before) in `blocks`
    interleaved short blocks; before and after are (method, mode, env).
    None when an arm could not be measured."""
    diffs = []
    for i in range(blocks):
        got = {}
        for which in ((0, 1) if i % 2 == 0 else (1, 0)):
            method, mode, env = (before, after)[which]
            point, _ = _arm(method, budget, mode, **env)
            if point is None or point.median is None:
                return None
            got[which] = point.median
        diffs.append(got[1] - got[0])
    return diffs


def _cyclictest_table(budget, known=None, blocks=LADDER_BLOCKS):
    """Rows {step, label, env, median_ns, p99_ns, term_ns, interval_ns,
    within_noise, note}: term_ns is the measured change of the median
    against the last measured row (signed; a negative term is a saving), so
    the terms add up to the last row less the first.  interval_ns [lo, hi]
    is the range of the term and of `blocks` more differences measured in
    interleaved short blocks of the two settings (with 4 blocks, all five
    differences lie on one side of the true median difference with a
    chance of 2/32); a term whose interval holds 0 is within_noise."""
    known = dict(known or {})
    env, rows, prev, prev_spec = {}, [], None, None
    for step, label, method, mode, add in CYCLICTEST_STEPS:
        trial = {**env, **add}
        point, why = known.get(step, (None, None)) if step in known else (None, None)
        if point is None and why is None:
            point, why = _arm(method, budget, mode, **trial)
        row = {"step": step, "label": label, "env": {k: v for k, v in trial.items()},
               "method": method, "mode": mode,
               "median_ns": point.median if point else None,
               "p99_ns": point.p99 if point else None, "term_ns": None,
               "interval_ns": None, "within_noise": None, "note": why or ""}
        if point is not None:
            spec = (method, mode, trial)
            if prev is not None:
                row["term_ns"] = point.median - prev.median
                diffs = _blocks(prev_spec, spec, budget / 4, blocks) if blocks else []
                if diffs is not None:
                    every = [row["term_ns"], *diffs]
                    row["interval_ns"] = [float(min(every)), float(max(every))]
                    row["within_noise"] = row["interval_ns"][0] <= 0 <= row["interval_ns"][1]
            env, prev, prev_spec = trial, point, spec
        else:
            row["note"] = f"not measured: {why}"
        rows.append(row)
    return rows


def short_sweep(budget, progress=None):
    """The doctor's sweep: a few common methods over five durations, through
    the one sweep loop (sleepacc._api.iter_sweep).  progress(done, total,
    method, duration_ns) is called after each point."""
    from sleepacc import _api
    names = {m.name for m in sleepacc.methods() if m.available}
    methods = [m for m in SHORT_METHODS if m in names]
    cb = None
    if progress:
        def cb(done, total, method, seconds):
            progress(done, total, method, int(round(seconds * 1e9)))
    # every point takes at least two samples of the longest duration: the
    # doctor's choice (a sweep's point under a shorter budget would take one,
    # the core's rule for a sweep point)
    budget = max(budget, 2 * max(SHORT_DURATIONS_NS) / 1e9)
    return list(_api.iter_sweep(methods, [d / 1e9 for d in SHORT_DURATIONS_NS], budget=budget,
                                warmup=1, keep_samples=True, progress=cb))


def _fit(sweep_or_points):
    try:
        from sleepacc import model
        fitted = model.fit(sweep_or_points)
    except Exception as exc:  # the model says why it cannot fit; findings go on
        return None, f"model fit failed: {exc}"
    # several groups (a file with more than one setting): the first
    return next(iter(fitted.values()), None), None


def diagnose(sweep=None, *, budget=0.1, progress=None, trace=True):
    """Run the checks; returns {"host", "reference", "experiments",
    "findings", "trace", "model"} (see the module doc for a finding's
    fields).  trace: trace the kernel waits where a trace can run (False:
    the section says it was not asked for)."""
    facts = dict(sleepacc.system_info())
    facts.setdefault("hostname", socket.gethostname())
    stat0, t0, self0 = _cpu_times(), time.monotonic(), _self_cpu()
    if sweep is None:
        sweep = sleepacc.Sweep(short_sweep(budget, progress), host=facts)
    arm_budget = max(3 * budget, 0.05)
    base, base_why = _arm(REFERENCE_METHOD, arm_budget)
    slack1, slack_why = _arm(REFERENCE_METHOD, arm_budget, slack=1)
    fifo, fifo_why = _arm(REFERENCE_METHOD, arm_budget, slack=1, policy="fifo", priority=1)
    dma0, dma_why = _arm(REFERENCE_METHOD, arm_budget, dma_latency=0)
    hybrid, _ = _arm("hybrid", arm_budget)
    kernel, _ = _arm(KERNEL_METHOD, arm_budget)
    table = _cyclictest_table(arm_budget, {"plain": (base, base_why),
                                           "timer_slack": (slack1, slack_why),
                                           "rt_policy": (fifo, fifo_why)})
    summaries, trace_why = _trace_summaries() if trace else (None, "not asked for")
    traced = _trace_section(summaries, trace_why)
    stat1, wall, self_cpu = _cpu_times(), time.monotonic() - t0, _self_cpu() - self0
    fitted, model_note = _fit(sweep)
    params = fitted.params.get(REFERENCE_METHOD) if fitted is not None else None

    ctx = dict(facts=facts, base=base, slack1=slack1, fifo=fifo, hybrid=hybrid, kernel=kernel,
               dma0=dma0, dma_why=dma_why, fifo_why=fifo_why,
               params=params, stat=(stat0, stat1), wall=wall, self_cpu=self_cpu,
               trace=traced, table=table)
    busy = _busy(ctx)
    ctx["busy"] = busy["status"] == "problem"
    findings = [f(ctx) for f in (_timer_slack, _rt_policy, _clocksource, _idle, _halt,
                                 _tick, _virtualisation)] + [busy, _hybrid(ctx)]
    findings = [f for f in findings if f]
    findings.sort(key=lambda f: (_RANK[f["status"]], -(f["gain_us"] or 0)))

    explanation = None
    fit_json = None
    if fitted is not None:
        try:
            fit_json = fitted.to_json()
        except Exception as exc:  # pragma: no cover - the JSON is a view of the fit
            model_note = f"model JSON failed: {exc}"
    if fitted is not None and fitted.params:
        try:   # the reference method, or (imported data without it) every method
            explanation = fitted.explain(REFERENCE_METHOD if params is not None else None,
                                         REFERENCE_NS / 1e9)
        except Exception as exc:
            model_note = f"model explanation failed: {exc}"
    explanation, dropped = _consistent(explanation, findings, table)
    causes, disagreements = _reconcile(fit_json, params, traced)
    data_os = _data_os(sweep)
    if data_os is not None and "linux" not in data_os.lower():
        model_note = ((model_note + "; ") if model_note else "") + (
            f"the data come from {data_os}: the model's advice is for that system; the findings "
            "above are measured on this host")
    return {
        "host": facts,
        "reference": {"method": REFERENCE_METHOD, "requested_ns": REFERENCE_NS,
                      "median_error_ns": base.median if base else None,
                      "p99_error_ns": base.p99 if base else None},
        "experiments": {k: (v.d if v else None) for k, v in
                        (("default", base), ("slack_1ns", slack1), ("fifo", fifo),
                         ("dma_latency_0", dma0), ("hybrid", hybrid),
                         (KERNEL_METHOD, kernel))},
        "cyclictest": table,
        "findings": findings,
        "trace": traced,
        "model": {"explanation": explanation, "note": model_note,
                  "causes": causes, "disagreements": disagreements,
                  "dropped_advice": dropped,
                  "params": params.to_dict() if params is not None else None,
                  "fit": fit_json},
    }


def _finding(id, status, title, gain_ns=None, evidence=(), fix=None, estimate=False,
             gain_on="median", delta_ns=None, basis=None):
    """A finding; its basis is "inferred" for an estimate, else "measured"
    (an A/B run or a host fact read now), unless given."""
    return {"id": id, "status": status, "title": title,
            "gain_us": None if gain_ns is None else round(max(0.0, gain_ns) / 1e3, 1),
            "gain_on": gain_on, "estimate": bool(estimate),
            "evidence": [e for e in evidence if e], "fix": fix,
            "delta_ns": None if delta_ns is None or estimate else float(delta_ns),
            "basis": basis or ("inferred" if estimate else "measured")}


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
        ev.append(f"{_ref(base)} median error {format_ns(base.median)} with it, "
                  f"{format_ns(s1.median)} with slack 1 ns (measured now)")
    else:
        gain = None
    p = c["params"]
    if p is not None and p.slack_ns is not None:
        ev.append(f"model: {format_ns(p.slack_ns)} of the constant oversleep is timer slack "
                  f"({p.slack_source or 'fitted'})")
    traced = _traced_term(c, "slack")
    if traced:
        ev.append(traced)
    real = _beyond_noise(gain, base, s1)
    if slack is not None and slack <= 1000 and not real:
        return _finding("timer_slack", "ok", f"timer slack is already {slack} ns", gain, ev,
                        delta_ns=gain)
    policy = c["facts"].get("sched_policy")
    if policy in ("fifo", "rr") and not real:   # Linux gives RT threads none
        return _finding("timer_slack", "ok", f"a SCHED_{str(policy).upper()} thread gets no timer "
                        f"slack (its {format_ns(slack)} setting does not apply)", gain, ev,
                        delta_ns=gain)
    return _finding(
        "timer_slack", "problem" if real else "ok",
        f"timer slack delays every sleep by up to {format_ns(slack)}", gain, ev,
        "prctl(PR_SET_TIMERSLACK, 1) in the sleeping thread (measure with --slack 1), "
        "or a real-time policy (RT threads get no slack)", delta_ns=gain)


def _rt_policy(c):
    policy = c["facts"].get("sched_policy")
    s1, fifo = c["slack1"], c["fifo"]
    prio = c["facts"].get("sched_priority")
    ev = [f"this thread's policy: {policy or 'unknown'}, priority "
          f"{'unknown' if prio is None else prio}"]
    if policy in ("fifo", "rr"):
        return _finding("rt_policy", "ok", f"already running under SCHED_{str(policy).upper()}",
                        None, ev)
    if fifo is None:
        ev.append(f"SCHED_FIFO could not be tried: {c.get('fifo_why') or 'no permission'}")
        fix = ("give the cgroup real-time time (its cpu.rt_runtime_us) or run outside it, then "
               "try --policy fifo" if "cpu.rt_runtime_us" in (c.get("fifo_why") or "") else
               "run as root or grant CAP_SYS_NICE, then try --policy fifo")
        return _finding("rt_policy", "unknown", "a real-time policy could not be tried", None, ev,
                        fix)
    gain = s1.median - fifo.median if s1 else None
    ev.append(f"{_ref(s1)} with slack 1 ns: median {format_ns(s1.median if s1 else None)}, "
              f"p99 {format_ns(s1.p99 if s1 else None)}; under SCHED_FIFO 1: median "
              f"{format_ns(fifo.median)}, p99 {format_ns(fifo.p99)}")
    tail = (s1.p99 - fifo.p99) if s1 else None
    if tail is not None and tail > 0:
        ev.append(f"the p99 improves by {format_ns(tail)}")
    status = "problem" if _beyond_noise(gain, s1, fifo) or _tail_beyond_noise(tail, s1, fifo) \
        else "ok"
    return _finding("rt_policy", status,
                    "a real-time policy wakes the thread sooner" if status == "problem"
                    else "a real-time policy changes little beyond removing slack",
                    gain, ev,
                    "chrt -f 1 <command>, or sched_setscheduler(SCHED_FIFO) for the timing "
                    "thread only (measure with --policy fifo); keep it short: an RT thread "
                    "that spins can starve the CPU", delta_ns=gain)


def _clocksource(c):
    f = c["facts"]
    cs, avail = f.get("clocksource"), f.get("clocksources_available") or ""
    try:
        cost = sleepacc.clock_info().get("monotonic", {}).get("read_cost_ns")
    except Exception:
        cost = None
    ev = [f"clocksource {cs or 'unknown'} (available: {avail or 'unknown'})",
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
    """Idle states, measured: the reference sleep with /dev/cpu_dma_latency
    held at 0 (no deep idle state may be entered) against the same sleep
    without it."""
    f = c["facts"]
    driver, states = f.get("cpuidle_driver"), f.get("cpuidle_states") or ""
    p = c["params"]
    model_exit = None
    if p is not None and p.idle_exit_ns:
        model_exit = p.idle_exit_ns * REFERENCE_NS / (REFERENCE_NS + p.idle_exit_half_ns)
    base, dma0 = c["base"], c.get("dma0")
    ev = [f"cpuidle driver {driver or 'none'}, governor {f.get('cpuidle_governor') or 'none'}",
          f"idle states (exit latency µs): {states}" if states else None,
          f"model: idle exit adds {format_ns(model_exit)} at {format_ns(REFERENCE_NS)}"
          if model_exit else "model: no idle-exit component identified"]
    fix = ("hold /dev/cpu_dma_latency open with 0 while timing matters (sleepacc "
           "--dma-latency 0; tuned's latency-performance profile and cyclictest do), or limit "
           "C-states (intel_idle.max_cstate=1 / processor.max_cstate=1; in a KVM guest "
           "cpuidle_haltpoll's guest_halt_poll_ns)")
    if _idle_kind(f) != "cstates":
        fix = _halt_fix(f, _idle_ab(c))   # a halting (v)CPU: named by what the host is
    if base is None or dma0 is None:
        why = c.get("dma_why") or "the reference sleep could not be measured"
        ev.append(f"cpu_dma_latency=0 could not be measured: {why}")
        return _finding("idle_states", "unknown",
                        "the cost of leaving idle states could not be measured", model_exit,
                        ev, fix, estimate=True)
    gain = base.median - dma0.median
    tail = base.p99 - dma0.p99
    ev.append(f"{_ref(base)} median error {format_ns(base.median)} "
              f"(p99 {format_ns(base.p99)}); with cpu_dma_latency held at 0: "
              f"{format_ns(dma0.median)} (p99 {format_ns(dma0.p99)}) (measured now)")
    step = next((r for r in c.get("table") or () if r["step"] == "idle_exit"), None)
    if step is not None and step.get("within_noise") is not None:
        ev.append("the ladder's cpu_dma_latency step: "
                  + ("within its noise" if step["within_noise"] else
                     f"{format_ns(step['term_ns'])} beyond its noise"))
    if c.get("busy"):
        ev.append("other work kept the CPUs busy during the checks: a busy CPU does not "
                  "halt, so the idle cost may be hidden")
    if not driver or driver == "none":   # nothing for cpu_dma_latency to limit
        ev.append("no cpuidle driver: the CPUs idle in the default idle (HLT), which "
                  "cpu_dma_latency does not limit; in a virtual machine a halted vCPU waits "
                  "for the hypervisor (see the halted vCPU finding)")
    if _beyond_noise(gain, base, dma0):
        return _finding("idle_states", "problem",
                        "leaving idle states delays every wake-up", gain, ev, fix,
                        delta_ns=gain)
    if _tail_beyond_noise(tail, base, dma0):
        return _finding("idle_states", "option",
                        "holding cpu_dma_latency at 0 shortens the tail, not the typical sleep",
                        tail, ev, fix, gain_on="p99", delta_ns=gain)
    return _finding("idle_states", "ok",
                    "holding cpu_dma_latency at 0 changes little here", gain, ev,
                    delta_ns=gain)


def _traced_term(c, term):
    """One evidence line: the traced median of `term` per traced method."""
    ms = ((c.get("trace") or {}).get("methods") or {})
    parts = [f"{m} {format_ns(s['terms'][term]['median'])}" for m, s in ms.items()
             if s["terms"][term]["median"] is not None]
    return f"traced {term} at {format_ns(REFERENCE_NS)}: " + ", ".join(parts) if parts else None


def _idle_kind(f):
    """What the host idles in: "vm_halt" (a VM whose vCPU halts: no cpuidle
    driver, or haltpoll), "cstates" (a cpuidle driver with C-states) or
    "halt" (bare metal idling in HLT, no driver)."""
    driver = f.get("cpuidle_driver")
    none = not driver or driver == "none"
    if f.get("virtualization") == "hypervisor" and (none or driver == "haltpoll"):
        return "vm_halt"
    return "halt" if none else "cstates"


def _poll_now(f, form):
    """form with the host fact guest_halt_poll_ns (how long an idle vCPU
    polls before it halts) in it, or "" where it is unknown."""
    ns = f.get("guest_halt_poll_ns")
    return form.format(format_ns(ns)) if isinstance(ns, int) else ""


def _halt_fix(f, dma_gain=None):
    """The fix for the idle cost, named by what the host is.  A guest with
    cpuidle-haltpoll has an idle state for cpu_dma_latency to limit (held
    at 0, only POLL is left: the vCPU polls instead of halting), so it is
    named there unless the A/B (``dma_gain``: True, False, None not run)
    measured it as changing nothing."""
    kind = _idle_kind(f)
    if kind == "vm_halt":
        haltpoll = f.get("cpuidle_driver") == "haltpoll"
        poll = ("raise guest_halt_poll_ns (" + _poll_now(f, "now {}; ")
                + "/sys/module/haltpoll/parameters)"
                if haltpoll else "the cpuidle-haltpoll driver (guest_halt_poll_ns)")
        ways = [poll, "idle=poll", "halt polling on the host (KVM halt_poll_ns)"]
        if haltpoll and dma_gain is not False:
            ways.insert(0, "hold /dev/cpu_dma_latency at 0 while timing matters (sleepacc "
                        "--dma-latency 0; only the POLL state is left"
                        + (": measured here as a gain)" if dma_gain else ")"))
        return (f"keep the vCPU from halting: {', '.join(ways[:-1])}, or {ways[-1]}; "
                "or spin the end of the sleep (sleepacc.sleep)")
    if kind == "halt":
        return ("keep the CPU from halting (idle=poll) or spin the end of the sleep "
                "(sleepacc.sleep)")
    return ("hold /dev/cpu_dma_latency at 0 while timing matters (sleepacc --dma-latency 0) "
            "or limit C-states; or spin the end of the sleep (sleepacc.sleep)")


def _halt(c):
    """The cost of waking a halted or idle CPU: traced (the timer
    interrupt's lateness on an idle CPU less that on a busy one) where a
    trace ran, else the model's idle exit; named and fixed by what the host
    is.  A fix an A/B here measured as changing nothing is not given."""
    f = c["facts"]
    kind = _idle_kind(f)
    what = {"vm_halt": "a halted vCPU", "halt": "a halted CPU",
            "cstates": "a CPU in an idle state"}[kind]
    s = ((c.get("trace") or {}).get("methods") or {}).get(REFERENCE_METHOD)
    ev = [{"vm_halt": "a virtual machine whose vCPU halts when idle ("
                      + ("cpuidle-haltpoll: it polls for guest_halt_poll_ns"
                         + _poll_now(f, " ({})") + ", then halts)"
                         if f.get("cpuidle_driver") == "haltpoll" else
                         "no cpuidle driver: cpu_dma_latency cannot stop it)"),
           "halt": "no cpuidle driver: the CPU idles in HLT",
           "cstates": f"cpuidle driver {f.get('cpuidle_driver')}: idle states to leave"}[kind]]
    idle_ab = _idle_ab(c)
    fix = _halt_fix(f, idle_ab)
    if kind == "cstates" and idle_ab is not None and not idle_ab:
        fix = "spin the end of the sleep (sleepacc.sleep)"
        ev.append("holding cpu_dma_latency at 0 measured no gain here (A/B now)")
    cost, basis = None, "inferred"
    if s is not None:
        cost = c["trace"]["methods"][REFERENCE_METHOD]["halt_ns"]
        idle, busy = s["timer_irq_idle"]["median"], s["timer_irq_busy"]["median"]
        ev.append(f"traced timer_irq: {format_ns(idle)} on an idle CPU "
                  f"({s['idle_at_expiry']} samples), {format_ns(busy)} on a busy one "
                  f"({s['busy_at_expiry']})")
        if cost is not None:
            basis = "traced"
    if cost is None:
        p = c["params"]
        if p is not None and p.idle_exit_ns:
            cost = p.idle_exit_ns * REFERENCE_NS / (REFERENCE_NS + p.idle_exit_half_ns)
            ev.append(f"model: idle exit {format_ns(cost)} at {format_ns(REFERENCE_NS)}")
    if cost is None:
        why = (c.get("trace") or {}).get("why")
        ev.append("not traced: " + why if why else
                  "too few traced samples on an idle and on a busy CPU to compare")
        return _finding("idle_halt", "unknown", f"the cost of waking {what} is not known",
                        None, ev, fix, basis="inferred")
    iv = c["trace"]["methods"][REFERENCE_METHOD]["halt_interval_ns"] if basis == "traced" \
        else None
    if iv is not None:
        ev.append(f"the halt cost's 95 % interval: {format_ns(iv[0])} .. {format_ns(iv[1])}")
    if cost < MIN_GAIN_NS or (iv is not None and iv[0] <= 0):
        return _finding("idle_halt", "ok", f"waking {what} costs little here"
                        + (" (within the noise)" if cost >= MIN_GAIN_NS else ""), cost, ev,
                        basis=basis, estimate=basis == "inferred")
    return _finding("idle_halt", "problem" if basis == "traced" else "option",
                    f"waking {what} delays the wake-up", cost, ev, fix, basis=basis,
                    estimate=basis == "inferred")


def _idle_ab(c):
    """True/False: the cpu_dma_latency A/B measured a gain / none; None: not run."""
    base, dma0 = c["base"], c.get("dma0")
    if base is None or dma0 is None:
        return None
    gain, tail = base.median - dma0.median, base.p99 - dma0.p99
    return _beyond_noise(gain, base, dma0) or _tail_beyond_noise(tail, base, dma0)


def _tick(c):
    f = c["facts"]
    hz, hres, nohz = f.get("hz"), f.get("high_res_timers"), f.get("nohz")
    p = c["params"]
    ev = [f"HZ={hz or 'unknown'} ({f.get('hz_source') or 'unknown source'}), high-resolution "
          f"timers {hres or 'unknown'}, tickless mode {nohz or 'unknown'}, nohz_full CPUs "
          f"{f.get('nohz_full') or 'none'}"]
    if p is not None:
        tick = "of " + format_ns(p.tick_ns) if p.tick_ns else "none"
        ev.append(f"model: tick quantisation {tick} for {REFERENCE_METHOD}")
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
        ev.append(f"best wake-up measured here: {_ref(best)} median error {format_ns(best.median)} "
                  f"without slack; idle bare metal typically takes about "
                  f"{format_ns(BARE_METAL_WAKE_NS)}")
    # the guest's own remedy for halting, unless it already has it
    poll = "" if f.get("cpuidle_driver") == "haltpoll" else " or cpuidle-haltpoll"
    return _finding(
        "virtualisation", "problem" if (gain or 0) >= 5_000 else "ok",
        "a virtual CPU: timer interrupts and wake-ups pass through the hypervisor", gain, ev,
        f"inside the guest: the hybrid method (spin the last part){poll}; on the host: "
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
          f"steal time during the checks: {steal:.1f}% of CPU time over {c['wall']:.1f} s"
          if steal is not None else None,
          f"{_ref(base)}: {base.invol} involuntary context switches, median error "
          f"{format_ns(base.median)}, p99 {format_ns(base.p99)}" if base else None]
    if load is not None:
        ev[0] += " (includes this process: not used for the verdict)"
    # busy: CPU time of OTHER processes during the checks (or steal), never
    # the load average, which counts the doctor's own work
    busy = ((steal is not None and steal > 2.0) or (others is not None and others >= 0.5))
    gain = (base.p99 - base.median) if base else None
    if not busy:
        return _finding("busy_host", "ok", "the host is quiet", 0, ev, basis="measured")
    return _finding("busy_host", "problem",
                    "the host is busy: other work delays wake-ups (the tail shows it)", gain, ev,
                    "measure and time on an idle host; pin the timing thread (--cpu) to a CPU "
                    "kept free of other work (isolcpus/nohz_full, cpusets); ask for less "
                    "steal on a VM; where the loop must share the CPUs, a short scheduler "
                    "slice for its thread (sleepacc.Pacer(period, slice=100e-6), Linux 6.12+) "
                    "lets its wake-ups preempt the other work sooner",
                    estimate=True, gain_on="p99", basis="measured")


def _hybrid(c):
    """The hybrid sleep against the slack-free kernel wait (else the
    reference), at the median and at the p99, measured in this run: an
    option only where its p99 is the better one."""
    base, hyb = c["base"], c["hybrid"]
    kern = c.get("kernel") or base
    if not kern or not hyb:
        return None
    kname = f"{KERNEL_METHOD}({format_ns(REFERENCE_NS)})" if c.get("kernel") else _ref(base)
    hname = f"hybrid({format_ns(REFERENCE_NS)})"
    gain, tail = kern.median - hyb.median, kern.p99 - hyb.p99
    p50_win = hname if hyb.median < kern.median else kname
    p99_win = hname if hyb.p99 < kern.p99 else kname
    ev = [f"{_ref(base)} median error {format_ns(base.median)}, p99 {format_ns(base.p99)} at "
          f"{base.cpu:.1f}% CPU" if base else None,
          f"{kname} median error {format_ns(kern.median)}, p99 {format_ns(kern.p99)}"
          if c.get("kernel") else None,
          f"{hname} median error {format_ns(hyb.median)}, p99 {format_ns(hyb.p99)} at {hyb.cpu:.1f}% CPU"]
    busy = c.get("busy")
    wins = (f"under this load {p50_win} wins at p50 and at p99" if p50_win == p99_win else
            f"under this load {p50_win} wins at p50 and {p99_win} at p99")
    if busy:
        ev.append(wins)
    if tail <= 0:
        title = (f"a hybrid sleep does not beat {kname} at the tail here (p99 {format_ns(hyb.p99)} "
                 f"against {format_ns(kern.p99)})")
        if busy:
            title += f"; {wins}"
        return _finding("hybrid", "ok", title, None, ev,
                        f"keep the kernel wait ({KERNEL_METHOD}) where the tail matters; "
                        "sleepacc.Sleeper() (auto) spins little while the CPUs are contended "
                        "(its stats say so), so its tail stays close to the kernel wait's",
                        gain_on="p99", delta_ns=tail)
    return _finding("hybrid", "option" if gain >= 2_000 else "ok",
                    "a hybrid sleep (kernel sleep, then spin) trades CPU for accuracy"
                    + (f"; {wins}" if busy else ""),
                    gain, ev,
                    "sleepacc.sleep(seconds) or sleepacc.Sleeper() (auto: timerfd, then a spin "
                    "whose margin it learns on this host) for waits that must end on time; keep "
                    "kernel sleeps for everything else")
