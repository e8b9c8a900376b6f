"""Record formats of sleepacc (schema ``sleepacc/1``), written and read here once.

Two forms carry the same records:

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
writers may add them.  :func:`load` reads both forms.

Measurement.to_dict() is the record of one measurement: method, mode,
requested_ns, n, stats {n, min, max, mean, std, median, p90, p99, p999,
undersleeps}, missed, cpu_ns_per_call, cpu_percent, ctx_switches
{voluntary, involuntary}, wall_ns, env, samples (list of int ns, or None).
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterable, Union

from ._api import Measurement, Sweep

__all__ = ["SCHEMA", "save", "load", "loads", "sweep_to_dict", "sweep_from_dict",
           "jsonl_header", "jsonl_point", "jsonl_footer", "parse_jsonl"]

SCHEMA = "sleepacc/1"

PathLike = Union[str, "os.PathLike[str]"]


def sweep_to_dict(sweep: Sweep) -> dict[str, Any]:
    """The JSON form of a sweep, as a dict."""
    return {"schema": SCHEMA, "host": sweep.host, "started": sweep.started,
            "finished": sweep.finished, "settings": sweep.settings,
            "measurements": [m.to_dict() for m in sweep]}


def _check_schema(obj: dict, where: str) -> None:
    schema = obj.get("schema")
    if schema != SCHEMA:
        raise ValueError(f"{where}: unsupported schema {schema!r} (expected {SCHEMA!r})")


def sweep_from_dict(d: dict[str, Any], where: str = "record") -> Sweep:
    """Inverse of :func:`sweep_to_dict`."""
    _check_schema(d, where)
    return Sweep([Measurement.from_dict(m) for m in d.get("measurements", [])],
                 host=d.get("host"), started=d.get("started"), finished=d.get("finished"),
                 settings=d.get("settings"))


def save(sweep: Sweep, path: PathLike) -> None:
    """Write `sweep` as JSON to `path` (atomically: a temporary file, then rename)."""
    path = os.fspath(path)
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(sweep_to_dict(sweep), f)
            f.write("\n")
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def jsonl_header(host: dict[str, Any], settings: dict[str, Any], started: str) -> str:
    """The first line of the JSON Lines form (no trailing newline)."""
    return json.dumps({"schema": SCHEMA, "type": "header", "host": host,
                       "settings": settings, "started": started})


def jsonl_point(measurement: Measurement) -> str:
    """One measurement line of the JSON Lines form (no trailing newline)."""
    return json.dumps({"type": "point", **measurement.to_dict()})


def jsonl_footer(finished: str) -> str:
    """The optional last line of the JSON Lines form (no trailing newline)."""
    return json.dumps({"type": "footer", "finished": finished})


def parse_jsonl(lines: Iterable[str], where: str = "<jsonl>") -> Sweep:
    """A sweep from the lines of the JSON Lines form.  A torn last line is
    dropped; ``finished`` comes from a footer line if there is one."""
    numbered = [(i, line) for i, line in enumerate(lines, 1) if line.strip()]
    if not numbered:
        raise ValueError(f"{where}: empty")
    objs = []
    for k, (lineno, line) in enumerate(numbered):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            if k == len(numbered) - 1 and k > 0:
                break  # torn last line: the writer was stopped mid-line
            raise ValueError(f"{where}:{lineno}: not valid JSON ({e.msg})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{where}:{lineno}: expected a JSON object")
        objs.append((lineno, obj))
    lineno, header = objs[0]
    if header.get("type") != "header":
        raise ValueError(f"{where}:{lineno}: the first line must be the header")
    _check_schema(header, f"{where}:{lineno}")
    points, finished = [], None
    for lineno, obj in objs[1:]:
        kind = obj.get("type")
        if kind == "point":
            try:
                points.append(Measurement.from_dict(obj))
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"{where}:{lineno}: bad point record ({e!r})") from None
        elif kind == "footer":
            finished = obj.get("finished")
    return Sweep(points, host=header.get("host"), started=header.get("started"),
                 finished=finished, settings=header.get("settings"))


def loads(text: str, where: str = "<string>") -> Sweep:
    """A sweep from the text of either form."""
    stripped = text.lstrip()
    if not stripped:
        raise ValueError(f"{where}: empty")
    try:
        obj = json.loads(stripped)
    except json.JSONDecodeError:
        obj = None  # more than one value (JSON Lines), or torn
    if isinstance(obj, dict) and obj.get("type") != "header":
        return sweep_from_dict(obj, where)
    return parse_jsonl(text.splitlines(), where)


def load(path: PathLike) -> Sweep:
    """Read a sweep saved by ``Sweep.save`` (JSON) or written by the CLI
    (JSON Lines); the data compares equal to what was written."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        return loads(f.read(), path)
