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
from . import _core
from ._api import (DEFAULT_DURATIONS, MAX_SAMPLES, Measurement, Method, Stats, Sweep,
                   clock_info, iter_sweep, load, measure, methods, sweep, system_info)
from ._core import Samples

__version__: str = _core.VERSION

__all__ = [
    "__version__", "methods", "measure", "sweep", "iter_sweep", "system_info", "clock_info",
    "load",
    "Method", "Stats", "Measurement", "Sweep", "Samples", "DEFAULT_DURATIONS", "MAX_SAMPLES",
]

# The precise sleep: a sleep as exact as the machine allows, and a pacer
# (python/_ext/sleeper.c wrapped by precise.py).
from .precise import Pacer, Sleeper, sleep  # noqa: E402

__all__ += ["sleep", "Sleeper", "Pacer"]
