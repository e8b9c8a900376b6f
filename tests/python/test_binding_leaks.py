"""The binding frees what it allocates: repeated calls (successful, failing
and interrupted) leave no memory behind (tracemalloc sees every PyMem
allocation of the extension, the sample buffers and run structs included)."""
import gc
import signal
import threading
import tracemalloc

import numpy as np
import pytest

import sleepacc
from sleepacc import _core


def _calls():
    m = sleepacc.measure("clock", 0, n=2000)
    np.asarray(m.samples).sum()
    m.to_dict()
    sleepacc.measure("clock", 0, budget=0.001, keep_samples=False)
    sleepacc.Samples(list(range(100)))
    sleepacc.Samples(np.arange(100, dtype=np.int64))
    _core.stats(np.arange(1000, dtype=np.int64), 10)
    _core.table([{"method": "clock", "requested_ns": 0, "mode": "relative",
                  "stats": dict(m.stats), "cpu_percent": 1.0}], "wide")
    sleepacc.system_info()
    sleepacc.methods()
    for bad in (-1, float("nan"), "x"):
        with pytest.raises((TypeError, ValueError)):
            sleepacc.measure("clock", bad)
    with pytest.raises(ValueError):
        _core.table([{"method": "x", "requested_ns": 0, "mode": "nope", "stats": dict(m.stats),
                      "cpu_percent": 1.0}])
    with pytest.raises(TypeError):   # the core reads the records: an absent key is the wrong type
        _core.table([{"method": "x"}])


def _grown(fn, rounds):
    """Traced memory growth over `rounds` calls of fn: the smaller of two
    consecutive windows, after a warm-up window.  A leak grows in every
    window; a global table that resizes once (the interned-strings dict,
    which PyDict_SetItemString feeds, once grew by 1.9 MB inside one
    window) grows in only one."""
    tracemalloc.start()
    try:
        growth = []
        for window in range(3):
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(rounds):
                fn()
            gc.collect()
            if window:
                growth.append(tracemalloc.get_traced_memory()[0] - before)
        return min(growth)
    finally:
        tracemalloc.stop()


def test_calls_do_not_leak():
    # one lost sample buffer (16 KB) or run struct (~90 KB) per round would
    # add up to megabytes
    assert _grown(_calls, 100) < 200_000


def test_interrupted_measure_does_not_leak():
    main = threading.main_thread().ident

    def interrupted():
        timer = threading.Timer(0.01, signal.pthread_kill, (main, signal.SIGINT))
        try:
            # the timer starts inside the block: a SIGINT that lands before
            # measure() begins is still the KeyboardInterrupt expected here
            with pytest.raises(KeyboardInterrupt):
                timer.start()
                sleepacc.measure("nanosleep", 1e-3, n=100_000, budget=10)
        finally:
            if timer.is_alive() or timer.ident is not None:
                timer.join()

    # n=100000 allocates an 800 KB buffer each time
    assert _grown(interrupted, 10) < 400_000


def _option_rows():
    # the call rows whose argument is a whole options dict (read by the core
    # through the getter): a sweep's points live in the memory the core
    # asked for, freed after the answer and after a fault
    sleepacc._api.sweep_points(None, None)
    _core.plan({"method": "clock", "duration": 0})
    for bad in ({"methods": ["clock", "nope"]}, {"durations": [-1] * 50}, {"methods": []}):
        with pytest.raises(ValueError):
            _core.sweep_plan(bad)
    with pytest.raises(TypeError):
        _core.plan({"method": "clock", "duration": 0, "colour": 1})


def test_call_rows_with_options_do_not_leak():
    # one lost plan of every method over the ladder (~3 KB) per round would
    # add up to 300 KB
    assert _grown(_option_rows, 100) < 100_000


class _Name(str):      # a str and a dict whose lifetime a weak reference shows
    pass


class _Stats(dict):
    pass


def test_what_the_core_holds_outlives_a_conversion_that_drops_it():
    """A value's conversion may run Python (__index__, __float__) that drops
    the last reference to what the core already read: the method's text,
    the stats dict it entered.  The binding holds them until the read ends
    (the core read freed text: an invalid read under valgrind, a garbled
    method name), then lets them go."""
    import weakref
    seen = []

    def record():
        rec = {"method": _Name("nanosleep"), "requested_ns": 1000, "mode": "relative",
               "cpu_percent": 1.0}
        rec["stats"] = _Stats(n=3, min=1, max=2, mean=1.0, std=0.0, p99=2)
        refs = (weakref.ref(rec["method"]), weakref.ref(rec["stats"]))

        class Drops:
            def __index__(self):
                rec["method"], rec["stats"] = None, None     # the last references
                gc.collect()
                seen.append([r() is not None for r in refs])
                return 5
        rec["stats"]["median"] = Drops()
        return rec, refs

    rec, refs = record()
    assert "nanosleep" in _core.table([rec], "wide")
    assert seen == [[True, True]]                       # held while the core read
    assert [r() for r in refs] == [None, None]          # and given back after
    # a Sleeper's options: its method's text is read before quantile's __float__
    name = _Name("spin")
    ref, opts = weakref.ref(name), {"method": name}
    del name

    class Quantile:
        def __float__(self):
            opts.pop("method")
            gc.collect()
            seen.append(ref() is not None)
            return 0.5
    opts["quantile"] = Quantile()
    s = _core.Sleeper(opts)
    s.close()
    assert seen[-1] is True and ref() is None
