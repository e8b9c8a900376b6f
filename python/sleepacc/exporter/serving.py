"""The exporter's serving side: the snapshot rendered as Prometheus metrics
(prometheus_client, never raising into a scrape), the node_exporter
textfile written atomically, and the long-running command's HTTP server
with its guards (a descriptor shortage backs off, a thread that cannot
start is one log line)."""
from __future__ import annotations

import errno
import os
import threading
import time
from typing import List, Optional, Tuple

import sleepacc

from .measuring import DOCTOR_IDS, DOCTOR_STATUSES, Exporter, Snapshot, _LE

# ---------------------------------------------------------------------------
# prometheus_client glue
# ---------------------------------------------------------------------------

class _Collector:
    """Renders the exporter's latest snapshot; never raises into a scrape."""

    def __init__(self, exporter: Exporter):
        self.exporter = exporter
        self.failures = 0

    def describe(self):
        return []

    def collect(self):
        from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                            HistogramMetricFamily, InfoMetricFamily)
        try:
            out = list(self._families(self.exporter.snapshot, CounterMetricFamily,
                                      GaugeMetricFamily, HistogramMetricFamily,
                                      InfoMetricFamily))
        except Exception:    # a bug here must not fail the scrape: report it instead
            self.failures += 1
            out = []
        c = CounterMetricFamily("sleepacc_exporter_render_failures",
                                "Scrapes whose sleepacc metrics could not be rendered")
        c.add_metric([], self.failures)
        out.append(c)
        return out

    def _families(self, snap: Snapshot, Counter, Gauge, Histogram, Info):
        labels = ["method", "duration"]
        h = Histogram("sleepacc_lateness_seconds",
                      "Lateness of each measured sleep (actual - requested, or wake - "
                      "deadline in periodic mode), in seconds", labels=labels)
        under = Counter("sleepacc_undersleeps", "Sleeps that ended before the requested time",
                        labels=labels)
        missed = Counter("sleepacc_missed_deadlines",
                         "Periodic mode: wake-ups after the next deadline", labels=labels)
        errs = Counter("sleepacc_measure_errors", "Measuring turns that failed", labels=labels)
        for s in snap.series:
            lv = [s["method"], s["duration"]]
            h.add_metric(lv, buckets=list(zip(_LE, s["buckets"])) + [("+Inf", s["count"])],
                         sum_value=s["sum_s"])
            under.add_metric(lv, s["undersleeps"])
            missed.add_metric(lv, s["missed"])
            errs.add_metric(lv, s["errors"])
        yield from (h, under, missed, errs)
        c = Counter("sleepacc_measuring_cpu_seconds",
                    "CPU time used by the measuring thread (thread CPU clock) and the doctor's "
                    "runs (child processes): what the CPU budget counts")
        cpu_s, wall_s = self.exporter.cpu_wall()
        c.add_metric([], cpu_s)
        yield c
        c = Counter("sleepacc_measuring_seconds", "Wall time since the measuring thread started")
        c.add_metric([], wall_s)
        yield c
        yield Gauge("sleepacc_cpu_budget_ratio",
                    "Configured CPU budget of the measuring thread (share of one CPU)",
                    value=snap.budget)
        yield Info("sleepacc_host", "Host facts that shape sleep lateness",
                   value=self.exporter.host_labels())
        f = snap.finding
        g = Gauge("sleepacc_doctor_top_finding",
                  "The doctor's top finding; the value is its expected gain in seconds (0 when "
                  "unknown).  id: " + ", ".join(DOCTOR_IDS) + "; status: "
                  + ", ".join(DOCTOR_STATUSES) + ".  The title and the fix: `sleepacc doctor` "
                  "on the host, or the snapshot file", labels=["id", "status"])
        if f is not None:
            gain = f.get("gain_us")
            g.add_metric([_bounded(f.get("id"), DOCTOR_IDS, "other"),
                          _bounded(f.get("status"), DOCTOR_STATUSES, "unknown")],
                         0.0 if gain is None else gain / 1e6)
        yield g
        if snap.doctor_time is not None:
            yield Gauge("sleepacc_doctor_last_run_timestamp_seconds",
                        "When the doctor last ran (Unix time)", value=snap.doctor_time)
        c = Counter("sleepacc_doctor_cpu_seconds",
                    "CPU time of the doctor's runs (child processes; part of "
                    "sleepacc_measuring_cpu_seconds_total)")
        c.add_metric([], snap.doctor_cpu_s)
        yield c
        c = Counter("sleepacc_doctor_failures", "Doctor runs that failed (a timeout, a crash)")
        c.add_metric([], snap.doctor_failures)
        yield c


def _bounded(value, vocabulary, other: str) -> str:
    """A label value from a fixed vocabulary: value when it is one, else other."""
    return value if value in vocabulary else other


def registry_for(exporter: Exporter, process: bool = True):
    """A prometheus_client registry with the exporter's metrics (and, for
    the HTTP route, the process collector; node_exporter has its own)."""
    from prometheus_client import CollectorRegistry, ProcessCollector
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Collector(exporter))
    if process:
        ProcessCollector(registry=reg)
    return reg


def render(registry) -> str:
    from prometheus_client import generate_latest
    return generate_latest(registry).decode("utf-8")


def atomic_write(path: str, text: str) -> None:
    """Write text to path atomically: a temporary file in the same directory,
    flushed to the disk, then renamed over path (readers see old or new)."""
    from .. import records
    records.write_atomic(path, lambda f: f.write(text), fsync=True)


# ---------------------------------------------------------------------------
# The long-running command (sleepacc exporter)
# ---------------------------------------------------------------------------

def parse_listen(text: str) -> Tuple[str, int]:
    """"HOST:PORT" (or "[v6]:PORT", or ":PORT" for every address) -> (host, port)."""
    t = text.strip()
    host, sep, port = t.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"expected HOST:PORT like 127.0.0.1:9851, got {text!r}")
    p = int(port)
    if not 0 <= p <= 65535:
        raise ValueError(f"port must be 0..65535, got {p}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host and any(c.isspace() or c in "/[]" for c in host):
        raise ValueError(f"bad host in {text!r}")
    return host or "0.0.0.0", p


# accept() short of a resource (descriptors, memory): the socket stays readable,
# so the serving loop would call it again at once, a CPU spun at 100 %
_ACCEPT_SHORT = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)
_ACCEPT_PAUSE = (0.05, 1.0)      # the pause after such a failure: first, most (doubling)
_THREAD_LOG_EVERY = 10.0         # thread-creation failures: one line per this many seconds


def _thread_failure(exc: BaseException) -> bool:
    """Is exc the failure to start a thread (RuntimeError "can't start new
    thread": a pids cgroup, RLIMIT_NPROC)?"""
    return isinstance(exc, RuntimeError) and "start new thread" in str(exc)


def _guard_server(server, log) -> None:
    """Make the HTTP server (a socketserver with a thread per request) calm
    under exhaustion: at EMFILE (and the like) in accept() it stops
    accepting for a pause that doubles up to a second, logging once per
    episode; a request whose thread cannot start is dropped with one log
    line, at most one per _THREAD_LOG_EVERY seconds (with a count of the
    ones not logged), not a traceback."""
    get_request, handle_error = server.get_request, server.handle_error
    state = {"pause": 0.0, "logged_at": None, "unlogged": 0}
    wait = threading.Event()          # never set: an interruptible sleep

    def guarded_get_request():
        try:
            got = get_request()
        except OSError as exc:
            if exc.errno not in _ACCEPT_SHORT:
                raise
            first = state["pause"] == 0.0
            state["pause"] = min(max(2 * state["pause"], _ACCEPT_PAUSE[0]), _ACCEPT_PAUSE[1])
            if first:
                log(f"cannot accept a connection: {exc.strerror or exc}; not accepting for a "
                    f"while (up to {_ACCEPT_PAUSE[1]:g} s at a time) until it can")
            wait.wait(state["pause"])
            raise
        if state["pause"]:
            state["pause"] = 0.0
            log("accepting connections again")
        return got

    def guarded_handle_error(request, client_address):
        import sys
        exc = sys.exc_info()[1]
        if exc is None or not _thread_failure(exc):
            return handle_error(request, client_address)
        now = time.monotonic()
        if state["logged_at"] is not None and now - state["logged_at"] < _THREAD_LOG_EVERY:
            state["unlogged"] += 1
            return None
        more = f" ({state['unlogged']} more since the last line)" if state["unlogged"] else ""
        log(f"a scrape was dropped: cannot start its thread ({exc}){more}")
        state["logged_at"], state["unlogged"] = now, 0
        return None

    server.get_request, server.handle_error = guarded_get_request, guarded_handle_error


class Service:
    """The exporter's outputs around one :class:`Exporter`: the HTTP server,
    the node_exporter text file, the sleepacc/1 snapshot file."""

    def __init__(self, exporter: Exporter, *, listen: Optional[Tuple[str, int]] = None,
                 textfile: Optional[str] = None, every: float = 60.0,
                 snapshot: Optional[str] = None, log=None):
        self.exporter, self.listen, self.textfile = exporter, listen, textfile
        self.every, self.snapshot_path = every, snapshot
        self.log = log or (lambda msg: None)
        if log is not None and exporter.log is None:    # the doctor's failures, one line
            exporter.log = log
        self.server = None
        self.server_thread = None
        self.address: Optional[Tuple[str, int]] = None
        self._stop = threading.Event()
        self._measuring = False
        self.failed_writes: List[str] = []

    def open(self) -> None:
        """Check that the directories of the text file and the snapshot exist
        and are writable (OSError, its filename the file, when not), then bind
        the port (OSError when it cannot), before anything runs."""
        for path in (self.textfile, self.snapshot_path):   # files written later: their
            if path is None:                                  # directories checked now
                continue
            d = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(d):
                raise FileNotFoundError(2, f"directory {d} does not exist", path)
            if not os.access(d, os.W_OK):
                raise PermissionError(13, f"directory {d} is not writable", path)
        if self.listen is not None:
            from prometheus_client import start_http_server
            reg = registry_for(self.exporter, process=True)
            host, port = self.listen
            # the measuring thread first: the server accepts as soon as it
            # listens, and a scrape's thread must not take the last thread a
            # limit (pids.max) leaves for it
            self._start_measuring()
            try:
                started = start_http_server(port, addr=host, registry=reg)
            except BaseException as exc:
                self.exporter.stop()
                if not isinstance(exc, RuntimeError) or not _thread_failure(exc):
                    raise
                raise OSError(errno.EAGAIN, f"cannot start the server's thread ({exc}: a "
                                            "thread limit, pids.max or RLIMIT_NPROC)") from None
            if isinstance(started, tuple):        # prometheus_client >= 0.17
                self.server, self.server_thread = started
                self.address = self.server.server_address[:2]
                _guard_server(self.server, self.log)
            else:                                  # older: no handle to the server
                self.address = (host, port)

    def write_outputs(self) -> List[str]:
        """Write the text file and the snapshot; a failure (a full disk) is
        logged and returned, and the next write tries again."""
        failed = []
        for path, make in ((self.textfile, lambda: render(registry_for(self.exporter,
                                                                        process=False))),
                           (self.snapshot_path, self.exporter.snapshot_jsonl)):
            if path is None:
                continue
            try:
                atomic_write(path, make())
            except OSError as exc:
                failed.append(path)
                self.log(f"cannot write {path}: {exc.strerror or exc}")
        return failed

    def request_stop(self, *_args) -> None:
        self._stop.set()

    def run(self, duration: Optional[float] = None) -> None:
        """Measure and publish until request_stop() (a signal handler) or
        `duration` seconds; then stop the thread, write the files a last
        time and close the server."""
        if not self._measuring:
            try:
                self._start_measuring()
            except RuntimeError:
                self.close()
                raise
        end = None if duration is None else time.monotonic() + duration
        every = self.every if (self.textfile or self.snapshot_path) else None
        next_write = time.monotonic() + (every or 0)
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if end is not None and now >= end:
                    break
                if not self.exporter.running:
                    raise RuntimeError(f"the measuring thread ended: {self.exporter.failure!r}")
                if every is not None and now >= next_write:
                    self.write_outputs()
                    next_write = now + every
                waits = [0.5]
                if end is not None:
                    waits.append(end - now)
                if every is not None:
                    waits.append(next_write - now)
                self._stop.wait(max(0.0, min(waits)))
        finally:
            self.exporter.stop()
            try:
                self.failed_writes = self.write_outputs()
            finally:
                self.close()

    def _start_measuring(self) -> None:
        """Start the exporter's thread; a thread limit is a RuntimeError that
        says so."""
        try:
            self.exporter.start()
        except RuntimeError as exc:
            if not _thread_failure(exc):
                raise
            raise RuntimeError(f"cannot start the measuring thread ({exc}: a thread limit, "
                               "pids.max or RLIMIT_NPROC)") from None
        self._measuring = True

    def close(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None
