"""Groups: the records split by machine and configuration, one model each
(:func:`fit_groups`), and what only several groups can tell.

Rows come from :func:`sleepacc.records.to_records` (the one row shape).  A
tidy row's group columns (seed, host, os, timer_config, slack_ns,
dma_latency_us, policy) are its group; a measured point's group is what
sleepacc applied for its run (its ``_env``), its host facts (``_host``)
being one machine.  Per method the points of a request are pooled, the
registry's unit is the search's prior, and the constant is split into
timer slack and wake-up from what is known (applied, host, assumed).
Across groups that differ only in the applied slack, the split is fitted;
across a held cpu_dma_latency of 0, the idle-exit cost is measured.
"""

from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import records
from .._units import format_ns
from .explain import _us
from .inference import BOOTSTRAP, _finish
from .results import MethodParams, Model, ModelSet
from .search import _fit_method
from .solve import _FLOOR_NS, point_sigma
from .terms import LINUX_DEFAULT_SLACK_NS, _os_kind

# Columns that identify one machine/configuration in tidy records.
GROUP_KEYS = ("seed", "host", "os", "timer_config", "slack_ns", "dma_latency_us", "policy")

# Linux gives a real-time thread no timer slack (hrtimer sleeps and
# select's estimate both skip it for rt_task()).
_RT_POLICIES = ("fifo", "rr")


def _method_info():
    """{name: (granularity_ns, honours_slack, family)} from the core's registry,
    or {} when the compiled core is not importable (analysis of records only)."""
    try:
        from .. import _core
    except ImportError:
        return {}
    out = {}
    for m in _core.methods():
        hs = {"yes": True, "no": False}.get(str(m["honours_slack"]))
        out[m["name"]] = (m["granularity_ns"] or 1, hs, m["family"])
    return out


def _group_row(r: dict) -> dict:
    """The row as the model groups it.  A measured point (one with ``_env``)
    belongs to the settings applied for its run: slack (a positive slack),
    dma latency and policy from its env; its context columns describe the
    host, which ``_host`` carries as facts."""
    env = r.get("_env")
    if env is None:
        return r
    out = {k: v for k, v in r.items() if k not in GROUP_KEYS}
    slack = env.get("slack_ns", env.get("slack"))
    if isinstance(slack, (int, float)) and slack > 0:
        out["slack_ns"] = int(slack)
    v = env.get("dma_latency_us")
    if isinstance(v, int) and not isinstance(v, bool):
        out["dma_latency_us"] = v
    if isinstance(env.get("policy"), str):   # set for the run (else the thread's: the host's)
        out["policy"] = env["policy"]
    return out


def _linux_version(os_name: str):
    m = re.search(r"linux\D*(\d+)\.(\d+)(?:\.(\d+))?", os_name or "", re.I)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)


def _known_slack(facts: dict, slack_applied, honours) -> Tuple[Optional[float], str]:
    if honours is False:
        return 0.0, "method"
    if slack_applied is not None:
        return float(slack_applied), "applied"
    if isinstance(facts.get("timer_slack_ns"), (int, float)):
        return float(facts["timer_slack_ns"]), "host"
    ver = _linux_version(facts.get("os", "") or "")
    if ver is not None and ver >= (2, 6, 28):
        return float(LINUX_DEFAULT_SLACK_NS), "assumed"
    return None, ""


def _hybrid_slack(known: Optional[float], src: str, margin) -> Tuple[Optional[float], str]:
    """The slack a hybrid sleep shows: its kernel part ends `margin` ns before
    the deadline and a spin takes it from there, so a slack within the
    margin never shows (src "margin") and a larger one by its excess; with
    the margin (or the slack) not known, neither is what shows."""
    if src not in ("applied", "host", "assumed"):
        return known, src
    if not isinstance(margin, (int, float)) or known is None:
        return None, ""
    return (0.0, "margin") if known <= margin else (known - margin, src)


_NO_SLACK_NOTES = {
    "method": "this method is not delayed by timer slack",
    "os": "timer slack is a Linux mechanism: the constant is wake-up",
    "policy": "a real-time thread (SCHED_FIFO, SCHED_RR) gets no timer slack: the "
              "constant is wake-up",
}
_SPLIT_NOTES = {
    "applied": "split using the slack applied for the run (one setting: not fitted)",
    "host": "split using the host's timer_slack_ns (one setting: not fitted)",
    "assumed": ("split assuming Linux's default 50 µs timer slack: one slack setting "
                "cannot separate slack from wake-up latency"),
}


def _slack_for(p: MethodParams, known: Optional[float], src: str):
    """Attribute the constant to slack and wake-up from what is known."""
    if not p.sleeps or p.tick_ns:
        return
    margin = p.state.margin_ns
    if src in ("method", "os", "margin", "policy"):
        p.slack_ns, p.wakeup_ns = 0.0, p.constant_ns
        p.slack_source = "method"
        p.notes["slack"] = _NO_SLACK_NOTES.get(src) or (
            f"the timer slack is within the hybrid margin ({_us(margin or 0.0)}): "
            "the spin covers it, so it never shows")
        return
    if p.select_slack_ns is not None and not known:
        # the knee of max(slack, 0.1% of d) measures the slack itself
        p.slack_ns = min(p.select_slack_ns, p.constant_ns)
        p.wakeup_ns = p.constant_ns - p.slack_ns
        p.slack_source = "fitted"
        p.identified["slack"] = True
        p.notes["slack"] = ("fitted from where select's 0.1% of the timeout overtakes the "
                            "timer slack")
        return
    if known is None:
        p.notes["slack"] = "timer slack and wake-up latency cannot be told apart here"
        return
    reps = p.state.reps
    hi = float(np.percentile(reps["beta"][:, 0], 97.5)) if reps is not None else p.constant_ns
    if src == "assumed" and hi < 0.9 * known:
        # an assumed slack the constant cannot hold: this sleep ignores slack
        # (timerfd, a real-time thread) or its window was cut short; nothing says which
        p.notes["slack"] = (f"the {_us(p.constant_ns)} constant is smaller than Linux's default "
                            f"{_us(known)} timer slack: this sleep ignores slack, or other "
                            "wake-ups cut its window short; slack and wake-up cannot be told "
                            "apart here")
        return
    p.state.slack_known = known
    eff = min(known, max(p.constant_ns, 0.0))
    p.slack_ns = eff
    p.wakeup_ns = p.constant_ns - eff
    p.slack_source = src
    p.notes["slack"] = _SPLIT_NOTES[src]
    if margin is not None:
        p.notes["slack"] += f", less the hybrid margin ({_us(margin)}) its spin covers"
    if known >= 5_000 and reps is not None:
        hi = float(np.percentile(reps["beta"][:, 0], 97.5))
        if hi < 0.8 * known:
            p.state.load_ns = known - p.constant_ns
            p.notes["load"] = (f"the oversleep ({_us(p.constant_ns)}) is below the "
                               f"{_us(known)} slack: other wake-ups cut the slack window short")


def _group_facts(recs: List[dict]) -> dict:
    facts = {}
    for r in recs:
        h = r.get("_host")
        if h:
            facts.update(h)
            break
    hz = re.search(r"HZ=(\d+)", str(recs[0].get("timer_config") or ""))
    if hz and "hz" not in facts:
        facts["hz"] = int(hz.group(1))  # documented by the source of the numbers
        facts["hz_source"] = "documented"
    for k in ("seed", "host", "os", "timer_config"):
        v = recs[0].get(k)
        if v is not None:
            facts.setdefault(k if k != "host" else "host_name", v)
            if k == "os":
                facts["os"] = v
    if "os" not in facts:
        sysname = facts.get("sysname") or facts.get("system")
        rel = facts.get("kernel_release") or facts.get("release")
        if sysname or rel:
            facts["os"] = f"{sysname or 'Linux'} {rel or ''}".strip()
    return facts


def _points(recs: List[dict]):
    """Per method: {request: [(median actual, its sigma)]}, and the margins seen."""
    pts: Dict[str, Dict[float, List[Tuple[float, float]]]] = {}
    margins: Dict[str, set] = {}
    for r in recs:
        y, req = r.get("actual_ns"), r.get("requested_ns")
        if not isinstance(y, (int, float)) or not isinstance(req, (int, float)):
            continue
        if not (math.isfinite(y) and math.isfinite(req)):
            continue
        s, _ = point_sigma(r, float(y), float(req))
        pts.setdefault(str(r["method"]), {}).setdefault(float(req), []).append((float(y), s))
        margins.setdefault(str(r["method"]), set()).add(r.get("margin_ns"))
    return pts, margins


def _pooled(by_req: Dict[float, List[Tuple[float, float]]]):
    """(requests, median actuals, sigmas) with the points of one request pooled."""
    req = sorted(by_req)
    act, sig = [], []
    for x in req:
        vals = by_req[x]
        ys = np.array([v for v, _ in vals])
        ss = np.array([s for _, s in vals])
        act.append(float(np.median(ys)))
        spread = float(np.std(ys)) if len(ys) > 1 else 0.0
        sig.append(max(float(np.sqrt(np.mean(ss ** 2) / len(ss))), spread / math.sqrt(len(ys)),
                       _FLOOR_NS))
    return req, act, sig


def _fit_group(recs: List[dict], label: str, info=None, bootstrap=BOOTSTRAP,
               by: Sequence[str] = (), key: tuple = ()) -> Model:
    info = _method_info() if info is None else info
    pts, margins = _points(recs)
    facts = _group_facts(recs)
    slack_vals = {r.get("slack_ns") for r in recs if r.get("slack_ns") is not None}
    slack_applied = next(iter(slack_vals)) if len(slack_vals) == 1 else None
    kind = _os_kind(facts)
    hres = str(facts.get("high_res_timers") or "").lower() in ("yes", "true", "1", "on")
    # the run's policy (one per group: a group key), else the thread's at the start
    policy = next((r["policy"] for r in recs if r.get("policy")), None) or facts.get("sched_policy")
    params = {}
    for method, by_req in pts.items():
        req, act, sig = _pooled(by_req)
        row = info.get(method)
        unit = int(row[0]) if row else 1
        honours = row[1] if row else None
        family = row[2] if row else None
        known, src = _known_slack(facts, slack_applied, honours)
        if kind not in ("linux", None):
            known, src = 0.0, "os"
        elif policy in _RT_POLICIES and src in ("applied", "host", "assumed"):
            known, src = 0.0, "policy"
        margin = None
        if family == "hybrid":   # one margin for all its points, else not known
            ms = margins.get(method, set())
            margin = next(iter(ms)) if len(ms) == 1 else None
            known, src = _hybrid_slack(known, src, margin)
        honours = False if src in ("margin", "policy") else honours
        ctx = {"os": kind, "hres": hres, "honours_slack": honours,
               "known_slack": known if src in ("applied", "host", "assumed") else None,
               "baseline": (family == "baseline") if family else None}
        p = _fit_method(method, req, act, sig, unit_prior=max(unit, 1), ctx=ctx,
                        bootstrap=bootstrap)
        if margin is not None:
            p.state.margin_ns = float(margin)
        if row:
            p.state.registry_unit = unit
        _slack_for(p, known, src)
        params[method] = p
    m = Model(params, facts, label, by, key)
    m.slack_applied = slack_applied
    return m


def _label(keys: Sequence[str], key: tuple) -> str:
    return " / ".join(
        f"slack {format_ns(v)}" if k == "slack_ns" else
        f"dma latency {v} µs" if k == "dma_latency_us" else
        f"policy {v}" if k == "policy" else f"{v}"
        for k, v in zip(keys, key) if v is not None and k != "seed")


def fit_groups(data, by: Sequence[str] = GROUP_KEYS, bootstrap: int = BOOTSTRAP) -> ModelSet:
    """Fit one Model per group of records (by the columns in `by` that the
    records carry), then separate timer slack from wake-up latency where
    groups differ only in the applied slack."""
    recs = [_group_row(r) for r in records.to_records(data)]
    if not recs:
        raise ValueError("no records to fit")
    for r in recs:
        if "method" not in r or "requested_ns" not in r:
            raise ValueError("records need method, requested_ns and actual_ns")
    keys = [k for k in by if any(r.get(k) is not None for r in recs)]
    groups: Dict[tuple, List[dict]] = {}
    for r in recs:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    info = _method_info()
    models = {key: _fit_group(rs, _label(keys, key), info, bootstrap, keys, key)
              for key, rs in groups.items()}
    ms = ModelSet(keys, models)
    _separate_slack(ms)
    _compare_dma(ms)
    for m in ms.values():
        for p in m.params.values():
            _finish(p)
    return ms


def _separate_slack(ms: ModelSet):
    """Across groups that differ only in the applied slack, the constant term
    is wake-up latency + slack: its intercept against the applied slack is the
    wake-up latency (>= 0), and each group's fitted slack is what remains."""
    if "slack_ns" not in ms.by:
        return
    si = ms.by.index("slack_ns")
    families: Dict[tuple, List[tuple]] = {}
    for key in ms:
        if key[si] is None:
            continue
        families.setdefault(key[:si] + key[si + 1:], []).append(key)
    for fam_keys in families.values():
        if len(fam_keys) < 2:
            continue
        methods = set.intersection(*(set(ms[k].params) for k in fam_keys))
        for method in methods:
            ps = [ms[k].params[method] for k in fam_keys]
            if any(not p.sleeps or p.tick_ns or p.slack_source == "method" for p in ps):
                continue
            s = np.array([float(k[si]) for k in fam_keys])
            if np.ptp(s) <= 0:
                continue
            _split_across(ps, s)


def _split_across(ps: List[MethodParams], s) -> None:
    """The wake-up (intercept) and slack (the rest) of one method's
    constants c at applied slacks s."""
    c = np.array([p.constant_ns for p in ps])
    pairs = [(c[j] - c[i]) / (s[j] - s[i]) for i in range(len(s))
             for j in range(i + 1, len(s)) if s[j] != s[i]]
    slope = float(np.median(pairs))
    intercept = max(float(np.median(c - slope * s)), 0.0)
    intercept = min(intercept, float(np.min(c)))
    # interval of the intercept: the spread of the leave-one-setting-out intercepts
    ivs = []
    for drop in range(len(s)):
        keep = np.arange(len(s)) != drop
        if np.ptp(s[keep]) > 0:
            sl = float(np.polyfit(s[keep], c[keep], 1)[0])
            ivs.append(max(float(np.median(c[keep] - sl * s[keep])), 0.0))
    w_iv = [min(ivs + [intercept]), max(ivs + [intercept])] if ivs else None
    for p in ps:
        p.wakeup_ns = float(intercept)
        p.slack_ns = float(max(p.constant_ns - intercept, 0.0))
        p.slack_source = "fitted"
        p.identified["slack"] = True
        p.identified["wakeup"] = intercept > 0
        p.state.wakeup_iv = w_iv
        p.notes["slack"] = (
            f"fitted across {len(ps)} applied slack settings: the constant grows "
            f"{slope:.2f} ns per ns of slack; wake-up latency is the intercept")


def _compare_dma(ms: ModelSet):
    """Groups that differ only in a held cpu_dma_latency of 0: the difference
    of their predictions is the measured idle-exit cost; it is noted on the
    group that did not hold it."""
    if "dma_latency_us" not in ms.by:
        return
    di = ms.by.index("dma_latency_us")
    held = {k[:di] + k[di + 1:]: k for k in ms if k[di] == 0}
    for key in ms:
        if key[di] is not None:
            continue
        other = held.get(key[:di] + key[di + 1:])
        if other is None:
            continue
        for name, p in ms[key].params.items():
            q = ms[other].params.get(name)
            if q is None or not p.sleeps or not q.sleeps:
                continue
            ref = p.reference_ns
            gain = float(p.predict_ns(ref)) - float(q.predict_ns(ref))
            p.notes["idle_exit"] = (f"measured: holding cpu_dma_latency at 0 changes the "
                                    f"{format_ns(ref)} prediction by {'-' if gain >= 0 else '+'}"
                                    f"{_us(abs(gain))}")
            p.identified["idle_exit_measured"] = gain > 0
