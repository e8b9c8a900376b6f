"""Reports in the layouts of the tools the seeds used, so old parsers keep working.

``format(data, style)`` renders a Sweep (or Measurements, or tidy records) as:

irtt
    ``irtt sleep``'s table, rendered by the C core (``Sweep.table("irtt")``;
    for plain records the same core renderer is fed rows built from them;
    there is no second implementation in Python).
midas
    MIDAS ``test_sleep`` lines: ``sleep N loops, X sec per loop, T sec total,
    A usec actual, P usec actual per loop, oversleep O usec, Q%``.
xmame
    the blocks of the xmame ``sleep.c`` test: ``Testing _select_sleep (x N),
    delay D`` / ``Total time: ... ms; unit time: ... ms; estimated overhead:
    ... ms`` and a blank line (delay in ms).
testsleep
    FreeBSD's testsleep table (requested µs and mean actual µs per method,
    one column pair per configuration, as in the calloutng thread).
wide
    the core's wide table (median/p99/max error and CPU %).
markdown, csv, json
    the tidy records.

``parse(text, style)`` reads midas, xmame, testsleep and irtt text back into
records, so a report round-trips.

Numbers: MIDAS and xmame print means (the seeds' tools timed a whole loop);
records from a Sweep give them ``mean`` of the samples, and a ``total_ns``
field when the exact loop total is known.
"""

from __future__ import annotations

import csv as _csv
import io
import json as _json
import math
import re
import textwrap
from typing import Dict, List, Optional

from ._units import format_go
from .records import clean, error_ns, flatten, origin_ns, stat_error

__all__ = ["STYLES", "format", "parse", "records_for_report", "text_table", "html_table"]

STYLES = ("irtt", "midas", "xmame", "testsleep", "wide", "markdown", "csv", "json")


# ---------------------------------------------------------------------------
# Plain aligned text tables (the CLI's info, measure and compare tables)
# ---------------------------------------------------------------------------

def text_table(headers, rows, align: Optional[str] = None, width: Optional[int] = None) -> str:
    """Columns aligned to their widest cell, two spaces apart; the first
    column left-aligned, the others right-aligned unless `align` (one of
    "<" or ">" per column) says otherwise.  No trailing newline.  With
    `width`, a left-aligned last column whose lines would pass it wraps at
    spaces, its further lines indented to the column."""
    cells = [list(map(str, headers))] + [[str(c) for c in r] for r in rows]
    n = len(headers)
    align = align or ("<" + ">" * (n - 1))
    widths = [max(len(r[i]) for r in cells) for i in range(n)]
    start = sum(w + 2 for w in widths[:-1])
    room = None if width is None or align[-1] != "<" else width - start
    under = room is not None and room < 24 and widths[-1] > room   # too narrow: below the row
    if under:
        start, room = 4, max(12, width - 4)
    if room is not None and widths[-1] > room:
        widths[-1] = room
    out = []
    for r in cells:
        last = [r[-1]]
        if room is not None and len(r[-1]) > room:
            last = textwrap.wrap(r[-1], room, break_long_words=False) or [""]
        if under:
            out.append("  ".join(f"{c:{align[i]}{widths[i]}}" for i, c in enumerate(r[:-1])).rstrip())
            out += [" " * start + line for line in last if line]
            continue
        parts = [f"{c:{align[i]}{widths[i]}}" for i, c in enumerate(r[:-1] + last[:1])]
        out.append("  ".join(parts).rstrip())
        out += [" " * start + more for more in last[1:]]
    return "\n".join(out)


_HTML_COLS = ("method", "mode", "requested", "n", "median error", "p99 error", "max error",
              "CPU %")


def _html_cells(row: dict) -> List[str]:
    def err(stat):
        v = stat_error(row, stat)
        return "–" if v is None or not row.get("n") else format_go(int(round(v)))
    cpu = row.get("cpu_percent")
    return [str(row["method"]), str(row.get("mode") or "relative"),
            format_go(int(row["requested_ns"])), str(row.get("n")), err("median"), err("p99"),
            err("max"), "–" if cpu is None or cpu < 0 else f"{cpu:.1f}"]


def html_table(rows: List[dict], caption: Optional[str] = None) -> str:
    """A compact HTML table of flat rows (records.flatten): method, mode,
    requested, n, median/p99/max error, CPU % (Jupyter's _repr_html_ of a
    Measurement or Sweep)."""
    from html import escape
    head = "".join(f"<th>{escape(c)}</th>" for c in _HTML_COLS)
    body = "".join("<tr>" + "".join(
        f'<td style="text-align:{"left" if i < 2 else "right"}">{escape(c)}</td>'
        for i, c in enumerate(_html_cells(r))) + "</tr>" for r in rows)
    cap = f"<caption style=\"text-align:left\">{escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def _is_sweep(x) -> bool:
    return hasattr(x, "table") and hasattr(x, "host") and hasattr(x, "__len__")


def records_for_report(data) -> List[dict]:
    """Flat rows (sleepacc.records.flatten) with method, mode, requested_ns,
    n, the stats as *_ns, actual_ns (median), error_ns, cpu_percent and the
    experiment variables (host, os, kernel, slack, policy, priority, cpu,
    dma latency, schema tag: a Sweep's host facts fill them); tidy
    records (a CSV, a DataFrame, dicts) are passed through the model's
    reader and may carry total_ns, group columns and samples counts."""
    if _is_sweep(data) or (isinstance(data, (list, tuple)) and data
                           and hasattr(data[0], "to_dict") and hasattr(data[0], "stats")):
        rows = []
        host = getattr(data, "host", None)
        for m in data:
            row = flatten(m, host)
            row["_stats"] = dict(m.stats)
            rows.append(row)
        return rows
    if hasattr(data, "to_dict") and hasattr(data, "stats"):
        return records_for_report([data])
    from .records import to_records
    return to_records(data)


def _mean_ns(r: dict) -> float:
    """Mean actual duration of a record (what the loop-timing tools print)."""
    if r.get("total_ns") is not None and r.get("mean_ns") is not None:
        return float(r["mean_ns"])
    if r.get("total_ns") is not None and r.get("n"):
        return float(r["total_ns"]) / float(r["n"])
    st = r.get("_stats")
    mean = st["mean"] if st is not None else r.get("mean_ns")
    if mean is not None:   # actual = requested + error (periodic stats are lateness)
        return r["requested_ns"] + float(error_ns(r.get("mode"), r["requested_ns"], mean))
    return float(r["actual_ns"])


def _loops(r: dict) -> int:
    if "_stats" in r and r.get("n") is None and r.get("total_ns") is None:
        # a point read from irtt's table: its loop count is unknown, not 1
        raise ValueError(f"{r['method']} at {format_go(int(r['requested_ns']))}: the loop count "
                         "is unknown (irtt's table holds means only); use the irtt, testsleep, "
                         "csv or json style")
    for k in ("n", "samples"):
        v = r.get(k)
        if isinstance(v, (int, float)) and v > 0:
            return int(v)
    return 1


def _total_ns(r: dict) -> float:
    if r.get("total_ns") is not None:
        return float(r["total_ns"])
    return _mean_ns(r) * _loops(r)


# ---------------------------------------------------------------------------
# Styles
# ---------------------------------------------------------------------------

def format(data, style: str = "irtt") -> str:  # noqa: A001  (the public name)
    """Render `data` (Sweep, Measurement(s), records, CSV path, DataFrame) in
    `style` (one of STYLES).  Returns the text, lines ending in "\\n"."""
    if not isinstance(style, str):
        raise TypeError(f"style: must be a str, got {type(style).__name__}")
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}; choose one of {', '.join(STYLES)}")
    if style in ("irtt", "wide") and _is_sweep(data):
        return data.table(style)
    rows = records_for_report(data)
    return _RENDER[style](rows)


def _core_rows(rows: List[dict]) -> List[dict]:
    from . import _core
    out = []
    for r in rows:
        st = r.get("_stats")
        if st is None:
            # the recorded value of an actual duration: origin + its error (the one rule)
            shift = r["requested_ns"] - origin_ns(r.get("mode"), r["requested_ns"])
            mean = _mean_ns(r) - shift
            med = r.get("median_ns", r.get("actual_ns"))
            med = (med - shift) if med is not None else mean

            def g(k, default):
                v = r.get(f"{k}_ns")
                return int(round(v)) if v is not None else int(round(default))
            # every order statistic of the core's table: the row's, else the median
            st = {k: g(k, med) for k in _core.stats_fields}
            st.update(n=_loops(r), mean=mean, std=float(r.get("std_ns") or 0.0),
                      median=int(round(med)), undersleeps=int(r.get("undersleeps") or 0))
        cpu = r.get("cpu_percent")
        out.append({"method": str(r["method"]), "requested_ns": int(r["requested_ns"]),
                    "mode": r.get("mode") or "relative", "stats": st,
                    "cpu_percent": -1.0 if cpu is None else float(cpu)})
    return out


def _core_table(rows: List[dict], style: str) -> str:
    """The C core's renderer, fed rows built from records (a Sweep uses
    Sweep.table directly): the same bytes as every other binding prints."""
    from . import _core
    return _core.table(_core_rows(rows), style)


def _irtt(rows: List[dict]) -> str:
    return _core_table(rows, "irtt")


def _wide(rows: List[dict]) -> str:
    return _core_table(rows, "wide")


def _by_method(rows: List[dict]) -> List[tuple]:
    """(method, rows) in first-seen order."""
    groups: Dict[str, List[dict]] = {}
    for r in rows:
        groups.setdefault(str(r["method"]), []).append(r)
    return list(groups.items())


def _midas(rows: List[dict]) -> str:
    """MIDAS progs/test_sleep.cxx line format (seed 003).  Its lines carry
    no method (test_sleep measured one per run), so rows of several methods
    give one block per method under a "== <method>" line, blocks a blank
    line apart (as the irtt style does); one method prints the bare lines."""
    groups = _by_method(rows)
    if len(groups) > 1:
        return "\n".join(f"== {name}\n" + _midas_lines(rs) for name, rs in groups)
    return _midas_lines(rows)


def _midas_lines(rows: List[dict]) -> str:
    out = []
    for r in rows:
        loops = _loops(r)
        per = float(r["requested_ns"]) / 1e9
        total_req = per * loops
        actual_us = _total_ns(r) / 1e3
        per_us = _mean_ns(r) / 1e3
        over = per_us - per * 1e6
        pct = 100.0 * over / (per * 1e6) if per > 0 else math.inf
        out.append(f"sleep {loops} loops, {per:.6f} sec per loop, {total_req:.6f} sec total, "
                   f"{actual_us:.3f} usec actual, {per_us:.3f} usec actual per loop, "
                   f"oversleep {over:.3f} usec, {pct:.1f}%")
    return "\n".join(out) + ("\n" if out else "")


def _xmame_name(method: str) -> str:
    m = str(method)
    if m.startswith("_") and m.endswith("_sleep"):
        return m
    return f"_{m}_sleep"


def _ms_text(ns: float) -> str:
    ms = ns / 1e6
    return str(int(ms)) if ms == int(ms) else f"{ms:g}"


def _xmame(rows: List[dict]) -> str:
    """xmame sleep.c blocks (seed 000): printf("Testing %s (x %d), delay %d\\n")
    then printf("Total time: %f ms; unit time: %f ms; estimated overhead: %f ms\\n\\n").
    A delay that is not a whole ms prints as %g ms (the original takes whole ms)."""
    out = []
    for r in rows:
        loops = _loops(r)
        total_ms = _total_ns(r) / 1e6
        unit_ms = total_ms / loops
        delay_ms = float(r["requested_ns"]) / 1e6
        out.append(f"Testing {_xmame_name(r['method'])} (x {loops}), delay "
                   f"{_ms_text(r['requested_ns'])}\n"
                   f"Total time: {total_ms:f} ms; unit time: {unit_ms:f} ms; "
                   f"estimated overhead: {unit_ms - delay_ms:f} ms\n\n")
    return "".join(out)


def _config_label(r: dict) -> str:
    for k in ("timer_config", "config", "host"):
        if r.get(k):
            return str(r[k])
    return ""


def _testsleep(rows: List[dict]) -> str:
    """FreeBSD testsleep table (seed 001): one row per (request, method),
    one "%6d%10.2f" column pair (requested µs, mean actual µs) per
    configuration, configurations 5 blanks apart, a centred-left header."""
    configs: List[str] = []
    table: Dict[tuple, Dict[str, float]] = {}
    order: List[tuple] = []
    for r in rows:
        cfg = _config_label(r)
        if cfg not in configs:
            configs.append(cfg)
        key = (int(r["requested_ns"]), str(r["method"]))
        if key not in table:
            table[key] = {}
            order.append(key)
        table[key][cfg] = _mean_ns(r)
    # requests in ascending order, methods in first-seen order within one
    method_order = {m: i for i, m in enumerate(dict.fromkeys(k[1] for k in order))}
    order.sort(key=lambda k: (k[0], method_order[k[1]]))
    lines = []
    if any(configs):
        head = " " * 11 + (" " * 5).join((" " * 5 + c).ljust(16) for c in configs)
        lines.append(head.rstrip())
        lines.append("-" * 10 + " " + (" " * 5).join("-" * 16 for _ in configs))
    for req, method in order:
        cells = []
        for cfg in configs:
            v = table[(req, method)].get(cfg)
            cells.append(f"{_req_us(req):>6}{v / 1e3:10.2f}" if v is not None else " " * 16)
        lines.append((f"{method:<10} " + (" " * 5).join(cells)).rstrip())
    return "\n".join(lines) + "\n"


def _req_us(req_ns: int) -> str:
    us = req_ns / 1e3
    return str(int(us)) if us == int(us) else f"{us:g}"


_MD_COLS = ("method", "mode", "requested", "n", "median", "p99", "max", "error", "CPU %")


def _markdown(rows: List[dict]) -> str:
    lines = ["| " + " | ".join(_MD_COLS) + " |",
             "| " + " | ".join("---" if c in ("method", "mode") else "---:" for c in _MD_COLS)
             + " |"]
    for r in rows:
        cpu = r.get("cpu_percent")
        med = r.get("median_ns", r.get("actual_ns"))
        cells = [str(r["method"]), str(r.get("mode") or "relative"),
                 format_go(int(r["requested_ns"])),
                 "?" if "_stats" in r and r.get("n") is None else str(_loops(r)),
                 format_go(int(round(med))) if med is not None else "-",
                 format_go(int(round(r["p99_ns"]))) if r.get("p99_ns") is not None else "-",
                 format_go(int(round(r["max_ns"]))) if r.get("max_ns") is not None else "-",
                 format_go(int(round(r["actual_ns"] - r["requested_ns"])))
                 if r.get("actual_ns") is not None else "-",
                 "-" if cpu is None or cpu < 0 else f"{cpu:.1f}"]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


def _public(rows: List[dict]) -> List[dict]:
    return [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows]


def _csv_text(rows: List[dict]) -> str:
    rows = _public(rows)
    cols: List[str] = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    buf = io.StringIO()
    w = _csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(r)
    return buf.getvalue()


def _json_text(rows: List[dict]) -> str:
    # strict JSON: a NaN or an infinity is null, never a bare token
    return _json.dumps(clean(_public(rows)), indent=1, default=float, allow_nan=False) + "\n"


_RENDER = {"irtt": _irtt, "midas": _midas, "xmame": _xmame, "testsleep": _testsleep,
           "wide": _wide, "markdown": _markdown, "csv": _csv_text, "json": _json_text}


# ---------------------------------------------------------------------------
# Parsers (so the seeds' own output can be read back)
# ---------------------------------------------------------------------------

_MIDAS_RE = re.compile(
    r"sleep (\d+) loops, ([\d.]+) sec per loop, ([\d.]+) sec total, ([\d.]+) usec actual, "
    r"([\d.]+) usec actual per loop, oversleep (-?[\d.]+) usec, (-?[\d.]+|inf)%")
_XMAME_RE = re.compile(
    r"Testing _(\w+?)_sleep \(x (\d+)\), delay ([\d.]+)\s+Total time: ([\d.]+) ms; "
    r"unit time: ([\d.]+) ms; estimated\s+overhead: (-?[\d.]+) ms")
_GO_UNITS = {"ns": 1, "µs": 1_000, "μs": 1_000, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _go_ns(text: str) -> float:
    total = 0.0
    for num, unit in re.findall(r"([\d.]+)(ns|µs|μs|us|ms|h|m|s)", text):
        total += float(num) * {"h": 3.6e12, "m": 6e10}.get(unit, _GO_UNITS.get(unit, 0))
    return total


def parse(text: str, style: str, *, method: Optional[str] = None) -> List[dict]:
    """Records from text in one of the seed styles (midas, xmame, testsleep,
    irtt; an irtt text of several "== <method>" tables gives each its method).
    Each record: method, requested_ns, actual_ns (mean), n/total_ns
    where the text has them; testsleep adds timer_config per column."""
    if style == "midas":
        out = []
        heads = [(h.start(), h.group(1).strip()) for h in re.finditer(r"^== (.*)$", text, re.M)]
        for m in _MIDAS_RE.finditer(text):
            block = [name for pos, name in heads if pos < m.start()]
            loops = int(m.group(1))
            total_ns = round(float(m.group(4)) * 1000, 3)
            per_ns = round(float(m.group(2)) * 1e9)
            if per_ns == 0:  # the 0.000000 per-loop lines: the total says what was asked
                per_ns = round(float(m.group(3)) * 1e9 / loops)
            # the mean per loop: total / loops, kept inside the printed
            # per-loop value's rounding interval (both lines are rounded)
            mean_us = total_ns / 1e3 / loops
            shown = float(m.group(5))
            mean_us = min(max(mean_us, shown - 0.000499999), shown + 0.000499999)
            out.append({"method": (block[-1] if block else None) or method or "select",
                        "requested_ns": per_ns, "n": loops,
                        "total_ns": total_ns, "mean_ns": mean_us * 1e3,
                        "actual_ns": mean_us * 1e3})
        return out
    if style == "xmame":
        out = []
        for m in _XMAME_RE.finditer(text):
            loops = int(m.group(2))
            total_ns = float(m.group(4)) * 1e6
            out.append({"method": m.group(1), "requested_ns": round(float(m.group(3)) * 1e6),
                        "n": loops, "total_ns": total_ns, "actual_ns": total_ns / loops})
        return out
    if style == "testsleep":
        out = []
        configs: List[str] = []
        for line in text.splitlines():
            if not line.strip() or set(line.strip()) <= set("- "):
                continue
            toks = line.split()
            if all(re.fullmatch(r"\S+", t) and not re.fullmatch(r"[\d.]+", t) for t in toks) \
                    and len(toks) >= 1 and not re.search(r"\d+\s+[\d.]+$", line):
                configs = toks
                continue
            if len(toks) >= 3 and re.fullmatch(r"[A-Za-z_][\w-]*", toks[0]):
                pairs = toks[1:]
                for i in range(0, len(pairs) - 1, 2):
                    cfg = configs[i // 2] if i // 2 < len(configs) else ""
                    out.append({"method": toks[0], "timer_config": cfg,
                                "requested_ns": round(float(pairs[i]) * 1000),
                                "actual_ns": round(float(pairs[i + 1]) * 1000)})
        return out
    if style == "irtt":
        out = []
        block = None  # "== <method>" heads each table of a several-method sweep
        for line in text.splitlines():
            if line.startswith("== "):
                block = line[3:].strip() or None
                continue
            toks = line.split()
            if len(toks) == 3 and re.match(r"[\d.]", toks[0]) and toks[0][-1] == "s":
                d = _go_ns(toks[0])
                err = _go_ns(toks[1])
                out.append({"method": block or method or "go-timer (irtt sleep)",
                            "requested_ns": round(d),
                            "actual_ns": d + err, "error_ns": err,
                            "percent_error": float(toks[2])})
        return out
    raise ValueError(f"cannot parse style {style!r}; parse knows midas, xmame, testsleep, irtt")
