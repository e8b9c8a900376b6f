"""Record formats of sleepacc (schema ``sleepacc/1``), written and read here once.

This module is the bottom layer of the record: it knows the schema as plain
dicts and text, and never imports the measuring API (``sleepacc._api``
builds its ``Measurement``/``Sweep`` objects from the dicts read here, and
writes through the functions here).  It holds:

- the one error rule (:func:`error_ns`): the error of a statistic is
  ``value - requested_ns`` for a relative point, the value itself
  (lateness) for a periodic one;
- the one flattener (:func:`flatten`): a point record as one flat row
  (``Sweep.to_records``, ``report``, ``plot``, the CLI and the model use it);
- the two file forms and their reader (:func:`loads`, :func:`read`,
  :func:`save`), and the append-only results file of the CLI
  (:class:`ResultsFile`).

JSON (``Sweep.save``)::

    {"schema": "sleepacc/1", "host": {...}, "started": iso8601,
     "finished": iso8601, "settings": {...},
     "measurements": [Measurement.to_dict(), ...]}

JSON Lines (written by the CLI while it runs, so a killed run keeps what it
measured)::

    {"schema": "sleepacc/1", "type": "header", "host": {...},
     "settings": {...}, "started": iso8601}
    {"type": "point", ...Measurement.to_dict()}
    ...
    {"type": "footer", "finished": iso8601}        (optional)

A torn last line (a run killed mid-write) is dropped; any other line that is
not valid JSON is an error.  Lines of other types are ignored, so later
writers may add them.  :func:`loads` reads both forms (and irtt sleep's
table text) into the JSON form's dict.

Measurement.to_dict() is the record of one measurement: method, mode,
requested_ns, n, stats {n, min, max, mean, std, median, p90, p99, p999,
undersleeps, ...: the core's fields}, missed, cpu_ns_per_call, cpu_percent,
ctx_switches {voluntary, involuntary}, wall_ns, env, samples (list of int
ns, or None).  docs/schema.md describes every field.
"""
from __future__ import annotations

import errno as _errno
import fcntl
import json
import math
import os
import re
import stat as _stat
import warnings
from typing import Any, Iterable, Mapping, Optional, Union

__all__ = ["SCHEMA", "COUNT_FIELDS", "CONTEXT_COLUMNS", "origin_ns", "error_ns", "stat_error", "flatten",
           "context", "save", "read",
           "loads", "parse_jsonl", "jsonl_header", "jsonl_point", "jsonl_footer",
           "ResultsFile", "clean", "go_duration_ns", "is_irtt_table", "parse_irtt_table",
           "irtt_doc", "monitor_line", "read_monitor", "TimerTotals", "irtt_timer_stats",
           "irtt_json", "pacer_irtt_json"]

SCHEMA = "sleepacc/1"

PathLike = Union[str, "os.PathLike[str]"]

#: Statistics that are counts, not durations: in a flat row they keep their
#: name; every other statistic f becomes the column f"{f}_ns".
COUNT_FIELDS = ("n", "undersleeps")


def __getattr__(name: str):
    """``STAT_FIELDS``: the statistics an error is taken of and a fleet is
    ranked by, the core's order statistics (those with a quantile level)
    and mean, in the core's order.  Read from the compiled core on first use,
    so this module imports without it."""
    if name == "STAT_FIELDS":
        from . import _core
        fields = tuple(f for f in _core.stats_fields if _core.stats_level(f) >= 0 or f == "mean")
        globals()[name] = fields
        return fields
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---------------------------------------------------------------------------
# The one error rule and the one flattener
# ---------------------------------------------------------------------------


def write_atomic(path: str, fill, *, binary: bool = False, fsync: bool = False) -> None:
    """Write a file whole or not at all: ``fill(f)`` writes a temporary file
    beside ``path`` (text, or bytes with ``binary``), which then replaces
    ``path`` by a rename, so a reader, a full disk or a Ctrl-C never sees a
    partial file under that name.  The file gets the permissions open()
    would have given it (0o666 less the umask); ``fsync`` flushes it to the
    disk before the rename.  Where the rename goes is the core's rule, the
    one its own writer keeps (sleepacc_atomic_target): a symbolic link's
    file is replaced, not the link, and a path that is no regular file
    (/dev/null, a FIFO, a link to nothing yet) is written to, since a
    rename would replace the device."""
    import tempfile
    from . import _core
    path = os.fspath(path)
    target = _core.atomic_target(path)  # the core's rule (SLEEPACC_WRITE_ATOMIC's)
    if not target["rename"]:
        with open(path, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            fill(f)
        return
    path = target["path"]
    base = os.path.basename(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp" + os.path.splitext(base)[1],
                                   dir=os.path.dirname(os.path.abspath(path)))
    except OSError as e:   # the file asked for, not the temporary name no one gave
        raise type(e)(e.errno, e.strerror, path) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            fill(f)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        umask = os.umask(0o22)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

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


def _point_fields(point) -> dict:
    """The record fields of a Measurement (read as attributes, so the
    samples are not copied) or of a point dict."""
    if isinstance(point, Mapping):
        return point
    return {"method": point.method, "mode": point.mode, "requested_ns": point.requested_ns,
            "n": point.n, "stats": point.stats, "missed": point.missed,
            "cpu_ns_per_call": point.cpu_ns_per_call, "cpu_percent": point.cpu_percent,
            "env": point.env}


#: The experiment variables every flat row ends with, so that rows (and
#: frames) of several runs, hosts and settings can be concatenated.
CONTEXT_COLUMNS = ("schema", "host", "os", "kernel", "slack_ns", "policy", "priority", "cpu",
                   "dma_latency_us")


def context(env: Optional[Mapping[str, Any]], host: Optional[Mapping[str, Any]]) -> dict:
    """The experiment variables of a point: the schema tag, the host
    (hostname, os, kernel release) and the thread's settings in effect
    during the run: what sleepacc applied (``env``), else what the thread
    had when the sweep started (the host facts ``timer_slack_ns``,
    ``sched_policy``, ``sched_priority``).  ``cpu`` None: not pinned;
    ``dma_latency_us`` None: /dev/cpu_dma_latency left as it was."""
    env = env or {}
    host = host or {}

    def applied(key, fact):
        v = env.get(key)
        return host.get(fact) if v is None else v
    return {"schema": SCHEMA, "host": host.get("hostname"), "os": host.get("os"),
            "kernel": host.get("kernel_release"),
            "slack_ns": applied("slack_ns", "timer_slack_ns"),
            "policy": applied("policy", "sched_policy"),
            "priority": applied("priority", "sched_priority"),
            "cpu": env.get("cpu"), "dma_latency_us": env.get("dma_latency_us")}


def flatten(point, host: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """One flat row of a point (a Measurement or its ``to_dict()``):
    method, mode, requested_ns, n, every statistic of the core (``min_ns``
    ... ``p999_ns``; counts such as ``undersleeps`` keep their name) as
    recorded (relative: actual durations, periodic: lateness), missed,
    cpu_ns_per_call, cpu_percent, and

    - ``actual_ns``: the median actual duration (periodic: requested +
      median lateness),
    - ``error_ns``: the median error (:func:`error_ns` of the median),
    - the experiment variables of :data:`CONTEXT_COLUMNS` (see
      :func:`context`; `host` is the sweep's host facts, None when unknown).

    :func:`stat_error` gives the error of any other statistic of a row."""
    d = _point_fields(point)
    st = d.get("stats") or {}
    req = d["requested_ns"]
    mode = d.get("mode") or "relative"
    row: dict[str, Any] = {"method": d["method"], "mode": mode, "requested_ns": req,
                           "n": d.get("n", st.get("n"))}
    for name, value in st.items():
        if name == "n":
            continue
        row[name if name in COUNT_FIELDS else f"{name}_ns"] = value
    row["missed"] = d.get("missed", 0)
    row["cpu_ns_per_call"] = d.get("cpu_ns_per_call")
    row["cpu_percent"] = d.get("cpu_percent")
    median = st.get("median")
    err = error_ns(mode, req, median)
    row["actual_ns"] = None if err is None else req + err
    row["error_ns"] = err
    row.update(context(d.get("env"), host))
    return row


def stat_error(row: Mapping[str, Any], stat: str = "median"):
    """The error (ns) of statistic `stat` ("median", "p99", "max", ...) of
    a flat row or a point dict, by :func:`error_ns`; None when the row does
    not have it."""
    if "stats" in row and isinstance(row["stats"], Mapping):
        value = row["stats"].get(stat)
    else:
        value = row.get(stat if stat in COUNT_FIELDS else f"{stat}_ns")
    return error_ns(row.get("mode"), row["requested_ns"], value)


# ---------------------------------------------------------------------------
# Text forms
# ---------------------------------------------------------------------------

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
# Reading defensively: what a file holds is checked before anything uses it,
# and every failure is one ValueError "<file>:<line>: <what is wrong>".
# ---------------------------------------------------------------------------

#: Largest result file read, in bytes (a bound: `report /dev/zero` ends).
MAX_FILE_BYTES = 1 << 30
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _TooDeep(ValueError):
    """JSON nested deeper than the parser goes (never a torn line)."""


def _json(text, where: str):
    """json.loads whose every failure is a ValueError naming `where`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise _TooDeep(f"{where}: JSON nested too deeply") from None


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
    from . import _core   # the mode names are the core's (sleepacc_mode_name)
    if p["mode"] not in _core.mode_names:
        raise ValueError(f"{where}: mode must be " + " or ".join(map(repr, _core.mode_names))
                         + f", got {p['mode']!r:.40}")
    _check_int(p["requested_ns"], "requested_ns", where, 0)
    _check_int(p["n"], "n", where, 0, none_ok=True)
    _check_obj(p["stats"], "stats", where, none_ok=False)
    if "n" not in p["stats"]:     # a statistic added since may be absent; n never is
        raise ValueError(f"{where}: bad point record (no stats.n)")
    for k, v in p["stats"].items():
        _check_num(v, f"stats.{k}", where)
    for k in ("missed", "wall_ns"):
        if p.get(k) is not None:
            _check_int(p[k], k, where)
    for k in ("cpu_ns_per_call", "cpu_percent"):
        _check_num(p.get(k), k, where, finite=False)
    for k in ("env", "ctx_switches"):
        _check_obj(p.get(k), k, where)
    if isinstance(p.get("ctx_switches"), dict):
        for k, v in p["ctx_switches"].items():
            _check_num(v, f"ctx_switches.{k}", where)
    samples = p.get("samples")
    if samples is not None:
        if not isinstance(samples, list):
            raise ValueError(f"{where}: samples must be a list of integers (ns), got "
                             f"{_kind(samples)}")
        for i, v in enumerate(samples):
            _check_int(v, f"samples[{i}]", where)


def check_doc(doc, where: str, point_where=None) -> None:
    """ValueError "<where>: <what>" unless `doc` is a well-formed JSON form;
    point_where(i) names where measurement i is (default: where)."""
    _check_obj(doc, "the document", where, none_ok=False)
    for k in ("host", "settings"):
        _check_obj(doc.get(k), k, where)
    if isinstance(doc.get("settings"), dict):
        _check_obj(doc["settings"].get("env"), "settings.env", where)
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


def read_bounded(path: PathLike, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of `path`, at most `limit` of them (ValueError beyond, and
    at once for a file of NUL bytes such as /dev/zero)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if _stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(_errno.EISDIR, "is a directory", path)
        if _stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise ValueError(f"{path}: {st.st_size} bytes, more than a result file may hold "
                             f"({limit})")
        chunks, total = [], 0
        while True:
            b = f.read(min(1 << 20, limit + 1 - total))
            if not b:
                break
            if total == 0 and b"\0" in b[:65536]:
                at = b.index(b"\0")
                line = b[:at].count(b"\n") + 1
                raise ValueError(f"{path}:{line}: binary data, not a "
                                 f"result file (a NUL byte at offset {at})")
            chunks.append(b)
            total += len(b)
            if total > limit:
                raise ValueError(f"{path}: more than {limit} bytes, more than a result "
                                 "file may hold")
    return b"".join(chunks)


def _check_schema(obj: Mapping, where: str) -> None:
    schema = obj.get("schema")
    if schema != SCHEMA:
        raise ValueError(f"{where}: unsupported schema {schema!r} (expected {SCHEMA!r})")


def _as_doc(sweep) -> dict[str, Any]:
    """The JSON form of a sweep object (anything with ``to_dict``) or dict."""
    doc = sweep if isinstance(sweep, Mapping) else sweep.to_dict()
    _check_schema(doc, "save")
    return dict(doc)


def save(sweep, path: PathLike) -> None:
    """Write `sweep` (a Sweep, or its JSON-form dict) as JSON to `path`
    (atomically, by write_atomic: a temporary file, then rename).  What
    :func:`read` would refuse (a NaN statistic, a wrong type) is a
    ValueError "save: ..." before anything is written; an unknown CPU
    figure that is not finite is written as null (strict JSON)."""
    doc = _as_doc(sweep)
    check_doc(doc, "save")
    text = json.dumps(clean(doc), allow_nan=False) + "\n"
    write_atomic(path, lambda f: f.write(text))


def jsonl_header(host: Mapping[str, Any], settings: Mapping[str, Any], started: str) -> str:
    """The first line of the JSON Lines form (no trailing newline)."""
    return json.dumps({"schema": SCHEMA, "type": "header", "host": host,
                       "settings": settings, "started": started})


def jsonl_point(point) -> str:
    """One point line of the JSON Lines form (a Measurement or its
    ``to_dict()``; no trailing newline)."""
    d = point if isinstance(point, Mapping) else point.to_dict()
    return json.dumps(clean({"type": "point", **d}), allow_nan=False)


def jsonl_footer(finished: str) -> str:
    """The optional last line of the JSON Lines form (no trailing newline)."""
    return json.dumps({"type": "footer", "finished": finished})


def parse_jsonl(lines: Iterable[str], where: str = "<jsonl>",
                torn_ok: bool = True) -> dict[str, Any]:
    """The JSON form (a dict) of the lines of the JSON Lines form.  A torn
    last line is dropped; ``finished`` comes from a footer line if there is
    one; point lines keep every key but ``type``."""
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise ValueError(f"{where}: empty")
    objs = []
    for k, (lineno, line) in enumerate(numbered):
        try:
            obj = _json(line, f"{where}:{lineno}")
        except _TooDeep:
            raise
        except ValueError:
            if torn_ok and k == len(numbered) - 1 and k > 0:
                break  # torn last line: the writer was stopped mid-line
            raise
        if not isinstance(obj, dict):
            raise ValueError(f"{where}:{lineno}: expected a JSON object, got {_kind(obj)}")
        objs.append((lineno, obj))
    lineno, header = objs[0]
    if header.get("type") != "header":
        raise ValueError(f"{where}:{lineno}: the first line must be the header")
    _check_schema(header, f"{where}:{lineno}")
    check_doc({k: header.get(k) for k in ("host", "settings", "started")},
              f"{where}:{lineno}")
    points, finished, at = [], None, []
    for lineno, obj in objs[1:]:
        kind = obj.get("type")
        if kind == "point":
            point = {k: v for k, v in obj.items() if k != "type"}
            check_point(point, f"{where}:{lineno}")
            points.append(point)
            at.append((lineno, point))
        elif kind == "footer":
            finished = obj.get("finished")
            if finished is not None and not isinstance(finished, str):
                raise ValueError(f"{where}:{lineno}: finished must be an ISO 8601 string, "
                                 f"got {_kind(finished)}")
        elif kind == "header":
            warnings.warn(f"{where}:{lineno}: a second header (line {objs[0][0]} is the "
                          "first): two writers on one file?", RuntimeWarning, stacklevel=2)
    _warn_duplicates(at, where)
    return {"schema": SCHEMA, "host": header.get("host"), "started": header.get("started"),
            "finished": finished, "settings": header.get("settings"), "measurements": points}


# irtt sleep's table: "Sleep Duration  Mean Error  % Error", then one row a
# duration of Go durations ("1ns", "9.041µs", "2.000929ms") and a percentage.
_IRTT_HEAD = re.compile(r"^\s*Sleep Duration\s+Mean Error\s+% Error\s*$", re.M)
_IRTT_ROW = re.compile(r"^\s*(\S+s)\s+(-?\S+s)\s+([-+]?(?:[\d.]+|Inf|NaN))\s*$")
_GO_UNIT = {"ns": 1, "us": 1_000, "µs": 1_000, "μs": 1_000, "ms": 1_000_000,
            "s": 1_000_000_000, "m": 60_000_000_000, "h": 3_600_000_000_000}
_GO_TERM = re.compile(r"([\d.]+)(ns|us|µs|μs|ms|s|m|h)")


def go_duration_ns(text: str) -> int:
    """A Go time.Duration string ("1.5µs", "2.000929ms", "1m30s", "-3ns",
    "0s") in ns; ValueError otherwise."""
    sign = -1 if text.startswith("-") else 1
    body = text.lstrip("+-")
    terms = _GO_TERM.findall(body)
    if not terms or "".join(a + b for a, b in terms) != body:
        raise ValueError(f"not a Go duration: {text!r}")
    return sign * round(sum(float(a) * _GO_UNIT[b] for a, b in terms))


def is_irtt_table(text: str) -> bool:
    """Does the text hold irtt sleep's table (its header line)?"""
    return _IRTT_HEAD.search(text) is not None


def parse_irtt_table(text: str) -> list[tuple[Optional[str], int, int]]:
    """(method, requested_ns, mean_error_ns) of each row of irtt sleep's
    table; method is the "== <method>" heading above the row (sleepacc's
    several-method form), None for irtt's own output."""
    out = []
    block = None
    for line in text.splitlines():
        if line.startswith("== "):
            block = line[3:].strip() or None
            continue
        m = _IRTT_ROW.match(line)
        if not m:
            continue
        try:
            out.append((block, go_duration_ns(m.group(1)), go_duration_ns(m.group(2))))
        except ValueError:
            continue
    return out


def irtt_doc(text: str, where: str = "<irtt>") -> dict[str, Any]:
    """The JSON form (a dict) of irtt sleep's table text.  The table gives
    only the mean error per duration, so each point has ``stats.mean``
    (requested + mean error) and every other statistic, ``n`` included, is
    null (the CPU figures -1: unknown); the method is "irtt" (irtt's Go
    timer) unless a "== <method>" line names it; ``settings.source`` is
    "irtt sleep"."""
    rows = parse_irtt_table(text)
    if not rows:
        raise ValueError(f"{where}: an irtt sleep table without rows")
    points = []
    for method, req, err in rows:
        stats: dict[str, Any] = {f: None for f in _stats_fields()}
        stats["mean"] = req + err
        points.append({"method": method or "irtt", "mode": "relative", "requested_ns": req,
                       "n": None, "stats": stats, "missed": 0, "cpu_ns_per_call": -1.0,
                       "cpu_percent": -1.0, "ctx_switches": None, "wall_ns": 0, "env": {},
                       "samples": None})
    return {"schema": SCHEMA, "host": {}, "started": None, "finished": None,
            "settings": {"source": "irtt sleep"}, "measurements": points}


def _stats_fields() -> tuple:
    from . import _core   # the compiled core: the field table of the statistics
    return tuple(_core.stats_fields)


def loads(text: str, where: str = "<string>") -> dict[str, Any]:
    """The JSON form (a dict) of the text of either file form, or of irtt
    sleep's table text (:func:`irtt_doc`)."""
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{where}: empty")
    if not stripped.startswith("{") and is_irtt_table(text):
        return irtt_doc(text, where)
    first = text[: len(text) - len(stripped)].count("\n") + 1   # the line the JSON starts on
    try:
        obj = json.loads(stripped)
    except json.JSONDecodeError:
        obj = None  # more than one value (JSON Lines), or torn
    except RecursionError:
        raise ValueError(f"{where}:{first}: JSON nested too deeply") from None
    if isinstance(obj, dict) and obj.get("type") != "header":
        _check_schema(obj, f"{where}:{first}")
        check_doc(obj, f"{where}:{first}")
        ms = obj.get("measurements") or []
        _warn_duplicates([(f"{first} (measurement {i + 1})", p) for i, p in enumerate(ms)],
                         where)
        return obj
    if obj is not None and not isinstance(obj, dict):
        raise ValueError(f"{where}:{first}: expected a JSON object, got {_kind(obj)}")
    # a torn last line has no newline: a whole line that is not JSON is an error
    return parse_jsonl(text.splitlines(), where, torn_ok=not text.endswith("\n"))


def read(path: PathLike) -> dict[str, Any]:
    """The JSON form (a dict) of a file ``Sweep.save`` or the CLI wrote."""
    path = os.fspath(path)
    data = read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text ({exc.reason})") from None
    return loads(text, path)


# ---------------------------------------------------------------------------
# The results file (sleepacc sweep -o FILE): JSON Lines, one line a point
# ---------------------------------------------------------------------------

class ResultsFile:
    """An append-only JSON Lines result file (the form above).

    Line 1 is the header; each further line is one finished point.  Every
    line goes out in one write() and is fsync'd before the next point
    starts, so a kill (even a power cut) loses at most the point in
    progress.  A torn last line (a kill or a full disk during a write) is
    cut off before appending; a failed write cuts the file back to its last
    whole line, so what is on disk always parses.

    The path "-" is the standard output (a stream: nothing to resume).

    Errors: :meth:`open` raises FileExistsError for a non-empty file
    without ``resume``, ValueError when the file to resume does not parse,
    OSError when it cannot be read or opened; :meth:`write_line` raises
    OSError (its message names the file) after cutting the file back.
    """

    def __init__(self, path: PathLike):
        self.path = os.fspath(path)
        self.fd: Optional[int] = None
        self.size = 0          # bytes of whole, valid lines in the file
        self.existing: Optional[dict] = None   # JSON form already in the file (resume)
        self.keys: set = set()  # (method, mode, requested_ns) already present
        self.regular = True    # a regular file (not a pipe or device)

    @staticmethod
    def key(point) -> tuple:
        d = _point_fields(point)
        return (d["method"], d["mode"], int(d["requested_ns"]))

    def open(self, resume: bool = False) -> None:
        """Open for appending.  With resume, read what is there (dropping a
        torn last line); without, refuse to overwrite a non-empty file.

        A regular file is held under an advisory lock (flock) until close,
        taken before its contents are read: a second writer (another
        ``sweep -o F`` or ``--resume``) fails at once with BlockingIOError
        naming the file, instead of writing every point twice."""
        if self.path == "-":
            if resume:
                raise ValueError("the standard output (-) cannot be resumed")
            self.regular = False
            self.fd = os.dup(1)
            return
        if os.path.isfile(self.path) and os.path.getsize(self.path) > 0 and not resume:
            raise FileExistsError(_errno.EEXIST, "already exists", self.path)
        regular = self.regular = os.path.isfile(self.path) or not os.path.exists(self.path)
        flags = os.O_CREAT | os.O_CLOEXEC | (os.O_RDWR | os.O_APPEND if regular else os.O_WRONLY)
        fd = os.open(self.path, flags, 0o644)
        try:
            data = b""
            if regular:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise BlockingIOError(_errno.EAGAIN, "another process is writing it (it "
                                          "holds the file's lock); wait for it to finish or "
                                          "use another file", self.path) from None
                size = os.fstat(fd).st_size
                if size and not resume:   # created by another writer meanwhile
                    raise FileExistsError(_errno.EEXIST, "already exists", self.path)
                if size > MAX_FILE_BYTES:
                    raise ValueError(f"{self.path}: {size} bytes, more than a result file "
                                     f"may hold ({MAX_FILE_BYTES})")
                chunks, off = [], 0
                while off < size:
                    b = os.pread(fd, min(1 << 20, size - off), off)
                    if not b:
                        break
                    chunks.append(b)
                    off += len(b)
                data = b"".join(chunks)
            self.size = self._whole_lines(data)
            if self.size == 0 and data and not self._torn_header(data):
                try:
                    whole = isinstance(json.loads(data), dict)
                except (ValueError, RecursionError):
                    whole = False
                what = ("a JSON document (Sweep.save), not a JSON Lines results file" if whole
                        else "not valid JSON Lines: no sleepacc header")
                raise ValueError(f"{self.path}:1: {what}; it is left as it is")
            if self.size:
                if b"\0" in data[: self.size]:
                    line = data[: data.index(b"\0")].count(b"\n") + 1
                    raise ValueError(f"{self.path}:{line}: binary data, not a result file")
                try:
                    text = data[: self.size].decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ValueError(f"{self.path}: not UTF-8 text ({exc.reason})") from None
                self.existing = parse_jsonl(text.splitlines(), self.path, torn_ok=False)
                self.keys = {self.key(p) for p in self.existing["measurements"]}
            if self.size < len(data):
                os.ftruncate(fd, self.size)   # drop the torn tail
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    @staticmethod
    def _torn_header(data: bytes) -> bool:
        """Is data (no whole line in it) what a header write cut short
        leaves: one unterminated line, the start of a header?"""
        head = b'{"schema": "sleepacc/1", "type": "header"'
        return b"\n" not in data and (head.startswith(data) or data.startswith(head))

    @staticmethod
    def _whole_lines(data: bytes) -> int:
        """Length of data without a torn last line: bytes after the last
        newline, and a last whole line that is not JSON and holds NUL bytes
        (a power cut: blocks the data never reached) are torn.  Any other
        line is the file's own, and the parser reports what is wrong."""
        end = data.rfind(b"\n") + 1
        start = data.rfind(b"\n", 0, max(0, end - 1)) + 1
        if end:
            try:
                json.loads(data[start:end])
            except RecursionError:
                pass          # whole, merely too deep: the parser reports it
            except ValueError:
                # torn by a power cut (NUL bytes where data never reached the
                # disk); any other whole line is the file's, and reported
                if b"\0" in data[start:end]:
                    end = start
        return end

    def write_line(self, line: str) -> None:
        """Append one line (text without its newline) and flush it to the
        disk, or fail with the file cut back to its last whole line."""
        if self.fd is None:
            raise ValueError(f"{self.path}: the results file is not open")
        data = (line + "\n").encode("utf-8")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
            try:
                os.fsync(self.fd)
            except OSError as exc:
                if exc.errno not in (_errno.EINVAL, _errno.EROFS):  # not a disk file
                    raise
        except OSError as exc:
            try:
                os.ftruncate(self.fd, self.size)
            except OSError:
                pass
            raise OSError(exc.errno, exc.strerror, self.path) from None
        self.size += len(data)

    def write_header(self, host: Mapping[str, Any], settings: Mapping[str, Any],
                     started: str) -> None:
        self.write_line(jsonl_header(host, settings, started))

    def write_point(self, point) -> None:
        """One finished point (a Measurement, with its samples if it still
        has them, or its dict)."""
        self.write_line(jsonl_point(point))
        self.keys.add(self.key(point))

    def write_footer(self, finished: str) -> None:
        self.write_line(jsonl_footer(finished))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> "ResultsFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ---------------------------------------------------------------------------
# Monitor lines and irtt's timer statistics
# ---------------------------------------------------------------------------

def monitor_line(method: str, interval_ns: int, stats: Mapping[str, Any], missed: int,
                 t_start: float, t_end: float, time_iso: str) -> dict[str, Any]:
    """One line of ``sleepacc monitor`` (JSON Lines): the lateness
    statistics of the periodic wake-ups of one report interval.  ``t`` and
    ``t_start`` are Unix-epoch seconds (float, like flent's raw ``t``) at the
    interval's end and start; ``time`` is ``t`` in ISO 8601 UTC."""
    n = stats.get("n") or 0

    def stat(key):
        return stats.get(key) if n else None
    return {"schema": SCHEMA, "type": "monitor", "time": time_iso, "t": round(t_end, 6),
            "t_start": round(t_start, 6), "method": method, "interval_ns": int(interval_ns),
            "count": n, "median_ns": stat("median"), "p99_ns": stat("p99"),
            "max_ns": stat("max"), "mean_ns": stat("mean"), "std_ns": stat("std"),
            "min_ns": stat("min"), "missed": int(missed)}


def read_monitor(lines: Iterable[str], where: str = "<monitor>") -> list[dict[str, Any]]:
    """The "monitor" lines of a ``sleepacc monitor -o FILE`` (other lines,
    such as the header, are skipped; a torn last line is dropped)."""
    out = []
    numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip()]
    for k, (lineno, line) in enumerate(numbered):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            if k == len(numbered) - 1:
                break
            raise ValueError(f"{where}:{lineno}: not valid JSON ({e.msg})") from None
        if isinstance(obj, dict) and obj.get("type") == "monitor":
            if not isinstance(obj.get("t"), (int, float)):
                raise ValueError(f"{where}:{lineno}: a monitor line without its Unix time 't'")
            out.append(obj)
    if not out:
        raise ValueError(f"{where}: no monitor lines (written by `sleepacc monitor -o FILE`)")
    return out


class TimerTotals:
    """Lateness statistics pooled over report intervals (count, mean,
    variance by the parallel formula, min, max, misses): what the monitor's
    summary and its irtt-style JSON report."""

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min: Optional[float] = None
        self.max: Optional[float] = None
        self.misses = 0
        self.reports = 0

    def add(self, stats: Mapping[str, Any], missed: int = 0) -> None:
        self.reports += 1
        self.misses += int(missed)
        n = int(stats.get("n") or 0)
        if not n:
            return
        mean, std = float(stats["mean"]), float(stats.get("std") or 0.0)
        total = self.n + n
        delta = mean - self.mean
        self.m2 += (n - 1) * std * std + delta * delta * self.n * n / total
        self.mean += delta * n / total
        self.n = total
        self.min = stats["min"] if self.min is None else min(self.min, stats["min"])
        self.max = stats["max"] if self.max is None else max(self.max, stats["max"])

    def lateness(self) -> dict[str, Any]:
        """{n, mean, std, min, max} of every wake-up so far."""
        std = math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0
        return {"n": self.n, "mean": self.mean, "std": std, "min": self.min, "max": self.max}


def irtt_timer_stats(lateness: Mapping[str, Any], period_ns: int, misses: int,
                     count: Optional[int] = None) -> dict[str, Any]:
    """The timer part of irtt's JSON ``stats`` (``irtt client -o``), from
    the lateness of periodic wake-ups (ns: n, mean, std, min, max):
    ``timer_error`` (irtt's duration statistics: total, n, min, max, mean,
    stddev, variance, in int ns), ``timer_err_percent`` (mean error as a
    percentage of the period), ``timer_misses`` (deadlines passed over,
    never served: irtt's expected - sent) and ``timer_miss_percent`` (of the
    expected ticks, `count` wake-ups (default n) + misses, as irtt's)."""
    n = int(lateness.get("n") or 0)
    mean = float(lateness.get("mean") or 0.0)
    std = float(lateness.get("std") or 0.0)
    count = n if count is None else int(count)
    timer_error = {"total": round(mean * n), "n": n,
                   "min": int(lateness["min"]) if n and lateness.get("min") is not None else 0,
                   "max": int(lateness["max"]) if n and lateness.get("max") is not None else 0,
                   "mean": round(mean), "stddev": round(std), "variance": round(std * std)}
    return {"timer_error": timer_error,
            "timer_err_percent": 100.0 * mean / period_ns if period_ns > 0 else 0.0,
            "timer_misses": int(misses),
            "timer_miss_percent": 100.0 * misses / (count + misses) if count + misses > 0 else 0.0}


def irtt_json(lateness: Mapping[str, Any], period_ns: int, misses: int, *,
              count: Optional[int] = None, timer: str = "sleepacc",
              start_time: Optional[str] = None, duration_ns: int = 0,
              system_info: Optional[Mapping[str, Any]] = None,
              version: Optional[str] = None) -> dict[str, Any]:
    """A document in the shape of irtt's JSON output (``irtt client -o``)
    holding only the timer: ``config.params.interval`` (the period, ns),
    ``config.timer`` (the method), ``stats`` with :func:`irtt_timer_stats`,
    ``start_time`` and ``duration``; ``round_trips`` is empty (no packets).
    A harness that reads irtt's timer statistics reads these the same way."""
    stats = {"start_time": start_time, "duration": int(duration_ns)}
    stats.update(irtt_timer_stats(lateness, period_ns, misses, count))
    return {"version": {"sleepacc": version, "schema": SCHEMA},
            "system_info": dict(system_info or {}),
            "config": {"params": {"interval": int(period_ns), "duration": int(duration_ns)},
                       "timer": timer},
            "stats": stats, "round_trips": []}


def pacer_irtt_json(pacer_stats: Mapping[str, Any], **kw: Any) -> dict[str, Any]:
    """:func:`irtt_json` of a ``sleepacc.Pacer``'s ``stats`` (its lateness
    against the schedule, period_ns, timer_misses and count)."""
    return irtt_json(pacer_stats["lateness"], pacer_stats["period_ns"],
                     pacer_stats.get("timer_misses", pacer_stats.get("misses", 0)),
                     count=pacer_stats.get("count"), **kw)
