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
from ._results import Measurement, Samples, Stats, Sweep, _pandas, load

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
