"""The oversleep model: why a sleep lasts longer than asked, and how sure we are.

``fit(data)`` takes a :class:`Sweep`, a list of measurements, or tidy records
(dicts, a CSV path such as ``tests/data/seed_results.csv``, or a pandas frame)
with at least ``method, requested_ns, actual_ns``, and explains every method's
actual duration as a sum of named causes, from one fixed vocabulary
(:data:`CAUSES`):

``granularity``
    the call takes its timeout in whole µs (select, usleep) or ms (poll,
    epoll_wait, kqueue, Go's netpoller on epoll_wait); a request is rounded up
    (or down by a caller that truncates).  The unit is fitted from the data;
    the registry (``sleepacc.methods()``) is only its prior.
``zero_shortcut``
    a timeout that becomes 0 returns at once (one system call).
``tick``
    on a periodic-tick kernel the wake-up happens on a tick:
    ``ceil(request / T) * T`` plus ``k`` extra ticks (FreeBSD 4 and Linux 2.4
    nanosleep add one); Windows' default timer is a 64 Hz tick (15.625 ms),
    and its high-resolution waitable timer wakes on a ~0.5 ms interrupt.  The
    ticks tried are the OS's own (:func:`terms.ticks_for`).  A negative
    constant on top of it is the tick phase.
``timer_slack``
    Linux delays a timer by up to the thread's slack (50 µs by default).  It
    is a *window*: another wake-up inside it ends the sleep early, so under
    load the oversleep drops below slack + wake-up (then ``load`` is named).
    A hybrid sleep (registry family ``hybrid``) ends its kernel part the
    run's margin (``margin_ns``) early and spins the rest: slack shows only
    by what it exceeds the margin, none below it.
``select_slack``
    Linux select/poll/epoll: ``max(slack, 0.1 % of the timeout)``
    (``fs/select.c``), a max, not a sum.
``coalescing``
    a leeway growing with the duration, ``min(a * d, cap)`` (macOS timer
    coalescing; FreeBSD calloutng's uncapped share of the timeout).
``wakeup``
    the constant rest: interrupt, scheduler, the way back to the caller.
    Its entry part can be hidden: the kernel computes the deadline at entry
    (now + d), then spends ``s`` setting the sleep up (sleep queue, timer,
    context switch); a request shorter than ``s`` has expired before the
    thread sleeps and returns after the set-up: ``max(0, s - d)``, seen only
    where some requests are shorter than ``s``.
``idle_exit``
    a longer sleep lets the CPU reach a deeper idle state (or the hypervisor
    deschedule the vCPU): ``E * d / (d + d½)``.  A busy CPU or
    ``/dev/cpu_dma_latency`` = 0 removes it.
``load``
    other work: a slack window cut short, or a spread the family cannot carry.

How the fit works (all in ns):

* each point (one method, one requested duration) carries its own
  uncertainty: the standard error of its median, ``1.25 * spread / sqrt(n)``
  with the spread from the core's statistics (IQR / 1.349, else p90, else
  std), in quadrature with a floor: 1 µs and 2 % of the oversleep (the
  run-to-run drift of a median).  Published means without a spread get
  3 µs, 5 % of the oversleep and 0.1 % of the duration (their rounded digits
  and the measuring clock's rate).  The tolerance, max(5 % of the measured
  oversleep, 5 µs), is a reporting metric (:meth:`MethodParams.within_tolerance`)
  and a condition of an ``explained`` verdict.
* the discrete structure (unit, rounding, tick, extra ticks, zero shortcut)
  and the shape parameters (knees, half-lengths) are searched exhaustively on
  small grids; the linear amounts are fitted by weighted least squares with
  bounds (every physical term >= 0; an exact active-set solver, no clipping
  afterwards).  Structures are ranked by chi-square + ln(n) per parameter
  (BIC) + priors (the registry's unit, the host's high-resolution timers,
  the OS).  Cost: O(n) per candidate, a bounded number of candidates.
* the set-up ``s`` is tried last, on the best fits of the leading tickless
  structures: where some requests are shorter than it and enough are longer
  to fit the rest with a degree of freedom to spare; it is kept only where
  leaving it out worsens the fit beyond the 95 % threshold.  With one
  request shorter than ``s`` it rests on that request alone: a duration left
  out cannot be predicted with it.
* every linear parameter gets a 95 % interval from a wild bootstrap of the
  points (200 replicates; the residual inflates a point's noise where the
  fit misses it); shape parameters get profile intervals.  A term is
  *identified* only when its interval excludes zero.
* a verdict per method: ``explained`` (the residuals are consistent with the
  noise), ``partly`` (what is left is named with its size and shape) or
  ``unexplained``; structures that fit about as well are listed as
  ``alternatives``, and the verdict says so.

All values are in ns internally; ``predict`` takes and returns seconds.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..records import load_records, to_records
from .groups import GROUP_KEYS, fit_groups
from .inference import BOOTSTRAP
from .results import FitState, MethodParams, Model, ModelSet
from .solve import HUBER
from .terms import (CAUSES, ENTRY_MAX_NS, ENTRY_NS, EXTRA_TICKS, IDLE_EXIT_MAX_NS, IDLE_HALF_NS,
                    KNEE_NS, LINUX_DEFAULT_SLACK_NS, SELECT_SHARE, SELECT_SLACK_NS,
                    TICK_CANDIDATES_NS, UNITS_NS, ZERO_RETURN_MAX_NS, tolerance_ns)

# The package's rooms, bottom up: terms (the vocabulary and what a structure
# predicts), solve (a point's noise, the bounded fit), explain (the words),
# results (MethodParams, Model, ModelSet), inference (intervals, verdict),
# search (which structure), groups (records -> one model per group).  The
# rows come from sleepacc.records (to_records, load_records: re-exported).

__all__ = [
    "CAUSES",
    "MethodParams",
    "Model",
    "ModelSet",
    "fit",
    "fit_groups",
    "load_records",
    "to_records",
    "TICK_CANDIDATES_NS",
    "GROUP_KEYS",
    "tolerance_ns",
]


def fit(data, by: Optional[Sequence[str]] = None, bootstrap: int = BOOTSTRAP) -> ModelSet:
    """Fit the oversleep model.

    data: a Sweep, Measurement(s), tidy records, a CSV path or a DataFrame.
    Returns a ModelSet of Models keyed by the group columns (seed, host, os,
    timer_config, applied slack, dma latency, scheduling policy): iterate
    ``.values()``, pick one with ``.find(...)``, or ``.explain()`` them all.
    Where the data hold one machine/configuration it is that group's Model
    (a Model is the ModelSet of its one group), with ``.params[method]``,
    ``.predict`` and ``.to_json`` of its own."""
    ms = fit_groups(data, by if by is not None else GROUP_KEYS, bootstrap)
    if len(ms) == 1:
        return next(iter(ms.values()))
    return ms
