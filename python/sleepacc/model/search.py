"""The structure search: which discrete structure and shape terms explain a
method's points (:func:`_fit_method`).

Every discrete structure (unit, rounding, tick, extra ticks, zero shortcut)
is fitted with a constant only; the shape terms go on the best of them; the
shape parameters of the leading candidates are refined between their grid
neighbours and refitted robustly; the set-up after the deadline is tried
last on the leading tickless structures.  Structures are ranked by
chi-square + ln(n) per parameter (BIC) + priors (the registry's unit, the
host's high-resolution timers, the OS).  What fits about as well is kept as
alternatives; which discrete parts the data pin down is noted.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional

import numpy as np

from .._units import format_ns
from .explain import pick_request
from .inference import BOOTSTRAP, _bootstrap, _verdict
from .results import MethodParams
from .solve import _Fit, _solve
from .terms import (ENTRY_MAX_NS, ENTRY_NS, EXTRA_TICKS, IDLE_HALF_NS, KNEE_NS,
                    SELECT_SLACK_NS, TICK_CANDIDATES_NS, UNITS_NS, _OS_TERMS, _base,
                    _round_unit, _Spec, ticks_for, tolerance_ns)

_AMBIGUOUS = 2.0        # score gap under which two structures "fit about equally"
_IDENTIFIED = 6.0       # score gap for a discrete part to count as identified


def _prior(spec: _Spec, unit_prior: int, ctx: dict) -> float:
    pen = 0.0
    if spec.unit != unit_prior:
        pen += 2.0 if spec.rounding == "up" else 3.0
    elif spec.rounding == "down":
        pen += 0.5
    if spec.tick and ctx.get("hres"):
        pen += 50.0          # the host says high-resolution timers are on
    kind = ctx.get("os")
    for t, _ in spec.terms:
        if t == "capped" and kind not in ("darwin", None):
            pen += 6.0
        if t == "prop" and kind not in ("freebsd", None):
            pen += 3.0
        if t == "idle" and kind in ("darwin", "windows"):
            pen += 6.0
    return pen


def _physical_prior(fit: _Fit) -> float:
    """A constant of milliseconds is a tick, a unit or load, not a wake-up;
    a tick phase of most of a tick is implausible."""
    c = float(fit.beta[0])
    if fit.spec.tick:
        return 3.0 * abs(c) / fit.spec.tick + 0.1 * fit.spec.k
    return 3.0 * max(0.0, math.log2(max(c, 1.0) / 500e3))


def _stage_specs(unit_prior, has_zero_pts_for, ticks=TICK_CANDIDATES_NS):
    for unit in UNITS_NS:
        for rounding in (("up",) if unit == 1 else ("up", "down")):
            for zero in (False, True):
                if zero and not has_zero_pts_for(unit, rounding):
                    continue
                yield _Spec(unit, rounding, 0.0, 0, zero)
                for tick in ticks:
                    for k in EXTRA_TICKS:
                        yield _Spec(unit, rounding, float(tick), k, zero)


def _term_sets(spec: _Spec, ndist: int, ctx: dict, known_slack):
    allowed = _OS_TERMS.get(ctx.get("os"), _OS_TERMS[None])
    yield ()
    if ndist >= 3 and "prop" in allowed:
        yield (("prop", 0.0),)
    if spec.tick or ndist < 4:
        return
    if "idle" in allowed:
        for h in IDLE_HALF_NS:
            yield (("idle", h),)
    if "capped" in allowed:
        for kn in KNEE_NS:
            yield (("capped", kn),)
    if "select" in allowed and ctx.get("honours_slack", True) is not False:
        # the threshold is the thread's slack: fixed when it is known, else fitted
        svals = {float(known_slack)} if known_slack else set(SELECT_SLACK_NS)
        for s in sorted(svals):
            yield (("select", s),)
            if ndist >= 5:
                for h in IDLE_HALF_NS[::2]:
                    yield (("select", s), ("idle", h))
    if ndist >= 5 and "prop" in allowed and "idle" in allowed:
        for h in IDLE_HALF_NS[::2]:
            yield (("prop", 0.0), ("idle", h))


def _apply(p: MethodParams, f: _Fit):
    """Set p's components from the fit of a structure."""
    s = f.spec
    p.granularity_ns = int(s.unit)
    p.rounding = s.rounding
    p.tick_ns = float(s.tick)
    p.extra_ticks = int(s.k)
    p.zero_return_ns = f.zero_ns if s.zero else None
    p.proportional = p.coalescing_share = p.coalescing_cap_ns = 0.0
    p.idle_exit_ns = p.idle_exit_half_ns = 0.0
    p.select_slack_ns = None
    p.entry_ns = 0.0
    p.set_linear(s, f.beta)
    for t, v in s.terms:
        if t == "idle":
            p.idle_exit_half_ns = float(v) if p.idle_exit_ns else 0.0
        elif t == "select":
            p.select_slack_ns = float(v)
    if p.coalescing_share == 0.0:
        p.coalescing_cap_ns = 0.0


class _Search:
    """One method's points and what the search knows: each candidate
    structure is fitted and scored here (prior + physical prior)."""

    def __init__(self, req, y, sig, unit_prior: int, ctx: dict):
        self.req, self.y, self.sig = req, y, sig
        self.unit_prior, self.ctx = unit_prior, ctx
        self.n = len(req)

    def fit(self, spec: _Spec, huber: bool = False, drop_zero_terms: bool = False):
        """The scored fit of `spec`, or None (no fit; with drop_zero_terms,
        a shape term at its bound of 0, which adds nothing)."""
        f = _solve(spec, self.req, self.y, self.sig, _prior(spec, self.unit_prior, self.ctx),
                   self.n, huber=huber)
        if f is None or (drop_zero_terms and len(f.beta) > 1 and np.any(f.beta[1:] <= 0)):
            return None
        f.score += _physical_prior(f)
        return f

    def stage_a(self) -> List[_Fit]:
        """Every discrete structure with a constant only, best first."""
        req = self.req

        def has_zero(unit, rounding):
            q = _round_unit(req, unit, rounding)
            return bool(np.any(q == 0) and np.any(q > 0))
        specs = _stage_specs(self.unit_prior, has_zero, ticks_for(self.ctx.get("os")))
        fits = [f for f in (self.fit(s) for s in specs) if f is not None]
        return sorted(fits, key=lambda f: f.score)

    @staticmethod
    def pool(stage_a: List[_Fit]) -> List[_Fit]:
        """The four best discrete structures, and the two best tickless ones."""
        pool: List[_Fit] = []
        seen = set()
        for f in stage_a:
            key = (f.spec.unit, f.spec.rounding, f.spec.tick, f.spec.k, f.spec.zero)
            if key in seen:
                continue
            seen.add(key)
            pool.append(f)
            if len(pool) >= 4:
                break
        for f in stage_a:       # the best tickless structures always compete
            if f.spec.tick == 0.0 and f not in pool:
                pool.append(f)
                if sum(1 for g in pool if g.spec.tick == 0.0) >= 2:
                    break
        return pool

    def stage_b(self, pool: List[_Fit], ndist: int) -> List[_Fit]:
        """The shape terms on the best structures, best first."""
        cands: List[_Fit] = []
        for base in pool:
            for terms in _term_sets(base.spec, ndist, self.ctx, self.ctx.get("known_slack")):
                if not terms:
                    cands.append(base)
                    continue
                f = self.fit(base.spec.with_terms(terms), drop_zero_terms=True)
                if f is not None:
                    cands.append(f)
        return sorted(cands, key=lambda f: f.score)

    def refine(self, cands: List[_Fit]) -> List[_Fit]:
        """The shape parameter of the leading candidates between its grid
        neighbours (a knee or a half-length between two grid points)."""
        grids = {"capped": KNEE_NS, "idle": IDLE_HALF_NS, "select": SELECT_SLACK_NS}
        extra = []
        for f in cands[:4]:
            for kind, g in grids.items():
                v = f.spec.term(kind)
                if v is None or v not in g or (kind == "select" and self.ctx.get("known_slack")):
                    continue
                i = g.index(v)
                for x in np.geomspace(g[max(i - 1, 0)], g[min(i + 1, len(g) - 1)], 13):
                    terms = tuple((t, (float(x) if t == kind else w)) for t, w in f.spec.terms)
                    h = self.fit(f.spec.with_terms(terms), drop_zero_terms=True)
                    if h is not None:
                        extra.append(h)
        return sorted(cands + extra, key=lambda f: f.score)

    def robust(self, cands: List[_Fit]) -> List[_Fit]:
        """The leading candidates again, robustly (Huber)."""
        refined = [g for g in (self.fit(f.spec, huber=True) for f in cands[:8]) if g is not None]
        return sorted(refined + cands[8:], key=lambda f: f.score)

    def run(self, ndist: int):
        """(candidates with the chosen one first, stage A's fits)."""
        stage_a = self.stage_a()
        cands = self.robust(self.refine(self.stage_b(self.pool(stage_a), ndist)))
        if ndist >= 4:
            cands = sorted(cands + _entry_candidates(cands, self.req, self.y, self.sig,
                                                     self.unit_prior, self.ctx),
                           key=lambda f: f.score)
        # among structures the noise cannot tell apart, the one that predicts the
        # most points within the reporting tolerance (a tie-break, not the criterion)
        tol = tolerance_ns(self.y, self.req)
        near = [f for f in cands if f.score - cands[0].score < _AMBIGUOUS]
        best = max(near, key=lambda f: (int(np.sum(np.abs(f.pred - self.y) <= tol)), -f.score))
        cands.remove(best)
        cands.insert(0, best)
        return cands, stage_a


def _fit_method(method, req, act, sig, unit_prior=1, ctx=None, bootstrap=BOOTSTRAP) -> MethodParams:
    """Fit one method's points (requests, median actual durations and their
    uncertainties, ns): the structure, its parameters with intervals, what
    is identified, alternatives and the verdict."""
    ctx = dict(ctx or {})
    req = np.asarray(req, dtype=float)
    act = np.asarray(act, dtype=float)
    sig = np.asarray(sig, dtype=float)
    order = np.argsort(req, kind="stable")
    req, act, sig = req[order], act[order], sig[order]
    p = MethodParams(method=method, requested_ns=req.tolist(), measured_ns=act.tolist(),
                     sigma_ns=sig.tolist())
    p.state.unit_prior, p.state.ctx, p.state.refit = unit_prior, ctx, _fit_method
    p.reference_ns = pick_request(p, None)
    long = req >= 100_000
    baseline = ctx.get("baseline")
    if baseline or (baseline is None and np.any(long) and np.median(act[long] / req[long]) < 0.5):
        return _fit_floor(p, act, sig)
    if len(req) == 0:
        return p
    ndist = len(set(req.tolist()))
    cands, stage_a = _Search(req, act, sig, unit_prior, ctx).run(ndist)
    best = cands[0]
    _apply(p, best)
    p.cost = best.score
    alts = _alternatives(best, cands, ndist, sig)
    p.alternatives = alts
    _identify_discrete(p, best, cands + stage_a, req, unit_prior)
    _identify_terms(p, best, req, act, sig, bootstrap)
    _verdict(p, req, act, sig, best.pred, best.spec.n_params(), alts)
    return p


def _fit_floor(p: MethodParams, act, sig) -> MethodParams:
    """A method whose duration does not follow the request: its constant cost."""
    p.sleeps = False
    w = 1.0 / sig ** 2
    p.constant_ns = float(np.sum(w * act) / np.sum(w))
    p.identified = {"sleeps": True, "constant": True}
    p.notes["sleeps"] = ("its duration does not follow the request: "
                         "it measures a floor (the cost of the call itself)")
    p.verdict = "explained"
    p.verdict_note = "a floor: the call's own cost"
    p.parameters = {"call_cost_ns": {"value": p.constant_ns, "interval": None,
                                     "identified": True}}
    p.causes = [{"name": "wakeup", "ns": p.constant_ns, "interval": None,
                 "label": "call cost"}]
    e = act - p.constant_ns
    p.chi2 = float(np.sum((e / sig) ** 2))
    p.dof = max(len(act) - 1, 0)
    return p


def _alternatives(best: _Fit, cands: List[_Fit], ndist: int, sig) -> List[dict]:
    """Other cause sets that fit about as well (the chosen one first), or []."""
    alts, seen_c = [], {best.spec.causes()}
    for f in cands[1:]:
        if f.score - best.score >= _AMBIGUOUS:
            continue
        cs = f.spec.causes()
        if cs in seen_c:
            continue
        if ndist >= 3 and np.max(np.abs(f.pred - best.pred) / sig) < 0.5:
            continue            # the same predictions on these data: not an alternative
        seen_c.add(cs)
        alts.append({"structure": ", ".join(cs) or "a constant only",
                     "score_gap": round(f.score - best.score, 2)})
        if abs(f.score - best.score) >= _AMBIGUOUS:
            alts.pop()
        if len(alts) >= 2:
            break
    if alts:
        alts.insert(0, {"structure": ", ".join(best.spec.causes()) or "a constant only",
                        "score_gap": 0.0})
    return alts


def _identify_discrete(p: MethodParams, best: _Fit, fits: List[_Fit], req, unit_prior) -> None:
    """Which discrete parts (unit, zero shortcut, tick, extra ticks) the data
    pin down: the best structure without the part scores _IDENTIFIED worse."""
    def best_where(pred):
        return min((f.score for f in fits if pred(f.spec)), default=math.inf)

    s = best.spec
    ident, notes = p.identified, p.notes
    other_unit = best_where(lambda x: (x.unit, x.rounding) != (s.unit, s.rounding))
    ident["granularity"] = other_unit - best.score >= _IDENTIFIED
    if not ident["granularity"]:
        notes["granularity"] = ("not identifiable: the requests are whole multiples of every "
                                "candidate unit, so the prior unit "
                                f"({format_ns(unit_prior)}) is kept" if s.unit == unit_prior
                                else "weakly identified: another unit fits almost as well")
    ident["zero_shortcut"] = bool(s.zero)
    if not s.zero:
        zero_pts = np.any(_round_unit(req, s.unit, s.rounding) == 0)
        notes["zero_shortcut"] = ("no request rounds to a zero timeout" if not zero_pts else
                                  "a zero timeout still sleeps like any other request")
    same_unit = lambda x: (x.unit, x.rounding) == (s.unit, s.rounding)  # noqa: E731
    if s.tick:
        ident["tick"] = best_where(lambda x: x.tick == 0.0 and same_unit(x)) - best.score \
            >= _IDENTIFIED
        if not ident["tick"]:
            notes["tick"] = "a tickless model with a constant fits about as well"
        alt_k = best_where(lambda x: x.tick == s.tick and x.k != s.k and same_unit(x))
        ident["extra_ticks"] = alt_k - best.score >= _IDENTIFIED
        if np.all(req < s.tick):
            notes["tick"] = (f"every request is below one {format_ns(s.tick)} tick "
                             f"(HZ={1e9 / s.tick:.0f}): each sleep lasts whole ticks")
    else:
        ticked = best_where(lambda x: x.tick != 0.0 and same_unit(x))
        ident["tick"] = ticked - best.score >= _IDENTIFIED
        ident["extra_ticks"] = False
        if not ident["tick"]:
            notes["tick"] = _tick_note(req, p.constant_ns, ticks_for(p.state.ctx.get("os")))
        else:
            notes["tick"] = "no tick: the data need high-resolution timers"
    ident["constant"] = True
    ident["wakeup"] = False
    ident["slack"] = False


def _tick_note(req, c: float, ticks=TICK_CANDIDATES_NS) -> str:
    """Why a tick cannot be told from these requests (tickless fit)."""
    multiples = [T for T in ticks
                 if np.all(np.abs(req / T - np.round(req / T)) < 1e-6)]
    note = ("not identifiable: every request is a whole number of "
            + ", ".join(format_ns(T) for T in multiples) + " ticks"
            if multiples else "not identifiable from these requests")
    if multiples and c > 0:
        near = [T for T in multiples if abs(c - T) <= 0.05 * T]
        if near:
            note += (f"; the {format_ns(c)} constant could equally be one "
                     f"extra tick of a {format_ns(near[0])} (HZ={1e9 / near[0]:.0f}) clock")
    return note


def _identify_terms(p: MethodParams, best: _Fit, req, act, sig, bootstrap: int) -> None:
    """The wild bootstrap of the linear parameters, and which shape terms
    its intervals keep away from zero."""
    reps = _bootstrap(best, req, act, sig, bootstrap)
    p.state.reps, p.state.best = reps, best
    ident, notes = p.identified, p.notes
    ident["proportional"] = bool(p.proportional > 0)
    ident["coalescing"] = bool(p.coalescing_share > 0)
    ident["idle_exit"] = bool(p.idle_exit_ns > 0)
    ident["select_slack"] = p.select_slack_ns is not None
    if reps is not None:
        for j, name in enumerate(best.spec.columns()[1:], start=1):
            lo = float(np.percentile(reps["beta"][:, j], 2.5))
            key = {"p": "proportional", "a": "coalescing", "E": "idle_exit", "s": "entry"}[name]
            # a set-up no longer than the shortest request shows nowhere
            ident[key] = bool(lo > (float(np.min(req[req > 0])) if name == "s" else 0.0))
    if not p.proportional:
        top = float(req.max()) if len(req) else 0.0
        lim = float(np.min(sig)) * 3 / top * 100 if top else math.inf
        notes["proportional"] = f"no measurable effect (below about {lim:.2g}% of the longest request)"
    if not p.idle_exit_ns:
        notes["idle_exit"] = "no measurable growth with the sleep length"


# ---------------------------------------------------------------------------
# The set-up after the deadline
# ---------------------------------------------------------------------------

def _entry_candidates(cands: List[_Fit], req, y, sig, unit_prior, ctx) -> List[_Fit]:
    """The set-up after the deadline, max(0, s - d), added to the best fit of
    each of the leading tickless structures (their shapes as fitted).

    Given which requests are shorter than s (a partition), s is a bounded
    linear amount; the fit is continuous in s, so the partition is found by
    bisection from starting points on a grid, following where s wants to go.
    It is tried only where some requests are shorter than s and enough are
    longer to fit the rest of the structure with a degree of freedom to spare,
    and kept only where it is identified: refitted without it, the fit is
    worse by more than chi-square 3.84 (95 %, scaled by the misfit)."""
    n = len(req)
    out, kinds = [], set()
    for f in cands:
        key = (f.spec.unit, f.spec.rounding, f.spec.zero, tuple(t for t, _ in f.spec.terms))
        if f.spec.tick or key in kinds:
            continue
        kinds.add(key)
        bisection = _EntryBisection(f, req, y, sig, unit_prior, ctx)
        if not bisection.starts:
            continue
        h = bisection.best()
        if h is not None:
            wo = _solve(f.spec, req, y, sig, 0.0, n, huber=True)
            if wo is not None:
                scale = max(1.0, h.chi2 / max(n - math.ceil(h.spec.n_params()), 1))
                if wo.chi2 - h.chi2 > 3.84 * scale:
                    out.append(h)
        if len(kinds) >= 4:
            break
    return out


class _EntryBisection:
    """The set-up s on one tickless structure f: partition k means the
    requests below u[k] expired during the set-up."""

    def __init__(self, f: _Fit, req, y, sig, unit_prior, ctx):
        self.f, self.req, self.y, self.sig = f, req, y, sig
        self.unit_prior, self.ctx = unit_prior, ctx
        b = _base(f.spec.unit, f.spec.rounding, 0.0, 0, req)[1]
        b = b[b > 0] if f.spec.zero else b
        self.u = u = np.unique(b)
        need = math.ceil(f.spec.n_params())
        self.ks = [k for k in range(1, len(u)) if u[k - 1] < ENTRY_MAX_NS and np.sum(b >= u[k]) > need]
        self.tried: Dict[int, Optional[_Fit]] = {}
        # starting points: the partitions of a grid of set-up values
        self.starts = sorted({int(np.searchsorted(u, g)) for g in ENTRY_NS} & set(self.ks))

    def at(self, k, huber=False):
        if k not in self.ks:
            return None
        if k not in self.tried or huber:
            f, u = self.f, self.u
            spec = _Spec(f.spec.unit, f.spec.rounding, 0.0, 0, f.spec.zero,
                         f.spec.terms + (("entry", float(u[k])),))
            h = _solve(spec, self.req, self.y, self.sig, _prior(spec, self.unit_prior, self.ctx),
                       len(self.req), huber=huber)
            if h is not None and (np.any(h.beta[1:] <= 0) or h.beta[-1] <= u[0]):
                h = None             # a term at its bound, or a set-up no request shows
            if h is not None:
                h.score += _physical_prior(h)
            if huber:
                return h
            self.tried[k] = h
        return self.tried[k]

    def way(self, k):
        """Where s wants to go from partition k: -1 below it, +1 above, 0 inside."""
        h = self.at(k)
        if h is None:
            return -1
        sk, u = float(h.beta[-1]), self.u
        return 1 if sk >= u[k] * (1 - 1e-9) else -1 if sk <= u[k - 1] * (1 + 1e-9) else 0

    def best(self) -> Optional[_Fit]:
        """The best partition's fit, robustly (Huber), or None."""
        ks, starts = self.ks, self.starts
        # F(s) is continuous: from starting points on a grid, bisect each bracket
        # that holds a minimum (s going up at its left end, down at its right)
        ends = [(ks[0] - 1, 1)] + [(k, self.way(k)) for k in starts] + [(ks[-1] + 1, -1)]
        found = [k for k, w in ends[1:-1] if w == 0]
        for (a, wa), (c, wc) in zip(ends, ends[1:]):
            if wa <= 0 or wc >= 0:
                continue
            while c - a > 1:
                m = (a + c) // 2
                wm = self.way(m)
                if wm == 0:
                    break
                a, c = (m, c) if wm > 0 else (a, m)
            else:
                m = a if a >= ks[0] else c
            found.append(m)
        found = [k for k in found if self.at(k) is not None]
        if not found:
            return None
        k = min(found, key=lambda j: self.at(j).score)
        return self.at(k, huber=True)               # robustly, like the other leading fits
