"""The ``sleepacc`` command: sweep, measure, doctor, model, info, compare, plot,
monitor, report, exporter.

This module parses arguments, plans time, writes result files and prints.
Nothing here measures or summarises by itself: every point is one
``sleepacc.measure`` call (the C core sleeps, times and computes the
statistics), tables come from ``sleepacc.report`` (its irtt and wide styles
are the core's renderer), explanations from ``sleepacc.model``, figures from
``sleepacc.plot`` and result files are read back by ``sleepacc.load``.

Exit codes (every subcommand):
    0    success
    1    a failure, with one line on stderr ("sleepacc: error: ...")
    2    a usage error, one line naming the bad argument
    130  Ctrl-C; whatever was written so far stays intact and parseable

The JSON and JSON Lines schema ("sleepacc/1") is described in docs/schema.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import errno
import json
import math
import os
import re
import shutil
import signal
import socket
import sys
import time

import sleepacc
from sleepacc import _core, records
from sleepacc._api import _now_iso
from sleepacc._units import (UNITS_TEXT, format_go, format_ns, parse_duration_ns,
                             parse_durations_ns, parse_slack_ns)
from sleepacc.report import text_table as _table

__all__ = ["main"]

SCHEMA = records.SCHEMA
FORMATS = ("irtt", "midas", "xmame", "testsleep", "wide", "markdown", "csv", "json")
# The core's names (sleepacc_policy_name, sleepacc_mode_name), shown in the
# help; a name is checked by the core's rule of the option (_core_rules).
POLICIES = "{" + ",".join(_core.policy_names) + "}"
MODES = "{" + ",".join(_core.mode_names) + "}"
_DEFAULTS = _core.config_default()   # the core's defaults of a run (budget, warmup, margin)

# Default sweep plan (see plan_budget): the whole default sweep aims at
# DEFAULT_TOTAL_S of measuring, so with start-up it ends well inside 60 s.
DEFAULT_TOTAL_S = 42.0
MIN_POINT_BUDGET_S = 0.01   # a point never gets less than this ...
MAX_POINT_BUDGET_S = 0.5    # ... nor more, whatever time is left
PLAN_LATE_NS = 60_000       # a typical oversleep, for planning only
PLAN_OVERHEAD_S = 0.004     # per point: opening the method, writing the line
DEFAULT_MAX_SAMPLES = 100_000
# The help of every duration option ends with this (a typo of 5ms as 5m is
# five minutes: say so where the option is described).
UNITS_HELP = f"units: {UNITS_TEXT}; m is minutes, not ms; a bare number is seconds"


# --------------------------------------------------------------------------
# Errors and the argument parser
# --------------------------------------------------------------------------

class CliError(Exception):
    """A failure: one line on stderr, exit 1."""
    code = 1


class UsageError(CliError):
    """A bad argument: one line on stderr naming it, exit 2."""
    code = 2


class Interrupted(Exception):
    """Ctrl-C, with what was kept: one line on stderr, exit 130."""


class _Parser(argparse.ArgumentParser):
    """argparse, but every error is one line and exit 2 (via UsageError),
    and a negative duration ("-1ms") is read as a value, so its own message
    ("negative") is what the user sees, not "DURATION required"."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        # argparse treats "-1ms" as an unknown option (its matcher knows only
        # plain numbers); no sleepacc option starts with a digit or a dot.
        self._negative_number_matcher = re.compile(r"^-\.?[0-9]")

    def error(self, message):
        raise UsageError(" ".join(str(message).split()))


def _arg_error(name, message):
    return UsageError(f"argument {name}: {message}")


def _duration_ns(text):
    """argparse type: one duration ("10us", "1.5ms", "0"; a bare number is
    seconds) -> int ns; its range is the core's rule where it is used."""
    try:
        return parse_duration_ns(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _requested_ns(text):
    """argparse type: a requested duration that selects points (compare
    --duration, plot --requested), in the core's seconds range (its rule and
    words: no point is ever outside it)."""
    ns = _duration_ns(text)
    try:
        _core.seconds_ns(ns / 1e9)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).partition(": ")[2]) from None
    return ns


def _durations_ns(text):
    """argparse type: comma-separated durations -> list of int ns, in
    order, duplicates dropped; "1ms,10" is refused naming the bare item."""
    try:
        return parse_durations_ns(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _time_s(text):
    """argparse type: a time ("0.5" is seconds, "500ms") -> s.  Its range
    is the rule of the option it feeds (the core's, by _core_rules)."""
    try:
        return parse_duration_ns(text) / 1e9
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of seconds (or a duration like 500ms), got {text!r}"
        ) from None


def _seconds(text):
    """argparse type: a positive time, for the CLI's own times (--total,
    monitor's --duration, the exporter's --every, --turn, --stop-after: no
    core rule has them)."""
    s = _time_s(text)
    if s < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    if s <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return s


def _margin_s(text):
    """argparse type: a time ("0", "50us"; a bare number is seconds); its
    range is the core's rule of --margin (_core_rules)."""
    return _duration_ns(text) / 1e9


def _slack_ns(text):
    """argparse type: timer slack; a bare number is an integer of ns (the
    kernel's unit), suffixes allowed ("50us"); "1.0" is refused."""
    try:
        return parse_slack_ns(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _int_range(lo, hi):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo} and {hi}, got {v}")
        return v
    return conv


_integer = _int_range(-math.inf, math.inf)   # argparse type: any integer


def _positive_int(text):
    """argparse type: a count of the CLI's own (doctor's --top)."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _methods_list(text):
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty item in {text!r}")
    return list(dict.fromkeys(names))


def _method_name(text):
    """A method name as a file holds it (any text; `sleepacc info`'s names
    or another tool's): an empty one names nothing."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be a method name, got {text!r}")
    return text


# --------------------------------------------------------------------------
# Small shared helpers
# --------------------------------------------------------------------------

def _method_table():
    """{name: Method} for every method the core registers."""
    return {m.name: m for m in sleepacc.methods()}


def _env_kwargs(args):
    """The environment options a subcommand was given, as sleepacc.measure
    keywords (their rules are the core's: _core_rules)."""
    kw = {}
    for option in ("slack", "policy", "priority", "cpu", "dma_latency"):
        if getattr(args, option, None) is not None:
            kw[option] = getattr(args, option)
    if getattr(args, "lock_memory", False):
        kw["lock_memory"] = True
    if getattr(args, "margin", None) is not None:
        kw["margin"] = args.margin
    return kw


def _core_rules(args, flags=None, *, method="clock", duration=0.0, point=False, **run):
    """Check a run of a subcommand by the core's rules before anything runs
    (_core.plan: each option by its kind's rule, then sleepacc_config_check),
    with `run`'s measure() options and args' environment; a floor method
    stands in when only those are checked.  A broken rule is a usage error
    naming the flag (_core_error).  point: a sweep's point (its sweep's
    rules were checked by the plan).  Returns the environment keywords."""
    env = _env_kwargs(args)
    try:
        _core.plan({"method": method, "duration": duration, **run, **env}, point)
    except ValueError as exc:
        raise _core_error(exc, flags) from None
    return env


def _core_error(exc, flags=None):
    """The core's "<option>: <rule>, got <value>" as a usage error naming
    the option's flag (`flags`: option -> flag, else --option); words that
    name no option (the sweep's floor rule) go to --methods."""
    option, sep, why = str(exc).partition(": ")
    key = re.sub(r"\[[0-9]+\]$", "", option)     # "durations[2]": the list's item
    if not sep or not re.fullmatch(r"[a-z_]+", key):
        return _arg_error("--methods", str(exc))
    return _arg_error((flags or {}).get(key) or "--" + key.replace("_", "-"), why)


def _add_margin_option(p):
    p.add_argument("--margin", type=_margin_s, metavar="D",
                   help="the hybrid method's margin: it sleeps in the kernel until this long "
                        f"before the deadline, then spins (default "
                        f"{format_go(_DEFAULTS['margin_ns'])}; a bare number is seconds)")


def _add_env_options(p):
    g = p.add_argument_group("environment (applied to the measuring thread, restored after)")
    g.add_argument("--slack", type=_slack_ns, metavar="NS",
                   help="timer slack: a bare integer is ns, the kernel's unit (1 = none); "
                        "or with a unit: 50us")
    g.add_argument("--policy", metavar=POLICIES, help="scheduling policy")
    # --priority, --cpu, --dma-latency: any integer here; their ranges are the
    # core's rules, checked by _env_kwargs before anything runs
    g.add_argument("--priority", type=_integer, metavar="N",
                   help="real-time priority 1..99 (with --policy fifo/rr; default 1)")
    g.add_argument("--cpu", type=_integer, metavar="N", help="pin to this CPU")
    g.add_argument("--dma-latency", type=_integer, metavar="US",
                   help="hold /dev/cpu_dma_latency at US microseconds (0: no idle-exit "
                        "cost, as cyclictest does; needs root)")
    g.add_argument("--lock-memory", action="store_true",
                   help="mlockall for the run (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK)")


def _err_ns(point, value):
    """Error of an order statistic of a point dict (records.error_ns, the one rule)."""
    return records.error_ns(point.get("mode"), point["requested_ns"], value)


def _us(ns, digits=1):
    return "-" if ns is None else f"{ns / 1e3:.{digits}f}"


def _load(path, warn=True):
    """sleepacc.load with failures mapped to one line ("<file>:<line>: what"),
    and its warnings (duplicate points, a second header) one line each
    (none with `warn` False: said already, as sweep --resume does)."""
    import warnings
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sweep = sleepacc.load(path)
    except FileNotFoundError:
        raise CliError(f"cannot read {path}: no such file") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        raise CliError(msg if msg.startswith(os.fspath(path)) else
                       f"{path} is not a sleepacc result file: {msg}") from None
    for w in caught if warn else ():
        print(f"sleepacc: warning: {w.message}", file=sys.stderr)
    return sweep


def _need_points(data, path, what):
    """A file (a Sweep, or tidy records) without points is a data error,
    said the same way by every command that reads one: "<file> has no
    points to <what>" (a monitor -o file holds report lines, not points)."""
    if len(data) == 0:
        monitor = (getattr(data, "settings", None) or {}).get("command") == "monitor"
        hint = (": it is a monitor -o file (its lines are reports, not points; "
                "plot --flent draws them)" if monitor else "")
        raise CliError(f"{path} has no points to {what}{hint}")


def _points(sweep):
    """Point dicts (Measurement.to_dict()) of a Sweep."""
    return [m.to_dict() for m in sweep]


def _hostname(host):
    return str((host or {}).get("hostname") or "?")


# --------------------------------------------------------------------------
# The results file (-o FILE): sleepacc.records.ResultsFile, errors as one line
# --------------------------------------------------------------------------

def _open_results(path, resume):
    """records.ResultsFile opened for appending, its failures mapped to
    one line (a usage error for an existing file without --resume)."""
    import warnings
    results = records.ResultsFile(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.open(resume)
        for w in caught:   # duplicate points, a second header: one line each
            print(f"sleepacc: warning: {w.message}", file=sys.stderr)
    except FileExistsError:
        raise _arg_error("-o", f"{path} already exists "
                               "(use --resume to continue it, or another name)") from None
    except ValueError as exc:
        raise CliError(f"cannot resume {path}: {exc}") from None
    except OSError as exc:
        raise _write_error(path, exc) from None
    return results


def _check_writable_later(path):
    """A file written only when the command ends (monitor --irtt-json): its
    directory must exist and be writable, and the path not be a directory,
    now, before anything runs (as the exporter's --textfile and --snapshot)."""
    d = os.path.dirname(os.path.abspath(path))
    for bad, err in ((os.path.isdir(path), errno.EISDIR), (not os.path.isdir(d), errno.ENOENT),
                     (not os.access(d, os.W_OK), errno.EACCES)):
        if bad:
            raise _write_error(path, OSError(err, os.strerror(err), path))


def _write_error(path, exc):
    if exc.errno == errno.EPIPE:    # `sleepacc sweep -o - | head`: a quiet exit
        return BrokenPipeError(exc.errno, exc.strerror)
    name = errno.errorcode.get(exc.errno) if exc.errno else None
    return CliError(f"cannot write results to {path}: {exc.strerror or exc}"
                    + (f" ({name})" if name else ""))


# --------------------------------------------------------------------------
# Planning: per-point budgets that fit a total time
# --------------------------------------------------------------------------

def warmup_for(d_ns):
    """Warm-up sleeps for a duration: a warm-up costs its length, so two up
    to 1 ms, one up to 10 ms, none above."""
    return 2 if d_ns <= 1_000_000 else 1 if d_ns <= 10_000_000 else 0


def point_budget(d_ns, b):
    """The budget given to the core for one point: at least b, and enough
    to finish the warm-up and start one measured sleep.  (The core counts
    warm-up inside the budget and always completes a sleep it started.)"""
    step = (d_ns + PLAN_LATE_NS) / 1e9
    return max(b, (2 * warmup_for(d_ns) + 1) * step)


def point_cost(d_ns, b, max_samples=DEFAULT_MAX_SAMPLES):
    """Expected wall time of one point with per-point budget b (s)."""
    step = (d_ns + PLAN_LATE_NS) / 1e9
    budget = point_budget(d_ns, b)
    sleeps = max(1, math.ceil(budget / step))
    sleeps = min(sleeps, max_samples + warmup_for(d_ns))
    return sleeps * step + PLAN_OVERHEAD_S


def plan_budget(durations_ns, total_s, max_samples=DEFAULT_MAX_SAMPLES):
    """The largest per-point budget b (within MIN..MAX_POINT_BUDGET_S) whose
    expected total over the given points is at most total_s."""
    counts = {}
    for d in durations_ns:
        counts[d] = counts.get(d, 0) + 1

    def cost(b):
        return sum(k * point_cost(d, b, max_samples) for d, k in counts.items())
    lo, hi = MIN_POINT_BUDGET_S, MAX_POINT_BUDGET_S
    if cost(hi) <= total_s:
        return hi
    if cost(lo) >= total_s:
        return lo
    for _ in range(40):
        mid = (lo + hi) / 2
        if cost(mid) <= total_s:
            lo = mid
        else:
            hi = mid
    return lo


class Progress:
    """One self-rewriting status line on stderr: a bar, points done/total,
    the point being measured and an ETA.  Silent unless enabled."""

    def __init__(self, total, enabled, stream=None):
        self.total = total
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.shown = False

    def update(self, done, method, d_ns, eta_s):
        if not self.enabled:
            return
        cols = shutil.get_terminal_size((80, 24)).columns
        eta = "--:--" if eta_s is None else "%d:%02d" % divmod(int(max(0, eta_s) + 0.5), 60)
        tail = f" {done}/{self.total}  {method} {format_go(d_ns)}  ETA {eta}"
        width = max(10, min(40, cols - len(tail) - 3))
        filled = int(width * done / max(1, self.total))
        line = "[" + "#" * filled + "." * (width - filled) + "]" + tail
        self.stream.write("\r" + line[: cols - 1] + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False


# --------------------------------------------------------------------------
# sweep
# --------------------------------------------------------------------------

def _settings(args, methods, durations, env):
    return {
        "methods": methods,
        "durations_ns": durations,
        "mode": args.mode,
        "budget": args.budget,
        "total": None if args.budget else args.total,
        "max_samples": args.max_samples,
        "samples": bool(args.samples),
        "env": env,
        "version": sleepacc.__version__,
    }


def _check_resume_settings(results, mode, env):
    """A resumed file must have been written with the same mode and
    environment; otherwise its points would not be comparable."""
    old = results.existing.get("settings") or {}
    if old.get("mode", mode) != mode:
        raise _arg_error("--resume", f"{results.path} was written with --mode {old.get('mode')}")
    if (old.get("env") or {}) != env:
        raise _arg_error("--resume", f"{results.path} was written with environment "
                                     f"{old.get('env') or 'defaults'}, not {env or 'defaults'}")


def _emit_sweep(sweep, fmt):
    from sleepacc import report
    text = report.format(sweep, fmt)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


class _Planner:
    """Per-point budgets.  With --budget every point gets it.  Otherwise the
    plan for the whole sweep gives this session its share of --total (all of
    it unless resuming), and before each point the time still left is spread
    again over the points still to do, so slow points are made up for by
    shorter budgets later (never below MIN_POINT_BUDGET_S)."""

    def __init__(self, all_d, todo_d, fixed, total, max_samples):
        self.fixed, self.max_samples = fixed, max_samples
        self.deadline = None
        if fixed is None:
            b0 = plan_budget(all_d, total, max_samples)
            share = (sum(point_cost(d, b0, max_samples) for d in todo_d)
                     / max(1e-9, sum(point_cost(d, b0, max_samples) for d in all_d)))
            self.deadline = time.monotonic() + total * share
        self.t0 = time.monotonic()
        self.estimated_done = 0.0

    def budget(self, rest_d):
        if self.fixed is not None:
            return self.fixed
        return plan_budget(rest_d, max(0.0, self.deadline - time.monotonic()), self.max_samples)

    def eta(self, rest_d, b):
        """Seconds left: the estimate for the rest, scaled by how far off the
        estimates have been so far."""
        est = sum(point_cost(d, b, self.max_samples) for d in rest_d)
        if self.estimated_done <= 0:
            return est
        ratio = (time.monotonic() - self.t0) / self.estimated_done
        return est * min(3.0, max(0.5, ratio))

    def done(self, d, b):
        self.estimated_done += point_cost(d, b, self.max_samples)


def cmd_sweep(args):
    from sleepacc import _api
    if args.output is not None and not args.output.strip():
        raise _arg_error("-o", "an empty file name (give a file, or - for the standard output)")
    if args.resume and not args.output:
        raise _arg_error("--resume", "needs -o FILE")
    if args.samples and not args.output:
        raise _arg_error("--samples", "needs -o FILE (the samples are stored in the file; "
                                      "the table shows statistics only)")
    if args.total is not None and args.budget is not None:
        raise _arg_error("--total", "plans the budgets of a sweep without --budget; with "
                                    "--budget each point takes that long (give one of them)")
    if args.total is None:
        args.total = DEFAULT_TOTAL_S
    if args.output == "-":
        if args.resume:
            raise _arg_error("--resume", "cannot continue the standard output (-o -)")
        if args.format not in (None, "none"):
            raise _arg_error("--format", "-o - writes the results to the standard output; "
                                         "the table would be mixed into them (use -o FILE)")
        args.format = "none"
    elif args.format is None:
        args.format = "wide"
    flags = {"method": "--methods", "duration": "--durations", "durations": "--durations",
             "n": "--max-samples"}
    durations = None if args.durations is None else [d / 1e9 for d in args.durations]
    names, env = args.methods, _env_kwargs(args)
    # the ladder, each duration's range, the floor rule and periodic mode's
    # skipping a duration of 0 (left: "nothing to measure"): the core's plan,
    # through the one sweep generator, as sleepacc.sweep() has it (a margin
    # without a hybrid method to spend it: the plan's rule too)
    try:
        points = _api._points(names, durations, args.mode, env.get("margin"))
    except ValueError as exc:
        raise _core_error(exc, flags) from None
    for p in points:    # each point's run, as iter_sweep will plan it (the method available, ...)
        _core_rules(args, flags, method=p.method, duration=p.duration_ns / 1e9, mode=args.mode,
                    point=True, n=args.max_samples, budget=1.0 if args.budget is None else args.budget)
    kw = dict(mode=args.mode, n=args.max_samples, keep_samples=True, **env)
    methods = names or [m.name for m in sleepacc.methods() if m.available]
    durations_ns = args.durations or [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS]
    results = None
    if args.output:
        results = _open_results(args.output, args.resume)
        try:
            if results.existing is not None:
                _check_resume_settings(results, args.mode, env)
            else:
                results.write_header(_host_facts(),
                                     _settings(args, methods, durations_ns, env), _now_iso())
        except OSError as exc:
            results.close()
            raise _write_error(results.path, exc) from None
        except BaseException:
            results.close()
            raise
    done_keys = set() if results is None else {(m, d) for m, mode, d in results.keys
                                                if mode == args.mode}
    todo = [p for p in points if (p.method, p.duration_ns) not in done_keys]
    planner = _Planner([p.duration_ns for p in points], [p.duration_ns for p in todo],
                       args.budget, args.total, args.max_samples)
    show = bool(args.progress) if args.progress is not None else (
        sys.stdout.isatty() and sys.stderr.isatty())
    progress = Progress(len(points), show)
    resumed = len(points) - len(todo)
    state = {"done": resumed, "b": None}

    def per_point(rest):
        """Before each point: its budget from the planner, the progress line."""
        d = rest[0].duration_ns
        b = state["b"] = planner.budget([p.duration_ns for p in rest])
        progress.update(state["done"], rest[0].method, d,
                        planner.eta([p.duration_ns for p in rest], b))
        return {"budget": point_budget(d, b), "warmup": warmup_for(d)}

    measured = []   # kept for the table only when there is no file to read back
    try:
        for m in _api.iter_sweep(names, durations, budget=1.0, skip=done_keys,
                                 per_point=per_point, **kw):
            planner.done(m.requested_ns, state["b"])
            if not args.samples:
                m.samples = None     # the statistics are kept, the buffer is not
            if results is not None:
                try:
                    results.write_point(m)
                except OSError as exc:
                    raise _write_error(results.path, exc) from None
            if results is None or not results.regular:
                measured.append(m)
            state["done"] += 1
    except KeyboardInterrupt:
        kept = (f"; {state['done']} of {len(points)} points are in {results.path} "
                "(continue with --resume)") if results is not None else ""
        raise Interrupted(f"after {state['done'] - resumed} points{kept}") from None
    else:
        if results is not None and todo:
            try:
                results.write_footer(_now_iso())
            except OSError as exc:
                raise _write_error(results.path, exc) from None
    finally:
        progress.close()
        if results is not None:
            results.close()
    wall = time.monotonic() - planner.t0
    note = f" ({resumed} already in the file)" if resumed else ""
    if results is not None and results.regular:
        # what is read back was read when the file was opened (a resumed
        # file's duplicates were warned of then; none is added since)
        sweep = _load(results.path, warn=False)
        note += f"; results in {results.path}"
    else:
        sweep = sleepacc.Sweep(measured, host=_host_facts())
    print(f"sleepacc: {len(todo)} point{'s' if len(todo) != 1 else ''} measured in {wall:.1f} s{note}", file=sys.stderr)
    if args.format != "none":
        _emit_sweep(sweep, args.format)
    return 0


def _host_facts():
    from sleepacc._api import sweep_host
    return sweep_host()


def cmd_report(args):
    sweep = _load(args.file)
    _need_points(sweep, args.file, "report")
    fmt = args.format
    if fmt is None:   # irtt's own table holds means only: it reads back as irtt's table
        fmt = "irtt" if (sweep.settings or {}).get("source") == "irtt sleep" else "wide"
    try:
        _emit_sweep(sweep, fmt)
    except ValueError as exc:    # what the file holds cannot fill the table: a data error
        raise CliError(f"{args.file}: {exc}") from None
    return 0


# --------------------------------------------------------------------------
# measure
# --------------------------------------------------------------------------

def _histogram_lines(errors_ns, bins, width=40):
    """A text histogram of errors (ns), in µs: `bins` rows between the 1st
    and 99th percentiles, and what lies outside counted in two end rows."""
    import numpy as np
    e = np.asarray(errors_ns, dtype=np.float64) / 1e3
    if e.size == 0:
        return ["(no samples)"]
    lo, hi = np.percentile(e, [1, 99]) if e.size >= 100 else (e.min(), e.max())
    if hi <= lo:
        lo, hi = lo - 0.0005, lo + 0.0005
    counts, edges = np.histogram(e, bins=bins, range=(lo, hi))
    below, above = int((e < lo).sum()), int((e > hi).sum())
    digits = max(0, min(3, 1 - int(math.floor(math.log10((hi - lo) / bins)))))
    rows = [(f"< {lo:.{digits}f}", below)] if below else []
    rows += [(f"{a:.{digits}f} .. {b:.{digits}f}", int(c))
             for a, b, c in zip(edges[:-1], edges[1:], counts)]
    if above:
        rows.append((f"> {hi:.{digits}f}", above))
    peak = max(c for _, c in rows) or 1
    label_w = max(len(r[0]) for r in rows)
    return [f"  {lab:>{label_w}} |{'#' * int(round(width * c / peak)):<{width}} {c}"
            for lab, c in rows]


def cmd_measure(args):
    if args.samples and not args.json:
        raise _arg_error("--samples", "needs --json (the samples go into the JSON point; "
                                      "the text shows statistics only)")
    if args.duration != 0 and args.mode != "periodic" and args.method in _floor_methods():
        raise _arg_error("METHOD", f"{args.method!r} is a floor method (family 'baseline': it "
                                   "ignores the requested duration), measured at 0 only: "
                                   "give DURATION 0")
    run = {k: v for k, v in (("n", args.n), ("budget", args.budget), ("mode", args.mode),
                             ("warmup", args.warmup)) if v is not None}   # None: the core's
    env = _core_rules(args, {"method": "METHOD", "duration": "DURATION", "n": "-n"},
                      method=args.method, duration=args.duration / 1e9, **run)
    m = sleepacc.measure(args.method, args.duration / 1e9, keep_samples=True, **run, **env)
    errors = m.errors_ns
    if not (args.json and args.samples):
        m.samples = None     # to_dict() would copy every sample into a list
    d = m.to_dict()
    if args.json:
        json.dump(_clean({"schema": SCHEMA, "type": "point", **d}), sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    st = d["stats"]
    periodic = d["mode"] == "periodic"
    what = "lateness" if periodic else "error"
    print(f"{d['method']}({format_go(d['requested_ns'])}), {d['mode']} mode: "
          f"{st['n']} sample{'' if st['n'] == 1 else 's'} in {d['wall_ns'] / 1e9:.3f} s")
    # a setting of 0 (cpu 0, dma_latency_us 0) was applied: only None and False were not
    applied = [f"{k} {v}" for k, v in (d.get("env") or {}).items()
               if v is not None and v is not False]
    print("environment: " + (", ".join(applied) if applied else "the thread's own settings"))
    cols = ["min", "median", "p90", "p99", "p999", "max", "mean"]
    rows = []
    if st["n"] > 0:
        if not periodic:
            rows.append(["actual"] + [format_ns(st[c], 4) for c in cols] + [format_ns(st["std"], 3)])
        rows.append([what] + [format_ns(_err_ns(d, st[c]), 4) for c in cols] + [format_ns(st["std"], 3)])
        print()
        print(_table([""] + ["min", "median", "p90", "p99", "p99.9", "max", "mean", "std"], rows))
    print()
    print(f"undersleeps {st['undersleeps']}, missed deadlines {d.get('missed', 0)}")
    cpu = d.get("cpu_ns_per_call")
    ctx = d.get("ctx_switches") or {}
    pct = d.get("cpu_percent", -1)
    print(f"CPU cost: {format_ns(cpu) if cpu is not None and cpu >= 0 else 'unknown'} per call"
          f" ({f'{pct:.1f}%' if pct >= 0 else 'unknown share'} of one CPU); context switches: "
          f"{ctx.get('voluntary', '?')} voluntary, {ctx.get('involuntary', '?')} involuntary")
    if st["n"] > 0:
        print()
        print(f"{what} histogram (µs):")
        print("\n".join(_histogram_lines(errors, args.bins)))
    return 0


# --------------------------------------------------------------------------
# info
# --------------------------------------------------------------------------

def _info_record():
    # each registry row with the core's fields (sleepacc_method_info_fields)
    methods = [m._asdict() for m in sleepacc.methods()]
    return {"schema": SCHEMA, "type": "info", "version": sleepacc.__version__,
            "host": _host_facts(), "clocks": sleepacc.clock_info(), "methods": methods}


def cmd_info(args):
    rec = _info_record()
    if args.json:
        json.dump(_clean(rec), sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
        return 0
    print(f"sleepacc {rec['version']} on {rec['host'].get('hostname', '?')}")
    print()
    print("host facts:")
    print(_table(["fact", "value"], [[k, "unknown" if v is None else v]
                                       for k, v in rec["host"].items()], "<<"))
    print()
    print("clocks:")
    rows = []
    for name, c in rec["clocks"].items():
        res, cost = c.get("resolution_ns"), c.get("read_cost_ns")
        rows.append([name, "unknown" if res is None or res < 0 else f"{res} ns",
                     "unknown" if cost is None or cost < 0 else f"{cost} ns"])
    print(_table(["clock", "resolution", "read cost"], rows))
    print()
    print("methods:")
    rows = [[m["name"], m["family"], "yes" if m["available"] else "no",
             _yesno(m["honours_slack"]), m["granularity_ns"], m["description"]]
            for m in rec["methods"]]
    print(_table(["method", "family", "available", "slack", "unit ns", "description"], rows,
                 "<<<<><"))
    return 0


def _yesno(v):
    if v is True:
        return "yes"
    if v is False:
        return "no"
    return "unknown" if v is None else str(v)


# --------------------------------------------------------------------------
# compare
# --------------------------------------------------------------------------

def _compare_inputs(args, option="FILE"):
    """(sweeps, labels) of compare's (and plot --compare's) files."""
    files = args.files if option == "FILE" else args.compare
    if len(files) < 2:
        raise _arg_error(option, "compare needs at least two files")
    labels = None
    if getattr(args, "labels", None):
        labels = [t.strip() for t in args.labels.split(",")]
        from sleepacc.fleet import labels_for   # its rules (one a file, named, distinct), now
        try:
            labels_for(files, files, labels)
        except ValueError as exc:
            raise _arg_error("--labels", str(exc).split(": ", 1)[1]) from None
    sweeps = [_load(p) for p in files]
    for p, sw in zip(files, sweeps):
        _need_points(sw, p, "compare")
    return sweeps, labels


def _ns_text(ns):
    """ns resolution kept: 57 ns, 61.5 ns, 84.43 µs."""
    return "-" if ns is None else format_ns(ns, 4)


def cmd_compare(args):
    from sleepacc import fleet
    sweeps, labels = _compare_inputs(args)
    fmt = "json" if args.json else args.format
    stat = args.stat
    try:
        hosts = fleet.fleet(sweeps, args.files, stat=stat, method=args.method,
                            requested_ns=args.duration, labels=labels)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    # the per-point view: every (method, mode, duration) of the files side by side
    tables = [{(p["method"], p["mode"], int(p["requested_ns"])): p for p in _points(sw)}
              for sw in sweeps]
    keys = list(dict.fromkeys(k for t in tables for k in t))
    letters = [chr(ord("A") + i) if i < 26 else f"F{i}" for i in range(len(sweeps))]
    rows = []
    for k in keys:
        row = {"method": k[0], "mode": k[1], "requested_ns": k[2], "errors_ns": [], "n": [],
               "ratios": []}
        errs = [fleet.error_ns(t[k], stat) if k in t else None for t in tables]
        base = errs[0]
        for t, e in zip(tables, errs):
            row["errors_ns"].append(e)
            row["n"].append(t[k]["n"] if k in t else 0)
            row["ratios"].append(None if e is None or base is None or base <= 0 else e / base)
        rows.append(row)
    key = f"{stat}_ns"
    if fmt == "json":
        json.dump(_clean({"schema": SCHEMA, "type": "compare", **hosts,
                          "files": [{"path": p, "host": _hostname(sw.host)}
                                    for p, sw in zip(args.files, sweeps)],
                          "rows": rows}), sys.stdout, indent=1, allow_nan=False)
        sys.stdout.write("\n")
        return 0
    if fmt == "csv":
        import csv
        cols = ["rank", "label", "hostname", "path", "kernel", "slack_ns", "policy", "settings",
                "method", "mode",
                "requested_ns", "n", key, "median_ns", "p99_ns", "top_cause", "top_cause_id",
                "top_cause_ns"]
        cols = list(dict.fromkeys(cols))
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(cols)
        for r in hosts["hosts"]:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
        return 0
    what = f"{hosts['method']}({format_go(hosts['requested_ns'])})"
    print(f"{len(sweeps)} hosts ranked by the {stat} error of {what}, best first; "
          "top cause: the oversleep model fitted to each file's own data")
    print()
    shown = list(dict.fromkeys([stat, "median", "p99"]))
    own = any(r["method"] != hosts["method"] for r in hosts["hosts"])   # one-method files
    print(_table(["#", "host"] + (["method"] if own else []) + ["n"] + shown
                 + ["top cause", "file"],
                 [[r["rank"] or "-", r["label"] + (f" [{r['settings']}]" if r["settings"] else "")]
                  + ([r["method"]] if own else [])
                  + ["?" if r["n"] is None else r["n"]]
                  + [_ns_text(r[f"{c}_ns"]) for c in shown] + [fleet.cause_text(r), r["path"]]
                  for r in hosts["hosts"]], "<<" + ("<" if own else "") + ">"
                 + ">" * len(shown) + "<<"))
    if not (args.points or len(sweeps) == 2):
        return 0
    print()
    for letter, path, sw in zip(letters, args.files, sweeps):
        about = [f"host {_hostname(sw.host)}"]
        if sw.started:
            about.append(str(sw.started))
        env = (sw.settings or {}).get("env") or {}
        about += [f"--{k} {v}" for k, v in env.items()]
        print(f"{letter}: {path} ({', '.join(about)})")
    print(f"{stat} error{' (lateness for periodic points)' if any(k[1] == 'periodic' for k in keys) else ''} "
          f"of every point; ratios against A; n = samples")
    print()
    headers = (["method", "requested"] + letters + [f"{l}/A" for l in letters[1:]]
               + [f"n {l}" for l in letters])
    table_rows = []
    for r in rows:
        cells = [r["method"] + (" (periodic)" if r["mode"] == "periodic" else ""),
                 format_go(r["requested_ns"])]
        cells += [_ns_text(e) for e in r["errors_ns"]]
        cells += ["-" if q is None else f"{q:.2f}x" for q in r["ratios"][1:]]
        cells += ["?" if n is None else str(n) for n in r["n"]]
        table_rows.append(cells)
    print(_table(headers, table_rows))
    return 0


# --------------------------------------------------------------------------
# plot
# --------------------------------------------------------------------------

PLOT_KINDS = ("error", "cdf", "pareto", "model", "histogram", "all")
PLOT_SUFFIXES = (".png", ".svg", ".pdf")   # the formats plot -o writes (from the file name)


def _check_plot_output(path, stdout=True):
    """plot -o: a file name ending in one of PLOT_SUFFIXES, or (stdout) "-"."""
    if (stdout and path == "-") or os.path.splitext(path)[1].lower() in PLOT_SUFFIXES:
        return
    names = ", ".join(PLOT_SUFFIXES[:-1]) + " or " + PLOT_SUFFIXES[-1]
    hint = " (or - for a PNG on the standard output)" if stdout else ""
    raise _arg_error("-o", f"{path!r}: the file name must end in {names}{hint}")


def _one_point(sweep, methods, requested_ns):
    """The measurement a histogram shows: the first of --methods (default:
    the first sleeping method in the file) at --requested (default 1 ms,
    else the method's first point)."""
    pts = [m for m in sweep if methods is None or m.method in methods]
    if methods is None:
        floors = _floor_methods()
        pts = [m for m in pts if m.method not in floors] or pts
    if not pts:
        raise ValueError(f"no point of {', '.join(methods or [])} in the file")
    name = pts[0].method
    pts = [m for m in pts if m.method == name]
    want = 1_000_000 if requested_ns is None else requested_ns
    chosen = [m for m in pts if m.requested_ns == want]
    if not chosen and requested_ns is not None:
        raise ValueError(f"no {name} point at {format_go(requested_ns)}; it has "
                         + ", ".join(format_go(m.requested_ns) for m in pts))
    return (chosen or pts)[0]


def _floor_methods():
    """Names of the floor methods (registry family "baseline")."""
    return {n for n, m in _method_table().items() if m.family == "baseline"}


def cmd_plot(args):
    """One figure of sleepacc.plot per kind; --kind all writes the four
    beside each other: FIG, FIG-cdf, FIG-pareto and FIG-model."""
    if args.compare:
        if args.file:
            raise _arg_error("--compare", "takes the files itself: plot --compare A B ... -o FIG")
        for flag, given in (("--kind", args.kind), ("--flent", args.flent)):
            if given is not None:   # --compare draws its one figure: they were ignored
                raise _arg_error(flag, "does not apply to --compare (its figure is the hosts "
                                       "side by side)")
        return _plot_compare(args)
    for flag, given in (("--labels", args.labels), ("--stat", args.stat)):
        if given is not None:   # they name and rank hosts: without --compare, ignored
            raise _arg_error(flag, "needs --compare (plot --compare A B ... -o FIG)")
    if args.flent:
        for flag, given in (("--kind", args.kind), ("--requested", args.requested),
                            ("--methods", args.methods)):
            if given is not None:   # the flent figure is one method's lateness over time
                raise _arg_error(flag, "does not apply to --flent (its figure is the "
                                       "monitor's lateness over time)")
        return _plot_flent(args)
    args.kind = args.kind or "error"
    if args.requested is not None and args.kind in ("error", "model"):
        raise _arg_error("--requested", f"does not apply to --kind {args.kind} (it draws "
                                        "every duration): use it with cdf, pareto, histogram "
                                        "or all")
    if not args.file:
        raise _arg_error("FILE", "a result file is required (or --compare FILES...)")
    sweep = _load(args.file)
    _need_points(sweep, args.file, "plot")
    try:
        from sleepacc import plot
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise CliError(f"plotting needs matplotlib ({exc}): pip install 'sleepacc[plot]'") from None
    kinds = ["error", "cdf", "pareto", "model"] if args.kind == "all" else [args.kind]
    to_stdout = args.output == "-"
    if to_stdout and len(kinds) > 1:
        raise _arg_error("-o", "--kind all writes several files: give -o FIG.png, not -")
    root, ext = os.path.splitext(args.output)
    _check_plot_output(args.output)
    for i, kind in enumerate(kinds):
        path = args.output if i == 0 else f"{root}-{kind}{ext}"
        try:
            fig = _plot_figure(plot, sweep, kind, args.methods, args.requested)
        except ValueError as exc:     # e.g. no point at 1 ms for the CDF
            raise CliError(f"cannot draw the {kind} plot of {args.file}: {exc}") from None
        few = getattr(fig, "few_samples", None)
        if few:
            print(f"sleepacc: warning: the {kind} plot ranks a p99 of fewer than 100 samples "
                  f"for {', '.join(few)} (marked hollow; measure longer)", file=sys.stderr)
        _save_plot(fig, path, args.dpi)
    return 0


def _save_plot(fig, path, dpi):
    """Save a figure to path ("-": a PNG on the standard output)."""
    try:
        if path == "-":
            sys.stdout.flush()
            fig.savefig(sys.stdout.buffer, dpi=dpi, format="png")
            sys.stdout.buffer.flush()
            return
        # a temporary file beside it, then a rename: a full disk or a
        # Ctrl-C never leaves a partial figure under the name asked for
        from sleepacc import _core, records
        fmt = os.path.splitext(path)[1].lstrip(".").lower()
        records.write_atomic(path, lambda f: fig.savefig(f, dpi=dpi, format=fmt), binary=True)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"sleepacc: wrote {path}", file=sys.stderr)


def _plot_flent(args):
    """plot --flent RESULT.flent.gz MONITOR.jsonl: one figure, one time axis."""
    if not args.file:
        raise _arg_error("FILE", "--flent needs the monitor's file: "
                                 "plot --flent RESULT.flent.gz MONITOR.jsonl -o FIG")
    _check_plot_output(args.output)
    try:
        from sleepacc import plot
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise CliError(f"plotting needs matplotlib ({exc}): pip install 'sleepacc[plot]'") from None
    try:
        with open(args.file, encoding="utf-8") as f:
            mon = records.read_monitor(f.read().splitlines(), args.file)
        fig = plot.flent_overlay(args.flent, mon)
    except OSError as exc:
        raise CliError(f"cannot read {exc.filename or args.file}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CliError(f"cannot draw the flent plot: {exc}") from None
    _save_plot(fig, args.output, args.dpi)
    return 0


def _plot_compare(args):
    """plot --compare: the hosts of several result files side by side."""
    _check_plot_output(args.output, stdout=False)
    sweeps, labels = _compare_inputs(args, "--compare")
    try:
        from sleepacc import plot
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise CliError(f"plotting needs matplotlib ({exc}): pip install 'sleepacc[plot]'") from None
    method = args.methods[0] if args.methods else None
    try:
        fig = plot.compare_hosts(sweeps, labels, paths=args.compare, method=method,
                                 stat=args.stat or "median",
                                 requested=None if args.requested is None
                                 else args.requested / 1e9)
    except ValueError as exc:
        raise CliError(f"cannot draw the compare plot: {exc}") from None
    _save_plot(fig, args.output, args.dpi)
    return 0


def _plot_figure(plot, sweep, kind, methods, requested_ns=None):
    requested = None if requested_ns is None else requested_ns / 1e9
    if kind == "error":
        return plot.error_vs_requested(sweep, methods)
    if kind == "cdf":
        return plot.lateness_cdf(sweep, methods, requested=requested)
    if kind == "pareto":
        return plot.cost_pareto(sweep, methods, requested=requested)
    if kind == "histogram":
        return plot.histogram(_one_point(sweep, methods, requested_ns))
    from sleepacc import model
    fitted = model.fit(sweep)
    if not hasattr(fitted, "params"):            # several groups: the first
        fitted = next(iter(fitted.values()))
    return plot.model_fit(fitted, sweep, methods)


# --------------------------------------------------------------------------
# monitor
# --------------------------------------------------------------------------

class _Stop(Exception):
    """SIGTERM (or Ctrl-C) asked the monitor to stop."""


def _now_unix_iso():
    """(Unix-epoch seconds, the same instant as docs/schema.md's ISO 8601)."""
    t = time.time()
    d = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return t, d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def cmd_monitor(args):
    """Periodic wake-ups, one line per report interval, until --duration,
    Ctrl-C or SIGTERM (each a normal stop: the summary, exit 0).  -o FILE
    writes the lines as JSON Lines (records.monitor_line: Unix time `t`);
    --irtt-json FILE writes the totals in irtt's JSON shape at the end."""
    interval, report = args.interval, args.report
    flags = {"duration": "--interval", "seconds": "--interval", "budget": "--report"}
    try:   # --interval's range first (the core's seconds rule), then --report against it
        _core.seconds_ns(interval / 1e9)
    except ValueError as exc:
        raise _core_error(exc, flags) from None
    if report * 1e9 < interval:   # (the core's words would name the duration, not --report)
        raise _arg_error("--report", f"must be at least --interval ({format_go(interval)})")
    # one report is a periodic run of --method every --interval for --report
    env = _core_rules(args, flags, method=args.method, duration=interval / 1e9, mode="periodic",
                      budget=report)
    to_stdout = args.json or args.output == "-"
    if args.irtt_json == "-" and to_stdout:   # two JSON forms in one stream: neither parses
        raise _arg_error("--irtt-json", "cannot share the standard output with the JSON "
                         f"lines of {'--json' if args.json else '-o -'} (give a file)")
    if args.irtt_json and args.irtt_json != "-":
        _check_writable_later(args.irtt_json)   # written at the end: not lost after the run
    out = None
    if args.output is not None and args.output != "-":
        out = _open_results(args.output, False)
        settings = {"command": "monitor", "method": args.method, "interval_ns": interval,
                    "report": report, "env": env, "version": sleepacc.__version__}
        try:
            out.write_header(_host_facts(), settings, _now_iso())
        except OSError as exc:
            out.close()
            raise _write_error(out.path, exc) from None
    end = None if args.duration is None else time.monotonic() + args.duration
    totals = records.TimerTotals()
    started_iso, t_begin = _now_iso(), time.monotonic()
    state = {"busy": False, "stop": None}

    def on_signal(signum, _frame):
        state["stop"] = signal.Signals(signum).name
        if not state["busy"]:       # never inside a write: the line goes out whole
            raise _Stop()
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    first = True
    try:
        while state["stop"] is None:
            budget = report
            if end is not None:
                left = end - time.monotonic()
                if left <= interval / 2e9:
                    break
                # the last report holds at least one wake-up: the core refuses
                # a budget shorter than the period (one sample longer than it)
                budget = max(interval / 1e9, min(report, left))
            t0 = time.time()
            m = sleepacc.measure(args.method, interval / 1e9, mode="periodic",
                                 budget=budget, warmup=1 if first else 0,
                                 keep_samples=False, **env)
            first = False
            state["busy"] = True
            t1, stamp = _now_unix_iso()
            st = m.stats
            totals.add(st, m.missed)
            rec = records.monitor_line(args.method, interval, st, m.missed, t0, t1, stamp)
            if out is not None:
                try:
                    out.write_line(json.dumps(rec))
                except OSError as exc:
                    raise _write_error(out.path, exc) from None
            if to_stdout:
                print(json.dumps(rec), flush=True)
            elif out is None or args.output != "-":
                def f(v):
                    return format_ns(v, 3) if st["n"] else "-"
                print(f"{stamp}  {args.method} every {format_go(interval)}: "
                      f"count={st['n']} median={f(st['median'])} p99={f(st['p99'])} "
                      f"max={f(st['max'])} misses={m.missed}", flush=True,
                      file=sys.stderr if args.irtt_json == "-" else sys.stdout)
            state["busy"] = False
    except (_Stop, KeyboardInterrupt):
        state["stop"] = state["stop"] or "SIGINT"
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if out is not None:
            out.close()
    wall_ns = int((time.monotonic() - t_begin) * 1e9)
    late = totals.lateness()
    why = {"SIGTERM": " (stopped by SIGTERM)", "SIGINT": " (stopped by Ctrl-C)"}.get(
        state["stop"], "")
    if totals.reports:
        worst = format_ns(late["max"], 3) if late["max"] is not None else "-"
        print(f"--- {args.method} every {format_go(interval)}: {totals.reports} reports, "
              f"{late['n']} wake-ups, {totals.misses} missed, mean lateness "
              f"{format_ns(late['mean'], 3) if late['n'] else '-'}, worst {worst}{why} ---",
              file=sys.stderr)
    else:
        print(f"--- {args.method}: no report finished{why} ---", file=sys.stderr)
    if args.irtt_json:
        doc = records.irtt_json(late, interval, totals.misses, timer=f"sleepacc:{args.method}",
                                start_time=started_iso, duration_ns=wall_ns,
                                system_info=_host_facts(), version=sleepacc.__version__)
        try:
            _write_json(args.irtt_json, doc)
        except OSError as exc:
            raise _write_error(args.irtt_json, exc) from None
    return 0


def _write_json(path, doc):
    """One JSON document to path ("-": the standard output), atomically."""
    text = json.dumps(records.clean(doc), indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    records.write_atomic(path, lambda f: f.write(text))


# --------------------------------------------------------------------------
# exporter
# --------------------------------------------------------------------------

EXPORTER_METHODS = ["nanosleep", "timerfd", "auto"]


def _listen_arg(text):
    from sleepacc.exporter import parse_listen
    try:
        return parse_listen(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _percent_arg(text):
    """argparse type: a share of one CPU in percent ("1", "0.5%") -> fraction."""
    t = text.strip().rstrip("%").strip()
    try:
        v = float(t)
    except ValueError:
        v = math.nan
    if not (0 < v <= 100):
        raise argparse.ArgumentTypeError(f"expected a percentage of one CPU in (0, 100], got {text!r}")
    return v / 100


def _off_or_seconds(text):
    return 0.0 if text.strip() in ("0", "off", "never") else _seconds(text)


def _exporter_config(path, parser):
    """The `key = value` lines of a --config file, parsed by the exporter's
    own parser (keys are its long options without the dashes)."""
    try:   # utf-8-sig: a byte-order mark (a file saved by Notepad) is no part of a key
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise _arg_error("--config", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise _arg_error("--config", f"{path}: not UTF-8 text ({exc.reason} at byte "
                                     f"{exc.start})") from None
    argv = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, sep, value = (t.strip() for t in line.partition("="))
        key = key.replace("_", "-")
        if not sep or not key or key == "config":
            raise _arg_error("--config", f"{path}:{lineno}: expected `option = value` "
                                         f"(an exporter option without its dashes), got {raw!r}")
        if value.lower() in ("true", "yes", "on"):
            line_argv = [f"--{key}"]
        elif value.lower() not in ("false", "no", "off") or key == "doctor-every":
            line_argv = [f"--{key}", value]
        else:
            continue
        try:   # each line alone first, so that its error names its line
            parser.parse_args(line_argv)
        except UsageError as exc:
            raise _arg_error("--config", f"{path}:{lineno}: {exc}") from None
        argv += line_argv
    try:
        return parser.parse_args(argv)
    except UsageError as exc:
        raise _arg_error("--config", f"{path}: {exc}") from None


def cmd_exporter(args):
    from sleepacc import exporter as ex
    if args.config:
        for k, v in vars(_exporter_config(args.config, args.exporter_parser)).items():
            if getattr(args, k, None) is None:
                setattr(args, k, v)
    try:
        import prometheus_client  # noqa: F401
    except ImportError:
        raise CliError("the exporter needs prometheus_client: pip install 'sleepacc[exporter]'") \
            from None
    methods = args.methods or EXPORTER_METHODS
    durations = args.duration or [1_000_000]
    if 0 in durations:            # the exporter's rule: it measures sleeps
        raise _arg_error("--duration", "must be above 0")
    for d in durations:           # each duration's range first (the core's seconds rule)
        try:
            _core.seconds_ns(d / 1e9)
        except ValueError as exc:
            raise _arg_error("--duration", str(exc).partition(": ")[2]) from None
    turn = args.turn if args.turn is not None else ex.DEFAULT_TURN_S
    longest = max(durations)
    if longest > turn * 1e9:      # the exporter's rule: a turn holds at least one sleep
        raise _arg_error("--duration", f"{format_go(longest)} is longer than a measuring turn "
                                       f"(--turn {format_go(round(turn * 1e9))}): give durations "
                                       "up to the turn, or a longer --turn")
    floors = _floor_methods()
    for name in methods:          # each series, by the core's rules ("auto" is a Sleeper)
        for d in durations if name != "auto" else ():   # a turn's budget is --turn
            _core_rules(args, {"method": "--methods", "budget": "--turn"}, method=name,
                        duration=d / 1e9, mode=args.mode or "relative", budget=turn)
        if name in floors:
            raise _arg_error("--methods", f"{name!r} is a floor (it does not sleep); "
                                          "the exporter measures sleeps")
    if args.every is not None and not (args.textfile or args.snapshot):
        raise _arg_error("--every", "needs --textfile or --snapshot (what it times)")
    every = args.every if args.every is not None else 60.0
    listen = args.listen
    if listen is None and not args.textfile:
        listen = ex.parse_listen("127.0.0.1:9851")
    env = _core_rules(args, mode=args.mode or "relative")
    given = {k: v for k, v in (("mode", args.mode), ("cpu_budget", args.cpu_budget),
                               ("doctor_every", args.doctor_every), ("turn_s", args.turn))
             if v is not None}      # the others: ex.Exporter's defaults
    e = ex.Exporter(methods, durations, env=env, **given)
    e.check()     # a bad environment fails here, before the port is opened
    service = ex.Service(e, listen=listen, textfile=args.textfile, every=every,
                         snapshot=args.snapshot,
                         log=lambda msg: print(f"sleepacc exporter: {msg}", file=sys.stderr,
                                               flush=True))
    try:
        service.open()
    except OSError as exc:
        where = (f"write {exc.filename}" if exc.filename else
                 f"listen on {listen[0]}:{listen[1]}")
        raise CliError(f"cannot {where}: {exc.strerror or exc}") from None
    import signal
    old = {sig: signal.signal(sig, service.request_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    where = []
    if service.address:
        host = service.address[0]
        where.append(f"http://{f'[{host}]' if ':' in host else host}:{service.address[1]}/metrics")
    if args.textfile:
        where.append(f"{args.textfile} every {format_go(int(every * 1e9))}")
    print(f"sleepacc exporter: {', '.join(methods)} at "
          f"{', '.join(format_go(d) for d in durations)}, at most "
          f"{100 * e.cpu_budget:g}% of one CPU; publishing to {' and '.join(where)}",
          file=sys.stderr, flush=True)
    try:
        service.run(args.stop_after)
    except RuntimeError as exc:       # the measuring thread died: say why, exit 1
        raise CliError(str(exc)) from None
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)
    snap = e.snapshot
    share = 100 * snap.cpu_s / snap.wall_s if snap.wall_s else 0.0
    print(f"sleepacc exporter: stopped after {snap.wall_s:.1f} s; the measuring thread used "
          f"{snap.cpu_s:.3f} s of CPU ({share:.2f}% of one CPU), "
          f"{sum(s['count'] for s in snap.series)} samples", file=sys.stderr)
    if service.failed_writes:
        raise CliError(f"the last write of {', '.join(service.failed_writes)} failed")
    return 0


def _add_exporter_parser(sub):
    s = sub.add_parser(
        "exporter", help="measure in the background and serve Prometheus metrics",
        description="Measure each method in turns within a CPU budget and serve the "
                    "lateness as Prometheus metrics on /metrics (--listen), or write them "
                    "for node_exporter's textfile collector (--textfile).  Every option can "
                    "also come from --config FILE (`option = value` lines); the command "
                    "line wins.  SIGTERM or Ctrl-C stop it cleanly (exit 0).")
    s.add_argument("--config", metavar="FILE", help="read options from FILE")
    s.add_argument("--listen", type=_listen_arg, metavar="HOST:PORT",
                   help="serve /metrics here (default 127.0.0.1:9851, this host only, unless "
                        "--textfile); an empty host, as in :9851, means every interface "
                        "(0.0.0.0), the Prometheus exporters' convention")
    s.add_argument("--textfile", metavar="PATH",
                   help="write the metrics to PATH (atomically) every --every")
    s.add_argument("--every", type=_seconds, metavar="D",
                   help="how often --textfile and --snapshot are written (default 60s)")
    s.add_argument("--snapshot", metavar="FILE",
                   help="also write a sleepacc/1 result file (every --every and on exit), "
                        "for compare, plot and doctor --from")
    s.add_argument("--methods", type=_methods_list, metavar="A,B,...",
                   help="methods, or auto for sleepacc.Sleeper (default nanosleep,timerfd,auto)")
    s.add_argument("--duration", type=_durations_ns, metavar="D,D,...",
                   help=f"requested durations (default 1ms; {UNITS_HELP})")
    s.add_argument("--mode", metavar=MODES, help="relative (default) or periodic "
                   "(lateness against a fixed schedule; counts missed deadlines)")
    s.add_argument("--cpu-budget", type=_percent_arg, metavar="PERCENT",
                   help="most CPU the measuring thread uses, in percent of one CPU (default 1), "
                        "on average since it started: each turn and each doctor run is paid "
                        "for by the rest after it, so a short run with the doctor on shows more")
    s.add_argument("--doctor-every", type=_off_or_seconds, metavar="D",
                   help="how often the doctor's top finding is refreshed (default 600s, the "
                        "first run just after the first round of turns; 0: never)")
    s.add_argument("--turn", type=_seconds, metavar="D",
                   help="the longest a measuring turn lasts (default 250ms); every --duration "
                        "must fit in it")
    s.add_argument("--stop-after", type=_seconds, metavar="D",
                   help="stop after this long (default: run until SIGTERM)")
    _add_env_options(s)
    s.set_defaults(func=cmd_exporter, exporter_parser=s)
    return s


# --------------------------------------------------------------------------
# doctor
# --------------------------------------------------------------------------

def cmd_doctor(args):
    from sleepacc import doctor
    _core_rules(args, budget=args.budget)    # a run's budget, by the core's rule
    sweep = None
    if args.from_file and str(args.from_file).lower().endswith(".csv"):
        from sleepacc import model          # tidy records (seed_results.csv's columns)
        try:
            sweep = model.load_records(args.from_file)
        except OSError as exc:
            raise CliError(f"cannot read {args.from_file}: {exc.strerror or exc}") from None
    elif args.from_file:
        sweep = _load(args.from_file)
    if sweep is not None:
        _need_points(sweep, args.from_file, "diagnose from")
    here = socket.gethostname()
    if isinstance(sweep, list):
        if not args.json:
            print(f"note: {args.from_file} holds imported results; the host facts and "
                  f"experiments below are from {here}", file=sys.stderr)
    elif sweep is not None and sweep.host.get("hostname", here) != here and not args.json:
        print(f"note: {args.from_file} was measured on {sweep.host['hostname']}; the host facts "
              f"and experiments below are from {here}", file=sys.stderr)
    show = not args.json and sys.stdout.isatty() and sys.stderr.isatty()
    progress = Progress(len(doctor.SHORT_METHODS) * len(doctor.SHORT_DURATIONS_NS), show)
    try:
        result = doctor.diagnose(
            sweep, budget=args.budget,
            progress=lambda done, total, m, d: progress.update(done, m, d, None))
    finally:
        progress.close()
    findings = result["findings"]
    if args.top:
        findings = findings[: args.top]
    if args.json:
        out = {"schema": SCHEMA, "type": "doctor", **result, "findings": findings}
        json.dump(_clean(out), sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    h = result["host"]
    ref = result["reference"]
    print(f"sleepacc doctor: {h.get('hostname', '?')}, Linux {h.get('kernel_release', '?')}, "
          f"{h.get('cpus_online_count', '?')} CPUs"
          f"{', virtual (' + str(h.get('hypervisor_type') or 'hypervisor') + ')' if h.get('virtualization') == 'hypervisor' else ''}")
    if ref["median_error_ns"] is not None:
        print(f"reference: {ref['method']}({format_go(ref['requested_ns'])}) with this thread's "
              f"settings oversleeps {format_ns(ref['median_error_ns'], 3)} (median), "
              f"{format_ns(ref['p99_error_ns'], 3)} (p99)")
    print()
    for i, f in enumerate(findings, 1):
        gain = "" if f["gain_us"] is None else (
            f"   gain {'~' if f['estimate'] else ''}{f['gain_us']:.1f} µs"
            f"{' at p99' if f['gain_on'] == 'p99' else ''}")
        print(f"{i}. [{f['status']}] {f['title']}{gain}")
        for e in f["evidence"]:
            print(f"     evidence: {e}")
        if f["fix"] and f["status"] in ("problem", "option", "unknown"):
            print(f"     fix: {f['fix']}")
    if result.get("cyclictest"):
        print()
        print("nanosleep against a cyclictest-like setup, term by term (each row adds one "
              "setting; measured now):")
        print("     " + doctor.format_cyclictest(result["cyclictest"]).replace("\n", "\n     "))
    model = result["model"]
    if model.get("explanation"):
        print()
        print("model: " + model["explanation"].replace("\n", "\n       "))
    elif model.get("note"):
        print()
        print(f"model: {model['note']}")
    return 0


def cmd_model(args):
    """Fit the oversleep model to a result file or a tidy CSV and explain it."""
    from sleepacc import model
    path = args.file
    if str(path).lower().endswith(".csv"):       # a tidy CSV like seed_results.csv
        try:
            data = model.load_records(path)
        except OSError as exc:
            raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    else:
        data = _load(path)
    _need_points(data, path, "fit")
    try:
        fitted = model.fit(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise CliError(f"cannot fit {path}: {exc}") from None
    if not any(m.params for m in (fitted.values() if hasattr(fitted, "find") else [fitted])):
        means = all(getattr(m, "n", 0) is None for m in data)   # irtt's table: n unknown
        raise CliError(f"{path} has no points the model can fit"
                       + (" (irtt's table holds means only; the model fits medians and tails)"
                          if means else ""))
    if args.method is not None:
        groups = fitted.values() if hasattr(fitted, "find") else [fitted]
        if not any(args.method in m.params for m in groups):  # the data's lack, as compare's and plot's: exit 1
            have = sorted({name for m in groups for name in m.params})
            raise CliError(f"no fit for {args.method!r} in {path}; it has {', '.join(have) or 'none'}")
    if args.json:
        out = {"schema": SCHEMA, "type": "model", "file": str(path), **fitted.to_json()}
        if args.method is not None:     # only this method, as the text shows it
            for g in [out, *out.get("groups", [])]:
                if "methods" in g:
                    g["methods"] = {k: v for k, v in g["methods"].items() if k == args.method}
            if "groups" in out:
                out["groups"] = [g for g in out["groups"] if g["methods"]]
        json.dump(_clean(out), sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
        return 0
    print(fitted.explain(args.method))
    return 0


_clean = records.clean   # NaN and infinities -> None, so the JSON is strict


# --------------------------------------------------------------------------
# The parser and main()
# --------------------------------------------------------------------------

def build_parser():
    p = _Parser(prog="sleepacc",
                description="Measure how well this machine sleeps, explain why, "
                            f"and compare hosts.  Durations take a unit ({UNITS_TEXT}: "
                            "m is minutes, not ms); a bare number is seconds.",
                epilog="Exit codes: 0 success, 1 failure, 2 usage error, 130 Ctrl-C.  "
                       "File schema: docs/schema.md.")
    p.add_argument("--version", action="version", version=f"sleepacc {sleepacc.__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    s = sub.add_parser("sweep", help="measure methods x durations (the main job)",
                       description="Measure every method over a ladder of durations.  "
                                   "Without --budget the per-point budgets are planned so "
                                   "the whole sweep takes about --total seconds.")
    s.add_argument("--methods", type=_methods_list, metavar="A,B,...",
                   help="methods to measure (default: every available one; see `sleepacc info`)")
    s.add_argument("--durations", type=_durations_ns, metavar="D,D,...",
                   help="durations (default: 1ns,10ns,...,100ms,200ms,500ms as irtt sleep; "
                        "floor methods, syscall and clock, are measured at 0 only; "
                        f"--mode periodic skips 0; {UNITS_HELP})")
    s.add_argument("--budget", type=_time_s, metavar="SECONDS",
                   help="time per point (default: planned to fit --total)")
    s.add_argument("--total", type=_seconds, default=None, metavar="SECONDS",
                   help=f"target time for the whole sweep without --budget (default {DEFAULT_TOTAL_S:g})")
    s.add_argument("--max-samples", type=_integer, default=DEFAULT_MAX_SAMPLES,
                   metavar="N", help=f"at most N samples a point (default {DEFAULT_MAX_SAMPLES})")
    s.add_argument("--mode", metavar=MODES, default="relative",
                   help="relative: each sample is one sleep's actual length (default); periodic: "
                        "sleeps to deadlines start + k*DURATION, each sample is the lateness, "
                        "and deadlines passed while sleeping count as missed")
    _add_margin_option(s)
    _add_env_options(s)
    s.add_argument("--format", choices=FORMATS + ("none",), default=None,
                   help="table printed at the end (default wide; none with -o -)")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="write JSON Lines here, one line per finished point "
                        "(- for the standard output)")
    s.add_argument("--resume", action="store_true",
                   help="continue FILE, skipping the points already in it")
    s.add_argument("--samples", action="store_true",
                   help="also store every sample in FILE (bigger files)")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress line on stderr (default: when on a terminal)")
    s.set_defaults(func=cmd_sweep)

    s = sub.add_parser("report", help="print a result file in one of the formats")
    s.add_argument("file", metavar="FILE",
                   help="a file written by sweep -o (or Sweep.save), or irtt sleep's output")
    s.add_argument("--format", choices=FORMATS, default=None,
                   help="(default wide; irtt for irtt sleep's text, which has means only)")
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("measure", help="one method at one duration, in detail")
    s.add_argument("method", metavar="METHOD",
                   help="a method of `sleepacc info`; the floor methods, syscall and clock, "
                        "ignore the request and are measured at DURATION 0 only")
    s.add_argument("duration", type=_duration_ns, metavar="DURATION",
                   help=f"the requested duration ({UNITS_HELP})")
    # --budget, -n, --warmup: their ranges and defaults are the core's
    s.add_argument("--budget", type=_time_s, default=None, metavar="SECONDS",
                   help=f"time to measure (default {_DEFAULTS['budget_ns'] / 1e9:g})")
    s.add_argument("-n", type=_integer, default=None, metavar="N",
                   help="stop after N samples")
    s.add_argument("--warmup", type=_integer, default=None, metavar="N",
                   help="sleeps taken first and not counted (they warm caches and the "
                        f"method's state; default {_DEFAULTS['warmup']})")
    s.add_argument("--mode", metavar=MODES, default="relative",
                   help="relative: each sample is one sleep's actual length (default); periodic: "
                        "sleeps to deadlines start + k*DURATION, each sample is the lateness, "
                        "and deadlines passed while sleeping count as missed")
    _add_margin_option(s)
    _add_env_options(s)
    s.add_argument("--bins", type=_int_range(1, 200), default=16, metavar="N",
                   help="histogram rows (default 16)")
    s.add_argument("--json", action="store_true", help="the point as JSON")
    s.add_argument("--samples", action="store_true", help="with --json: include the samples")
    s.set_defaults(func=cmd_measure)

    s = sub.add_parser("doctor", help="find what makes this host sleep badly, and the fix")
    s.add_argument("--from", dest="from_file", metavar="FILE",
                   help="use this sweep file instead of running a short sweep")
    s.add_argument("--top", type=_positive_int, default=None, metavar="N",
                   help="show only the N most important findings")
    s.add_argument("--budget", type=_time_s, default=0.1, metavar="SECONDS",
                   help="time per point of the short sweep and the experiments (default 0.1)")
    s.add_argument("--json", action="store_true", help="findings as JSON")
    s.set_defaults(func=cmd_doctor)

    s = sub.add_parser("model", help="explain a result file: verdict and causes per method",
                       description="Fit the oversleep model to a result file (or a tidy CSV "
                                   "like tests/data/seed_results.csv): per method a verdict "
                                   "(explained, partly, unexplained), the causes with "
                                   "intervals, and advice.")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--method", type=_method_name, metavar="NAME", help="only this method")
    s.add_argument("--json", action="store_true", help="verdicts, causes and parameters as JSON")
    s.set_defaults(func=cmd_model)

    s = sub.add_parser("info", help="host and clock facts, and the methods")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_info)

    s = sub.add_parser("compare", help="hosts side by side: one row per result file, ranked",
                       description="One row per result file (sweep -o, Lua save, exporter "
                                   "--snapshot), ranked by --stat of one method at one "
                                   "duration, with n and the top cause the model finds in "
                                   "the file's data.  With two files (or --points) every "
                                   "point side by side, with ratios.")
    s.add_argument("files", nargs="+", metavar="FILE")
    from sleepacc.fleet import STAT_FIELDS
    s.add_argument("--stat", choices=STAT_FIELDS, default="median",
                   help="statistic compared (default median)")
    s.add_argument("--method", type=_method_name, metavar="M",
                   help="method ranked (default nanosleep where every file has it)")
    s.add_argument("--duration", type=_requested_ns, metavar="D",
                   help="requested duration ranked (default 1ms where every file has it; "
                        f"{UNITS_HELP})")
    s.add_argument("--labels", metavar="A,B,...", help="names of the hosts, one per file "
                   "(default: the host names in the files)")
    s.add_argument("--format", choices=("text", "csv", "json"), default="text")
    s.add_argument("--json", action="store_true", help="same as --format json")
    s.add_argument("--points", action="store_true",
                   help="also every point side by side (the default with two files)")
    s.set_defaults(func=cmd_compare)

    s = sub.add_parser("plot", help="figures of a result file")
    s.add_argument("file", metavar="FILE", nargs="?")
    s.add_argument("--compare", nargs="+", metavar="FILE",
                   help="hosts side by side: these result files (--methods: the first is "
                        "the method drawn; --requested: the duration ranked; --stat, "
                        "--labels as for compare)")
    s.add_argument("--labels", metavar="A,B,...", help="with --compare: host names, one a file")
    s.add_argument("--flent", metavar="RESULT.flent.gz",
                   help="flent's latency series and the timer lateness of FILE (written by "
                        "`sleepacc monitor -o FILE` beside flent) on one time axis")
    from sleepacc.fleet import STAT_FIELDS
    s.add_argument("--stat", default=None, choices=STAT_FIELDS,
                   help="with --compare: the statistic ranked (default median)")
    s.add_argument("-o", "--output", required=True, metavar="FIG",
                   help=f"output image ({', '.join(PLOT_SUFFIXES)}; - for a PNG on the standard "
                        "output)")
    s.add_argument("--kind", choices=PLOT_KINDS, default=None,
                   help="error: error against duration, one panel per method family "
                        "(default); cdf: error distribution at 1 ms (or --requested), tail on "
                        "a log scale; pareto: accuracy against CPU; model: the fit over the "
                        "data; histogram: the errors of one point (--methods M --requested D; "
                        "needs sweep --samples); all: the first four, FIG-<kind> beside FIG")
    s.add_argument("--requested", type=_requested_ns, default=None, metavar="D",
                   help="the requested duration of the cdf, pareto and histogram plots, "
                        "or ranked by --compare (default 1ms)")
    s.add_argument("--methods", type=_methods_list, metavar="A,B,...",
                   help="only these methods (default: all in the file)")
    s.add_argument("--dpi", type=_int_range(10, 1200), default=110)
    s.set_defaults(func=cmd_plot)

    s = sub.add_parser("monitor", help="periodic wake-ups, one line per report interval")
    s.add_argument("--method", default="clock_nanosleep_abs", metavar="M",
                   help="method (default clock_nanosleep_abs)")
    s.add_argument("--interval", type=_duration_ns, default=10_000_000, metavar="D",
                   help="wake-up period (default 10ms)")
    s.add_argument("--report", type=_time_s, default=1.0, metavar="D",
                   help="one line per this much time (default 1s)")
    s.add_argument("--duration", type=_seconds, default=None, metavar="D",
                   help="stop after this long (default: until Ctrl-C or SIGTERM; either prints "
                        f"the summary and exits 0; {UNITS_HELP})")
    _add_env_options(s)
    s.add_argument("--json", action="store_true", help="JSON Lines instead of text")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="also write the lines as JSON Lines to FILE, each with its Unix time "
                        "`t` (lines up with flent's data; - for the standard output)")
    s.add_argument("--irtt-json", metavar="FILE",
                   help="at the end, write the timer statistics in irtt's JSON shape "
                        "(stats.timer_error, timer_err_percent, timer_misses; - for the "
                        "standard output, which then holds that document alone: the "
                        "report lines go to stderr)")
    s.set_defaults(func=cmd_monitor)
    _add_exporter_parser(sub)
    return p


def main(argv=None) -> int:
    """Run the command line; returns the exit code (see the module doc)."""
    try:
        parser = build_parser()   # inside: a Ctrl-C here is exit 130 too
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SystemExit as exc:         # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        _flush_quietly()
        print("sleepacc: interrupted", file=sys.stderr)
        return 130
    except Interrupted as exc:
        _flush_quietly()
        print(f"sleepacc: interrupted {exc}", file=sys.stderr)
        return 130
    except CliError as exc:
        _flush_quietly()
        print(f"sleepacc: error: {exc}", file=sys.stderr)
        return exc.code
    except BrokenPipeError:
        # stdout closed early (`sleepacc ... | head`): not worth a message.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        return 1
    except PermissionError as exc:
        print(f"sleepacc: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError) as exc:
        # The library refused an argument the parser let through.
        print(f"sleepacc: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"sleepacc: error: {exc.strerror or exc}", file=sys.stderr)
        return 1


def _flush_quietly():
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
