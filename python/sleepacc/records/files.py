"""The two file forms and their reader: JSON (``Sweep.save``) and JSON Lines
(the CLI's results file, :class:`ResultsFile`, written while it runs), and
irtt sleep's table text; every file is read whole-or-error within a bound
(:func:`read_bounded`) and written whole-or-not-at-all (:func:`write_atomic`).
"""
from __future__ import annotations

import array
import errno as _errno
import fcntl
import json
import math
import os
import re
import stat as _stat
import warnings
from typing import Any, Iterable, Iterator, Mapping, Optional, Union

from .rows import _point_fields
from .schema import (SCHEMA, _check_schema, _kind, _warn_duplicates, check_doc, check_point,
                     clean, error_ns)

PathLike = Union[str, "os.PathLike[str]"]

#: Largest result file read, in bytes (a bound: `report /dev/zero` ends).
MAX_FILE_BYTES = 1 << 30


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
    from .. import _core
    path = os.fspath(path)
    target = _atomic_target(path)       # the core's rule (SLEEPACC_WRITE_ATOMIC's)
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


def _atomic_target(path: str) -> dict[str, Any]:
    """The core's answer (sleepacc_atomic_target) for `path`.  The core takes
    UTF-8 names; a name that is not (os.fsencode's bytes, a file system's
    own) is asked about through a stand-in of the same kind in a directory
    of its own -- absent, or an empty regular file -- and the answer is
    given back for the name asked about.  Any other kind under such a name
    is an OSError naming it."""
    from .. import _core
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return _core.atomic_target(path)
    import tempfile
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not _stat.S_ISREG(mode):
        raise OSError(_errno.EINVAL, "a file name that is not UTF-8 must name a new or "
                                     "regular file", path)
    with tempfile.TemporaryDirectory(prefix=".sleepacc-") as d:
        stand_in = os.path.join(d, "f")
        if mode is not None:
            open(stand_in, "wb").close()
        answer = _core.atomic_target(stand_in)
    return dict(answer, path=path)


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
    if isinstance(doc, dict) and isinstance(doc.get("measurements"), list):
        # an unknown CPU figure (NaN in memory) is null in the file, as the
        # core writes it; any other non-finite number is refused below
        doc = dict(doc, measurements=[
            dict(p, **{k: clean(p[k]) for k in ("cpu_ns_per_call", "cpu_percent") if k in p})
            if isinstance(p, dict) else p for p in doc["measurements"]])
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


def _lines(text: str) -> Iterator[str]:
    """text.splitlines(), one line at a time (a big file's lines are never
    all held at once beside its text)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        piece = text[start:end]
        yield from (piece.splitlines() or [""])
        start = end + 1


def parse_jsonl(lines: Iterable[str], where: str = "<jsonl>",
                torn_ok: bool = True, point=None) -> dict[str, Any]:
    """The JSON form (a dict) of the lines of the JSON Lines form.  A torn
    last line is dropped; ``finished`` comes from a footer line if there is
    one; point lines keep every key but ``type``.  The lines are read one at
    a time: what is held is the points, not the text of every line, and
    ``point(record, where)``, given, turns each checked point into what the
    measurements hold (a Measurement: no record of every point is kept)."""
    numbered = ((i, line) for i, line in enumerate(lines, 1) if line.strip())
    here = next(numbered, None)
    if here is None:
        raise ValueError(f"{where}: empty")
    header, header_at, points, finished = None, None, [], None
    # the duplicate check holds little a point: the requested_ns of each
    # (method, mode) seen, and each point's line (8 bytes) to name the first
    seen: dict = {}            # (method, mode) -> {requested_ns, ...}
    lines_of = array.array("q")   # the line of points[i]
    duplicates = []            # (line, key) of each point seen before
    while here is not None:
        lineno, line = here
        here = next(numbered, None)
        try:
            obj = _json(line, f"{where}:{lineno}")
        except _TooDeep:
            raise
        except ValueError:
            if torn_ok and here is None and header is not None:
                break  # torn last line: the writer was stopped mid-line
            raise
        if not isinstance(obj, dict):
            raise ValueError(f"{where}:{lineno}: expected a JSON object, got {_kind(obj)}")
        if header is None:
            if obj.get("type") != "header":
                raise ValueError(f"{where}:{lineno}: the first line must be the header")
            _check_schema(obj, f"{where}:{lineno}")
            check_doc({k: obj.get(k) for k in ("host", "settings", "started")},
                      f"{where}:{lineno}")
            header, header_at = obj, lineno
            continue
        kind = obj.get("type")
        if kind == "point":
            del obj["type"]        # the point keeps its other keys, in order
            check_point(obj, f"{where}:{lineno}")
            pair = (obj["method"], obj["mode"])
            requested = seen.get(pair)
            if requested is None:
                requested = seen[pair] = set()
            if obj["requested_ns"] in requested:
                duplicates.append((lineno, pair + (obj["requested_ns"],)))
            else:
                requested.add(obj["requested_ns"])
            lines_of.append(lineno)
            points.append(obj if point is None else point(obj, f"{where}:{lineno}"))
        elif kind == "footer":
            finished = obj.get("finished")
            if finished is not None and not isinstance(finished, str):
                raise ValueError(f"{where}:{lineno}: finished must be an ISO 8601 string, "
                                 f"got {_kind(finished)}")
        elif kind == "header":
            warnings.warn(f"{where}:{lineno}: a second header (line {header_at} is the "
                          "first): two writers on one file?", RuntimeWarning, stacklevel=2)
    first = _first_lines({key for _, key in duplicates}, points, lines_of)
    for lineno, key in duplicates:   # two writers on one file, or a merge gone wrong
        warnings.warn(f"{where}:{lineno}: duplicate point {key[0]} {key[1]} {key[2]} ns "
                      f"(first at line {first[key]})", RuntimeWarning, stacklevel=2)
    return {"schema": SCHEMA, "host": header.get("host"), "started": header.get("started"),
            "finished": finished, "settings": header.get("settings"), "measurements": points}


def _first_lines(keys: set, points: list, lines_of) -> dict:
    """(method, mode, requested_ns) -> the line of the first of `points`
    (records or Measurements, on the lines `lines_of`) with that key, for
    each of `keys`."""
    first: dict = {}
    for i in range(len(points) if keys else 0):
        d = _point_fields(points[i])
        key = (d["method"], d["mode"], d["requested_ns"])
        if key in keys and key not in first:
            first[key] = lines_of[i]
    return first


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


def _irtt_mean_error(err: int, percent: str, req: int) -> float:
    """The mean error (ns) that irtt printed as `err` (truncated to the ns)
    and `percent` (100 * mean / req, to 0.1): the middle of the range both
    allow; `err` when they disagree (a table edited by hand) or say no more."""
    p = float(percent)
    if req <= 0 or err < 0 or not math.isfinite(p):
        return err
    lo, hi = max(err, (p - 0.05) * req / 100.0), min(err + 1, (p + 0.05) * req / 100.0)
    return (lo + hi) / 2 if lo < hi else err


def parse_irtt_table(text: str) -> list[tuple[Optional[str], int, float]]:
    """(method, requested_ns, mean_error_ns) of each row of irtt sleep's
    table; method is the "== <method>" heading above the row (sleepacc's
    several-method form), None for irtt's own output.  irtt prints the mean
    truncated to the ns but its percentage, to 0.1, from the unrounded mean:
    the mean error read is the middle of what both allow (1ns, "381ns",
    38194.1 -> 381.941 ns; 1µs, "9.041µs", 904.2 -> 9041.75 ns), so
    printing it again gives irtt's text."""
    return list(_irtt_rows(text))


def _irtt_rows(text: str) -> Iterator[tuple[Optional[str], int, float]]:
    """parse_irtt_table's rows, one at a time (no list of every line)."""
    block = None
    for line in _lines(text):
        if line.startswith("== "):
            block = line[3:].strip() or None
            continue
        m = _IRTT_ROW.match(line)
        if not m:
            continue
        try:
            req, err = go_duration_ns(m.group(1)), go_duration_ns(m.group(2))
        except ValueError:
            continue
        yield block, req, _irtt_mean_error(err, m.group(3), req)


def irtt_doc(text: str, where: str = "<irtt>", point=None) -> dict[str, Any]:
    """The JSON form (a dict) of irtt sleep's table text.  The table gives
    only the mean error per duration, so each point has ``stats.mean``
    (requested + mean error) and every other statistic, ``n`` included, is
    null (the CPU figures -1: unknown); the method is "irtt" (irtt's Go
    timer) unless a "== <method>" line names it; ``settings.source`` is
    "irtt sleep".  ``point(record, where)``, given, turns each point, once
    checked (where: "<where>: measurement <i>"), into what the measurements
    hold, as the row is read: no record of every row is kept."""
    fields = _stats_fields()
    points = []
    for method, req, err in _irtt_rows(text):
        stats: dict[str, Any] = dict.fromkeys(fields)
        stats["mean"] = req + err
        rec = {"method": method or "irtt", "mode": "relative", "requested_ns": req,
               "n": None, "stats": stats, "missed": 0, "cpu_ns_per_call": -1.0,
               "cpu_percent": -1.0, "ctx_switches": None, "wall_ns": 0, "env": {},
               "samples": None}
        if point is not None:
            at = f"{where}: measurement {len(points) + 1}"
            check_point(rec, at)
            rec = point(rec, at)
        points.append(rec)
    if not points:
        raise ValueError(f"{where}: an irtt sleep table without rows")
    return {"schema": SCHEMA, "host": {}, "started": None, "finished": None,
            "settings": {"source": "irtt sleep"}, "measurements": points}


def _stats_fields() -> tuple:
    from .. import _core   # the compiled core: the field table of the statistics
    return tuple(_core.stats_fields)


def loads(text: str, where: str = "<string>", point=None) -> dict[str, Any]:
    """The JSON form (a dict) of the text of either file form, or of irtt
    sleep's table text (:func:`irtt_doc`)."""
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{where}: empty")
    if not stripped.startswith("{") and is_irtt_table(text):
        return irtt_doc(text, where, point)
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
    return parse_jsonl(_lines(text), where, torn_ok=not text.endswith("\n"), point=point)


def _file_lines(f, path: str) -> Iterator[str]:
    """The lines of an open binary file, one decoded line at a time (the
    file's text is never held whole); a line that is not UTF-8 is a
    ValueError naming it."""
    for lineno, raw in enumerate(f, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}:{lineno}: not UTF-8 text ({exc.reason})") from None
        yield from (text.splitlines() or [""])


def _read_jsonl_streamed(path: str, point) -> Optional[dict[str, Any]]:
    """A JSON Lines results file read line by line, so what a read holds is
    its points, not its text; None when the file is not a regular one of
    that form (the caller then reads it whole)."""
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        if not _stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return None
        head = f.read(65536)
        if b"\0" in head or not head.lstrip().startswith(b"{"):
            return None
        first = head.split(b"\n", 1)[0]
        try:
            obj = json.loads(first)
        except (ValueError, RecursionError):
            return None
        if not isinstance(obj, dict) or obj.get("type") != "header":
            return None
        f.seek(st.st_size - 1)
        torn_ok = f.read(1) != b"\n"    # as loads: a last line without newline may be torn
        f.seek(0)
        return parse_jsonl(_file_lines(f, path), path, torn_ok=torn_ok, point=point)


def read(path: PathLike, point=None) -> dict[str, Any]:
    """The JSON form (a dict) of a file ``Sweep.save`` or the CLI wrote;
    ``point``: as parse_jsonl's, for the JSON Lines form (the other forms'
    measurements are records).  A JSON Lines file is read line by line."""
    path = os.fspath(path)
    doc = _read_jsonl_streamed(path, point)
    if doc is not None:
        return doc
    data = read_bounded(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: not UTF-8 text ({exc.reason})") from None
    del data                   # the text alone while it is parsed
    return loads(text, path, point)


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
