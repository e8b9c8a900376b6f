"""The doctor run in a child process, for a caller that lives for weeks (the
exporter): the measured points go in, the top finding comes back.

Run in the caller's own process, the doctor would leave its cost there for
good: its imports (the model, more of numpy), and above all its
cyclictest-like row that locks all memory (``mlockall``, as ``cyclictest
-m``), which makes every page the process has mapped resident -- shared
libraries, thread stacks -- and they stay resident after the unlock.  A
child takes all of that with it when it exits.

This module owns both ends of that exchange:

* :func:`run` (the caller): starts ``python -m sleepacc._doctor_child``
  (the same interpreter, environment and working directory, so the child
  imports the same sleepacc), writes ``{"points": [...], "host": {...},
  "budget": s}`` (sleepacc/1 point records) to its stdin, and reads one
  JSON line ``{"finding": {...}|null}`` from its stdout, within a time
  limit (then the child is killed).  It
  returns the finding, the child's CPU time (user + system, from the
  rusage of the children reaped meanwhile, so a caller can charge it to
  its own CPU budget) and, when the run failed, one line saying why.
* :func:`main` (the child): rebuilds the points, runs
  :func:`sleepacc.doctor.diagnose` on them and prints the top finding.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any, NamedTuple, Optional, Sequence

#: The most wall time one run may take before the child is killed (the
#: doctor's checks take about a second; a loaded host may take several).
TIMEOUT_S = 60.0


class Run(NamedTuple):
    """The outcome of one child run."""
    finding: Optional[dict]      # the top finding (None: the doctor found none)
    cpu_ns: int                  # the child's CPU time, user + system
    max_rss_kb: int              # the largest resident size of a child so far (ru_maxrss)
    error: Optional[str]         # one line when the run failed, else None


def _children_cpu_ns() -> int:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return int(round((ru.ru_utime + ru.ru_stime) * 1e9))


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def run(points: Sequence[dict], host: dict, *, budget: float = 0.02,
        timeout: Optional[float] = None, started=None) -> Run:
    """Run the doctor on `points` in a child process (see the module doc).
    Never raises for the child's failures: a failed start, a non-zero exit,
    a timeout or an answer that is not the expected JSON line is ``error``.
    started(proc) is called with the child's Popen once it runs (so a caller
    can kill it to stop early).  timeout: seconds (default TIMEOUT_S)."""
    timeout = TIMEOUT_S if timeout is None else timeout
    request = json.dumps({"points": list(points), "host": host, "budget": budget})
    cpu0 = _children_cpu_ns()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "sleepacc._doctor_child"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, close_fds=True)
    except OSError as exc:
        return Run(None, 0, 0, f"cannot start the doctor: {exc.strerror or exc}")
    if started is not None:
        started(proc)
    error = None
    try:
        out, err = proc.communicate(request, timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        error = f"the doctor took more than {timeout:g} s and was stopped"
    except OSError as exc:     # the child closed its stdin early (it died)
        proc.kill()
        out, err = proc.communicate()
        error = f"the doctor ended early: {exc.strerror or exc}"
    cpu = max(0, _children_cpu_ns() - cpu0)
    rss = int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    finding = None
    if error is None and proc.returncode != 0:
        why = _last_line(err)[:300] or (f"killed by signal {-proc.returncode}"
                                        if proc.returncode < 0 else "no message")
        error = f"the doctor exited with status {proc.returncode}: {why}"
    if error is None:
        try:
            answer = json.loads(_last_line(out))
            finding = answer["finding"]
            if finding is not None and not isinstance(finding, dict):
                raise TypeError("the finding is not an object")
        except (ValueError, KeyError, TypeError) as exc:
            error = f"the doctor's answer is not its JSON line ({exc})"
    return Run(finding if error is None else None, cpu, rss, error)


def main(stdin=None, stdout=None) -> int:
    """The child: one request on stdin, one JSON line on stdout; a failure is
    one line on stderr and exit status 1."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    try:
        import sleepacc
        from sleepacc import doctor
        req: Any = json.load(stdin)
        pts = [sleepacc.Measurement.from_dict(d, f"point {i + 1}")
               for i, d in enumerate(req["points"])]
        sweep = sleepacc.Sweep(pts, host=req.get("host") or {}) if pts else None
        # no trace here: the exporter's doctor keeps to its CPU budget
        result = doctor.diagnose(sweep, budget=float(req["budget"]), trace=False)
        top = result["findings"][0] if result["findings"] else None
        line = json.dumps({"finding": top})
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    stdout.write(line + "\n")
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
