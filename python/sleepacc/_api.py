"""The measuring API of sleepacc: methods, measure, sweep, host and clock facts.

Everything that times, sleeps, counts or summarises runs in the C core
(``sleepacc._core``); this module validates arguments (before anything
runs), converts seconds to the core's int64 nanoseconds, and gives the
results names: :class:`Method`, :class:`Stats`, :class:`Measurement` and
:class:`Sweep`.  The record formats, the error rule and the flattener are in
:mod:`sleepacc.records` (a lower layer: it works on dicts and never imports
this module); ``Sweep.save``/:func:`load` go through it.

Units: every argument is in seconds (int or float, like ``time.sleep``);
every field ending in ``_ns`` and every statistic is in integer nanoseconds.
"""
from __future__ import annotations

import array
import datetime
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, NamedTuple, Optional, Union

from . import _core, records

if TYPE_CHECKING:
    import numpy as np

# numpy is imported only where an array is asked for (errors_ns): importing
# sleepacc must stay cheap and must not start numpy's BLAS threads in a
# program that only wants to sleep.

__all__ = [
    "Method", "Stats", "Samples", "Measurement", "Sweep", "methods", "measure", "sweep",
    "iter_sweep", "sweep_points", "load", "system_info", "clock_info", "DEFAULT_DURATIONS", "MAX_SAMPLES",
]

#: The default duration ladder of :func:`sweep` (seconds): irtt sleep's 11
#: rows, 1 ns to 500 ms, as the core defines it (_core.default_durations_ns).
#: Floor methods (family "baseline") are measured at 0 only, whatever the ladder.
DEFAULT_DURATIONS = tuple(ns / 1e9 for ns in _core.default_durations_ns)
#: Largest sample buffer :func:`measure` sizes from a budget (8 bytes each):
#: the core's SLEEPACC_MAX_SAMPLES.
MAX_SAMPLES = _core.MAX_SAMPLES
#: A sweep's budget per point (s) when none is given: the core's
#: SLEEPACC_SWEEP_BUDGET_NS (Lua's sweep default too).
_SWEEP_BUDGET = _core.SWEEP_BUDGET_NS / 1e9
#: Default margin of the hybrid method (s), the core's
#: SLEEPACC_DEFAULT_MARGIN_NS: kernel sleep to deadline - margin, then spin.
DEFAULT_MARGIN = _core.config_default()["margin_ns"] / 1e9

Seconds = Union[int, float]


class Method(NamedTuple):
    """One row of the core's method registry."""

    name: str            #: public name, e.g. "clock_nanosleep_abs"
    family: str          #: "kernel", "spin", "hybrid" or "baseline"
    description: str     #: one line
    granularity_ns: int  #: unit of the requested duration (1000 for select, 10**6 for poll)
    honours_slack: str   #: "yes", "no" or "unknown": does timer slack delay its wake-up?
    absolute: bool       #: can wait on an absolute deadline
    available: bool      #: works on the running system (probed)


def methods() -> list[Method]:
    """Every method the core registers, available or not, in registry order."""
    return [Method(**row) for row in _core.methods()]


class Stats(Mapping):
    """Summary statistics in ns: n, min, max, mean, std, median, p90, p99, p999,
    undersleeps (the core's ``sleepacc_stats`` fields, in its order).

    A read-only mapping whose keys are also attributes (``s.median``,
    ``s["median"]``).  Relative mode: statistics of the actual durations;
    periodic mode: of the lateness (wake - deadline)."""

    __slots__ = ("_values",)

    def __init__(self, values: Mapping[str, Any]):
        # a record from an older writer may lack fields the core added since
        # (p1, p10, p25, p75): those read None; n is required
        values["n"]
        self._values = {name: values.get(name) for name in _core.stats_fields}

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Stats has no field {name!r}") from None

    def to_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in self._values.items())
        return f"Stats({inner})"


class _SamplesType(type):
    """``isinstance(x, Samples)``: x is such a buffer (a read-only 1-d int64
    memoryview); the stdlib's memoryview is the type itself."""

    def __instancecheck__(cls, obj: object) -> bool:
        return (isinstance(obj, memoryview) and obj.readonly and obj.ndim == 1
                and obj.format == "q")


class Samples(metaclass=_SamplesType):
    """``Samples(values=())``: read-only int64 ns samples, the stdlib's
    ``memoryview`` of format 'q' over an immutable bytes object (len,
    indexing, the buffer protocol: ``numpy.asarray`` shares its memory).
    The core writes a run's samples straight into one; called, this makes
    one, a copy of an int64 buffer or of an iterable of ints (TypeError for
    anything else)."""

    def __new__(cls, values: Any = ()) -> memoryview:  # type: ignore[misc]
        try:
            view: Optional[memoryview] = memoryview(values)
        except TypeError:
            view = None
        if view is not None:
            with view:
                fmt = view.format[1:] if view.format[:1] in ("<", "=") else view.format
                if view.c_contiguous and view.itemsize == 8 and fmt in ("q", "l"):
                    return memoryview(view.tobytes()).cast("q")
        try:
            it = iter(values)
        except TypeError:
            raise TypeError("Samples() needs an iterable of ints") from None
        items = list(it)
        for v in items:
            if not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"Samples() values must be ints, got {type(v).__name__}")
        return memoryview(array.array("q", items).tobytes()).cast("q")


class Measurement:
    """The result of one :func:`measure` run.

    Fields: ``method``, ``mode`` ("relative"/"periodic"), ``requested`` (s),
    ``requested_ns``, ``n`` (samples recorded after warm-up), ``env`` (what
    was applied to the thread), ``samples``, ``errors_ns``, ``stats``,
    ``stream_stats``, ``missed``, ``cpu_ns_per_call``, ``cpu_percent``,
    ``ctx_switches`` ({"voluntary", "involuntary"}) and ``wall_ns``.

    ``samples`` is a :class:`Samples` (a read-only int64 memoryview), the
    buffer the core wrote into (int64 ns; relative: actual durations, periodic: lateness);
    ``numpy.asarray(m.samples)`` shares its memory; ``starts`` holds when
    each sample's sleep began (ns since the run's measured part began).
    Both are ``None`` when the run streamed (``keep_samples=False``); then
    ``errors_ns`` is ``None`` too and ``stats`` comes from the core's
    histogram (within about 1%).  The record itself (fields, defaults,
    statistics, the environment applied) is the core's
    (``sleepacc_result_fields``).
    """

    __slots__ = ("method", "mode", "requested_ns", "n", "env", "samples", "starts", "stats",
                 "stream_stats", "missed", "cpu_ns_per_call", "cpu_percent",
                 "ctx_switches", "wall_ns")

    def __init__(self, *, method: str, mode: str, requested_ns: int, n: int,
                 stats: Mapping[str, Any], missed: int = 0, cpu_ns_per_call: float = 0.0,
                 cpu_percent: float = -1.0, ctx_switches: Optional[Mapping[str, int]] = None,
                 wall_ns: int = 0, env: Optional[Mapping[str, Any]] = None,
                 samples: Any = None, stream_stats: Optional[Mapping[str, Any]] = None,
                 starts: Any = None):
        self.method = sys.intern(method) if type(method) is str else method
        self.mode = sys.intern(mode) if type(mode) is str else mode
        self.requested_ns = int(requested_ns)
        self.n = None if n is None else int(n)   # None: unknown (irtt's table)
        self.stats = stats if isinstance(stats, Stats) else Stats(stats)
        #: statistics read from the core's streaming histogram of the same
        #: run (equal to ``stats`` when streaming); not part of the record.
        self.stream_stats = (None if stream_stats is None else
                             stream_stats if isinstance(stream_stats, Stats)
                             else Stats(stream_stats))
        self.missed = int(missed)
        self.cpu_ns_per_call = float(cpu_ns_per_call)
        self.cpu_percent = float(cpu_percent)
        self.ctx_switches = {"voluntary": 0, "involuntary": 0}
        if ctx_switches is not None:
            self.ctx_switches = {"voluntary": int(ctx_switches["voluntary"]),
                                 "involuntary": int(ctx_switches["involuntary"])}
        self.wall_ns = int(wall_ns)
        # the names shared by every point (a file's million points hold one copy)
        self.env = {} if env is None else {
            sys.intern(k) if type(k) is str else k: v for k, v in env.items()}
        if samples is not None and not isinstance(samples, Samples):
            samples = Samples(samples)
        self.samples = samples
        if starts is not None and not isinstance(starts, Samples):
            starts = Samples(starts)
        #: start of each sample's sleep, ns since the run's measured part
        #: began (a Samples written by the core; None when streaming); not
        #: part of the record.
        self.starts = starts

    @property
    def requested(self) -> float:
        """The requested duration (relative) or period (periodic), in seconds."""
        return self.requested_ns / 1e9

    @property
    def errors_ns(self) -> Optional[np.ndarray]:
        """Error of each sample in ns as a numpy int64 array: relative mode
        actual - requested (a new array), periodic mode the lateness itself
        (a view of ``samples``), by the one error rule
        (:func:`sleepacc.records.error_ns`).  ``None`` when the run streamed."""
        if self.samples is None:
            return None
        import numpy as np

        return records.error_ns(self.mode, np.int64(self.requested_ns), np.asarray(self.samples))

    def to_dict(self) -> dict[str, Any]:
        """The record of the shared schema ``sleepacc/1`` (see sleepacc.records)."""
        return {
            "method": self.method,
            "mode": self.mode,
            "requested_ns": self.requested_ns,
            "n": self.n,
            "stats": self.stats.to_dict(),
            "missed": self.missed,
            "cpu_ns_per_call": self.cpu_ns_per_call,
            "cpu_percent": self.cpu_percent,
            "ctx_switches": dict(self.ctx_switches),
            "wall_ns": self.wall_ns,
            "env": dict(self.env),
            "samples": None if self.samples is None else memoryview(self.samples).tolist(),
        }

    def error(self, stat: str = "median") -> Optional[int]:
        """The error (ns) of statistic `stat` ("median", "p99", "max" ...):
        value - requested in relative mode, the value itself (lateness) in
        periodic mode (:func:`sleepacc.records.error_ns`, the one rule).
        None when the record lacks that statistic; a name that is neither an
        order statistic of the core nor mean (records.STAT_FIELDS, what a
        fleet is ranked by) is a ValueError naming `stat`."""
        if not isinstance(stat, str):
            raise TypeError(f"stat: must be a str, got {type(stat).__name__}")
        if stat not in records.STAT_FIELDS:
            raise ValueError(f"stat: must be one of {', '.join(records.STAT_FIELDS)}, got {stat!r}")
        return records.error_ns(self.mode, self.requested_ns, self.stats.get(stat))

    def to_record(self, host: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        """The flat row of this measurement (:func:`sleepacc.records.flatten`)."""
        return records.flatten(self, host)

    def to_frame(self, host: Optional[Mapping[str, Any]] = None):
        """The tidy per-sample frame (pandas): one row per sample with
        method, mode, requested_ns, ``sample`` (its index), ``start_ns``
        (when the sample's sleep started, ns since the run's measured part
        began: ``Measurement.starts``; missing when the core did not record
        start times), ``value_ns`` (the
        sample: actual duration, or lateness in periodic mode), ``error_ns``
        (by the one error rule) and the experiment variables of
        :func:`sleepacc.records.context` (`host`: the sweep's host facts).
        Plot ``error_ns`` against ``start_ns`` to see lateness over time."""
        pd = _pandas("Measurement.to_frame()")
        import numpy as np
        if self.samples is None:
            raise ValueError(f"{self!r} streamed (keep_samples=False): no samples to frame")
        values = np.asarray(self.samples)
        starts = getattr(self, "starts", None)
        if starts is not None and len(starts) == len(values):
            start_col = np.asarray(starts)
        else:
            start_col = pd.array([None] * len(values), dtype="Int64")
        cols: dict[str, Any] = {"method": self.method, "mode": self.mode,
                                "requested_ns": self.requested_ns,
                                "sample": np.arange(len(values)), "start_ns": start_col,
                                "value_ns": values, "error_ns": self.errors_ns}
        cols.update(records.context(self.env, host))
        return pd.DataFrame(cols)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "record") -> "Measurement":
        """Inverse of :meth:`to_dict` (extra keys, e.g. a JSON Lines "type", are ignored).
        A dict that is no point record of the schema (a key missing, a wrong
        type, a mode that is neither relative nor periodic) is a ValueError
        "<where>: <what is wrong>", the reader's check
        (:func:`sleepacc.records.check_point`); anything but a mapping is a
        TypeError."""
        if not isinstance(d, Mapping):
            raise TypeError(f"{where}: must be a point record (a dict), got {type(d).__name__}")
        d = dict(d)
        records.check_point(d, where)
        samples = d.get("samples")

        def get(key, absent):   # a null is an absent key (as Lua writes it; the reader allows it)
            v = d.get(key)
            return absent if v is None else v
        return cls(method=d["method"], mode=d["mode"], requested_ns=d["requested_ns"],
                   n=d["n"], stats=d["stats"], missed=get("missed", 0),
                   cpu_ns_per_call=get("cpu_ns_per_call", 0.0),
                   cpu_percent=get("cpu_percent", -1.0),
                   ctx_switches=d.get("ctx_switches"), wall_ns=get("wall_ns", 0),
                   env=d.get("env"),
                   samples=None if samples is None else Samples(samples))

    # Pickling (a multiprocessing worker returns a Measurement): the samples
    # and start times travel as their int64 bytes, since a memoryview does
    # not pickle, and come back as read-only Samples over those bytes.
    _BUFFERS = ("samples", "starts")

    def __getstate__(self) -> dict[str, Any]:
        state = {k: getattr(self, k) for k in self.__slots__}
        for k in self._BUFFERS:
            if state[k] is not None:
                state[k] = state[k].tobytes()
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        for k in self.__slots__:
            v = state[k]
            if k in self._BUFFERS and v is not None:
                v = memoryview(bytes(v)).cast("q")
            object.__setattr__(self, k, v)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Measurement):
            return NotImplemented
        return self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    def _repr_html_(self) -> str:
        """A one-row table in Jupyter (sleepacc.report.html_table)."""
        from .report import html_table
        return html_table([records.flatten(self)])

    def __repr__(self) -> str:
        return (f"<Measurement {self.method} {self.mode} "
                f"{_core.format_duration(self.requested_ns)} n={self.n} "
                f"median={_ns_repr(self.stats['median'])} p99={_ns_repr(self.stats['p99'])}>")


def _ns_repr(v: Any) -> str:
    """A statistic in a repr: "1234ns", or "None" when the record has none."""
    return "None" if v is None else f"{v}ns"


class Sweep(Sequence):
    """A sequence of :class:`Measurement` from one :func:`sweep` (or
    :func:`sleepacc.load`), with ``host`` (facts at run time), ``started`` and
    ``finished`` (ISO 8601, UTC) and ``settings`` (the sweep's arguments)."""

    def __init__(self, measurements: Iterable[Measurement] = (), *,
                 host: Optional[Mapping[str, Any]] = None, started: Optional[str] = None,
                 finished: Optional[str] = None,
                 settings: Optional[Mapping[str, Any]] = None):
        self.measurements: list[Measurement] = list(measurements)
        self.host: dict[str, Any] = dict(host) if host is not None else {}
        self.started = started
        self.finished = finished
        self.settings: dict[str, Any] = dict(settings) if settings is not None else {}

    def __getitem__(self, i):  # type: ignore[override]
        return self.measurements[i]

    def __len__(self) -> int:
        return len(self.measurements)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sweep):
            return NotImplemented
        return (self.host == other.host and self.started == other.started
                and self.finished == other.finished and self.settings == other.settings
                and self.measurements == other.measurements)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<Sweep of {len(self)} measurements, started {self.started}>"

    def _repr_html_(self) -> str:
        """A compact table in Jupyter: one row per measurement, the host in
        the caption (sleepacc.report.html_table)."""
        from .report import html_table
        h = self.host
        about = ", ".join(str(x) for x in (h.get("hostname"), h.get("kernel_release"),
                                           self.started) if x)
        caption = f"Sweep of {len(self)} measurements" + (f" ({about})" if about else "")
        return html_table(self.to_records(), caption)

    def to_records(self) -> list[dict[str, Any]]:
        """One flat row per measurement (:func:`sleepacc.records.flatten`):
        method, mode, requested_ns, n, the stats (min_ns ... p999_ns,
        undersleeps), missed, cpu_ns_per_call, cpu_percent, actual_ns
        (relative: the median actual duration; periodic: requested + median
        lateness), error_ns (actual - requested) and the experiment
        variables (schema, host, os, kernel, slack_ns, policy, priority,
        cpu, dma_latency_us: ``records.CONTEXT_COLUMNS``), so rows of several
        sweeps concatenate."""
        return [records.flatten(m, self.host) for m in self.measurements]

    def to_frame(self, samples: bool = False):
        """:meth:`to_records` as a pandas DataFrame, one row per measurement
        (pandas is optional).  ``samples=True``: the tidy per-sample frame
        instead, one row per sample of every measurement that kept its
        samples (:meth:`Measurement.to_frame`, with this sweep's host)."""
        pd = _pandas("Sweep.to_frame()")
        if not samples:
            return pd.DataFrame.from_records(self.to_records())
        kept = [m for m in self.measurements if m.samples is not None]
        if not kept:
            raise ValueError("no measurement of this sweep kept its samples (sweep with "
                             "keep_samples=True, or `sleepacc sweep --samples`)")
        return pd.concat([m.to_frame(self.host) for m in kept], ignore_index=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form of the sweep (schema ``sleepacc/1``), as a dict."""
        return {"schema": records.SCHEMA, "host": self.host, "started": self.started,
                "finished": self.finished, "settings": self.settings,
                "measurements": [m.to_dict() for m in self.measurements]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = "record") -> "Sweep":
        """Inverse of :meth:`to_dict` (the dicts :func:`sleepacc.records.read` gives)."""
        if not isinstance(d, Mapping):
            raise TypeError(f"{where}: must be a sweep's JSON form (a dict), got "
                            f"{type(d).__name__}")
        if d.get("schema") != records.SCHEMA:
            raise ValueError(f"{where}: unsupported schema {d.get('schema')!r} "
                             f"(expected {records.SCHEMA!r})")
        d = dict(d)
        records.check_doc(d, where)   # the reader's check: one line naming what is wrong
        points = [Measurement.from_dict(p, f"{where}: measurement {i + 1}")
                  for i, p in enumerate(d.get("measurements") or [])]
        return cls(points, host=d.get("host"), started=d.get("started"),
                   finished=d.get("finished"), settings=d.get("settings"))

    def save(self, path: Union[str, os.PathLike]) -> None:
        """Write the sweep as JSON, schema ``sleepacc/1`` (see sleepacc.records)."""
        records.save(self, path)

    def table(self, style: str = "irtt") -> str:
        """The core's text table: "irtt" (irtt sleep's table) or "wide"."""
        if not isinstance(style, str):
            raise TypeError(f"style: must be a str, got {type(style).__name__}")
        rows = []
        for m in self.measurements:
            stats: Mapping[str, Any] = m.stats
            missing = [k for k, v in stats.items() if v is None]
            if missing:     # read from irtt's table (a mean only), or a file's nulls
                what = f"the point {m.method}({_core.format_duration(m.requested_ns)})"
                if m.n is None and missing == [k for k in stats if k != "mean"]:
                    lacks = f"{what} has only the mean (read from irtt's table)"
                else:
                    lacks = f"{what} has no {', '.join(missing)} (null in the file)"
                if stats["mean"] is None:
                    raise ValueError(f"{lacks}: no table can show it (csv or json show what "
                                     "the file holds)")
                if style != "irtt":
                    raise ValueError(f"{lacks}: the {style!r} table needs every statistic (use "
                                     "the irtt style, which shows the mean only, or csv or json)")
                # irtt's table prints the mean only: the stand-ins below are not printed
                stats = {k: (1 if k == "n" else 0) if v is None else v for k, v in stats.items()}
            rows.append({"method": m.method, "requested_ns": m.requested_ns, "mode": m.mode,
                         "stats": dict(stats), "cpu_percent": m.cpu_percent})
        return _core.table(rows, style)


def _pandas(what: str):
    try:
        import pandas as pd
    except ImportError as e:
        raise ImportError(f"{what} needs pandas: pip install 'sleepacc[frame]'") from e
    return pd


def load(path: Union[str, os.PathLike]) -> Sweep:
    """Read a sweep saved by ``Sweep.save`` (JSON) or written by the CLI
    (JSON Lines); the data compares equal to what was written."""
    path = os.fspath(path)
    # JSON Lines: each point a Measurement as soon as it is read and checked
    doc = records.read(path, point=Measurement.from_dict)
    ms = doc.get("measurements") or []
    points = []
    for i, p in enumerate(ms):     # the other forms: each record dropped once converted
        points.append(p if isinstance(p, Measurement) else
                      Measurement.from_dict(p, f"{path}: measurement {i + 1}"))
        ms[i] = None
    return Sweep(points, host=doc.get("host"), started=doc.get("started"),
                 finished=doc.get("finished"), settings=doc.get("settings"))


# ---------------------------------------------------------------------------
# Validation: every argument is checked before anything runs, by the core's
# rules (sleepacc_option_set, sleepacc_config_check): measure()'s by the run's
# own read of them (_core.measure), a sweep's points up front (_core.plan).
# ---------------------------------------------------------------------------

#: The core's defaults of a run (sleepacc_config_default), the one place they
#: are written; measure()'s signature shows them.
_DEFAULTS = _core.config_default()
_MODE = _core.mode_names[_DEFAULTS["mode"]]            # "relative"
_KEEP = bool(_DEFAULTS["keep_samples"])                # True
_LOCK = bool(_DEFAULTS["env"]["lock_memory"])          # False


class _Plan(NamedTuple):
    """A measure() call as the core reads it (sleepacc_config_read): the
    options and whether the run is a sweep's point."""

    options: dict        # the core's option -> the value the caller gave (None: absent, dropped)
    point: bool = False  # a sweep's point: its defaults, and a failed run's words name it


#: The options whose Python default is None: None given is "not given" (the
#: core's default; the environment left as it is).
_NONE_IS_ABSENT = ("n", "slack", "policy", "priority", "cpu", "margin", "dma_latency")


def _call(method: Any, duration: Any, *, n: Any = None,
          budget: Any = _DEFAULTS["budget_ns"] / 1e9, mode: Any = _MODE,
          warmup: Any = _DEFAULTS["warmup"], keep_samples: Any = _KEEP,
          slack: Any = None, policy: Any = None, priority: Any = None, cpu: Any = None,
          lock_memory: Any = _LOCK, margin: Any = None, dma_latency: Any = None,
          sweep_point: bool = False) -> _Plan:
    """measure()'s arguments as the options the core reads, unchecked: the
    core converts and checks each one when it reads them."""
    given = dict(method=method, duration=duration, n=n, budget=budget, mode=mode, warmup=warmup,
                 keep_samples=keep_samples, slack=slack, policy=policy, priority=priority,
                 cpu=cpu, lock_memory=lock_memory, margin=margin, dma_latency=dma_latency)
    options = {k: v for k, v in given.items() if v is not None or k not in _NONE_IS_ABSENT}
    return _Plan(options, sweep_point)


def _plan(method: Any, duration: Any, **kwargs: Any) -> _Plan:
    """A sweep's point checked now, before the sweep's first run
    (``_core.plan``: every option converted by the core's rule of its kind,
    the defaults that depend on another option completed and every rule of
    a run checked, an error naming the argument)."""
    plan = _call(method, duration, **kwargs)
    _core.plan(plan.options, plan.point)
    return plan


def _run(plan: _Plan) -> Measurement:
    """One run by the core: it reads the plan's options (each converted and
    checked once, sleepacc_config_read) and runs them.  A failed run raises in the core's words of it
    (sleepacc_run_words: "EPERM: ... (<what failed>)"; a sweep's point names
    its method and duration, as in Lua): a run refused for
    privileges is a PermissionError naming what each privileged option asked
    for needs (sleepacc_privilege_explain), or, refused up front (nothing was
    changed), why and what was asked."""
    return Measurement(**_core.measure(plan.options, plan.point))


def measure(method: str, duration: Seconds, *, n: Optional[int] = None,
            budget: Optional[Seconds] = _DEFAULTS["budget_ns"] / 1e9, mode: str = _MODE,
            warmup: int = _DEFAULTS["warmup"],
            keep_samples: bool = _KEEP, slack: Optional[int] = None,
            policy: Optional[str] = None, priority: Optional[int] = None,
            cpu: Optional[int] = None, lock_memory: bool = _LOCK,
            margin: Optional[Seconds] = None,
            dma_latency: Optional[int] = None) -> Measurement:
    """Measure how `method` sleeps for `duration` seconds.

    The run stops after ``n`` samples, after ``budget`` seconds of wall time,
    or when the sample buffer is full, whichever comes first; ``budget=None``
    (or False, as in Lua) means only ``n`` stops (``n`` is then required).  ``warmup`` samples are
    taken first and discarded.  A run never comes back empty: a budget that
    ends before the first measured sample drops the rest of the warm-up and
    takes one sample.  A single sample longer than the budget is refused up
    front (``measure("nanosleep", 1000)`` would sleep 1000 s past a 1 s
    budget) unless ``n`` is given.  Defaults and every rule are the core's
    (sleepacc_config_default / sleepacc_config_check).

    mode: "relative" (each sample is the actual duration of one sleep) or
      "periodic" (deadlines start + k*duration; each sample is wake -
      deadline, and deadlines woken past the next one count as ``missed``;
      duration must be > 0, and the method not a floor: syscall and clock
      ignore the request, so there is no deadline to be late for).
    keep_samples: keep every sample (a buffer of ``n`` values, or with n None
      ``ceil(budget / max(duration, 1 us)) + 1`` values, at most
      MAX_SAMPLES = 4,000,000, i.e. 32 MB; unused capacity is given back).
      False streams: constant memory, stats from the core's histogram (within
      1%), ``samples`` None.
    slack: timer slack for the run in ns (an int >= 1, the unit of
      prctl(PR_SET_TIMERSLACK) and /proc/.../timerslack_ns); None leaves it.
    policy: "other", "batch", "idle", "fifo" or "rr"; None leaves it.
    priority: 1..99 for fifo/rr (default 1), 0 (or None) otherwise.
    cpu: pin the thread to this CPU for the run; None leaves affinity.
    lock_memory: mlockall for the run.
    dma_latency: hold /dev/cpu_dma_latency at this many us (an int >= 0; 0
      keeps the CPUs out of idle states with any exit cost) for the run;
      None leaves it.  Recorded as env["dma_latency_us"].
    margin: the hybrid method's margin in seconds (default 125 us, the
      core's one hybrid margin, also Sleeper("hybrid")'s and Lua's); given
      for a method of another family (none has a margin) it is a ValueError.

    The thread's slack, policy and affinity (and the dma latency request)
    are restored on every path.
    The GIL is released while the core works and Ctrl-C raises
    KeyboardInterrupt within one chunk (about 50 ms) for every method.

    Raises TypeError/ValueError for bad arguments (before anything runs),
    PermissionError when the environment needs privileges the process lacks
    (naming the setting), OSError for other OS failures.
    """
    # read and checked once, by the core, as it starts the run (_run's words)
    plan = _call(method, duration, n=n, budget=budget, mode=mode, warmup=warmup,
                 keep_samples=keep_samples, slack=slack, policy=policy, priority=priority,
                 cpu=cpu, lock_memory=lock_memory, margin=margin, dma_latency=dma_latency)
    return Measurement(**_core.measure(plan.options))


#: Keyword arguments of measure() that sweep() passes through (**environment).
_SWEEP_PASSTHROUGH = ("n", "warmup", "keep_samples", "slack", "policy", "priority", "cpu",
                      "lock_memory", "margin", "dma_latency")


def _plain_number(value: Any) -> Any:
    """numpy scalars as int/float, so settings stay JSON-serialisable."""
    np = sys.modules.get("numpy")  # a numpy scalar can only exist if numpy is loaded
    if np is not None and isinstance(value, np.generic):
        return value.item()
    return value


def _now_iso() -> str:
    """Now as docs/schema.md writes times of day: ISO 8601, UTC, ms, "Z"."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def sweep_host() -> dict[str, Any]:
    """The host record of a sweep: :func:`system_info` plus ``hostname``
    and ``os`` (uname's node and system name)."""
    host = system_info()
    uts = os.uname()
    host.setdefault("hostname", uts.nodename)
    host.setdefault("os", uts.sysname)
    return host


class SweepPoint(NamedTuple):
    """One point of a sweep: a method at a requested duration (ns)."""

    method: str
    duration_ns: int


def _sweep_names(methods: Any) -> list[str]:
    """The method names given (not None), as a list; each is checked by the
    core's rule (sweep_points)."""
    if isinstance(methods, str):
        names = [methods]
    else:
        try:
            names = list(methods)
        except TypeError:
            raise TypeError("methods must be a list of method names or None, got "
                            f"{type(methods).__name__}") from None
    return names   # each name, and the list's not being empty, by the core's rules (sweep_points)


def _sweep_durations(durations: Any) -> list[Any]:
    """The durations given (not None), as a list (an empty one is refused by
    the core's rule, sweep_points)."""
    if isinstance(durations, (str, bytes)) or not isinstance(durations, Iterable):
        raise TypeError("durations must be a list of seconds or None, got "
                        f"{type(durations).__name__}")
    return list(durations)


def sweep_points(methods: Union[None, str, Iterable[str]] = None,
                 durations: Optional[Iterable[Seconds]] = None,
                 mode: str = _MODE) -> list[SweepPoint]:
    """The points a sweep measures, in order: each method over the
    durations (seconds; None: DEFAULT_DURATIONS), each duration once.

    The rules of a sweep live once, in the core (sleepacc_sweep_plan): a
    floor method (registry family "baseline": it ignores the request) is
    measured at duration 0 only;
    periodic mode skips a duration of 0 (a period must be > 0), so a floor
    method cannot be part of a periodic sweep (named explicitly, that is a
    ValueError; with methods=None it is left out)."""
    return _points(methods, durations, mode)


def _points(methods, durations, mode, margin=None) -> list[SweepPoint]:
    """sweep_points; a margin given is checked by the plan too (a sweep
    without a hybrid method would ignore it: the core refuses it)."""
    # absent: the core's defaults (every available method, its ladder); each
    # name and duration by the core's rules of the options "method" and
    # "duration", named "methods[i]", and mode by its option's
    options = {"mode": mode}
    if methods is not None:
        options["methods"] = _sweep_names(methods)
    if durations is not None:
        options["durations"] = _sweep_durations(durations)
    if margin is not None:
        options["margin"] = margin
    return [SweepPoint(**p) for p in _core.sweep_plan(options)]   # {method, duration_ns} each


def iter_sweep(methods: Union[None, str, Iterable[str]] = None,
               durations: Optional[Iterable[Seconds]] = None, *,
               budget: Optional[Seconds] = _SWEEP_BUDGET, mode: str = _MODE,
               progress: Optional[Callable[[int, int, str, float], Any]] = None,
               skip: Iterable[tuple[str, int]] = (),
               per_point: Optional[Callable[[Sequence[SweepPoint]], Mapping[str, Any]]] = None,
               **environment: Any) -> Iterator[Measurement]:
    """The one sweep loop: measure each point of :func:`sweep_points` and
    yield its :class:`Measurement` as soon as it is done.

    Every argument is validated when this is called, before the first
    measurement runs (the loop itself starts at the first ``next()``).

    budget, mode, **environment: as in :func:`sweep`.
    progress: called as progress(done, total, method, duration_s) after
      each measurement (total counts the points not skipped).
    skip: (method, duration_ns) pairs not to measure (a resumed run).
    per_point: called before each point with the points still to measure
      (the first is the next one); returns :func:`measure` keywords for that
      point only (e.g. {"budget": ..., "warmup": ...}): sleepacc.plan.Planner.
    """
    for key in environment:
        if key not in _SWEEP_PASSTHROUGH:
            raise TypeError(f"sweep() got an unexpected keyword argument {key!r} (accepted: "
                            + ", ".join(_SWEEP_PASSTHROUGH) + ")")
    for name, hook in (("progress", progress), ("per_point", per_point)):
        if hook is not None and not callable(hook):
            raise TypeError(f"{name} must be callable or None, got {type(hook).__name__}")
    skipped = _skip_pairs(skip)
    todo = [p for p in _points(methods, durations, mode, environment.get("margin"))
            if tuple(p) not in skipped]
    # A sweep's budget is per point and its ladder may pass it (500 ms rows
    # under budget=0.2): each point still takes one sample (the core's rule
    # for a sweep point, sleepacc_options_complete).
    kw = dict(budget=budget, mode=mode, sweep_point=True, **environment)
    plans = [_plan(p.method, p.duration_ns / 1e9, **kw) for p in todo]
    return _sweep_loop(todo, plans, progress, per_point, kw)


def _skip_pairs(skip) -> set:
    """iter_sweep's skip as a set of (method, duration_ns), or an error naming skip."""
    try:
        pairs = None if isinstance(skip, (str, bytes)) else list(skip)
    except TypeError:
        pairs = None
    if pairs is None:
        raise TypeError(f"skip: must be an iterable of (method, duration_ns) pairs, got "
                        f"{type(skip).__name__}")
    out = set()
    for i, pair in enumerate(pairs):
        if isinstance(pair, str) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"skip[{i}]: must be a (method, duration_ns) pair, got {pair!r:.40}")
        m, d = pair
        if not isinstance(m, str) or not hasattr(d, "__index__") or isinstance(d, bool):
            raise TypeError(f"skip[{i}]: must be a (method, duration_ns) pair of a str and an "
                            f"integer, got {pair!r:.40}")
        out.add((m, d.__index__()))
    return out


def _sweep_loop(todo, plans, progress, per_point, kwargs) -> Iterator[Measurement]:
    for i, (point, plan) in enumerate(zip(todo, plans)):
        if per_point is not None:
            extra = per_point(todo[i:])
            if extra:
                plan = _plan(point.method, point.duration_ns / 1e9, **{**kwargs, **extra})
        m = _run(plan)
        yield m
        if progress is not None:
            progress(i + 1, len(todo), point.method, point.duration_ns / 1e9)


def _in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython with a kernel; a terminal
    IPython has none).  IPython is never imported here."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


class _NotebookProgress:
    """The progress of a sweep in a notebook: one display (an HTML progress
    bar with a text line) updated in place after each point, shown only once
    the sweep has run longer than `after` seconds (short sweeps stay quiet).
    No tqdm: IPython's display(..., display_id=True) and its update()."""

    def __init__(self, after: float = 3.0):
        import time
        self._clock = time.monotonic
        self.t0 = self._clock()
        self.after = after
        self.handle: Any = None

    def __call__(self, done: int, total: int, method: str, duration: float) -> None:
        elapsed = self._clock() - self.t0
        if self.handle is None and (elapsed < self.after or done >= total):
            return
        if done >= total:
            text = f"sweep: {total} points in {elapsed:.1f} s"
        else:
            left = elapsed / done * (total - done)
            text = (f"sweep: {done}/{total} points, last {method} "
                    f"{_core.format_duration(round(duration * 1e9))}, {elapsed:.0f} s "
                    f"(about {left:.0f} s left)")
        from html import escape
        data = {"text/plain": text,
                "text/html": f'<progress value="{done}" max="{total}" style="width:20em">'
                             f"</progress> {escape(text)}"}
        from IPython.display import display
        if self.handle is None:
            self.handle = display(data, raw=True, display_id=True)
        else:
            self.handle.update(data, raw=True)


def sweep(methods: Union[None, str, Iterable[str]] = None,
          durations: Optional[Iterable[Seconds]] = None, *,
          budget: Optional[Seconds] = _SWEEP_BUDGET, mode: str = _MODE,
          progress: Optional[Callable[[int, int, str, float], Any]] = None,
          **environment: Any) -> Sweep:
    """Measure every method at every duration (:func:`iter_sweep`, collected).

    methods: names (or one name); None means every available method.
    durations: seconds; None means DEFAULT_DURATIONS (irtt sleep's ladder,
      1 ns to 500 ms).  Floor methods (family "baseline": syscall, clock)
      are measured at 0 only; periodic mode skips a duration of 0 (a period
      must be > 0).  See :func:`sweep_points`.
    budget, mode: as in :func:`measure`, per measurement.
    progress: called as progress(done, total, method, duration) after each
      measurement; None shows a progress bar when run in a Jupyter notebook
      and the sweep takes longer than 3 s.
    **environment: any of n, warmup, keep_samples, slack, policy, priority,
      cpu, lock_memory, margin, dma_latency, passed to every :func:`measure`
      (a margin: a ValueError unless some method of the sweep is hybrid).

    Every argument is validated before the first measurement runs.
    """
    if progress is None and _in_notebook():
        progress = _NotebookProgress()
    # read once: an iterator given (a generator) is empty the second time, and
    # the settings below would record no methods and no durations
    if methods is not None and not isinstance(methods, str):
        methods = _sweep_names(methods)
    if durations is not None:
        durations = _sweep_durations(durations)
    points = iter_sweep(methods, durations, budget=budget, mode=mode, progress=progress,
                        **environment)
    # methods None: those the core's plan measures (every available one)
    names = (list(dict.fromkeys(p.method for p in sweep_points(None, durations, mode)))
             if methods is None else _sweep_names(methods))
    ladder = DEFAULT_DURATIONS if durations is None else _sweep_durations(durations)
    settings = {"methods": names, "durations": [_plain_number(d) for d in ladder],
                "budget": _plain_number(budget), "mode": mode,
                **{k: _plain_number(v) for k, v in environment.items()}}
    host = sweep_host()
    started = _now_iso()
    out = list(points)
    return Sweep(out, host=host, started=started, finished=_now_iso(), settings=settings)


def system_info() -> dict[str, Any]:
    """Host facts from the core (kernel, clocksource, HZ, high-resolution
    timers, NO_HZ, timer slack, CPUs, cpufreq/cpuidle, virtualisation, RT
    throttling); a fact that could not be read is None."""
    return dict(_core.host_facts())


def clock_info() -> dict[str, dict[str, Optional[int]]]:
    """Per clock ("monotonic", "monotonic_raw", "realtime", "boottime"):
    {"resolution_ns", "read_cost_ns"} (median of back-to-back reads); None
    when unknown."""
    return _core.clock_info()
