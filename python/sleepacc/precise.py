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

import os
import threading

from ._core import Pacer, Sleeper

__all__ = ["sleep", "Sleeper", "Pacer"]

_local = threading.local()


def _forget_after_fork():
    # A forked child must not share the parent's timerfds (both would arm
    # the same timer): it opens its own sleepers on first use.
    _local.__dict__.pop("sleepers", None)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def sleep(seconds: float, method: str = "auto") -> None:
    """Sleep ``seconds`` (int or float, 0..86400) and never wake early.

    ``method`` is ``"auto"`` (default), ``"hybrid"``, ``"comp"``, ``"spin"``
    or any registered kernel method name (see ``sleepacc.methods()``), so it
    can stand in for ``time.sleep`` in experiments.  The GIL is released and
    Ctrl-C raises ``KeyboardInterrupt`` within 50 ms.  Bad input raises
    ``TypeError``/``ValueError`` naming the argument, before anything sleeps.
    """
    sleepers = _local.__dict__.setdefault("sleepers", {})
    s = sleepers.get(method) if isinstance(method, str) else None
    if s is None:
        s = Sleeper(method)  # validates method
        sleepers[method] = s
    s.sleep(seconds)
