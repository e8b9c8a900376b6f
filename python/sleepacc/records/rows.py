"""The one row shape: a point record as one flat row (:func:`flatten`), the
experiment variables every row ends with (:func:`context`), the error and
the actual duration of any statistic of a row (:func:`stat_error`,
:func:`actual_of`), and the rows of any input (:func:`to_records`: a Sweep,
Measurements, point dicts, tidy rows, a CSV, a DataFrame), which report,
plot and the model read.

In a row a statistic ``f`` is the column ``f_ns`` as recorded (relative:
the actual duration; periodic: lateness); ``actual_f_ns`` is always its
actual duration (requested + the error), ``actual_ns`` the median's.
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Optional, Union

from .schema import COUNT_FIELDS, SCHEMA, error_ns

PathLike = Union[str, "os.PathLike[str]"]


def _point_fields(point) -> dict:
    """The record fields of a Measurement (read as attributes, so the
    samples are not copied) or of a point dict."""
    if isinstance(point, Mapping):
        return point
    peek = getattr(point, "_env_mapping", None)   # a Measurement's env, left packed
    return {"method": point.method, "mode": point.mode, "requested_ns": point.requested_ns,
            "n": point.n, "stats": point.stats, "missed": point.missed,
            "cpu_ns_per_call": point.cpu_ns_per_call, "cpu_percent": point.cpu_percent,
            "env": point.env if peek is None else peek()}


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


#: Statistics whose actual duration a row also carries, as
#: f"actual_{stat}_ns" (requested + the error): ``p99_ns`` stays the
#: statistic as recorded (periodic: lateness), ``actual_p99_ns`` is always an
#: actual duration.  The median's is ``actual_ns``; std is a spread, not a
#: duration from the origin.
ACTUAL_STATS = ("min", "max", "mean", "p1", "p10", "p25", "p75", "p90", "p99", "p999")


def actual_of(row: Mapping[str, Any], stat: str):
    """The actual duration (ns) of statistic `stat` of a row: its
    ``actual_<stat>_ns`` column where the row has one, else requested +
    :func:`stat_error` (a tidy row without ``mode`` is relative: its value
    is the actual duration).  None when the row does not have it."""
    if stat == "median":
        return row.get("actual_ns")
    key = f"actual_{stat}_ns"
    if key in row:
        return row[key]
    value = row.get(f"{stat}_ns")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    err = error_ns(row.get("mode"), row["requested_ns"], value)
    return row["requested_ns"] + err


def fit_row(point, host: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The row the model reads from a point: its :func:`flatten` row (the
    one shape, the core's statistics only: the samples are never read), with

    - ``actual_<stat>_ns`` for each of :data:`ACTUAL_STATS` it has,
    - ``margin_ns``: a hybrid run's margin (``env``), where recorded,
    - ``_env``: the settings sleepacc applied for the run (the point's
      ``env``), and ``_host``: the host facts (the sweep's, else the
      point's own), where known."""
    d = _point_fields(point)
    if host is None:
        host = d.get("host") if isinstance(point, Mapping) else getattr(point, "host", None)
    row = flatten(point, host)
    st = d.get("stats") or {}
    req = row["requested_ns"]
    for q in ACTUAL_STATS:
        err = error_ns(row["mode"], req, st.get(q))
        if err is not None:
            row[f"actual_{q}_ns"] = req + err
    env = dict(d.get("env") or {})
    margin = env.get("margin_ns")
    if isinstance(margin, int) and not isinstance(margin, bool):
        row["margin_ns"] = margin
    row["_env"] = env
    if host:
        row["_host"] = dict(host)
    return row


_NUMERIC = {"requested_ns", "actual_ns", "samples", "n", "slack_ns", "min_ns", "max_ns",
            "p1_ns", "p10_ns", "p25_ns", "p75_ns", "p90_ns", "p99_ns", "median_ns", "mean_ns",
            "std_ns", "cpu_percent", "cpu_ns_per_call", "dma_latency_us", "margin_ns"}


def _num(v):
    if v is None:
        return None
    if isinstance(v, (int, float)):
        return v
    s = str(v).strip()
    if s == "":
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s


def load_records(path: PathLike) -> list[dict[str, Any]]:
    """Read a tidy CSV (like seed_results.csv) into a list of rows; numeric
    columns become numbers, empty cells None."""
    import csv
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            out.append({k: _num(v) if k in _NUMERIC else (v if v != "" else None)
                        for k, v in row.items()})
    return out


def _is_point(x) -> bool:
    return hasattr(x, "stats") and hasattr(x, "requested_ns") and hasattr(x, "method")


def to_records(data) -> list[dict[str, Any]]:
    """Rows from a Sweep, a Measurement, a list of either or of dicts, a CSV
    path, or a pandas DataFrame: a point (or a point dict, one with
    ``stats``) becomes its :func:`fit_row`; a tidy row (a dict, a CSV row,
    a frame's row) passes as it is.  Every row has method, requested_ns and
    actual_ns (the median actual duration) where its source has them."""
    if isinstance(data, (str, os.PathLike)):
        return load_records(data)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas
        return [dict(r) for r in data.to_dict("records")]
    if _is_point(data):
        return [fit_row(data)]
    host = getattr(data, "host", None)
    out: list[dict[str, Any]] = []
    for item in data:
        if _is_point(item):
            out.append(fit_row(item, host))
        elif isinstance(item, Mapping):
            if "stats" in item and "actual_ns" not in item:
                out.append(fit_row(item, host))
            else:
                out.append(dict(item))
        elif hasattr(item, "__iter__"):  # a nested sweep
            out.extend(to_records(item))
        else:
            raise TypeError(f"cannot turn {type(item).__name__} into a record")
    return out

