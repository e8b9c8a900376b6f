"""The precise sleep: ``sleepacc.sleep``, ``Sleeper`` and ``Pacer``.

``Sleeper`` and ``Pacer`` are the C core's objects (``sleepacc._core``): the
strategies, the learned margins and the pacing all live in ``csrc/sleeper.c``
and ``csrc/pacer.c``.  This module adds only ``sleep()``, a drop-in for
``time.sleep`` that keeps one ``Sleeper`` per thread and method, so the
margins ``auto`` learns carry over from one call to the next::

    import sleepacc
    sleepacc.sleep(0.001)                    # auto: learned hybrid, timerfd + spin
    sleepacc.sleep(0.001, "clock_nanosleep") # any registered kernel method

    s = sleepacc.Sleeper()                   # method="auto", quantile=0.99
    s.sleep(0.01); s.sleep_until(time.monotonic_ns() + 5_000_000)
    s.stats["lateness"]["median"], s.stats["margins"]

    for deadline in sleepacc.Pacer(0.001):   # deadlines start_ns + k * 1 ms
        ...                                  # (time.monotonic_ns() clock)
"""
from __future__ import annotations

import itertools
import os
import threading
from typing import Optional

from . import _core

__all__ = ["sleep", "Sleeper", "Pacer", "HANDOFF"]

#: The core's defaults of a Sleeper and a Pacer (sleepacc_sleeper_config_default):
#: the signatures below show them.
_DEFAULTS = _core.sleeper_default()

#: Seconds of each spin that ``Sleeper`` and ``Pacer`` spin from Python,
#: holding the GIL, instead of in C with the GIL released (see below).
HANDOFF = 50e-6


class _Precise:
    """What Sleeper and Pacer share above the core: the context manager,
    the repr and attributes named after the core's stats keys."""

    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        closed = "" if self._open else " closed"
        return (f"<sleepacc.{self._kind} method={self.method!r} "
                f"count={self.stats['count']}{closed}>")


def _config(given: dict) -> dict:
    """The options of a Sleeper or Pacer as the core takes them
    (sleepacc_sleeper_options): None is not given for margin and handoff (the
    core's default) and dma_latency (left as it is).  Each value is
    converted by the core's rule of its kind and every rule is the core's
    (``_core.Sleeper.__init__``), worded ``"<argument>: <message>, got
    <value>"``."""
    return {k: v for k, v in given.items()
            if v is not None or k not in ("margin", "handoff", "dma_latency")}


def _stat(key: str, doc: str) -> property:
    """A read-only attribute: the top-level stats key ``key``."""
    return property(lambda self: self.stats[key], doc=doc)


class Sleeper(_Precise, _core.Sleeper):
    """Sleeper(method="auto", quantile=0.99, margin=None, handoff=HANDOFF, dma_latency=None, rt_priority=0, slice=0)

    The C core's sleeper (``sleepacc._core.Sleeper``): ``sleep(seconds)``
    and ``sleep_until(monotonic_ns)`` never return before their deadline;
    ``stats`` holds counts, the lateness and auto's learned margins.

    ``handoff`` (seconds, 0 to 0.001) is the hand-off: the kernel wait ends
    ``handoff`` earlier than the margin alone would, the C spin stops
    ``handoff`` before the deadline, and the rest is a Python loop over the
    core's ``_poll(deadline)`` (one clock read each; the core decides when
    the deadline is reached and records the sleep).  Why: after a wait of
    milliseconds the interpreter's own code is cold in the CPU caches, so
    the first Python bytecodes after a sleep that ends in C run micro-
    seconds late; a loop that runs Python up to the deadline warms them
    (measured in bench/precise_sleep.py, rows auto and auto handoff=0).  A
    sleep over 1000 times ``handoff`` hands off 1/1000 of its length (at
    most 1 ms): after 100 ms or more the way back is colder still.  It
    costs the hand-off in spinning per sleep and holds the GIL for that
    long.  ``handoff=0`` spins all in C with the GIL released.  Pure kernel
    methods never hand off.

    ``dma_latency`` (int us >= 0, None leaves it) holds /dev/cpu_dma_latency
    at that value from creation to ``close()`` (CPU idle states deeper than
    it are not entered: the idle-exit cost goes); PermissionError naming it
    when the file is not writable.

    ``rt_priority`` (1..99; 0, the default, is off) is an opt-in: the end of
    each sleep (its last kernel wait and at most 200 us of spin) runs under
    SCHED_FIFO at that priority and the thread's policy is put back before
    the sleep returns, on every path; no hand-off then.  Without the
    privilege the sleep goes on as a normal thread (``stats["rt_denied"]``).

    ``slice`` (seconds, 0.0001 to 0.1; 0, the default, is off) is an
    opt-in for a loop that shares busy CPUs: the creating thread's
    scheduler slice (Linux 6.12+) is held at that value until ``close()``,
    so its wake-ups preempt a busy CPU's task sooner instead of now and
    then waiting for the next tick (4 ms at HZ=250).  It changes the thread
    for the sleeper's life, for its work between sleeps too, which is where
    it pays (README, "Under load").  ``stats["slice_held_ns"]`` says it is
    held; ``stats["slice_denied"]`` where the thread is not a normal one or
    the kernel keeps no slice per thread.  Close sleepers in any order:
    the thread is as it was once the last is closed.

    Under CPU contention ``auto`` spins little (see ``stats["decision"]``
    and ``stats["reason"]``).
    """

    __slots__ = ()
    _kind = "Sleeper"
    last_wake_ns = _stat("last_wake_ns", "int: when the last completed sleep ended "
                         "(CLOCK_MONOTONIC ns, the core's own clock read; 0 before the first).")

    def __init__(self, method: str = _DEFAULTS["method"], quantile: float = _DEFAULTS["quantile"],
                 margin: Optional[float] = None, handoff: float = HANDOFF,
                 dma_latency: Optional[int] = None, rt_priority: int = 0,
                 slice: float = 0) -> None:
        super().__init__(_config({
            "method": method, "quantile": quantile, "margin": margin, "handoff": handoff,
            "dma_latency": dma_latency, "rt_priority": rt_priority, "slice": slice}))

    def sleep(self, seconds: float) -> None:
        """Sleep ``seconds`` (int or float, any finite number >= 0, like
        ``time.sleep``; a day or more too) toward the absolute deadline now +
        seconds; never returns before it.  The core's rule (sleepacc_sleep_check):
        a value whose ns, or now + ns, overflow int64 (about 292 years) is a
        ValueError naming ``seconds``.  The GIL is released except for the
        hand-off; Ctrl-C raises KeyboardInterrupt within 50 ms."""
        self._spin_to(seconds, True)

    def sleep_until(self, monotonic_ns: int) -> None:
        """Sleep until the CLOCK_MONOTONIC time ``monotonic_ns`` (an int, the
        clock of ``time.monotonic_ns()``).  A past deadline returns at once;
        one more than a day ahead is a ValueError (a guard against a wall-clock
        time in ns passed by mistake; ``sleep(seconds)`` has no day cap)."""
        self._spin_to(monotonic_ns)

    def _spin_to(self, x, seconds=False):
        # The core sleeps toward the deadline (x ns, or x seconds from now:
        # the core reads both) up to the hand-off; then each _poll reads the
        # clock once and says when the deadline is reached.
        deadline, near = self._begin(x, seconds)
        if near:
            poll = self._poll
            while not poll(deadline):
                pass


class Pacer(_Precise, _core.Pacer):
    """Pacer(period, method="auto", missed="skip", handoff=HANDOFF, dma_latency=None, rt_priority=0, slice=0)

    Periodic ticks at ``start_ns + k * period`` (k = 1, 2, ...), so no drift
    accumulates.  ``for deadline in pacer:`` yields each tick's deadline
    (CLOCK_MONOTONIC ns) for ever; ``wait()`` returns the next one.  A tick
    whose deadline passed before ``wait()`` was called is missed: ``"skip"``
    drops the passed ticks, ``"burst"`` delivers each at once, ``"delay"``
    restarts the schedule from now.  ``handoff``, ``dma_latency``,
    ``rt_priority`` and ``slice`` as for ``Sleeper``: a frame loop that runs
    beside other work is the case ``slice`` is for.
    """

    __slots__ = ()
    _kind = "Pacer"
    period_ns = _stat("period_ns", "int: the period (ns).")
    start_ns = _stat("start_ns", "int: origin of the schedule (CLOCK_MONOTONIC ns); tick k is "
                     "due at start_ns + k * period_ns; 'delay' moves it.")
    last_deadline_ns = _stat("last_deadline_ns", "int: deadline of the last tick delivered "
                             "(0 before the first).")
    missed_policy = _stat("missed_policy", "str: the missed-tick policy (the missed= argument).")
    missed = _stat("missed", "int: ticks never delivered (timer_misses; a point's missed).")

    def __init__(self, period: float, method: str = _DEFAULTS["method"],
                 missed: str = _DEFAULTS["missed"],
                 handoff: float = HANDOFF, dma_latency: Optional[int] = None,
                 rt_priority: int = 0, slice: float = 0) -> None:
        super().__init__(_config({
            "period": period, "method": method, "missed": missed, "handoff": handoff,
            "dma_latency": dma_latency, "rt_priority": rt_priority, "slice": slice}))

    def wait(self) -> int:
        """Wait for the next tick and return its deadline (ns); never before it.

        Each tick is returned once: when an exception (Ctrl-C, a signal
        handler's) ends a wait whose tick was already delivered, the next
        wait() returns that tick.  A wait() called from a signal handler
        while this thread is inside wait() takes the pending tick with a
        sleeper of its own; the interrupted wait then goes on to the next."""
        tok = next(_tokens)
        try:
            while True:
                deadline, near = self._begin(tok)
                if not near:
                    break
                poll = self._poll
                r = poll(tok)
                while r is False:
                    r = poll(tok)
                if r:
                    break   # None: a re-entrant wait took this tick; on to the next
        except BaseException:
            self._unwait(tok)
            raise
        return deadline

    def __iter__(self) -> "Pacer":
        return self

    def __next__(self) -> int:
        return self.wait()

_local = threading.local()
_tokens = itertools.count(1)   # one per Pacer.wait() call (see Pacer._unwait)


def _forget_after_fork():
    # A forked child must not share the parent's timerfds (both would arm
    # the same timer): it opens its own sleepers on first use.
    _local.__dict__.pop("sleepers", None)
    _local.__dict__.pop("retry", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def sleep(seconds: float, method: str = _DEFAULTS["method"]) -> None:
    """Sleep ``seconds`` (int or float, any finite value >= 0, as
    ``time.sleep``; a day or more too) and never wake early.

    ``method`` is ``"auto"`` (default), ``"hybrid"``, ``"comp"``, ``"spin"``
    or any registered kernel method name (see ``sleepacc.methods()``), so it
    can stand in for ``time.sleep`` in experiments.  The GIL is released and
    Ctrl-C raises ``KeyboardInterrupt`` within 50 ms.  Bad input raises
    ``TypeError``/``ValueError`` naming the argument, before anything sleeps.
    """
    sleepers = _local.__dict__.setdefault("sleepers", {})
    s = sleepers.get(method) if isinstance(method, str) else None
    if s is not None and method in _local.__dict__.get("retry", ()):
        s = _retry_fallback(sleepers, method, s)
    if s is None:
        s = Sleeper(method)  # validates method
        sleepers[method] = s
        if s.stats["kernel_skipped"] is not None:   # its kernel wait was short of a resource
            _local.__dict__.setdefault("retry", {})[method] = _RETRY_AFTER
    s.sleep(seconds)


#: sleep(): a sleeper that fell back to another kernel wait (timerfd at
#: EMFILE) is opened again after this many sleeps, so it returns to the
#: preferred wait once the resource is free (its learned state starts over).
_RETRY_AFTER = 1000


def _retry_fallback(sleepers, method, s):
    """The thread's fallen-back sleeper for method, or None (dropped) when
    its sleeps until a new try are spent."""
    retry = _local.retry
    retry[method] -= 1
    if retry[method] > 0:
        return s
    del retry[method]
    del sleepers[method]
    s.close()
    return None
