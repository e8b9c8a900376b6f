"""What the doctor's measurements make of a run and of the model: the traced
parts of a 1 ms sleep (each traced method's terms, the halt cost and their
intervals), the model's causes and advice held against what was measured
here (a traced term replaces the model's where they disagree; advice for a
fix an A/B measured as doing nothing is dropped), and the text of the
traced table, the causes and the cyclictest-like ladder.  The checks that
measure are :mod:`sleepacc.doctor`'s."""
from __future__ import annotations

import sleepacc
from sleepacc._units import format_ns

#: The sleep every check compares: nanosleep for 1 ms.
REFERENCE_METHOD = "nanosleep"
REFERENCE_NS = 1_000_000
#: The methods the doctor traces, and how many samples each.
TRACE_METHODS = ("nanosleep", "timerfd")
TRACE_N = 100
#: Trace and model disagree on a term by more than max(3 µs, 20%).
DISAGREE_NS = 3_000
DISAGREE_SHARE = 0.2
#: Fewest traced samples of a kind (idle or busy CPU) a figure is made of.
MIN_TRACED = 3


def _trace_summaries(n=TRACE_N):
    """({method: summary}, None) for TRACE_METHODS at the reference duration
    with the thread's own settings, or (None, why) where no trace can run.
    A summary is Trace.summary() plus ``wakeup``: the median lateness of
    the complete samples whose CPU was busy at the expiry (no halt in it),
    less the tracer's own cost (traced less untraced median); None with
    fewer than MIN_TRACED such samples (where the CPU halts when idle, a
    busy one at the expiry is rare, and one sample is no median)."""
    from sleepacc.trace import _stats
    out = {}
    for method in TRACE_METHODS:
        try:
            t = sleepacc.trace(method, REFERENCE_NS / 1e9, n=n)
        except OSError as exc:   # the core's one line: what the trace needs
            return None, exc.strerror or str(exc)
        except ValueError as exc:   # a method this system lacks
            return None, str(exc)
        s = t.summary()
        irq = t.terms["timer_irq"]
        for key, group in (("idle", t.complete & (t.idle == 1)),
                           ("busy", t.complete & (t.idle == 0))):
            s[f"timer_irq_{key}"]["interval"] = _median_interval(irq[group])
        late = t.lateness[t.complete & (t.idle == 0)]
        busy = _stats(late)["median"] if len(late) >= MIN_TRACED else None
        own = max(0, (s["traced"]["median"] or 0) - (s["untraced"]["median"] or 0))
        iv = _median_interval(late)
        s["wakeup"] = {"median": None if busy is None else busy - own,
                       "interval": None if iv is None else [iv[0] - own, iv[1] - own]}
        out[method] = s
    return out, None


def _median_interval(values):
    """A 95 % interval of the median of `values` by order statistics
    (ranks n/2 -/+ sqrt(n)); None for fewer than MIN_TRACED values."""
    import numpy as np
    xs = np.sort(np.asarray(values, dtype=np.float64))
    n = len(xs)
    if n < MIN_TRACED:
        return None
    h = n ** 0.5
    return [float(xs[max(int(n / 2 - h), 0)]), float(xs[min(int(np.ceil(n / 2 + h)), n - 1)])]


def _halt_interval(s):
    """The halt cost's interval from its two medians' intervals (None:
    not known)."""
    if not s:
        return None
    idle = (s.get("timer_irq_idle") or {}).get("interval")
    busy = (s.get("timer_irq_busy") or {}).get("interval")
    if idle is None or busy is None:
        return None
    return [idle[0] - busy[1], idle[1] - busy[0]]


def _halt_ns(s):
    """The traced halt cost: the timer interrupt's median lateness on an
    idle CPU less that on a busy one (None without MIN_TRACED of each)."""
    if not s or s.get("idle_at_expiry", 0) < MIN_TRACED or s.get("busy_at_expiry", 0) < MIN_TRACED:
        return None
    idle, busy = s["timer_irq_idle"]["median"], s["timer_irq_busy"]["median"]
    return None if idle is None or busy is None else float(idle - busy)


def _trace_section(summaries, why):
    """result["trace"]: each traced method's parts and its halt cost."""
    if summaries is None:
        return {"available": False, "why": why, "requested_ns": REFERENCE_NS, "methods": {}}
    return {"available": True, "why": None, "requested_ns": REFERENCE_NS,
            "methods": {m: {**s, "halt_ns": _halt_ns(s), "halt_interval_ns": _halt_interval(s)}
                        for m, s in summaries.items()}}


def format_trace(section) -> str:
    """The traced parts as text: per term the median / p99 (µs) of each
    traced method, the complete counts and the halt cost (two methods fit
    60 columns with the report's indent of five)."""
    if not section or not section.get("available"):
        return f"not traced: {(section or {}).get('why') or 'no trace'}"
    ms = section["methods"]

    def cell(st):
        return "-" if st["median"] is None else f"{st['median'] / 1e3:.1f} / {st['p99'] / 1e3:.1f}"
    out = [f"{'term (median / p99 µs)':22}" + "".join(f"{m:>16}" for m in ms)]
    names = list(next(iter(ms.values()))["terms"]) if ms else []
    for name in names:
        out.append(f"{name:22}" + "".join(f"{cell(s['terms'][name]):>16}" for s in ms.values()))
    for key, label in (("timer_irq_idle", "timer_irq, CPU idle"),
                       ("timer_irq_busy", "timer_irq, CPU busy"),
                       ("untraced", "lateness untraced"), ("traced", "lateness traced")):
        out.append(f"{label:22}" + "".join(f"{cell(s[key]):>16}" for s in ms.values()))
    out.append(f"{'complete samples':22}"
               + "".join(f"{str(s['complete']) + '/' + str(s['n']):>16}" for s in ms.values()))
    return "\n".join(out)


def _data_os(sweep):
    """The OS the data were measured on: the records' os column, else the sweep's host."""
    for r in (sweep if isinstance(sweep, list) else []):
        if isinstance(r, dict) and r.get("os"):
            return str(r["os"])
    host = getattr(sweep, "host", None) or {}
    return host.get("sysname") or None


#: The words by which an advice line recommends the fix an A/B finding tried.
_FIX_WORDS = {
    "idle_states": ("cpu_dma_latency", "--dma-latency", "max_cstate"),
    "timer_slack": ("PR_SET_TIMERSLACK", "--slack 1", "timer slack to 1"),
    "rt_policy": ("SCHED_FIFO", "--policy fifo", "chrt "),
}


#: The ladder's step that tries the same fix as an A/B finding.
_LADDER_STEP = {"idle_states": "idle_exit", "timer_slack": "timer_slack",
                "rt_policy": "rt_policy"}


def _measured_nothing(f, table=None):
    """Whether finding f is an A/B run now that measured no gain, and the
    ladder's step of the same fix (where it has an interval) no saving
    beyond its noise either."""
    if not (f.get("basis") == "measured" and f.get("delta_ns") is not None
            and f["status"] == "ok"):
        return False
    row = next((r for r in table or () if r["step"] == _LADDER_STEP.get(f["id"])), None)
    return (row is None or row.get("within_noise") is None or row["within_noise"]
            or row["term_ns"] >= 0)


def _consistent(explanation, findings, table=None):
    """No advice that contradicts a finding in the same report: with a
    measured problem on the list, the model may not say there is nothing to
    remove; a line that recommends a fix an A/B here measured as changing
    nothing (and the ladder's step of it no saving beyond its noise) is
    dropped.  Returns (explanation, [why each line was dropped])."""
    if not explanation:
        return explanation, []
    lines, dropped = explanation.split("\n"), []
    if any(f["status"] == "problem" and (f["gain_us"] or 0) >= 2 for f in findings):
        lines = [ln for ln in lines if "nothing large to remove" not in ln]
    nothing = [f for f in findings if _measured_nothing(f, table) and f["id"] in _FIX_WORDS]
    kept = []
    for ln in lines:
        hit = next((f for f in nothing if any(w in ln for w in _FIX_WORDS[f["id"]])), None)
        if hit is None:
            kept.append(ln)
        else:
            dropped.append(f"{hit['id']}: measured here as changing nothing "
                           f"(A/B {format_ns(hit['delta_ns'])})")
    return "\n".join(kept), dropped


def _traced_for(cause, s, section):
    """The traced figure a cause of the model is checked against, and its
    95 % interval where known: (None, None) when the trace has no such
    term.  Slack, the halt cost, rounding, and for the wake-up the busy
    samples' lateness less the tracer's own cost."""
    name, label = cause.get("name"), cause.get("label") or ""
    if name in ("timer_slack", "select_slack"):
        return s["terms"]["slack"]["median"], None
    if name == "idle_exit":
        m = section["methods"][REFERENCE_METHOD]
        return m["halt_ns"], m.get("halt_interval_ns")
    if name in ("tick", "granularity"):
        return s["terms"]["rounding"]["median"], None
    if name == "wakeup":
        w, iv = s.get("wakeup", {}).get("median"), s.get("wakeup", {}).get("interval")
        if w is None or "slack" in label:
            return w, iv
        sl = s["terms"]["slack"]["median"]
        if sl is None:
            return None, None
        return w - sl, None if iv is None else [iv[0] - sl, iv[1] - sl]
    return None, None


def _reconcile(fit_json, params, section):
    """The model's causes for the reference method at the reference
    duration, each with its basis.  Where the trace measured the same term
    and the model's figure lies outside the traced figure's 95 % interval
    (where known), the trace is used: basis "traced", ``ns`` the trace's,
    ``model_ns`` the model's.  A traced figure too noisy to tell (its
    interval holds the model's) leaves the cause "inferred", with the
    traced figure beside it.  Returns (causes, disagreements): a
    disagreement is a traced term the model misses by more than
    max(DISAGREE_NS, DISAGREE_SHARE of it)."""
    methods = ((fit_json or {}).get("methods") or {})
    causes = [dict(c) for c in (methods.get(REFERENCE_METHOD) or {}).get("causes") or []]
    s = ((section or {}).get("methods") or {}).get(REFERENCE_METHOD)
    disagreements = []
    for c in causes:
        c["basis"] = "inferred"
        traced, iv = _traced_for(c, s, section) if s else (None, None)
        if traced is None or c.get("ns") is None:
            continue
        model_ns = float(c["ns"])
        c["traced_ns"], c["traced_interval_ns"] = float(traced), iv
        if iv is not None and iv[0] <= model_ns <= iv[1]:
            c["disagrees"] = False
            continue
        c.update(basis="traced", ns=float(traced), model_ns=model_ns)
        off = abs(model_ns - traced) > max(DISAGREE_NS, DISAGREE_SHARE * abs(traced))
        c["disagrees"] = off
        if off:
            disagreements.append({"cause": c["name"], "label": c.get("label") or c["name"],
                                  "model_ns": model_ns, "traced_ns": float(traced)})
    return causes, disagreements


def format_causes(causes, disagreements):
    """The model's causes with their basis, and where trace and model disagree."""
    out = []
    if causes:
        out.append("causes: " + "; ".join(
            f"{c.get('label') or c['name']} {format_ns(c['ns'])} ({c['basis']})" for c in causes))
    for d in disagreements:
        out.append(f"trace and model disagree on {d['label']}: traced "
                   f"{format_ns(d['traced_ns'])}, model {format_ns(d['model_ns'])}; "
                   "the trace is used")
    return "\n".join(out)


def cyclictest_term(r) -> str:
    """One row's term as text: "" for the first row, "~0 (noise)" where its
    interval holds 0 (never a gain), else the signed change."""
    if r["term_ns"] is None:
        return ""
    if r.get("within_noise"):
        return "~0 (noise)"
    return f"{'+' if r['term_ns'] >= 0 else '-'}{format_ns(abs(r['term_ns']))}"


def format_cyclictest(table) -> str:
    """The term-by-term table as text; a term within the noise (its
    interval holds 0) is "~0 (noise)", never a gain."""
    out = [f"{'setting':66} {'median':>10} {'p99':>10} {'term':>10}"]
    for r in table:
        med = format_ns(r["median_ns"]) if r["median_ns"] is not None else "-"
        p99 = format_ns(r["p99_ns"]) if r["p99_ns"] is not None else "-"
        term = cyclictest_term(r)
        out.append(f"{r['label'][:66]:66} {med:>10} {p99:>10} {term:>10}"
                   + (f"  ({r['note']})" if r["note"] else ""))
    return "\n".join(out)


