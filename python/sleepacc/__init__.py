"""sleepacc: how well does this machine sleep, why, and a sleep as exact as it allows.

    import sleepacc
    m = sleepacc.measure("nanosleep", 1e-3, budget=0.5)
    m.stats.median, m.stats.p99            # ns
    s = sleepacc.sweep(["nanosleep", "spin"])
    print(s.table())                        # irtt sleep's table, from the C core
    s.save("run.json"); sleepacc.load("run.json") == s

Timing, sleeping, statistics, environment control and tables live in the C
core (sleepacc._core); this package names and validates.  Arguments are in
seconds; results in integer nanoseconds.
"""
import sys as _sys

# `python -m sleepacc`: this import is the command's first ~40 ms; a Ctrl-C
# in it ends the command like one anywhere else (status 130, one line), not
# with a traceback.  (Only then: `sys.argv[0]` is "-m" while runpy locates
# the package named by -m; imported by anything else, KeyboardInterrupt
# propagates as usual.  The console script's entry, _sleepacc_cli, guards
# its own imports.)
_AS_COMMAND = _sys.argv[:1] == ["-m"] and "sleepacc" in getattr(_sys, "orig_argv", ())


def _interrupted():   # called in `except KeyboardInterrupt:`
    if not _AS_COMMAND:
        raise  # noqa: PLE0704 - the KeyboardInterrupt being handled
    print("sleepacc: interrupted", file=_sys.stderr)
    raise SystemExit(130) from None


try:
    from . import _core
    from ._api import (DEFAULT_DURATIONS, MAX_SAMPLES, Measurement, Method, Samples, Stats,
                       Sweep, clock_info, iter_sweep, load, measure, methods, sweep, system_info)
except KeyboardInterrupt:
    _interrupted()

__version__: str = _core.VERSION

__all__ = [
    "__version__", "methods", "measure", "sweep", "iter_sweep", "system_info", "clock_info",
    "load",
    "Method", "Stats", "Measurement", "Sweep", "Samples", "DEFAULT_DURATIONS", "MAX_SAMPLES",
]

# The precise sleep: a sleep as exact as the machine allows, and a pacer
# (python/_ext/sleeper.c wrapped by precise.py).
try:
    from .precise import Pacer, Sleeper, sleep  # noqa: E402
except KeyboardInterrupt:
    _interrupted()

__all__ += ["sleep", "Sleeper", "Pacer"]

# Measured explanations: each sample's lateness in its parts, from the
# kernel's events (trace.py over the core's trace; Linux tracefs, root).
# The function `trace` is the attribute; the module is sleepacc.trace in
# sys.modules (`from sleepacc.trace import format_table`).
try:
    from .trace import Trace, trace  # noqa: E402
except KeyboardInterrupt:
    _interrupted()

__all__ += ["trace", "Trace"]

# The analysis modules, reachable as attributes (`sleepacc.model.fit(sw)`)
# without importing them, or numpy/matplotlib, at `import sleepacc`: each is
# imported on first use (PEP 562).
_SUBMODULES = ("cli", "doctor", "model", "plan", "plot", "precise", "records", "report")

from typing import TYPE_CHECKING  # noqa: E402

if TYPE_CHECKING:  # type checkers see them as the submodules they are
    from . import cli, doctor, model, plan, plot, precise, records, report  # noqa: F401


def __getattr__(name: str):
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
