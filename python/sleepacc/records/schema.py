"""The record's schema: the tag, the one error rule (:func:`error_ns`), and
the checks a point record and a JSON-form document must pass before anything
uses them (:func:`check_point`, :func:`check_doc`, and :func:`check_trace`
for the trace a point may carry), each failure one ValueError naming where
it is ("<file>:<line>: <what is wrong>").
"""
from __future__ import annotations

import math
import re
import warnings
from typing import Any, Mapping, Optional, Union

SCHEMA = "sleepacc/1"
#: The tag of a trace (a point's "trace" key), versioned apart from SCHEMA.
TRACE_SCHEMA = "sleepacc-trace/1"
TRACE_TERMS = ("rounding", "slack", "timer_irq", "wake_to_run", "to_user", "other")

#: Statistics that are counts, not durations: in a flat row they keep their
#: name; every other statistic f becomes the column f"{f}_ns".
COUNT_FIELDS = ("n", "undersleeps")


def stat_fields() -> tuple[str, ...]:
    """The statistics an error is taken of and a fleet is ranked by: the
    core's order statistics (those with a quantile level) and mean, in the
    core's order (read from the compiled core on first use, so this module
    imports without it)."""
    global _STAT_FIELDS
    if _STAT_FIELDS is None:
        from .. import _core
        _STAT_FIELDS = tuple(f for f in _core.stats_fields
                             if _core.stats_level(f) >= 0 or f == "mean")
    return _STAT_FIELDS


_STAT_FIELDS: "tuple[str, ...] | None" = None

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# ---------------------------------------------------------------------------
# The one error rule
# ---------------------------------------------------------------------------


def origin_ns(mode: Optional[str], requested_ns):
    """What a point's recorded values are measured from, the one rule: the
    requested duration in relative mode (a value is an actual duration), 0
    in periodic mode (a value is already lateness).  The error of a value
    is value - origin; it is also the core's undersleep threshold of a run
    (engine.c: values below it count as undersleeps)."""
    return 0 if mode == "periodic" else requested_ns


def error_ns(mode: Optional[str], requested_ns: Union[int, float], value):
    """The error of a statistic `value` (ns) of a point: ``value -
    requested_ns`` in relative mode (the value is an actual duration), the
    value itself in periodic mode (it is already lateness): value minus
    :func:`origin_ns`.  None stays None."""
    if value is None:
        return None
    if mode == "periodic":   # already lateness (origin 0): a samples array stays itself
        return value
    return value - origin_ns(mode, requested_ns)



def clean(obj):
    """NaN and infinities -> None, so the JSON is strict."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [clean(v) for v in obj]
    return obj



# ---------------------------------------------------------------------------
# Checking defensively: what a file holds is checked before anything uses it
# ---------------------------------------------------------------------------

def _kind(v) -> str:
    return "null" if v is None else type(v).__name__


def _check_int(v, what: str, where: str, minimum: int = _INT64_MIN,
               none_ok: bool = False) -> None:
    if v is None and none_ok:
        return
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{where}: {what} must be an integer, got {_kind(v)} {v!r:.40}")
    if not minimum <= v <= _INT64_MAX:
        raise ValueError(f"{where}: {what} = {v!r:.40} is outside {minimum}..{_INT64_MAX}"
                         + (" (int64)" if minimum == _INT64_MIN else ""))


def _check_num(v, what: str, where: str, finite: bool = True) -> None:
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"{where}: {what} must be a number, got {_kind(v)} {v!r:.40}")
    if isinstance(v, int):
        _check_int(v, what, where)
    elif finite and not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be a finite number, got {v!r}")
    elif math.isfinite(v) and abs(v) >= 2.0**63:
        raise ValueError(f"{where}: {what} = {v!r} is outside int64")


def _fine_num(v) -> bool:
    """Is `v` a number _check_num takes as it is (None, an int64, a float
    within int64)?  The quick test of a big file's every value."""
    t = type(v)
    return ((t is int and _INT64_MIN <= v <= _INT64_MAX) or (t is float and -_F63 < v < _F63)
            or v is None)


_F63 = 2.0**63


def _check_finite(v, what: str, where: str) -> None:
    """No NaN or infinity anywhere in `v` (an object or list read from a
    file): strict JSON has none, and no writer here writes one."""
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"{where}: {what} must be a finite number, got {v!r}")
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, (float, dict, list)):   # nothing else can hold a NaN
                _check_finite(x, f"{what}.{k}", where)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            if isinstance(x, (float, dict, list)):
                _check_finite(x, f"{what}[{i}]", where)


def _check_obj(v, what: str, where: str, none_ok: bool = True) -> None:
    if not (isinstance(v, dict) or (none_ok and v is None)):
        raise ValueError(f"{where}: {what} must be a JSON object, got {_kind(v)} {v!r:.40}")


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def check_point(p, where: str) -> None:
    """ValueError "<where>: <what>" unless `p` is a well-formed point record."""
    _check_obj(p, "a measurement", where, none_ok=False)
    missing = [k for k in ("method", "mode", "requested_ns", "n", "stats") if k not in p]
    if missing:
        raise ValueError(f"{where}: bad point record (no " + ", ".join(missing) + ")")
    # no control character: a NUL would cut the name short where it is
    # looked up, a newline garbles a table.  The core's rule of a record it
    # writes (sleepacc_result_fields' NAME flag), so every file it writes reads.
    if not isinstance(p["method"], str) or not p["method"] or _CONTROL.search(p["method"]):
        raise ValueError(f"{where}: method must be a method name (printable text), got "
                         f"{_kind(p['method'])} {p['method']!r:.40}")
    from .. import _core   # the mode names are the core's (sleepacc_mode_name)
    if p["mode"] not in _core.mode_names:
        raise ValueError(f"{where}: mode must be " + " or ".join(map(repr, _core.mode_names))
                         + f", got {p['mode']!r:.40}")
    _check_int(p["requested_ns"], "requested_ns", where, 0)
    _check_int(p["n"], "n", where, 0, none_ok=True)
    _check_obj(p["stats"], "stats", where, none_ok=False)
    if "n" not in p["stats"]:     # a statistic added since may be absent; n never is
        raise ValueError(f"{where}: bad point record (no stats.n)")
    for k, v in p["stats"].items():
        if not _fine_num(v):
            _check_num(v, f"stats.{k}", where)
    for k in ("missed", "wall_ns"):
        if p.get(k) is not None:
            _check_int(p[k], k, where)
    for k in ("cpu_ns_per_call", "cpu_percent"):
        _check_num(p.get(k), k, where)
    for k in ("env", "ctx_switches"):
        _check_obj(p.get(k), k, where)
    _check_finite(p.get("env"), "env", where)
    if isinstance(p.get("ctx_switches"), dict):
        for k, v in p["ctx_switches"].items():
            if not _fine_num(v):
                _check_num(v, f"ctx_switches.{k}", where)
    samples = p.get("samples")
    if samples is not None:
        if not isinstance(samples, list):
            raise ValueError(f"{where}: samples must be a list of integers (ns), got "
                             f"{_kind(samples)}")
        for i, v in enumerate(samples):
            _check_int(v, f"samples[{i}]", where)
    if p.get("trace") is not None:
        check_trace(p["trace"], where, "trace.")


def check_trace(t, where: str, prefix: str = "") -> bool:
    """ValueError "<where>: <what>" unless `t` is a well-formed trace of
    TRACE_SCHEMA (docs/schema.md); False for a trace of another schema
    tag (a reader ignores a trace it does not know), True when checked."""
    _check_obj(t, prefix.rstrip(".") or "a trace", where, none_ok=False)
    if not isinstance(t.get("schema"), str):
        raise ValueError(f"{where}: {prefix}schema must be a string, got {_kind(t.get('schema'))}")
    if t["schema"] != TRACE_SCHEMA:
        return False
    missing = [k for k in ("method", "mode", "requested_ns", "n", "lateness", "terms",
                           "complete", "idle", "idle_state", "untraced") if k not in t]
    if missing:
        raise ValueError(f"{where}: bad trace (no {prefix}" + f", {prefix}".join(missing) + ")")
    if not isinstance(t["method"], str) or _CONTROL.search(t["method"]):
        raise ValueError(f"{where}: {prefix}method must be a method name, got {t['method']!r:.40}")
    from .. import _core
    if t["mode"] not in _core.mode_names:
        modes = " or ".join(map(repr, _core.mode_names))
        raise ValueError(f"{where}: {prefix}mode must be {modes}, got {t['mode']!r:.40}")
    _check_int(t["requested_ns"], prefix + "requested_ns", where, 0)
    _check_int(t["n"], prefix + "n", where, 0)
    for k in ("slack_ns", "cpu"):
        _check_int(t.get(k), prefix + k, where, none_ok=True)
    for k in ("gaps", "lost", "missed_pages", "events"):
        _check_int(t.get(k, 0), prefix + k, where, 0)
    for k in ("interrupted", "mounted"):
        if not isinstance(t.get(k, False), bool):
            raise ValueError(f"{where}: {prefix}{k} must be true or false, got {_kind(t[k])}")
    n = t["n"]

    def ints(name, values, none_ok=False):
        if not isinstance(values, list) or len(values) != n:
            raise ValueError(f"{where}: {prefix}{name} must be a list of {n} values (n), got "
                             f"{_kind(values)}" + (f" of {len(values)}"
                                                   if isinstance(values, list) else ""))
        for i, v in enumerate(values):
            _check_int(v, f"{prefix}{name}[{i}]", where, none_ok=none_ok)
    for k in ("lateness", "idle", "idle_state"):
        ints(k, t[k])
    complete = t["complete"]
    if not isinstance(complete, list) or len(complete) != n or \
            not all(isinstance(c, bool) for c in complete):
        raise ValueError(f"{where}: {prefix}complete must be a list of {n} true/false values")
    _check_obj(t["terms"], prefix + "terms", where, none_ok=False)
    if sorted(t["terms"]) != sorted(TRACE_TERMS):
        raise ValueError(f"{where}: {prefix}terms must be {', '.join(TRACE_TERMS)}, got "
                         f"{', '.join(map(str, t['terms']))}")
    for name, values in t["terms"].items():
        ints(f"terms.{name}", values, none_ok=True)
        for i, (v, c) in enumerate(zip(values, complete)):
            if (v is None) == c:   # a term is missing exactly where the chain is incomplete
                raise ValueError(f"{where}: {prefix}terms.{name}[{i}] is "
                                 f"{'null on a complete' if c else 'given on an incomplete'} "
                                 "sample")
    if not isinstance(t["untraced"], list):
        raise ValueError(f"{where}: {prefix}untraced must be a list, got {_kind(t['untraced'])}")
    for i, v in enumerate(t["untraced"]):
        _check_int(v, f"{prefix}untraced[{i}]", where)
    return True


def check_doc(doc, where: str, point_where=None) -> None:
    """ValueError "<where>: <what>" unless `doc` is a well-formed JSON form;
    point_where(i) names where measurement i is (default: where)."""
    _check_obj(doc, "the document", where, none_ok=False)
    for k in ("host", "settings"):
        _check_obj(doc.get(k), k, where)
    if isinstance(doc.get("settings"), dict):
        _check_obj(doc["settings"].get("env"), "settings.env", where)
    for k in ("host", "settings"):
        _check_finite(doc.get(k), k, where)
    for k in ("started", "finished"):
        if doc.get(k) is not None and not isinstance(doc[k], str):
            raise ValueError(f"{where}: {k} must be an ISO 8601 string, got {_kind(doc[k])}")
    ms = doc.get("measurements")
    if ms is None:
        return
    if not isinstance(ms, list):
        raise ValueError(f"{where}: measurements must be a list, got {_kind(ms)}")
    for i, p in enumerate(ms):
        check_point(p, point_where(i) if point_where else f"{where}: measurement {i + 1}")


def _warn_duplicates(points_at, where: str) -> None:
    """A RuntimeWarning for each point whose (method, mode, requested_ns)
    an earlier point has (two writers on one file, or a merge gone wrong)."""
    first: dict = {}
    for lineno, p in points_at:
        key = (p["method"], p["mode"], p["requested_ns"])
        if key in first:
            warnings.warn(f"{where}:{lineno}: duplicate point {key[0]} {key[1]} "
                          f"{key[2]} ns (first at line {first[key]})", RuntimeWarning,
                          stacklevel=3)
        else:
            first[key] = lineno


def _check_schema(obj: Mapping, where: str) -> None:
    schema = obj.get("schema")
    if schema != SCHEMA:
        raise ValueError(f"{where}: unsupported schema {schema!r} (expected {SCHEMA!r})")

