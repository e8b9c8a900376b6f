"""The results of a run, as sleepacc names them: :class:`Stats` (the core's
statistics of one run), :class:`Samples` (its int64 ns buffer, shared with
numpy), :class:`Measurement` (one run's record) and :class:`Sweep` (a
sequence of them with the host facts and settings), and :func:`load`, which
reads a results file back into a Sweep.  Every record's form, check and
flattening is :mod:`sleepacc.records`'s; :mod:`sleepacc._api` makes these.
"""
from __future__ import annotations

import array
import math
import os
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Optional, Union

from . import _core, records

if TYPE_CHECKING:
    import numpy as np

_KIND = {int: "q", float: "d", type(None): "-"}    # a packed Stats field's kind
_Q, _D = struct.Struct("=q"), struct.Struct("=d")   # one packed Stats field

class Stats(Mapping):
    """Summary statistics in ns: n, min, max, mean, std, median, p90, p99, p999,
    undersleeps (the core's ``sleepacc_stats`` fields, in its order).

    A read-only mapping whose keys are also attributes (``s.median``,
    ``s["median"]``).  Relative mode: statistics of the actual durations;
    periodic mode: of the lateness (wake - deadline)."""

    # A file of a million points holds a million of these, so the values are
    # packed: ``_data`` holds 8 bytes a field that is not None, in the core's
    # order (an int64, or a double), and ``_shape`` says which fields these
    # are: (kinds, struct.Struct, offsets), kinds one of "q", "d" or "-"
    # (None) a field, offsets each field's place in _data (-1: None); one
    # shape is shared by every Stats with the same kinds.  Any other value
    # (a bool, a numpy scalar, an int beyond int64, a NaN, which must stay
    # the one object to compare equal to itself) is kept as it is: then
    # ``_shape`` is None and ``_data`` the tuple.
    __slots__ = ("_shape", "_data")
    _FIELDS = tuple(_core.stats_fields)
    _INDEX = {name: i for i, name in enumerate(_FIELDS)}
    _SHAPES: dict = {}     # kinds -> its shape: the recent ones

    def __init__(self, values: Mapping[str, Any]):
        # a record from an older writer may lack fields the core added since
        # (p1, p10, p25, p75): those read None; n is required
        values["n"]
        row = tuple(map(values.get, self._FIELDS))
        kinds = "".join([_KIND.get(type(v), "?") for v in row])
        shape = self._SHAPES.get(kinds)
        if shape is None and "?" not in kinds:
            if len(self._SHAPES) >= 4096:    # a bound (a Stats holds its own shape)
                self._SHAPES.clear()
            shape = self._SHAPES.setdefault(kinds, _stats_shape(kinds))
        if shape is not None and ("d" not in kinds or all(
                math.isfinite(v) for v in row if type(v) is float)):
            try:
                self._data = shape[1].pack(*[v for v in row if v is not None])
                self._shape = shape
                return
            except struct.error:   # an int beyond int64
                pass
        self._shape, self._data = None, row

    @property
    def _row(self) -> tuple:
        """The values in the core's field order."""
        shape = self._shape
        if shape is None:
            return self._data
        values = shape[1].unpack(self._data)
        if len(values) == len(self._FIELDS):
            return values
        it = iter(values)
        return tuple(None if k == "-" else next(it) for k in shape[0])

    def _get(self, i: int) -> Any:
        shape = self._shape
        if shape is None:
            return self._data[i]
        at = shape[2][i]
        if at < 0:
            return None
        return (_Q if shape[0][i] == "q" else _D).unpack_from(self._data, at)[0]

    @property
    def _values(self) -> dict[str, Any]:
        return dict(zip(self._FIELDS, self._row))

    def __getitem__(self, key: str) -> Any:
        return self._get(self._INDEX[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._FIELDS)

    def __len__(self) -> int:
        return len(self._FIELDS)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            i = self._INDEX[name]
        except KeyError:
            raise AttributeError(f"Stats has no field {name!r}") from None
        return self._get(i)

    def __setstate__(self, state: Any) -> None:
        # a Stats pickled before its values were packed: (None, {"_row": values})
        self.__init__(dict(zip(self._FIELDS, state[1]["_row"])))

    def __reduce__(self):
        # pickled as its values (the packed bytes are this machine's order)
        return (type(self), (self._values,))

    def to_dict(self) -> dict[str, Any]:
        return self._values

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
    ``ctx_switches`` ({"voluntary", "involuntary"}) and ``wall_ns``; ``trace``,
a :class:`sleepacc.Trace` of the same method and duration where the point
carries one (:meth:`from_trace`; the record's ``trace`` key), else None.

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

    # env and ctx_switches are held packed (_Packed, below) until first read
    _FIELDS = ("method", "mode", "requested_ns", "n", "env", "samples", "starts", "stats",
               "stream_stats", "missed", "cpu_ns_per_call", "cpu_percent",
               "ctx_switches", "wall_ns", "trace")
    __slots__ = tuple("_" + k if k in ("env", "ctx_switches") else k for k in _FIELDS)

    def __init__(self, *, method: str, mode: str, requested_ns: int, n: int,
                 stats: Mapping[str, Any], missed: int = 0, cpu_ns_per_call: float = 0.0,
                 cpu_percent: float = -1.0, ctx_switches: Optional[Mapping[str, int]] = None,
                 wall_ns: int = 0, env: Optional[Mapping[str, Any]] = None,
                 samples: Any = None, stream_stats: Optional[Mapping[str, Any]] = None,
                 starts: Any = None, trace: Any = None):
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
        self._ctx_switches = _packed_ctx(ctx_switches)
        self.wall_ns = int(wall_ns)
        self._env = _packed_env({} if env is None else env)
        if samples is not None and not isinstance(samples, Samples):
            samples = Samples(samples)
        self.samples = samples
        if starts is not None and not isinstance(starts, Samples):
            starts = Samples(starts)
        #: start of each sample's sleep, ns since the run's measured part
        #: began (a Samples written by the core; None when streaming); not
        #: part of the record.
        self.starts = starts
        self.trace = trace

    # A point's env and ctx_switches are its own dicts, made from the packed
    # form on first read: the points of a file, which nearly all have the
    # same ones, share one packed copy until then.
    @property
    def env(self) -> dict[str, Any]:
        """What was applied to the thread (a dict: slack_ns, policy, ...)."""
        env = self._env
        if type(env) is _Packed:
            env = self._env = dict(env)
        return env

    @env.setter
    def env(self, value: Any) -> None:
        self._env = value

    @property
    def ctx_switches(self) -> dict[str, int]:
        """The run's context switches ({"voluntary": v, "involuntary": i})."""
        ctx = self._ctx_switches
        if type(ctx) is _Packed:
            ctx = self._ctx_switches = {"voluntary": ctx[0], "involuntary": ctx[1]}
        return ctx

    @ctx_switches.setter
    def ctx_switches(self, value: Any) -> None:
        self._ctx_switches = value

    def _env_mapping(self) -> Mapping[str, Any]:
        """env to read: a new dict while it is packed (it stays packed)."""
        env = self._env
        return dict(env) if type(env) is _Packed else env

    def _ctx_dict(self) -> dict[str, int]:
        """A copy of ctx_switches (it stays packed)."""
        ctx = self._ctx_switches
        if type(ctx) is _Packed:
            return {"voluntary": ctx[0], "involuntary": ctx[1]}
        return dict(ctx)

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
            "ctx_switches": self._ctx_dict(),
            "wall_ns": self.wall_ns,
            "env": dict(self._env),
            "samples": None if self.samples is None else memoryview(self.samples).tolist(),
            **({} if self.trace is None else {"trace": self.trace.to_dict()}),
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
        cols.update(records.context(self._env_mapping(), host))
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
        return cls._from_checked(d)

    @classmethod
    def _from_checked(cls, d: Mapping[str, Any], where: str = "record") -> "Measurement":
        """:meth:`from_dict` of a record the reader has already checked
        (records.check_point): a big file's points are checked once."""
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
                   samples=None if samples is None else Samples(samples),
                   trace=_trace_of(d.get("trace")))

    @classmethod
    def from_trace(cls, t) -> "Measurement":
        """The point of a :class:`sleepacc.Trace`: its untraced run (the
        lateness measured right before the traced one, without the tracer's
        cost) as samples and the core's statistics, carrying the trace."""
        import numpy as np
        late = np.asarray(t.untraced, dtype=np.int64)
        values = late if t.mode == "periodic" else late + np.int64(t.requested_ns)
        buf = array.array("q", values.tolist())
        stats = _core.stats(memoryview(buf), -(2 ** 62)) if len(buf) else None
        if stats is None:
            stats = {name: (0 if name in records.COUNT_FIELDS else None)
                     for name in _core.stats_fields}
        env = {"slack_ns": t.slack_ns, "policy": None, "priority": None, "cpu": t.cpu,
               "lock_memory": False, "dma_latency_us": None}
        return cls(method=t.method, mode=t.mode, requested_ns=t.requested_ns, n=len(buf),
                   stats=stats, env=env, samples=buf, trace=t)

    # Pickling (a multiprocessing worker returns a Measurement): the samples
    # and start times travel as their int64 bytes, since a memoryview does
    # not pickle, and come back as read-only Samples over those bytes.
    _BUFFERS = ("samples", "starts")

    def __getstate__(self) -> dict[str, Any]:
        state = {k: getattr(self, k) for k in self._FIELDS if k not in ("env", "ctx_switches")}
        env = self._env
        state["env"] = dict(env) if type(env) is _Packed else env
        ctx = self._ctx_switches
        state["ctx_switches"] = self._ctx_dict() if type(ctx) is _Packed else ctx
        for k in self._BUFFERS:
            if state[k] is not None:
                state[k] = state[k].tobytes()
        return state

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        for k in self._FIELDS:
            v = state[k]
            if k in self._BUFFERS and v is not None:
                v = memoryview(bytes(v)).cast("q")
            object.__setattr__(self, k, v)
        # held as the constructor holds them, where that keeps them as they are
        if type(self._env) is dict:
            self._env = _packed_env(self._env)
        ctx = self._ctx_switches
        if (type(ctx) is dict and list(ctx) == ["voluntary", "involuntary"]
                and all(type(v) is int for v in ctx.values())):
            self._ctx_switches = _packed_ctx(ctx)

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


class _Packed(tuple):
    """A Measurement's env (its items) or ctx_switches ((voluntary,
    involuntary)) as held until first read: one tuple, shared by every point
    with the same content."""
    __slots__ = ()


_SHARED: dict = {}      # content -> its _Packed: recent ones, a bounded number
_SHAREABLE = (type(None), bool, int, str)   # equal and of one type: the same value


def _shared(key: tuple, make) -> "_Packed":
    """The _Packed of `key`, made by make() when not held (at most 4096)."""
    packed = _SHARED.get(key)
    if packed is None:
        if len(_SHARED) >= 4096:
            _SHARED.clear()
        packed = _SHARED[key] = _Packed(make())
    return packed


def _packed_env(env: Mapping[str, Any]) -> Any:
    """How a Measurement holds `env`: a shared _Packed of its items when
    every key is a str and every value None, a bool, an int or a str (an
    equal one is then the same); otherwise a dict of its own, a copy."""
    items = tuple(env.items())
    key = ("env", items, tuple(map(type, env.values())))   # 1 and True differ by type
    try:
        packed = _SHARED.get(key)       # held only for content that may be shared
    except TypeError:                   # an unhashable value (a list, an object)
        packed = None
    if packed is not None:
        return packed
    items = tuple((sys.intern(k) if type(k) is str else k, v) for k, v in items)
    if all(type(k) is str for k, _ in items) and all(t in _SHAREABLE for t in key[2]):
        return _shared(key, lambda: items)
    return dict(items)


def _packed_ctx(ctx: Optional[Mapping[str, int]]) -> Any:
    """How a Measurement holds ctx_switches: a shared _Packed (voluntary,
    involuntary); a value that is not a Mapping is kept as it is."""
    if ctx is None:
        return _shared(("ctx", 0, 0), lambda: (0, 0))
    if not isinstance(ctx, Mapping):
        return ctx
    v, i = int(ctx["voluntary"]), int(ctx["involuntary"])
    return _shared(("ctx", v, i), lambda: (v, i))


def _stats_shape(kinds: str) -> tuple:
    """A packed Stats' shape (see Stats): the kinds, the struct of the
    fields that are not None, each field's offset in it (-1: None)."""
    offsets, at = [], 0
    for k in kinds:
        offsets.append(-1 if k == "-" else at)
        at += 0 if k == "-" else 8
    return (kinds, struct.Struct("=" + kinds.replace("-", "")), tuple(offsets))


def _trace_of(d: Any):
    """A point's "trace" key as a Trace (already checked by the reader);
    None when absent or of a trace schema this version does not know."""
    if d is None or d.get("schema") != records.TRACE_SCHEMA:
        return None
    from .trace import Trace
    return Trace.from_dict(d)


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
    doc = records.read(path, point=Measurement._from_checked)   # checked by the reader
    ms = doc.get("measurements") or []
    points = []
    for i, p in enumerate(ms):     # the other forms: each record dropped once converted
        points.append(p if isinstance(p, Measurement) else
                      Measurement.from_dict(p, f"{path}: measurement {i + 1}"))
        ms[i] = None
    return Sweep(points, host=doc.get("host"), started=doc.get("started"),
                 finished=doc.get("finished"), settings=doc.get("settings"))
