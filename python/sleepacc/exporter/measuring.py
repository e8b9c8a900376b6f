"""The exporter's measuring side: each (method, duration) series measured in
turns by one background thread within a CPU budget, its histogram and
reservoir, the thread's settings through the core, the doctor's child
process, and the immutable snapshot each turn publishes.  Rendering and
serving the snapshot are :mod:`sleepacc.exporter.serving`'s."""
from __future__ import annotations

import errno
import inspect
import json
import os
import socket
import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import sleepacc
from sleepacc import _core, _doctor_child, records
from sleepacc._units import format_go

__all__ = ["BUCKETS_NS", "Exporter", "Snapshot", "check_series", "duration_label", "ENV_KEYS"]

#: Upper bounds of the lateness buckets (ns): 100 ns .. 100 ms, five a decade
#: (the Renard R5 series 1, 1.6, 2.5, 4, 6.3), so every label is a short number.
_R5 = ("1", "1.6", "2.5", "4", "6.3")
BUCKETS_NS: Tuple[int, ...] = tuple(
    [int(round(float(f"{m}e{e}"))) for e in range(2, 8) for m in _R5] + [100_000_000])
#: The same bounds as the "le" label values (seconds).
_LE = tuple(repr(ns / 1e9) for ns in BUCKETS_NS)
_BOUNDS = np.asarray(BUCKETS_NS, dtype=np.int64)

#: Environment keywords of measure() the exporter passes on (dma_latency when
#: this build's measure() has it).
ENV_KEYS = ("slack", "policy", "priority", "cpu", "lock_memory", "dma_latency")
#: Samples kept per series for the snapshot's statistics (the histogram counts all).
RESERVOIR = 20_000
PLAN_LATE_NS = 60_000        # a typical oversleep, for sizing a turn only
DEFAULT_TURN_S = 0.25        # the most wall time one turn takes (--turn)
DOCTOR_BUDGET_S = 0.02       # the doctor's budget per point (its A/B arms take 3x)
#: The values sleepacc_doctor_top_finding's id label can take: the doctor's
#: finding ids, doctor_failed for a run that gave no answer, and other for an
#: id this list does not know (the label set stays bounded).
DOCTOR_IDS = ("timer_slack", "rt_policy", "clocksource", "idle_states", "idle_halt", "tick",
              "virtualisation", "busy_host", "hybrid", "doctor_failed", "other")
DOCTOR_STATUSES = ("problem", "option", "ok", "unknown")


def _warmup(d_ns: int) -> int:
    """Warm-up sleeps a turn starts with: one up to 10 ms (after a rest the
    first wake-up is cold), none above, where it would cost its length."""
    return 1 if d_ns <= 10_000_000 else 0


def duration_label(ns: int) -> str:
    """The ``duration`` label: Go's duration text in ASCII ("1ms", "100us")."""
    return format_go(int(ns)).replace("µ", "u")


def _measure_accepts(name: str) -> bool:
    try:
        return name in inspect.signature(sleepacc.measure).parameters
    except (TypeError, ValueError):
        return False


def _sleeper_accepts(name: str) -> bool:
    try:
        return name in inspect.signature(sleepacc.Sleeper.__init__).parameters
    except (TypeError, ValueError):
        return False


class _Series:
    """What the measuring thread accumulates for one (method, duration)."""

    def __init__(self, method: str, duration_ns: int):
        self.method, self.duration_ns = method, int(duration_ns)
        self.counts = np.zeros(len(BUCKETS_NS) + 1, dtype=np.int64)  # last: above 100 ms
        self.sum_ns = 0
        self.undersleeps = 0
        self.missed = 0
        self.errors = 0
        self.turns = 0
        self.cpu_ns = 0          # measuring CPU spent on this series (thread time)
        self.wall_ns = 0
        self.ctx = {"voluntary": 0, "involuntary": 0}
        self.ring = np.zeros(RESERVOIR, dtype=np.int64)   # raw samples, newest last
        self.ring_len = 0
        self.ring_pos = 0
        self.cpu_per_sample_ns = float(duration_ns + 20_000)  # pessimistic until measured
        self.last_error: Optional[str] = None
        self.env: dict = {}

    def add(self, lateness_ns: np.ndarray, raw: np.ndarray) -> None:
        late = np.asarray(lateness_ns, dtype=np.int64)
        neg = late < 0
        self.undersleeps += int(neg.sum())
        late = np.where(neg, 0, late)
        idx = np.searchsorted(_BOUNDS, late, side="left")   # first bound >= value: "le"
        self.counts += np.bincount(idx, minlength=len(BUCKETS_NS) + 1)
        self.sum_ns += int(late.sum())
        raw = np.asarray(raw, dtype=np.int64)[-RESERVOIR:]
        k = raw.size
        end = self.ring_pos + k
        if end <= RESERVOIR:
            self.ring[self.ring_pos:end] = raw
        else:
            first = RESERVOIR - self.ring_pos
            self.ring[self.ring_pos:] = raw[:first]
            self.ring[: k - first] = raw[first:]
        self.ring_pos = end % RESERVOIR
        self.ring_len = min(RESERVOIR, self.ring_len + k)

    def recent(self) -> np.ndarray:
        if self.ring_len < RESERVOIR:
            return self.ring[: self.ring_len].copy()
        return np.concatenate([self.ring[self.ring_pos:], self.ring[: self.ring_pos]])

    def frozen(self) -> dict:
        cum = np.cumsum(self.counts)
        return {"method": self.method, "duration_ns": self.duration_ns,
                "duration": duration_label(self.duration_ns),
                "buckets": tuple(int(c) for c in cum[:-1]), "count": int(cum[-1]),
                "sum_s": self.sum_ns / 1e9, "undersleeps": self.undersleeps,
                "missed": self.missed, "errors": self.errors, "turns": self.turns,
                "cpu_ns": self.cpu_ns, "wall_ns": self.wall_ns, "ctx": dict(self.ctx),
                "last_error": self.last_error}


class Snapshot:
    """An immutable view of the exporter at one moment (what a scrape renders)."""

    __slots__ = ("series", "cpu_s", "wall_s", "host", "finding", "doctor_time",
                 "budget", "mode", "started", "points", "doctor_cpu_s", "doctor_failures")

    def __init__(self, series, cpu_s, wall_s, host, finding, doctor_time, budget, mode,
                 started, points, doctor_cpu_s=0.0, doctor_failures=0):
        self.series: Tuple[dict, ...] = tuple(series)
        self.cpu_s, self.wall_s = float(cpu_s), float(wall_s)
        self.host: dict = host
        self.finding: Optional[dict] = finding
        self.doctor_time: Optional[float] = doctor_time
        self.budget, self.mode, self.started = budget, mode, started
        self.points: Tuple[dict, ...] = tuple(points)   # sleepacc/1 point records
        self.doctor_cpu_s, self.doctor_failures = float(doctor_cpu_s), int(doctor_failures)


def _env_config(env: dict) -> dict:
    """measure()'s environment keywords as the core's checked config env
    (slack_ns, policy, priority, cpu, ...; -1 leaves a setting as it is):
    every rule and default is the core's (a fifo/rr policy without a
    priority runs at 1), an error naming the keyword.  The floor method
    "clock" measures nothing here, as in the CLI's check."""
    return _core.plan({"method": "clock", "duration": 0, "n": 1, **env})["env"]


class _ThreadEnv:
    """Timer slack, policy, priority and CPU applied to the calling thread
    for the turns of ``auto`` and put back afterwards, by the core's
    environment control (``_core.env_hold``/``env_release``:
    sleepacc_env_apply and sleepacc_env_restore, the thread left as found):
    ``sleepacc.Sleeper`` takes only ``dma_latency`` (held by the core while
    the Sleeper is open), while measure() applies all of them itself.
    `env`: those keywords of measure(), checked when this is made, by the
    core's rules and defaults (:func:`_env_config`)."""

    def __init__(self, env: dict):
        self.env = _env_config(env)
        self.given = dict(env)

    def __enter__(self):
        _core.env_hold(self.given)
        return self

    def __exit__(self, *exc):
        _core.env_release()
        return False


def check_series(methods: Sequence[str], durations_ns: Sequence[int],
                 turn_s: float = DEFAULT_TURN_S) -> None:
    """The exporter's own rules of its series, before anything runs: it
    measures sleeps (no floor method, every duration above 0) and a turn holds
    at least one sleep of each duration.  A ValueError "<argument>: <words>"
    naming methods, durations_ns or turn_s (the CLI words them by its flags);
    each series' method and duration are the core's to check."""
    if not methods:
        raise ValueError("methods: must name at least one method")
    if not durations_ns:
        raise ValueError("durations_ns: must hold at least one duration")
    if any(int(d) <= 0 for d in durations_ns):
        raise ValueError("durations_ns: must be above 0")
    longest, turn_ns = max(int(d) for d in durations_ns), int(turn_s * 1e9)
    if longest > turn_ns:
        raise ValueError(f"durations_ns: {format_go(longest)} is longer than a measuring turn "
                         f"(turn_s {format_go(turn_ns)}): give durations up to the turn, or a "
                         "longer turn_s")
    floors = {m.name for m in sleepacc.methods() if m.family == "baseline"}
    for name in methods:
        if name in floors:
            raise ValueError(f"methods: {name!r} is a floor (it does not sleep); the exporter "
                             "measures sleeps")


class Exporter:
    """The measuring loop and its latest :class:`Snapshot`.

    methods: registry method names, or "auto" (sleepacc.Sleeper).
    durations_ns: requested durations (ns, > 0).
    cpu_budget: the share of one CPU the measuring thread may use (0.01 = 1%):
      after each turn the thread rests until its CPU time (time.thread_time,
      so the core's work and this loop's Python both count) is at most this
      share of the wall time since it started.  It is an average since
      the start, not a cap on every interval: the doctor's run (a few
      tenths of a second of CPU, the first after the first round of turns)
      is repaid by the rest after it, so a run shorter than its cost over
      the budget ends above it (doctor_every=0 avoids that).  The doctor
      runs in a child process; its CPU (the child's rusage) counts.
    env: measure() environment keywords (slack, policy, priority, cpu,
      lock_memory, dma_latency), applied by the core to each turn (and by
      _ThreadEnv to auto's turns) and restored after it.
    doctor_every: seconds between the doctor's runs (None or 0: never).
    turn_s: the most wall time one turn takes.
    log: called with one line when a doctor run fails (the Service gives
      its own log when none is given here).
    """

    def __init__(self, methods: Sequence[str], durations_ns: Sequence[int], *,
                 mode: str = "relative", cpu_budget: float = 0.01,
                 env: Optional[dict] = None, doctor_every: Optional[float] = 600.0,
                 turn_s: float = DEFAULT_TURN_S, log=None):
        if not 0 < cpu_budget <= 1:
            raise ValueError(f"cpu_budget must be in (0, 1], got {cpu_budget!r}")
        check_series(methods, durations_ns, turn_s)
        self.env = {k: v for k, v in (env or {}).items() if v is not None and v is not False}
        for k in self.env:
            if k not in ENV_KEYS:
                raise TypeError(f"unknown environment option {k!r} (accepted: {', '.join(ENV_KEYS)})")
        if "dma_latency" in self.env and not _measure_accepts("dma_latency"):
            raise ValueError("dma_latency: this build's sleepacc.measure has no dma_latency option")
        self._env = _env_config(self.env)   # checked by the core before anything runs
        # auto's turns: the thread's settings, held by the core around each
        self._thread_env = _ThreadEnv({k: v for k, v in self.env.items()
                                       if k in ("slack", "policy", "priority", "cpu")})
        self.methods, self.durations_ns = list(methods), [int(d) for d in durations_ns]
        self.mode, self.cpu_budget = mode, float(cpu_budget)
        self.doctor_every = doctor_every or None
        self.turn_ns = int(turn_s * 1e9)
        self.series = [_Series(m, d) for m in self.methods for d in self.durations_ns]
        self.host = dict(sleepacc.system_info())
        self.host.setdefault("hostname", socket.gethostname())
        self.started = sleepacc._api._now_iso()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._sleepers: Dict[int, Any] = {}
        self._cpu0 = self._wall0 = self._clock = None
        self._finding: Optional[dict] = None
        self._doctor_time: Optional[float] = None
        self.log = log
        self.doctor_cpu_ns = 0            # the children's CPU, charged to the budget
        self.doctor_failures = 0
        self.doctor_max_rss_kb = 0        # the largest doctor child's resident size
        self._doctor_proc = None          # the running child, killed by stop()
        self._slack_label = self._slack_ns()
        self.failure: Optional[BaseException] = None
        self.snapshot = self._publish(0.0, 0.0)

    # -- the environment --------------------------------------------------
    def _slack_ns(self):
        if self._env["priority"] > 0:   # the core's rule: a priority only under fifo or rr
            return 0     # real-time threads get no timer slack
        if self._env["slack_ns"] >= 0:
            return self._env["slack_ns"]
        return self.host.get("timer_slack_ns")

    def check(self) -> None:
        """One tiny turn of every series in the calling thread, so a bad
        environment (PermissionError, ValueError) fails before serving."""
        for s in self.series:
            self._turn(s, n=1)
        fresh = []                # the check's samples are not part of the metrics
        for s in self.series:
            f = _Series(s.method, s.duration_ns)
            f.cpu_per_sample_ns, f.env = s.cpu_per_sample_ns, s.env
            fresh.append(f)
        self.series = fresh

    # -- one turn -----------------------------------------------------------
    def _plan_n(self, s: _Series) -> int:
        by_wall = self.turn_ns // (s.duration_ns + PLAN_LATE_NS) + 1
        # at most 10 s worth of budget in one turn (0.1 s of CPU at 1%)
        by_cpu = int(self.cpu_budget * 10e9 / max(1.0, s.cpu_per_sample_ns))
        return int(max(1, min(by_wall, by_cpu, RESERVOIR)))

    def _turn(self, s: _Series, n: Optional[int] = None) -> None:
        n = self._plan_n(s) if n is None else n
        t_cpu, t_wall = time.thread_time_ns(), time.monotonic_ns()
        missed, ctx = 0, None
        if s.method == "auto":
            raw = self._auto_turn(s.duration_ns, n)
            late = raw
        else:
            kw = {k: v for k, v in self.env.items()}
            m = sleepacc.measure(s.method, s.duration_ns / 1e9, n=n, budget=self.turn_ns / 1e9,
                                 mode=self.mode, warmup=_warmup(s.duration_ns),
                                 keep_samples=True, **kw)
            raw = np.asarray(m.samples, dtype=np.int64)
            late = np.asarray(m.errors_ns, dtype=np.int64)
            missed, ctx = m.missed, m.ctx_switches
            s.env = m.env
        cpu = time.thread_time_ns() - t_cpu
        s.add(late, raw)
        s.missed += int(missed)
        if ctx:
            s.ctx = {k: s.ctx[k] + int(ctx[k]) for k in s.ctx}
        s.turns += 1
        s.cpu_ns += cpu
        s.wall_ns += time.monotonic_ns() - t_wall
        s.cpu_per_sample_ns = max(1.0, cpu / max(1, len(raw) + 1))

    def _auto_turn(self, d_ns: int, n: int) -> np.ndarray:
        sleeper = self._sleepers.get(d_ns)
        if sleeper is None:
            # one Sleeper per duration for the exporter's life, so auto's
            # learned margins carry over from turn to turn (as in a program);
            # with dma_latency the core holds it while the Sleeper is open
            kw = {}
            if "dma_latency" in self.env:
                if not _sleeper_accepts("dma_latency"):
                    raise ValueError("dma_latency: this build's sleepacc.Sleeper has no "
                                     "dma_latency option")
                kw["dma_latency"] = self.env["dma_latency"]
            sleeper = self._sleepers[d_ns] = sleepacc.Sleeper("auto", **kw)
        out = np.empty(n, dtype=np.int64)
        now = time.monotonic_ns
        with self._thread_env:
            end = now() + self.turn_ns
            if _warmup(d_ns):                      # one warm-up sleep, as for measure()
                sleeper.sleep_until(now() + d_ns)
            k = 0
            while k < n:
                deadline = now() + d_ns
                sleeper.sleep_until(deadline)
                out[k] = now() - deadline
                k += 1
                if deadline >= end:
                    break
        return out[:k]

    # -- the doctor ---------------------------------------------------------
    def _run_doctor(self) -> None:
        """One doctor run on the measured points, in a child process
        (:mod:`sleepacc._doctor_child`, bounded by its TIMEOUT_S); its CPU is
        added to doctor_cpu_ns, which the budget counts.  A failure is one
        line in the log and a doctor_failed finding: the doctor never stops
        the measuring."""
        pts = [m.to_dict() for m in (self._measurement(s) for s in self.series)
               if m is not None and m.method != "auto"]

        def started(proc):
            self._doctor_proc = proc
            if self._stop.is_set():       # stop() came between the check and the start
                proc.kill()
        try:
            run = _doctor_child.run(pts, self.host, budget=DOCTOR_BUDGET_S, started=started)
        finally:
            self._doctor_proc = None
        self.doctor_cpu_ns += run.cpu_ns
        self.doctor_max_rss_kb = max(self.doctor_max_rss_kb, run.max_rss_kb)
        if run.error is not None:
            if self._stop.is_set():
                return                    # killed by stop(): not a failure
            self.doctor_failures += 1
            top = {"id": "doctor_failed", "status": "unknown", "title": run.error,
                   "gain_us": None}
            if self.log is not None:
                self.log(f"the doctor failed: {run.error}")
        else:
            top = run.finding
        self._finding = top
        self._doctor_time = time.time()

    # -- snapshots ----------------------------------------------------------
    def _measurement(self, s: _Series) -> Optional[sleepacc.Measurement]:
        """The series as a sleepacc/1 point: statistics of the last RESERVOIR
        samples (the core's statistics), counters since the start."""
        raw = s.recent()
        if raw.size == 0:
            return None
        # auto's samples are lateness itself (like periodic mode's)
        mode = "periodic" if s.method == "auto" else self.mode
        st = _core.stats(memoryview(raw), records.origin_ns(mode, s.duration_ns))
        n = int(raw.size)
        total = int(s.counts.sum())
        cpu_pc = 100.0 * s.cpu_ns / s.wall_ns if s.wall_ns else -1.0
        env = dict(s.env) if s.env else {   # auto: the record's env fields
            "slack_ns": self.env.get("slack"), "policy": self.env.get("policy"),
            "priority": self.env.get("priority"), "cpu": self.env.get("cpu"),
            "lock_memory": False, "dma_latency_us": self.env.get("dma_latency")}
        return sleepacc.Measurement(
            method=s.method, mode=mode,
            requested_ns=s.duration_ns, n=n, stats=st, missed=s.missed,
            cpu_ns_per_call=s.cpu_ns / max(1, total), cpu_percent=cpu_pc,
            ctx_switches=s.ctx, wall_ns=s.wall_ns, env=env)

    def _publish(self, cpu_s: float, wall_s: float) -> Snapshot:
        points = []
        for s in self.series:
            cached = getattr(s, "point", None)
            if cached is None or cached[0] != s.turns:    # only a series that had a turn
                m = self._measurement(s)
                d = None
                if m is not None:
                    d = m.to_dict()
                    d["exporter"] = {"samples_total": int(s.counts.sum()), "turns": s.turns,
                                     "undersleeps_total": s.undersleeps}
                s.point = cached = (s.turns, d)
            if cached[1] is not None:
                points.append(cached[1])
        host = dict(self.host)
        snap = Snapshot([s.frozen() for s in self.series], cpu_s, wall_s, host, self._finding,
                        self._doctor_time, self.cpu_budget, self.mode, self.started, points,
                        self.doctor_cpu_ns / 1e9, self.doctor_failures)
        self.snapshot = snap          # one reference assignment: readers see old or new
        return snap

    def host_labels(self) -> dict:
        h = self.host
        virt = h.get("virtualization")
        virt = (h.get("hypervisor_type") or "hypervisor") if virt == "hypervisor" else "none"
        return {"clocksource": str(h.get("clocksource") or "unknown"),
                "hz": str(h.get("hz") if h.get("hz") is not None else "unknown"),
                "kernel": str(h.get("kernel_release") or "unknown"),
                "virt": str(virt),
                "slack_ns": str(self._slack_label if self._slack_label is not None else "unknown")}

    # -- the thread ---------------------------------------------------------
    def start(self) -> None:
        """Start the measuring thread; RuntimeError if it is running already
        (a second loop would share the series with the first, and stop()
        would join only one of them)."""
        if self.running:
            raise RuntimeError("the exporter's measuring thread is already running")
        self._thread = threading.Thread(target=self._loop, name="sleepacc-exporter", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> bool:
        """Ask the loop to stop after its current turn (a doctor run under
        way is killed); True when it ended."""
        self._stop.set()
        proc = self._doctor_proc
        if proc is not None:
            try:
                proc.kill()
            except OSError:               # it has just ended
                pass
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _loop(self) -> None:
        cpu0, wall0 = time.thread_time_ns(), time.monotonic_ns()
        try:   # the thread's CPU clock, so a scrape can read it live
            self._clock = time.pthread_getcpuclockid(threading.get_ident())
        except (AttributeError, OSError):
            self._clock = None
        self._cpu0, self._wall0 = cpu0, wall0
        next_doctor = None
        try:
            while not self._stop.is_set():
                for s in self.series:
                    if self._stop.is_set():
                        break
                    try:
                        self._turn(s)
                    except Exception as exc:   # counted and shown; the loop goes on
                        s.errors += 1
                        s.last_error = f"{type(exc).__name__}: {exc}"
                    self._publish(self._spent_ns(cpu0) / 1e9,
                                  (time.monotonic_ns() - wall0) / 1e9)
                    self._rest(cpu0, wall0)
                if self.doctor_every and not self._stop.is_set() and (
                        next_doctor is None or time.monotonic() >= next_doctor):
                    self._run_doctor()
                    next_doctor = time.monotonic() + self.doctor_every
                    self._publish(self._spent_ns(cpu0) / 1e9,
                                  (time.monotonic_ns() - wall0) / 1e9)
                    self._rest(cpu0, wall0)
        except BaseException as exc:  # pragma: no cover - reported by the caller
            self.failure = exc
        finally:
            for sl in self._sleepers.values():
                try:
                    sl.close()
                except Exception:
                    pass
            self._publish(self._spent_ns(cpu0) / 1e9, (time.monotonic_ns() - wall0) / 1e9)

    def _spent_ns(self, cpu0: int) -> int:
        """What the budget counts: the thread's CPU since cpu0 and the
        doctor's children's."""
        return time.thread_time_ns() - cpu0 + self.doctor_cpu_ns

    def cpu_wall(self) -> Tuple[float, float]:
        """(CPU s, wall s) of the measuring thread (and the doctor's runs)
        so far, read now (the snapshot's figures are from the end of the
        last turn)."""
        snap = self.snapshot
        if self.running and self._clock is not None and self._cpu0 is not None:
            try:
                cpu = time.clock_gettime_ns(self._clock) - self._cpu0 + self.doctor_cpu_ns
                return cpu / 1e9, (time.monotonic_ns() - self._wall0) / 1e9
            except OSError:       # the thread has just ended
                pass
        return snap.cpu_s, snap.wall_s

    def _rest(self, cpu0: int, wall0: int) -> None:
        """Wait until the thread's CPU time (with the doctor's) is within
        the budget's share of the wall time since it started (a stop
        request ends the wait).  The end of the wait is checked on the
        monotonic clock, not assumed: a timed wait that returns before its
        timeout waits again for what is left, so the next turn never starts
        over the budget.  The turn that
        follows may overspend by its own CPU; the next rest repays it (the
        budget counts all the CPU since the start)."""
        due = wall0 + self._spent_ns(cpu0) / self.cpu_budget
        while not self._stop.is_set():
            left = (due - time.monotonic_ns()) / 1e9
            if left <= 0:
                break
            self._stop.wait(left)

    # -- output ---------------------------------------------------------------
    def snapshot_jsonl(self) -> str:
        """The latest snapshot as a sleepacc/1 JSON Lines result file."""
        snap = self.snapshot
        settings = {"source": "exporter", "methods": self.methods,
                    "durations_ns": self.durations_ns, "mode": self.mode,
                    "cpu_budget": self.cpu_budget, "env": self.env,
                    "version": sleepacc.__version__,
                    "measuring_cpu_s": snap.cpu_s, "measuring_wall_s": snap.wall_s,
                    "doctor_top_finding": snap.finding, "doctor_last_run": snap.doctor_time}
        lines = [records.jsonl_header(snap.host, settings, snap.started)]
        for p in snap.points:
            lines.append(json.dumps({"type": "point", **p}, allow_nan=False))
        lines.append(records.jsonl_footer(sleepacc._api._now_iso()))
        return "\n".join(lines) + "\n"
