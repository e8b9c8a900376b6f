"""What a fit gives: :class:`MethodParams` (one method's components and the
state its fit leaves for intervals and refits), :class:`Model` (the methods
of one machine and configuration) and :class:`ModelSet` (models per group).

A :class:`Model` is itself the :class:`ModelSet` of its one group, so
whatever ``fit()`` returns answers ``.values()``, ``.find()``,
``.explain()``, ``.within_tolerance()``, ``.summary()`` and ``.to_json()``;
a one-group fit also answers ``.params`` and ``.predict()`` directly.  The
words are :mod:`.explain`'s; here are the numbers.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from .._units import format_ns
from . import explain as _words
from .terms import (SELECT_SHARE, _predict_spec, _round_unit, _Spec, tolerance_ns)


@dataclass
class FitState:
    """What the fit of one method leaves behind for its intervals, its
    refits and its words (not part of the result's record)."""

    unit_prior: int = 1                   # the registry's unit: the search's prior
    ctx: Dict[str, Any] = field(default_factory=dict)   # os, hres, known_slack, ...
    refit: Optional[Callable[..., "MethodParams"]] = None   # the fit, for lodo()
    best: Any = None                      # the chosen structure's fit (solve._Fit)
    reps: Optional[Dict[str, Any]] = None  # bootstrap replicates {"beta", "zero"}
    wakeup_iv: Optional[List[float]] = None  # wake-up interval across slack settings
    slack_known: Optional[float] = None   # the slack that split the constant
    load_ns: Optional[float] = None       # slack window cut short by other wake-ups
    margin_ns: Optional[float] = None     # a hybrid run's margin
    registry_unit: Optional[int] = None   # the registry's unit, when it knows the method


@dataclass
class MethodParams:
    """Fitted components of one method on one machine/configuration (ns)."""

    method: str
    sleeps: bool = True               # False: duration does not follow the request (syscall floor)
    granularity_ns: int = 1           # unit of the call's timeout argument
    rounding: str = "up"              # how a request becomes whole units: "up" or "down"
    zero_return_ns: Optional[float] = None  # zero-timeout shortcut: cost when the timeout is 0
    tick_ns: float = 0.0              # tick quantisation (0 = high-resolution timers)
    extra_ticks: int = 0              # ticks added after rounding up
    constant_ns: float = 0.0          # constant term: slack + wake-up (negative: tick phase)
    slack_ns: Optional[float] = None  # part of the constant that is timer slack
    wakeup_ns: Optional[float] = None # part of the constant that is wake-up latency
    slack_source: str = ""            # "fitted", "applied", "host", "assumed", "method" or ""
    proportional: float = 0.0         # uncapped share of the (rounded) request added
    coalescing_share: float = 0.0     # capped leeway: min(share * d, cap)
    coalescing_cap_ns: float = 0.0
    select_slack_ns: Optional[float] = None  # max(this, 0.1 % of the timeout) when fitted
    idle_exit_ns: float = 0.0         # largest idle-exit penalty E
    idle_exit_half_ns: float = 0.0    # request length at which E/2 is paid
    entry_ns: float = 0.0             # set-up after the deadline: max(0, this - timeout) is added
    verdict: str = "unexplained"      # "explained", "partly" or "unexplained"
    verdict_note: str = ""
    residual: Dict[str, object] = field(default_factory=dict)
    causes: List[dict] = field(default_factory=list)
    parameters: Dict[str, dict] = field(default_factory=dict)
    alternatives: List[dict] = field(default_factory=list)
    reference_ns: float = 1e6
    identified: Dict[str, bool] = field(default_factory=dict)
    notes: Dict[str, str] = field(default_factory=dict)
    requested_ns: List[float] = field(default_factory=list)
    measured_ns: List[float] = field(default_factory=list)
    sigma_ns: List[float] = field(default_factory=list)
    chi2: float = 0.0
    dof: int = 0
    cost: float = 0.0                 # the structure's score (chi-square + penalties)
    state: FitState = field(default_factory=FitState, init=False, repr=False, compare=False)

    # -- prediction -------------------------------------------------------
    def _spec(self) -> _Spec:
        terms: List[Tuple[str, float]] = []
        if self.proportional:
            terms.append(("prop", 0.0))
        if self.coalescing_share and self.coalescing_cap_ns:
            terms.append(("capped", self.coalescing_cap_ns / self.coalescing_share))
        if self.select_slack_ns is not None:
            terms.append(("select", float(self.select_slack_ns)))
        if self.idle_exit_ns:
            terms.append(("idle", self.idle_exit_half_ns))
        if self.entry_ns:
            terms.append(("entry", float(self.entry_ns)))
        return _Spec(int(self.granularity_ns), self.rounding, float(self.tick_ns),
                     int(self.extra_ticks), self.zero_return_ns is not None, tuple(terms))

    def _beta(self, spec: _Spec):
        vals = [self.constant_ns]
        for t, _ in spec.terms:
            if t == "prop":
                vals.append(self.proportional * 1e6)
            elif t == "capped":
                vals.append(self.coalescing_share * 1e6)
            elif t == "idle":
                vals.append(self.idle_exit_ns)
            elif t == "entry":
                vals.append(self.entry_ns)
        return np.array(vals, dtype=float)

    def set_linear(self, spec: _Spec, beta) -> None:
        """Set the linear amounts of `spec`'s terms from a parameter vector
        (scaled as the solver's), the inverse of :meth:`_beta`."""
        self.constant_ns = float(beta[0])
        j = 1
        for t, v in spec.terms:
            if t == "prop":
                self.proportional = float(beta[j]) / 1e6
            elif t == "capped":
                self.coalescing_share = float(beta[j]) / 1e6
                self.coalescing_cap_ns = self.coalescing_share * v
            elif t == "idle":
                self.idle_exit_ns = float(beta[j])
            elif t == "entry":
                self.entry_ns = float(beta[j])
            else:
                continue
            j += 1

    def predict_ns(self, requested_ns):
        """Predicted actual duration(s) in ns for request(s) in ns."""
        req = np.asarray(requested_ns, dtype=float)
        if not self.sleeps:
            out = np.full(req.shape, self.constant_ns, dtype=float)
        else:
            spec = self._spec()
            out = _predict_spec(spec, self._beta(spec), self.zero_return_ns, np.atleast_1d(req))
            out = out.reshape(req.shape)
        return float(out) if out.ndim == 0 else out

    def components_ns(self, requested_ns: float) -> List[Tuple[str, float]]:
        """The named additive parts of the prediction for one request."""
        return [(label, v) for _, label, v in self._parts(float(requested_ns))]

    def _parts(self, req: float) -> List[Tuple[str, str, float]]:
        """(cause, label, ns) for one request; they sum to the prediction - req."""
        if not self.sleeps:
            return [("wakeup", "call cost", self.constant_ns - req)]
        unit_word = format_ns(self.granularity_ns).split()[-1]
        q = float(_round_unit(np.array([req]), self.granularity_ns, self.rounding)[0])
        parts: List[Tuple[str, str, float]] = []
        if q != req:
            how = "rounded up to whole" if q > req else "rounded down to whole"
            parts.append(("granularity", f"{how} {unit_word}", q - req))
        if q == 0 and self.zero_return_ns is not None:
            parts.append(("zero_shortcut", "zero timeout returns at once", self.zero_return_ns))
            return parts
        base = self._tick_parts(q, parts)
        self._shape_parts(base, parts)
        self._constant_parts(parts)
        if self.idle_exit_ns:
            parts.append(("idle_exit", "idle exit",
                          self.idle_exit_ns * base / (base + self.idle_exit_half_ns)))
        if self.entry_ns > base:
            parts.append(("wakeup", "set-up after the deadline (the request expired while the "
                                    "sleep was set up)", self.entry_ns - base))
        # never below the (rounded) request: the kernel does not wake early
        total = sum(v for _, _, v in parts)
        floor_gap = (q - req) - total
        if floor_gap > 0.5 and parts:
            parts.append(("tick", "the wake-up cannot come before the request", floor_gap))
        return parts

    def _tick_parts(self, q: float, parts: list) -> float:
        """The tick's parts of a timeout q; returns the base the shape terms grow with."""
        if not self.tick_ns:
            return q
        n = math.ceil(q / self.tick_ns - 1e-9)
        up = n * self.tick_ns
        if up != q:
            parts.append(("tick", f"rounded up to the {format_ns(self.tick_ns)} tick", up - q))
        if self.extra_ticks:
            parts.append(("tick", "one extra tick" if self.extra_ticks == 1
                          else f"{self.extra_ticks} extra ticks",
                          self.extra_ticks * self.tick_ns))
        return up + self.extra_ticks * self.tick_ns

    def _shape_parts(self, base: float, parts: list) -> None:
        if self.proportional:
            parts.append(("coalescing", f"proportional slack ({self.proportional * 100:.2g}%)",
                          self.proportional * base))
        if self.coalescing_share and self.coalescing_cap_ns:
            parts.append(("coalescing", f"coalescing leeway min({self.coalescing_share:.3g} x d, "
                                        f"{format_ns(self.coalescing_cap_ns)})",
                          min(self.coalescing_share * base, self.coalescing_cap_ns)))
        if self.select_slack_ns is not None:
            extra = max(0.0, SELECT_SHARE * base - self.select_slack_ns)
            if extra:
                parts.append(("select_slack", "select/poll slack above the timer slack "
                                              "(0.1% of the timeout)", extra))

    def _constant_parts(self, parts: list) -> None:
        c = self.constant_ns
        if self.tick_ns:
            if c < 0:
                parts.append(("tick", "tick phase (the call starts after a tick)", c))
            elif c:
                parts.append(("wakeup", "constant overhead", c))
        elif self.slack_ns is not None and self.wakeup_ns is not None:
            if self.slack_ns:
                parts.append(("timer_slack", "timer slack", self.slack_ns))
            parts.append(("wakeup", "wake-up", self.wakeup_ns))
        elif c:
            parts.append(("wakeup", "wake-up and slack", c))

    def within_tolerance(self) -> np.ndarray:
        """Per measured point: is the prediction within max(5 % of the
        measured oversleep, 5 µs)?"""
        meas = np.asarray(self.measured_ns, dtype=float)
        req = np.asarray(self.requested_ns, dtype=float)
        pred = self.predict_ns(req)
        return np.abs(np.atleast_1d(pred) - meas) <= tolerance_ns(meas, req)

    def lodo(self) -> np.ndarray:
        """Leave one duration out: per measured point, is the prediction of a
        fit made without it within max(5 % of the oversleep, 5 µs)?"""
        st = self.state
        req = np.asarray(self.requested_ns, dtype=float)
        meas = np.asarray(self.measured_ns, dtype=float)
        out = np.zeros(len(req), dtype=bool)
        if st.refit is None or len(req) < 2:
            return out
        for i in range(len(req)):
            keep = np.arange(len(req)) != i
            p = st.refit(self.method, req[keep], meas[keep], np.asarray(self.sigma_ns)[keep],
                         st.unit_prior, st.ctx, bootstrap=0)
            out[i] = abs(float(p.predict_ns(req[i])) - meas[i]) <= float(tolerance_ns(meas[i], req[i]))
        return out

    def to_dict(self) -> dict:
        """The result's fields as plain data (the fit's state left out)."""
        return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self)
                if f.name != "state"}

    def to_json(self) -> dict:
        """The machine-readable fit: verdict, causes, parameters with intervals."""
        ok = self.within_tolerance()
        return {
            "method": self.method, "sleeps": self.sleeps, "verdict": self.verdict,
            "verdict_note": self.verdict_note, "reference_ns": self.reference_ns,
            "causes": self.causes, "parameters": self.parameters,
            "alternatives": self.alternatives, "residual": self.residual,
            "identified": self.identified, "notes": self.notes,
            "chi2": self.chi2, "dof": self.dof,
            "within_tolerance": [int(ok.sum()), int(ok.size)],
            "points": [{"requested_ns": r, "measured_ns": m, "sigma_ns": s,
                        "predicted_ns": float(self.predict_ns(r))}
                       for r, m, s in zip(self.requested_ns, self.measured_ns, self.sigma_ns)],
        }


class ModelSet(dict):
    """Models per group (machine / configuration), keyed by the group tuple;
    what ``fit()`` returns (a :class:`Model` where the data hold one group)."""

    def __init__(self, by: Sequence[str], models: Mapping[tuple, "Model"]):
        super().__init__(models)
        self.by = tuple(by)

    def explain(self, method: Optional[str] = None, seconds: Optional[float] = None) -> str:
        parts = []
        for m in self.values():
            if method is not None and method not in m.params:
                continue
            parts.append(m.explain(method, seconds))
        if method is not None and not parts:
            fitted = sorted({n for m in self.values() for n in m.params})
            raise ValueError(f"no fit for method {method!r}; fitted: {', '.join(fitted)}")
        return "\n\n".join(parts)

    def within_tolerance(self) -> Tuple[int, int]:
        ok = n = 0
        for m in self.values():
            a, b = m.within_tolerance()
            ok += a
            n += b
        return ok, n

    def summary(self) -> List[dict]:
        rows = []
        for key, m in self.items():
            for r in m.summary():
                r.update({k: v for k, v in zip(self.by, key)})
                rows.append(r)
        return rows

    def to_json(self) -> dict:
        return {"groups": [dict(m.to_json(), key=dict(zip(self.by, key)))
                           for key, m in self.items()]}

    def find(self, **match) -> "Model":
        """The one model whose group values match (text: an exact value, or
        else a substring): ms.find(host="XP1700"), find(timer_config="HZ=100")."""
        hits = []
        exact = {k: any(dict(zip(self.by, key)).get(k) == v for key in self)
                 for k, v in match.items()}
        for key, m in self.items():
            vals = dict(zip(self.by, key))
            good = True
            for k, v in match.items():
                have = vals.get(k)
                if isinstance(v, str) and not exact[k]:
                    good &= isinstance(have, str) and v in have
                else:
                    good &= have == v
            if good:
                hits.append(m)
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} groups match {match}")
        return hits[0]


class Model(ModelSet):
    """Fitted components per method for one machine and configuration: the
    :class:`ModelSet` of its one group (``by`` its group columns, ``key``
    its values)."""

    def __init__(self, params: Dict[str, MethodParams], facts: Optional[dict] = None,
                 label: str = "", by: Sequence[str] = (), key: tuple = ()):
        super().__init__(by, {tuple(key): self})
        self.params = params
        self.facts = dict(facts or {})
        self.label = label
        self.slack_applied: Optional[float] = None   # the one slack applied for its runs

    # a model is itself (it holds itself as its one group), hashable as any
    # object (a dict is not)
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__  # type: ignore[assignment]

    def __repr__(self):
        return f"<sleepacc.model.Model {self.label or ''} methods={list(self.params)}>"

    @property
    def methods(self) -> List[str]:
        return list(self.params)

    def predict(self, method: str, seconds):
        """Predicted actual duration in seconds for a request in seconds."""
        if method not in self.params:
            raise ValueError(f"no fit for method {method!r}; fitted: {', '.join(self.params)}")
        if isinstance(seconds, bool):
            raise TypeError("seconds must be a number")
        arr = np.asarray(seconds, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("seconds must be finite and >= 0")
        out = self.params[method].predict_ns(np.round(arr * 1e9)) / 1e9
        return float(out) if np.ndim(out) == 0 else out

    def within_tolerance(self) -> Tuple[int, int]:
        """(points within max(5 % of the oversleep, 5 µs), points) over all methods."""
        ok = n = 0
        for p in self.params.values():
            wt = p.within_tolerance()
            ok += int(np.sum(wt))
            n += int(wt.size)
        return ok, n

    def summary(self) -> List[dict]:
        """One flat row per method: the fitted components."""
        rows = []
        for name, p in self.params.items():
            ok = p.within_tolerance()
            rows.append({
                "group": self.label, "method": name, "sleeps": p.sleeps,
                "verdict": p.verdict, "causes": ",".join(c["name"] for c in p.causes),
                "granularity_ns": p.granularity_ns, "rounding": p.rounding,
                "zero_return_ns": p.zero_return_ns, "tick_ns": p.tick_ns,
                "extra_ticks": p.extra_ticks, "constant_ns": p.constant_ns,
                "slack_ns": p.slack_ns, "wakeup_ns": p.wakeup_ns,
                "proportional": p.proportional, "coalescing_share": p.coalescing_share,
                "coalescing_cap_ns": p.coalescing_cap_ns, "select_slack_ns": p.select_slack_ns,
                "idle_exit_ns": p.idle_exit_ns, "idle_exit_half_ns": p.idle_exit_half_ns,
                "entry_ns": p.entry_ns, "within": int(ok.sum()), "points": int(ok.size),
            })
        return rows

    def to_json(self) -> dict:
        """Machine-readable: per method verdict, causes and parameters with intervals."""
        facts = {k: v for k, v in self.facts.items()
                 if isinstance(v, (str, int, float, bool)) or v is None}
        return {"label": self.label, "facts": facts,
                "methods": {n: p.to_json() for n, p in self.params.items()}}

    def explain(self, method: Optional[str] = None, seconds: Optional[float] = None) -> str:
        """Plain sentences: the verdict, what a typical sleep is made of, then
        advice with the expected gain."""
        names = [method] if method is not None else list(self.params)
        out = []
        if self.label:
            out.append(f"{self.label}:")
        for name in names:
            if name not in self.params:
                raise ValueError(f"no fit for method {name!r}; fitted: {', '.join(self.params)}")
        out.extend(_words.host_lines(self.facts, [self.params[n] for n in names
                                                  if self.params[n].sleeps]))
        for name in names:
            out.extend(_words.explain_one(self.params[name], self.facts, seconds))
        return "\n".join(out)
