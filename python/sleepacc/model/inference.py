"""How sure the fit is: the wild bootstrap of the linear parameters, profile
intervals of the shape parameters, the parameters and causes with their
intervals (:func:`_finish`), and the verdict on what is left
(:func:`_verdict`).

A linear parameter's 95 % interval comes from 200 replicates in which each
point moves by +-max(its noise, its residual); a shape parameter's from the
grid values whose best fit is within chi-square 3.84 (scaled by the misfit)
of the best.  A term is identified only when its interval excludes zero.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional

import numpy as np

from .._units import format_ns
from .explain import _us
from .results import MethodParams
from .solve import _bls, _Fit, _solve
from .terms import (CAUSES, IDLE_HALF_NS, KNEE_NS, SELECT_SLACK_NS, _base, _design,
                    tolerance_ns)

BOOTSTRAP = 200


def _bootstrap(best: _Fit, req, y, sig, B: int):
    if B <= 0:
        return None
    rng = np.random.default_rng(20260 + len(req))
    e = y - best.pred
    scale = np.maximum(sig, np.abs(e))
    V = rng.choice((-1.0, 1.0), size=(len(req), B))
    Y = best.pred[:, None] + scale[:, None] * V
    s = best.spec
    q, b = _base(s.unit, s.rounding, s.tick, s.k, req)
    zm = q == 0
    use = ~zm if s.zero else np.ones(len(req), dtype=bool)
    zero = None
    if s.zero:
        w = 1.0 / sig[zm] ** 2
        zero = np.maximum((w @ Y[zm]) / np.sum(w), 0.0)
    A, off, lb, ub = _design(s, b[use])
    Aw = A / sig[use, None]
    Yw = (Y[use] - off[:, None]) / sig[use, None]
    beta = _bls(Aw, Yw, lb, ub).T          # (B, m)
    return {"beta": beta, "zero": zero}


def _interval(vals) -> Optional[List[float]]:
    vals = np.asarray(vals, dtype=float)
    if vals.size == 0:
        return None
    return [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))]


def _profile(p: MethodParams, kind: str) -> Optional[List[float]]:
    """Profile interval of a shape parameter: the grid values whose best fit
    is within chi-square 3.84 (scaled by the misfit) of the best."""
    best = p.state.best
    if p.state.refit is None or best is None:
        return None
    req = np.asarray(p.requested_ns)
    y = np.asarray(p.measured_ns)
    sig = np.asarray(p.sigma_ns)
    coarse = {"capped": KNEE_NS, "idle": IDLE_HALF_NS, "select": SELECT_SLACK_NS}[kind]
    grid = sorted(set(np.geomspace(coarse[0], coarse[-1], 49).tolist())
                  | {float(best.spec.term(kind))})
    scale = max(1.0, best.chi2 / max(p.dof, 1))
    keep = []
    for g in grid:
        terms = tuple((t, (g if t == kind else v)) for t, v in best.spec.terms)
        f = _solve(best.spec.with_terms(terms), req, y, sig, 0.0, len(req), huber=True)
        if f is not None and f.chi2 - best.chi2 <= 3.84 * scale:
            val = g
            if kind == "capped":
                val = float(f.beta[1 + [t for t, _ in terms].index("capped")]) / 1e6 * g
            keep.append(val)
    if not keep:
        return None
    return [float(min(keep)), float(max(keep))]


# ---------------------------------------------------------------------------
# Parameters and causes with intervals
# ---------------------------------------------------------------------------

def _finish(p: MethodParams):
    """Parameters with intervals and the causes at the reference request,
    once the slack split is known."""
    if not p.sleeps:
        return
    reps = p.state.reps
    beta_reps = reps["beta"] if reps is not None else None
    params = _linear_parameters(p, beta_reps)
    _discrete_parameters(p, params, reps)
    _shape_parameters(p, params)
    _split_parameters(p, params, beta_reps)
    p.parameters = params
    p.causes = _causes(p, beta_reps)


def _linear_parameters(p: MethodParams, beta_reps) -> Dict[str, dict]:
    names = {"c": "constant_ns", "p": "proportional", "a": "coalescing_share",
             "E": "idle_exit_ns", "s": "entry_ns"}
    spec = p._spec()
    params: Dict[str, dict] = {}
    for j, col in enumerate(spec.columns()):
        val = float(p._beta(spec)[j]) / (1e6 if col in ("p", "a") else 1.0)
        iv = None
        if beta_reps is not None and j < beta_reps.shape[1]:
            iv = _interval(beta_reps[:, j] / (1e6 if col in ("p", "a") else 1.0))
        params[names[col]] = {"value": val, "interval": iv,
                              "identified": bool(iv is not None and iv[0] > 0)}
    return params


def _discrete_parameters(p: MethodParams, params: Dict[str, dict], reps) -> None:
    if p.tick_ns:
        params["tick_ns"] = {"value": p.tick_ns, "interval": None,
                             "identified": p.identified.get("tick", False)}
        params["extra_ticks"] = {"value": p.extra_ticks, "interval": None,
                                 "identified": p.identified.get("extra_ticks", False)}
    params["granularity_ns"] = {"value": p.granularity_ns, "interval": None,
                                "identified": p.identified.get("granularity", False)}
    if p.zero_return_ns is not None:
        iv = _interval(reps["zero"]) if reps is not None and reps["zero"] is not None else None
        params["zero_return_ns"] = {"value": p.zero_return_ns, "interval": iv, "identified": True}


def _shape_parameters(p: MethodParams, params: Dict[str, dict]) -> None:
    if p.coalescing_cap_ns:
        params["coalescing_cap_ns"] = {"value": p.coalescing_cap_ns, "interval": _profile(
            p, "capped"), "identified": p.identified.get("coalescing", False)}
    if p.idle_exit_ns:
        params["idle_exit_half_ns"] = {"value": p.idle_exit_half_ns,
                                       "interval": _profile(p, "idle"), "identified":
                                       p.identified.get("idle_exit", False)}
    if "entry_ns" in params:
        # s at or below the shortest request shows nowhere: the interval then reaches 0
        shortest = float(np.min(np.asarray(p.requested_ns)[np.asarray(p.requested_ns) > 0]))
        iv = params["entry_ns"]["interval"]
        if iv is not None and iv[0] <= shortest:
            iv[0] = 0.0
        params["entry_ns"]["identified"] = bool(iv is not None and iv[0] > 0)
        shorter = int(np.sum(np.asarray(p.requested_ns) < p.entry_ns))
        p.notes["entry"] = (f"the deadline is set at entry and the sleep's set-up takes about "
                            f"{_us(p.entry_ns)}" + (f" [{_us(iv[0])}, {_us(iv[1])}]" if iv else "")
                            + f": a shorter request returns after the set-up (seen at {shorter} "
                            f"of {len(set(p.requested_ns))} durations; longer ones hide it)")
    if p.select_slack_ns is not None:
        fixed = p.state.ctx.get("known_slack")
        params["select_slack_ns"] = {"value": p.select_slack_ns,
                                     "interval": None if fixed else _profile(p, "select"),
                                     "identified": not fixed}


def _split_parameters(p: MethodParams, params: Dict[str, dict], beta_reps) -> None:
    """The slack / wake-up split of the constant (not for tick structures)."""
    if beta_reps is None or p.tick_ns or p.slack_ns is None or p.wakeup_ns is None:
        return
    c_reps = beta_reps[:, 0]
    frac_known = p.slack_source in ("applied", "host", "assumed", "method")
    if p.slack_source == "fitted":
        s_reps = np.maximum(c_reps - p.wakeup_ns, 0.0)
        w_iv = p.state.wakeup_iv
    elif frac_known:
        s_reps = np.maximum(np.minimum(c_reps, p.slack_ns if p.slack_source != "method"
                                       else 0.0), 0.0)
        known = p.state.slack_known
        s_reps = np.minimum(s_reps, p.slack_ns if known is None else known)
        w_iv = _interval(c_reps - s_reps)
    else:
        s_reps, w_iv = None, None
    params["timer_slack_ns"] = {"value": p.slack_ns,
                                "interval": _interval(s_reps) if s_reps is not None else None,
                                "identified": p.slack_source == "fitted"}
    params["wakeup_ns"] = {"value": p.wakeup_ns, "interval": w_iv,
                           "identified": bool(w_iv is not None and w_iv[0] > 0)}


def _causes(p: MethodParams, beta_reps) -> List[dict]:
    """The causes at the reference request, with intervals from the replicates."""
    ref = p.reference_ns
    agg: Dict[str, float] = {}
    labels: Dict[str, List[str]] = {}
    for cause, label, v in p._parts(ref):
        agg[cause] = agg.get(cause, 0.0) + v
        labels.setdefault(cause, []).append(label)
    rep_vals: Dict[str, List[float]] = {}
    if beta_reps is not None and p.state.best is not None:
        rep_vals = _replicate_causes(p, beta_reps, set(agg))
    causes = []
    for cause in CAUSES:
        if cause not in agg:
            continue
        v = agg[cause]
        if abs(v) < 50:          # below the clock read cost: not a cause worth naming
            continue
        iv = _interval(rep_vals[cause]) if cause in rep_vals else None
        causes.append({"name": cause, "ns": float(v), "interval": iv,
                       "label": ", ".join(labels[cause]),
                       "identified": _cause_identified(p, cause, iv)})
    if p.state.load_ns:
        causes.append({"name": "load", "ns": float(p.state.load_ns), "interval": None,
                       "label": "the slack window was cut short by other wake-ups",
                       "identified": True})
    return causes


def _replicate_causes(p: MethodParams, beta_reps, named) -> Dict[str, List[float]]:
    """Each cause's size at the reference request in (up to 100 of) the
    bootstrap replicates, for its interval."""
    zero = (p.state.reps or {}).get("zero")
    spec = p._spec()
    ref = p.reference_ns
    clone = MethodParams(**{k: getattr(p, k) for k in (
        "method", "sleeps", "granularity_ns", "rounding", "zero_return_ns", "tick_ns",
        "extra_ticks", "constant_ns", "slack_ns", "wakeup_ns", "slack_source",
        "proportional", "coalescing_share", "coalescing_cap_ns", "select_slack_ns",
        "idle_exit_ns", "idle_exit_half_ns", "entry_ns")})
    known = p.state.slack_known
    rep_vals: Dict[str, List[float]] = {}
    step = max(1, beta_reps.shape[0] // 100)
    for i in range(0, beta_reps.shape[0], step):
        clone.set_linear(spec, beta_reps[i])
        if zero is not None:
            clone.zero_return_ns = float(zero[i])
        if p.slack_ns is not None and not p.tick_ns:
            if p.slack_source == "fitted" and p.wakeup_ns is not None:
                clone.wakeup_ns = p.wakeup_ns
                clone.slack_ns = max(clone.constant_ns - p.wakeup_ns, 0.0)
            else:
                cap = known if known is not None else p.slack_ns
                clone.slack_ns = min(max(clone.constant_ns, 0.0), cap)
                clone.wakeup_ns = clone.constant_ns - clone.slack_ns
        sums: Dict[str, float] = {}
        for cause, _, v in clone._parts(ref):
            sums[cause] = sums.get(cause, 0.0) + v
        for cause in named | set(sums):
            rep_vals.setdefault(cause, []).append(sums.get(cause, 0.0))
    return rep_vals


def _cause_identified(p: MethodParams, cause: str, iv) -> bool:
    if cause == "granularity":
        return p.identified.get("granularity", False) or p.granularity_ns > 1
    if cause == "tick":
        return p.identified.get("tick", False)
    if cause == "zero_shortcut":
        return p.identified.get("zero_shortcut", False)
    if cause == "timer_slack":
        return p.slack_source == "fitted" or bool(iv and iv[0] > 0)
    return bool(iv is not None and iv[0] > 0)


# ---------------------------------------------------------------------------
# The verdict on what is left
# ---------------------------------------------------------------------------

def _wilson_hilferty_p(chi2: float, dof: int) -> float:
    """P(X >= chi2) for a chi-square with dof degrees of freedom."""
    if dof <= 0:
        return 1.0
    z = ((chi2 / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))


def _shape(req, e, sig) -> str:
    """Words for the shape of what is left."""
    pos = req > 0
    if np.sum(pos) >= 3:
        x = np.log10(req[pos])
        r = e[pos]
        if np.ptp(x) > 0 and np.std(r) > 0:
            corr = float(np.corrcoef(x, r)[0, 1])
        else:
            corr = 0.0
    else:
        corr = 0.0
    big = np.abs(e) > 3 * sig
    signs = np.sign(e[big]) if np.any(big) else np.sign(e)
    changes = int(np.sum(np.abs(np.diff(np.sign(e[np.abs(e) > sig]))) > 0)) if np.sum(np.abs(e) > sig) > 1 else 0
    if changes >= 3 and len(e) >= 6:
        return "oscillating with d"
    if corr > 0.6:
        return "growing with d"
    if corr < -0.6:
        return "shrinking with d"
    if np.any(big):
        where = req[big]
        if np.all(where <= np.median(req)):
            return "at short durations"
        if np.all(where >= np.median(req)):
            return "at long durations"
    return "scattered" if len(set(signs.tolist())) > 1 else "constant"


def _verdict(p: MethodParams, req, y, sig, pred, k_params: float, alternatives):
    e = y - pred
    r = e / sig
    n = len(y)
    dof = int(max(n - math.ceil(k_params), 0))
    chi2 = float(np.sum(r ** 2))
    p.chi2, p.dof = chi2, dof
    pval = _wilson_hilferty_p(chi2, dof) if dof > 0 else 1.0
    worst = int(np.argmax(np.abs(r))) if n else 0
    shape = _shape(req, e, sig)
    p.residual = {"chi2": round(chi2, 2), "dof": dof, "p_value": pval,
                  "max_abs_ns": float(np.max(np.abs(e))) if n else 0.0,
                  "at_requested_ns": float(req[worst]) if n else None,
                  "shape": shape}
    cands = ("; candidates: " + "; ".join(a["structure"] for a in alternatives)
             if alternatives else "")
    if len({float(x) for x in req}) < 3:
        p.verdict = "unexplained"
        p.verdict_note = (f"{len(set(req.tolist()))} duration(s) cannot tell the structures "
                          "apart" + cands)
        return
    if dof < 1:
        p.verdict = "unexplained"
        p.verdict_note = (f"{n} durations for {math.ceil(k_params)} parameters: any structure "
                          "fits them, none is confirmed" + cands)
        return
    p.verdict, p.verdict_note = _judge(req, y, e, r, pval, shape, worst)
    if alternatives and p.verdict != "unexplained":
        p.verdict_note += ("; other structures fit about equally: "
                           + "; ".join(a["structure"] for a in alternatives))


def _judge(req, y, e, r, pval, shape, worst):
    """(verdict, note) of residuals e (ns), r (sigma) left by a fit with
    degrees of freedom to spare.  ``explained`` needs both: residuals
    consistent with the noise, and no point missed by more than max(5 % of
    its measured oversleep, 5 µs) and 2 sigma.  The miss is judged against
    the oversleep, not the request: a point whose noise grows with its
    duration (a long request's clock rate, a wide spread) would otherwise
    hide a model that misses a small oversleep many times over."""
    n = len(y)
    over = np.maximum(y - req, 1.0)
    frac_bad = float(np.mean(np.abs(r) > 3))
    rel = float(np.sqrt(np.mean(e ** 2)) / np.median(over))
    missed = (np.abs(e) > tolerance_ns(y, req)) & (np.abs(r) > 2)
    if pval >= 1e-3 and np.max(np.abs(r)) <= 5:
        if not np.any(missed):
            wide = np.abs(e) > tolerance_ns(y, req)
            if not np.any(wide):
                return "explained", "the residuals are consistent with the noise"
            j = int(np.argmax(np.where(wide, np.abs(e), -1.0)))
            return "explained", (f"the residuals are consistent with the noise; {int(wide.sum())} "
                                 f"of {n} points differ by more than max(5% of the oversleep, "
                                 f"5 µs), inside their noise (up to {'+' if e[j] >= 0 else '-'}"
                                 f"{_us(abs(float(e[j])))} at {format_ns(float(req[j]))})")
        i = int(np.argmax(np.where(missed, np.abs(e), -1.0)))
        return "partly", (f"{'+' if e[i] >= 0 else '-'}{_us(abs(float(e[i])))} left at "
                          f"{format_ns(float(req[i]))} ({int(missed.sum())} of {n} points "
                          "off by more than max(5% of the measured oversleep, 5 µs) and "
                          "2 sigma), within the noise that hid it from the chi-square: more "
                          "samples there would tell")
    if frac_bad >= 0.34 and ((shape in ("oscillating with d", "scattered") and rel > 0.1)
                             or (frac_bad > 0.5 and rel > 0.5)):
        return "unexplained", (f"not explained by these terms: {_us(float(np.max(np.abs(e))))} "
                               f"left, {shape} ({int(frac_bad * n)} of {n} points off by more "
                               "than 3 sigma)")
    big = e[np.abs(r) > 3] if np.any(np.abs(r) > 3) else e
    lead = big[np.argmax(np.abs(big))]
    return "partly", (f"{'+' if lead >= 0 else '-'}{_us(abs(float(lead)))} left "
                      f"(at {format_ns(float(req[worst]))}), {shape}, not in the family")
