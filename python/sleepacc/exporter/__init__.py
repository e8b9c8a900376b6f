"""``sleepacc exporter``: timer lateness as Prometheus metrics.

A background thread measures each configured (method, duration) in turns,
within a CPU budget (default 1% of one CPU), and publishes an immutable
snapshot after every turn.  Scrapes (``/metrics``, via ``prometheus_client``)
and the node_exporter textfile writer only read the latest snapshot: a slow
scraper never holds anything the measuring thread needs.

Metrics (Prometheus text format, ``prometheus_client`` renders it):

    sleepacc_lateness_seconds{method,duration}       histogram of every sample's
        lateness (actual - requested in relative mode, wake - deadline in
        periodic mode), buckets log-spaced 100 ns .. 100 ms (Renard R5:
        1, 1.6, 2.5, 4, 6.3 per decade); a negative lateness (an undersleep)
        is observed as 0 and counted in sleepacc_undersleeps_total
    sleepacc_undersleeps_total{method,duration}      sleeps that ended early
    sleepacc_missed_deadlines_total{method,duration} periodic mode: deadlines passed
        over, never served (irtt's timer_misses; 0 in relative mode, which has
        no deadlines to miss)
    sleepacc_measure_errors_total{method,duration}   turns that failed (the loop goes on)
    sleepacc_measuring_cpu_seconds_total             CPU time of the measuring thread
        and of the doctor's runs (what the budget counts)
    sleepacc_measuring_seconds_total                 wall time since the thread started
    sleepacc_cpu_budget_ratio                        the configured budget (0.01 = 1%)
    sleepacc_host_info{clocksource,hz,kernel,virt,slack_ns}
    sleepacc_doctor_top_finding{id,status}           expected gain (s) of the
        doctor's top finding; refreshed every ``doctor_every`` seconds.  Its
        labels are ids from a fixed set (DOCTOR_IDS, the statuses); the
        finding's title is free text (measured figures), so it is never a
        label: ``sleepacc doctor`` on the host, or the snapshot file, has it
    sleepacc_doctor_last_run_timestamp_seconds
    sleepacc_doctor_cpu_seconds_total                CPU time of the doctor's runs
        (child processes; included in sleepacc_measuring_cpu_seconds_total)
    sleepacc_doctor_failures_total                   doctor runs that failed
    sleepacc_exporter_render_failures_total          scrapes whose metrics failed to
        render (the scrape still answers, with this and the process metrics)

``auto`` is measured through :class:`sleepacc.Sleeper` (what ``sleepacc.sleep``
uses): its lateness is what the caller sees, ``time.monotonic_ns()`` right
after ``sleep_until(deadline)`` returns, minus the deadline.  Every other name
is a registry method measured by :func:`sleepacc.measure`, whose samples are
the core's.

The doctor runs in a child process (:mod:`sleepacc._doctor_child`), started
by the measuring thread between turns, so its checks never overlap the
measuring, and its imports and the memory its checks make resident (one of
them locks all memory) leave with the child: the exporter's own resident
size stays that of its measuring loop and HTTP server.  The child's CPU time
is charged to the measuring thread's budget.
"""
from __future__ import annotations

from .measuring import (BUCKETS_NS, DEFAULT_TURN_S, DOCTOR_BUDGET_S, DOCTOR_IDS,
                        DOCTOR_STATUSES, ENV_KEYS, PLAN_LATE_NS, RESERVOIR, Exporter, Snapshot,
                        _env_config, _Series, _ThreadEnv, check_series, duration_label)
from .serving import Service, atomic_write, parse_listen, registry_for, render

__all__ = ["BUCKETS_NS", "Exporter", "Snapshot", "atomic_write", "duration_label",
           "registry_for", "ENV_KEYS", "check_series", "Service", "parse_listen", "render"]
