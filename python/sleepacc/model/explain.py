"""The words of a fit: what ``Model.explain()`` says, apart from the fit
(as a summary is apart from the results it reads).

Everything here reads a fitted :class:`~sleepacc.model.MethodParams` and
the host facts and returns text: the sum that makes up one sleep, the
verdict and causes, the notes worth showing, and the advice per cause found
(:func:`advice`), for the OS the data come from.  Nothing here fits.
"""

from __future__ import annotations

import re
from typing import List, Optional

import numpy as np

from .._units import format_ns
from .terms import LINUX_DEFAULT_SLACK_NS, SELECT_SHARE, _os_kind, _round_unit


def _us(ns: float) -> str:
    """A duration in the unit a reader wants: ns, µs or ms."""
    a = abs(ns)
    if a >= 10_000_000:
        return f"{ns / 1e6:.1f} ms"
    if a >= 10_000:
        return f"{ns / 1e3:.0f} µs"
    if a >= 1_000:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def pick_request(p, seconds: Optional[float]) -> float:
    """The request (ns) a sentence is about: `seconds`, else 1 ms, 3 ms,
    100 µs or 10 ms where measured, else the middle measured request."""
    if seconds is not None:
        return float(round(seconds * 1e9))
    req = p.requested_ns
    if not req:
        return 1e6
    for want in (1e6, 3e6, 1e5, 1e7):
        if want in req:
            return want
    nonzero = [r for r in req if r > 0] or req
    return float(nonzero[len(nonzero) // 2])


def host_lines(facts: dict, sleeping) -> List[str]:
    """What the host facts (when the data carry them) say about the
    components of the methods that sleep: the configured HZ against the
    tick the data show."""
    hz = facts.get("hz")
    if not isinstance(hz, (int, float)) or hz <= 0:
        return []
    shown = [f"HZ={hz:g}"]
    for key, label in (("clocksource", "clock source"), ("high_res_timers", "high-res timers")):
        if facts.get(key) is not None:
            shown.append(f"{label} {facts[key]}")
    if isinstance(facts.get("timer_slack_ns"), (int, float)):
        shown.append(f"timer slack {format_ns(facts['timer_slack_ns'])}")
    who = "documented" if facts.get("hz_source") == "documented" else "host"
    lines = [f"{who}: " + ", ".join(shown) + "."]
    ticks = {p.tick_ns for p in sleeping if p.tick_ns}
    if sleeping and not ticks:
        lines.append(f"no method shows the {format_ns(1e9 / hz)} tick of HZ={hz:g}: "
                     "the timers fire between ticks (high-resolution, one-shot timers).")
    for t in sorted(ticks):
        agree = abs(t - 1e9 / hz) <= 0.02 * t
        lines.append(f"the fitted {format_ns(t)} tick {'matches' if agree else 'differs from'} "
                     f"HZ={hz:g}.")
    return lines


def explain_one(p, facts: dict, seconds) -> List[str]:
    """The lines of one method: the sum at one request, the verdict, the
    causes, the notes worth showing and the advice."""
    req = pick_request(p, seconds)
    pred = p.predict_ns(req)
    measured = None
    if req in p.requested_ns:
        measured = p.measured_ns[p.requested_ns.index(req)]
    meas_txt = f" (measured {_us(measured)})" if measured is not None else ""
    name = p.method
    if not p.sleeps:
        return [f"{name}({format_ns(req)}) does not sleep: every call costs "
                f"{_us(p.constant_ns)}{meas_txt}. {p.notes.get('sleeps', '')}".rstrip()]
    lines = [_sum_line(p, req, pred, meas_txt),
             f"  verdict: {p.verdict} ({p.verdict_note})."]
    if p.causes:
        cs = []
        for c in p.causes:
            iv = c.get("interval")
            ivt = f" [{_us(iv[0])}, {_us(iv[1])}]" if iv else ""
            cs.append(f"{c['name']} {_us(c['ns'])}{ivt}"
                      + ("" if c.get("identified", True) else " (not identified)"))
        lines.append(f"  causes at {format_ns(p.reference_ns)}: " + "; ".join(cs) + ".")
    ok = p.within_tolerance()
    lines.append(f"  fit: {int(ok.sum())} of {ok.size} measured durations within "
                 "max(5% of the oversleep, 5 µs) of the model.")
    lines.extend(_note_lines(p))
    lines.extend("  advice: " + a for a in advice(p, facts, req))
    return lines


def _sum_line(p, req: float, pred: float, meas_txt: str) -> str:
    """One sleep as the sum of its parts: "nanosleep(1 ms) = 1000 µs asked + ..."."""
    name = p.method
    parts = p._parts(req)
    if any(c == "zero_shortcut" for c, _, _ in parts):
        return (f"{name}({format_ns(req)}) = {_us(req)} asked, rounded down to 0 "
                f"{format_ns(p.granularity_ns).split()[-1]}: the call returns at once = "
                f"{_us(pred)}{meas_txt}.")
    terms = [f"{_us(req)} asked"]
    for _, label, v in parts:
        if abs(v) < 0.5:
            continue
        terms.append(f"{'+' if v >= 0 else '-'} {_us(abs(v))} {label}")
    return f"{name}({format_ns(req)}) = " + " ".join(terms) + f" = {_us(pred)}{meas_txt}."


def _note_lines(p) -> List[str]:
    """The notes a reader needs: a weak unit, an unidentified tick or
    slack, load, a measured idle exit, the set-up after the deadline."""
    out = []
    for comp in ("granularity", "tick", "slack", "load", "idle_exit", "entry"):
        note = p.notes.get(comp)
        if not note:
            continue
        if comp == "granularity" and "weakly" not in note:
            continue
        if comp in ("tick", "slack") and p.identified.get(comp, False) and "below one" not in note:
            continue
        if comp == "idle_exit" and not note.startswith("measured"):
            continue
        out.append(f"  {comp}: {note}.")
    return out


# ---------------------------------------------------------------------------
# Advice: one function per cause, each given (p, kind, linux, req, facts)
# ---------------------------------------------------------------------------

# Linux has had per-thread timer slack since 2.6.28.
_SLACK_SINCE = (2, 6, 28)


def advice(p, facts: dict, req: float) -> List[str]:
    """Fixes for the causes the fit identified, each the fix of the OS the
    data come from (an OS the facts do not name gets only fixes that hold
    everywhere).  A cause whose interval reaches 0 gets none; under an
    ``unexplained`` verdict the only advice is to measure more; never
    "nothing to remove" above a finding or a point the model misses."""
    kind = _os_kind(facts)
    linux = kind == "linux"
    if p.verdict == "unexplained":
        few = len(set(p.requested_ns)) < 3
        return ["the model cannot say what this oversleep is made of, so it advises no fix: "
                + ("measure more durations (at least three, spread over the range of interest)"
                   if few else "measure more (more samples per duration, and durations between "
                   "the measured ones)") + "."]
    out: List[str] = []
    for rule in (_advise_tick, _advise_unit, _advise_coalescing, _advise_select,
                 _advise_slack, _advise_wakeup, _advise_idle_exit, _advise_zero):
        out.extend(rule(p, kind, linux, req, facts))
    if not out:
        out.append(_nothing_line(p, req))
    return out


def _nothing_line(p, req: float) -> str:
    """What to say where no identified cause has a fix: what is left at the
    point the model misses most (a ``partly`` verdict), else how much is over
    the request, else that there is nothing large."""
    req_a = np.asarray(p.requested_ns, dtype=float)
    meas = np.asarray(p.measured_ns, dtype=float)
    if p.verdict == "partly" and req_a.size:
        e = meas - np.atleast_1d(p.predict_ns(req_a))
        i = int(np.argmax(np.abs(e)))
        return (f"{_us(abs(float(e[i])))} at {format_ns(float(req_a[i]))} is left by the model "
                "with no cause named: measure more there (more samples, durations around it) "
                "before changing anything.")
    over = float(p.predict_ns(req)) - req
    top = float(np.max(meas - req_a)) if req_a.size else over
    if max(over, top) < 5_000:
        return "nothing large to remove: this method already sleeps about as asked."
    return (f"{_us(max(over, 0.0))} over the request at {format_ns(req)}, none of it from an "
            "identified cause with a known fix.")


def _identified(p, cause: str) -> bool:
    """Whether the fit identified `cause`: its entry among the causes at the
    reference request, else what the fit recorded of the term."""
    for c in p.causes:
        if c["name"] == cause:
            return bool(c.get("identified", True))
    ident = p.identified
    if cause == "granularity":
        return bool(ident.get("granularity", False) or p.granularity_ns > 1)
    if cause == "coalescing":
        return bool(ident.get("proportional", False) or ident.get("coalescing", False))
    if cause == "wakeup":
        prm = p.parameters.get("wakeup_ns") or p.parameters.get("constant_ns") or {}
        return bool(prm.get("identified", False))
    return bool(ident.get({"timer_slack": "slack"}.get(cause, cause), False))


def _linux_version(os_name: str):
    """(major, minor, patch) of a "Linux 2.6.32"-like name; (major,) of
    "Linux 3.x"; None where it names no version."""
    m = re.search(r"linux\D*?(\d+)(?:\.(\d+))?(?:\.(\d+))?", os_name or "", re.I)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)


def _may_have_slack(p, facts: dict) -> bool:
    """A Linux sleep that timer slack can delay: a kernel with slack (2.6.28
    or later, or no version named), a method that honours it, not a
    real-time thread."""
    ver = _linux_version(str(facts.get("os") or ""))
    if ver is not None and ver < _SLACK_SINCE[:len(ver)]:
        return False
    if ver is not None and len(ver) < 3 and ver == _SLACK_SINCE[:len(ver)]:
        return False           # "2.6" alone: before or after 2.6.28, not known
    if p.slack_source == "method" or p.state.ctx.get("honours_slack") is False:
        return False
    return "timerfd" not in p.method


def _advise_tick(p, kind, linux, req, facts) -> List[str]:
    if not p.tick_ns or not _identified(p, "tick"):
        return []
    hz = 1e9 / p.tick_ns
    alt = type(p)(**{**{k: getattr(p, k) for k in (
        "method", "granularity_ns", "rounding", "zero_return_ns", "proportional",
        "idle_exit_ns", "idle_exit_half_ns")}, "tick_ns": 0.0, "extra_ticks": 0,
        "constant_ns": max(p.constant_ns, 0.0)})
    gain = p.predict_ns(req) - alt.predict_ns(req)
    extra = (f", and {p.extra_ticks} extra tick{'s' if p.extra_ticks > 1 else ''} "
             "so it never ends early") if p.extra_ticks else ""
    spin = "a hybrid sleep (sleep whole ticks, spin the rest) at the cost of CPU time"
    if kind == "windows" and p.tick_ns < 1_000_000:
        return [f"the wake-up comes on the {format_ns(p.tick_ns)} timer interrupt (the "
                f"high-resolution waitable timer's){extra}: no timer wakes sooner; only {spin} "
                f"gets below it, about {_us(max(gain, 0.0))} on a {format_ns(req)} sleep."]
    if kind == "windows":
        fix = ("timeBeginPeriod(1) (a 1 ms tick) or a high-resolution waitable timer "
               "(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, Windows 10 1803+)"
               if p.tick_ns > 1_000_000 else
               "a high-resolution waitable timer (CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, "
               "Windows 10 1803+)")
    elif kind == "linux":
        fix = "a kernel with high-resolution timers (CONFIG_HIGH_RES_TIMERS, Linux 2.6.21+)"
    elif kind == "freebsd":
        fix = "FreeBSD 10 or later (calloutng: callouts between ticks on one-shot event timers)"
    elif kind == "bsd":
        fix = spin
    else:
        fix = "a kernel with high-resolution (one-shot) timers, or " + spin
    return [f"the {format_ns(p.tick_ns)} tick (HZ={hz:.0f}) rounds every sleep up to whole "
            f"ticks{extra}: {fix} would save about {_us(max(gain, 0.0))} on a "
            f"{format_ns(req)} sleep."]


def _advise_unit(p, kind, linux, req, facts) -> List[str]:
    if not (p.granularity_ns >= 1_000_000 and p.rounding == "up") or \
            not _identified(p, "granularity"):
        return []
    q = _round_unit(np.array([100_000.0]), p.granularity_ns, p.rounding)[0]
    alt = ("ppoll, epoll_pwait2 or clock_nanosleep take ns" if linux else
           "a call that takes a finer timeout")
    return [f"{p.method} counts its timeout in whole ms: a 100 µs request waits "
            f"{_us(q)} before anything else; {alt} and would save about "
            f"{_us(q - 100_000)}."]


def _advise_coalescing(p, kind, linux, req, facts) -> List[str]:
    if not _identified(p, "coalescing"):
        return []
    out = []
    if kind == "darwin":
        how = ("macOS: a real-time thread (THREAD_TIME_CONSTRAINT_POLICY) or a latency QoS "
               "gets a tighter leeway")
    elif kind == "windows":
        how = ("Windows: a timer set with a tolerable delay (SetWaitableTimerEx, "
               "SetCoalescableTimer) may slip by it; pass 0")
    else:
        how = "a real-time or latency-critical thread gets a tighter leeway"
    if p.proportional >= 0.001 and (kind == "freebsd" or p.proportional > 0.01):
        gain = p.proportional * req
        head = (f"the kernel may defer a timer by about {p.proportional * 100:.1f}% of its "
                "length to batch wake-ups")
        if kind == "freebsd":
            out.append(f"{head} (FreeBSD: sysctl kern.timecounter.alloweddeviation, default 5%, "
                       "which the kernel applies as a power-of-two share, 1/16 = 6.25%); "
                       f"setting it to 0 saves about {_us(gain)} on a {format_ns(req)} sleep.")
        else:
            out.append(f"{head} ({_us(gain)} on a {format_ns(req)} sleep): {how}.")
    if p.coalescing_share and p.coalescing_cap_ns:
        gain = min(p.coalescing_share * req, p.coalescing_cap_ns)
        out.append(f"timer coalescing lets the wake-up slip by min({p.coalescing_share:.3g} x d, "
                   f"{_us(p.coalescing_cap_ns)}) ({_us(gain)} on {format_ns(req)}): {how}.")
    return out


def _advise_select(p, kind, linux, req, facts) -> List[str]:
    if p.select_slack_ns is None or not linux or not _identified(p, "select_slack"):
        return []
    extra = max(0.0, SELECT_SHARE * req - p.select_slack_ns)
    return [f"select/poll allow max(slack, 0.1% of the timeout) ({_us(extra)} above the "
            f"slack on {format_ns(req)}, growing with d): nanosleep, timerfd or "
            "epoll_pwait2 with a timerfd avoid the share."]


def _advise_slack(p, kind, linux, req, facts) -> List[str]:
    out = []
    ok = linux and _may_have_slack(p, facts)
    fix = "prctl(PR_SET_TIMERSLACK, 1), a real-time policy, or timerfd"
    if p.slack_ns and p.slack_ns >= 5_000 and ok and _identified(p, "timer_slack"):
        how = " (assumed)" if p.slack_source == "assumed" else ""
        out.append(f"timer slack costs {_us(p.slack_ns)} per sleep{how}: {fix} removes it.")
    elif p.slack_ns is None and not p.tick_ns and ok and _identified(p, "wakeup") and \
            LINUX_DEFAULT_SLACK_NS <= p.constant_ns <= 2 * LINUX_DEFAULT_SLACK_NS:
        # only a constant that can hold the whole default slack and a wake-up no
        # larger than it is told it may be slack
        out.append(f"the {_us(p.constant_ns)} constant can hold Linux's default "
                   f"{_us(LINUX_DEFAULT_SLACK_NS)} timer slack and "
                   f"{_us(p.constant_ns - LINUX_DEFAULT_SLACK_NS)} of wake-up (one slack setting "
                   f"cannot tell them apart): {fix} would remove the slack part.")
    if p.state.load_ns and _identified(p, "load"):
        out.append("the sleeps end before the slack runs out: other wake-ups (load) cut the "
                   "window short; the figures depend on what else runs.")
    return out


def _advise_wakeup(p, kind, linux, req, facts) -> List[str]:
    if not _identified(p, "wakeup"):
        return []
    wake = p.wakeup_ns if p.wakeup_ns is not None else (p.constant_ns if not p.tick_ns else None)
    margin = p.state.margin_ns
    if margin is not None and p.constant_ns >= 2_000:   # a hybrid sleep ending late
        return [f"the kernel part ends {_us(p.constant_ns)} past the deadline: its timer slack "
                f"and wake-up outrun the {_us(margin)} margin; a larger margin (--margin), or "
                "the auto sleeper, which learns it, spins that part instead."]
    if wake is not None and wake >= 2_000 and not (p.slack_ns is None and p.constant_ns >= 30_000):
        return [f"wake-up takes {_us(wake)}: the hybrid method (sleep, then spin the last "
                f"part) removes it at the cost of CPU time."]
    return []


def _advise_idle_exit(p, kind, linux, req, facts) -> List[str]:
    if p.idle_exit_ns < 2_000 or not _identified(p, "idle_exit"):
        return []
    margin = p.state.margin_ns
    e_req = p.idle_exit_ns * req / (req + p.idle_exit_half_ns)
    # E is the asymptote (d -> infinity) of E*d/(d+h): say what the longest measured
    # sleep pays, not a figure no measurement reached
    d_top = float(max(p.requested_ns)) if len(p.requested_ns) else req
    e_top = p.idle_exit_ns * d_top / (d_top + p.idle_exit_half_ns)
    # a hybrid sleep still idles in its kernel part: its spin hides the exit only
    # when the margin covers slack + wake-up + this
    hide = (f"a hybrid sleep hides it behind its spin when its margin also covers these "
            f"{_us(e_top)} (the auto sleeper learns such a margin)")
    fix = ("holding /dev/cpu_dma_latency at 0 (sleepacc --dma-latency 0) avoids the deep idle "
           "state; " + hide if linux else hide)
    if margin is not None:   # a hybrid sleep already: its kernel part outruns the margin
        fix = (f"the kernel part then ends past the {_us(margin)} margin; "
               + ("holding /dev/cpu_dma_latency at 0 (sleepacc --dma-latency 0), " if linux
                  else "") + "a larger margin (--margin), or the auto sleeper, which "
               "learns it, keeps the spin ahead of it")
    return [f"idle exit grows to {_us(e_top)} at {format_ns(d_top)}, the longest measured "
            f"({_us(e_req)} at {format_ns(req)}): {fix}."]


def _advise_zero(p, kind, linux, req, facts) -> List[str]:
    if p.zero_return_ns is None or p.rounding != "down" or not _identified(p, "zero_shortcut"):
        return []
    if p.state.registry_unit == 1:   # the call takes ns: nothing truncates
        return [f"a timeout below about {format_ns(p.granularity_ns)} returns at once "
                f"({_us(p.zero_return_ns)}) without sleeping: {p.method} takes ns, so its "
                "deadline has passed before it would sleep (the call's own entry takes that "
                "long); a wait that short needs a spin."]
    return [f"a timeout below {format_ns(p.granularity_ns)} is truncated to 0 and returns "
            f"at once ({_us(p.zero_return_ns)}): it does not sleep at all; round up, or "
            "use a call that takes ns."]
