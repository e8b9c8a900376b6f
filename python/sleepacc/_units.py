"""Duration parsing and formatting shared by the analysis modules and the CLI.

Pure Python: the compiled core is imported only when a function needs it
(Go's formatter).  A duration's range (finite, non-negative, at most one
day) is the core's rule, applied where the duration is used; this module
only reads the text.

    parse_duration("10us") -> 1e-05          (seconds, float)
    parse_duration_ns("1.5ms") -> 1500000    (int ns)
    parse_durations_ns("0,1us,1ms") -> [0, 1000, 1000000]
    parse_slack_ns("50us") -> 50000; parse_slack_ns("1") -> 1   (bare: int ns)
    format_ns(1500) -> "1.5 µs"              (human, for explanations and axes)
    format_go(1500) -> "1.5µs"               (Go time.Duration.String(), from the core)
"""

from __future__ import annotations

import math
import re

__all__ = [
    "UNITS_NS",
    "UNITS_TEXT",
    "parse_duration",
    "parse_duration_ns",
    "parse_durations_ns",
    "parse_slack_ns",
    "has_unit",
    "format_ns",
    "format_us",
    "format_go",
    "unit_for",
]

# Accepted unit suffixes, in ns.  "µ" (U+00B5 micro sign) and "μ" (U+03BC
# Greek mu) are both accepted because both occur in the wild.
UNITS_NS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "sec": 1_000_000_000,
    "m": 60_000_000_000,
    "min": 60_000_000_000,
    "h": 3_600_000_000_000,
}

#: The accepted units, as error messages and help texts list them.  "m" is
#: minutes (as in Go's and irtt's durations): 5m is five minutes, not 5ms.
UNITS_TEXT = "ns, us or µs, ms, s or sec, m or min (minutes), h (hours)"

_NUM = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
# a number, then (after optional blanks) the word that is its unit, if any
_TERM = re.compile(r"(" + _NUM + r")\s*([A-Za-zµμ]*)")


def parse_duration_ns(text) -> int:
    """Parse a duration into integer nanoseconds.

    Accepts "0", "100ns", "10us", "5µs", "1ms", "0.5s", "1m30s" (Go-style
    concatenation; m is minutes, h hours: UNITS_NS), "2e-3s", and a bare
    number, which means seconds (like
    ``time.sleep``), each with an optional sign ("-1ms" is -1000000).
    Surrounding blanks are ignored.  Raises ValueError for anything else
    (and for a value too large to be a number of ns).  Its range is not
    checked here: it is the core's rule where the duration is used
    (sleepacc_option_set's seconds: non-negative, at most one day).  Sub-ns
    fractions are rounded to the nearest ns.
    """
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"duration must be text like '10us', got {text!r}")
    s = text.strip()
    if not s:
        raise ValueError("duration is empty")
    sign = -1 if s.startswith("-") else 1
    if s[:1] in "+-":
        s = s[1:]
    if not s:
        raise ValueError(f"cannot parse duration {text!r}: a sign needs a number")
    pos = 0
    total = 0.0
    terms = 0
    while pos < len(s):
        m = _TERM.match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(
                f"cannot parse duration {text!r}: use a number with a unit "
                f"({UNITS_TEXT}), e.g. '10us' or '1.5ms'")
        value = float(m.group(1))
        unit = m.group(2) or None
        if unit is not None and unit not in UNITS_NS:
            case = f" (units are lower case: {unit.lower()!r})" if unit.lower() in UNITS_NS else ""
            raise ValueError(f"cannot parse duration {text!r}: unknown unit {unit!r}{case}; "
                             f"the units are {UNITS_TEXT}")
        if unit is None:
            # A bare number: seconds, only allowed as the whole text.
            if terms or m.end() != len(s):
                raise ValueError(f"cannot parse duration {text!r}: missing unit")
            unit = "s"
        total += value * UNITS_NS[unit]
        terms += 1
        pos = m.end()
        while pos < len(s) and s[pos] == " ":
            pos += 1
    if not math.isfinite(total):   # no int ns: a parse error, not the range rule
        raise ValueError(f"duration {text!r} is not finite")
    return sign * int(round(total))


def has_unit(text: str) -> bool:
    """Whether a duration text carries a unit suffix ("10us" yes, "10" no)."""
    return bool(re.search(r"[A-Za-zµμ]\s*$", text.strip())) and not re.fullmatch(
        r"\s*[+-]?" + _NUM + r"\s*", text)


def parse_durations_ns(text: str) -> list:
    """A comma-separated list of durations ("0,1us,1ms") -> [int ns], in
    order, duplicates dropped.  Every item is checked alone, and a list that
    mixes bare numbers (seconds) with suffixed ones ("1ms,10") is refused
    naming the bare item: it is almost always a forgotten unit."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"durations must be text like '1us,1ms', got {text!r}")
    items = [t.strip() for t in text.split(",")]
    if any(not t for t in items):
        raise ValueError(f"empty item in {text!r}")
    suffixed = [t for t in items if has_unit(t)]
    out = []
    for t in items:
        if suffixed and not has_unit(t) and t not in ("0", "+0"):
            raise ValueError(
                f"item {t!r} of {text!r} has no unit while {suffixed[0]!r} has one: a bare number "
                f"means seconds, so write {t}s if you mean seconds, or add the unit you meant "
                f"({t}ms, {t}us, {t}ns)")
        try:
            d = parse_duration_ns(t)
        except ValueError as exc:
            raise ValueError(f"item {t!r} of {text!r}: {exc}") from None
        if d not in out:
            out.append(d)
    return out


def parse_slack_ns(text: str) -> int:
    """Timer slack: a bare number is an integer of nanoseconds (the unit of
    prctl(PR_SET_TIMERSLACK) and /proc/.../timerslack_ns); a suffixed one is
    a duration ("50us").  "1.0" is refused naming the unit (it is not clear
    whether 1 ns or 1 s was meant).  A sign is parsed: its range (>= 0,
    1 ns .. 1 s) is the core's rule, applied where the slack is used."""
    if isinstance(text, bool) or not isinstance(text, str):
        raise ValueError(f"slack must be text like '1' (ns) or '50us', got {text!r}")
    t = text.strip()
    if not has_unit(t):
        if not re.fullmatch(r"[+-]?[0-9]+", t):
            raise ValueError(
                f"a bare slack is an integer number of nanoseconds (ns, the kernel's unit), "
                f"got {text!r}: write an integer (1 = no slack) or give a unit (1ns, 50us, 1ms)")
        ns = int(t)
    else:
        ns = parse_duration_ns(t)
    return ns


def parse_duration(text) -> float:
    """Parse a duration like "10us", "1ms", "5µs", "0.5s", "100ns" or "0"
    into seconds (float).  ValueError on bad text (see parse_duration_ns)."""
    return parse_duration_ns(text) / 1e9


def unit_for(ns: float):
    """(unit name, ns per unit) a human would use for a value of this size."""
    a = abs(ns)
    if a >= 1e9:
        return "s", 1e9
    if a >= 1e6:
        return "ms", 1e6
    if a >= 1e3:
        return "µs", 1e3
    return "ns", 1.0


def _trim(x: float, digits: int) -> str:
    out = f"{x:.{digits}f}"
    if "." in out:
        out = out.rstrip("0").rstrip(".")
    return out or "0"


def format_ns(ns, digits: int = 3) -> str:
    """Human duration with a space before the unit: 1500 -> "1.5 µs",
    20_000_000 -> "20 ms", 0 -> "0 ns".  `digits` significant digits."""
    if ns is None:
        return "n/a"
    ns = float(ns)
    if not math.isfinite(ns):
        return str(ns)
    unit, scale = unit_for(ns)
    v = ns / scale
    if v == 0:
        return f"0 {unit}"
    dec = max(0, digits - 1 - int(math.floor(math.log10(abs(v)))))
    return f"{_trim(v, dec)} {unit}"


def format_us(ns, decimals: int = 0) -> str:
    """Always in µs: 52638 -> "53 µs" (decimals=0), "52.6 µs" (decimals=1)."""
    if ns is None:
        return "n/a"
    return f"{float(ns) / 1e3:.{decimals}f} µs"


def format_go(ns: int) -> str:
    """Go's time.Duration.String() ("1µs", "309.477µs", "1.011542ms", "0s"),
    as irtt prints it.  The C core's formatter (sleepacc_format_duration) is
    the one implementation; it is imported here only when called, so this
    module stays importable without the compiled core."""
    from . import _core
    return _core.format_duration(int(ns))
