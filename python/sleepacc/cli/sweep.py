"""``sleepacc sweep``: every method over a ladder of durations, each point one
``sleepacc.measure`` run through ``sleepacc.iter_sweep``, its budget from
``sleepacc.plan.Planner``; points appended to a results file as they finish,
a table at the end.
"""

from __future__ import annotations

import argparse
import os
import sys

import sleepacc
from sleepacc import _core
from sleepacc._api import _now_iso
from sleepacc.cli._common import (UNITS_HELP, CliError, Interrupted, Progress, add_env_options,
                                  add_margin_option, add_mode_option, arg_error, core_error,
                                  durations, env_options, integer, methods_list, plain, seconds,
                                  time_s)
from sleepacc.cli._files import FORMATS, emit_sweep, host_facts, load, open_results, write_error
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns, echo
from sleepacc.plan import DEFAULT_MAX_SAMPLES, DEFAULT_TOTAL_S, Planner

# the core's option -> the flag that gave it
FLAGS = {"method": "--methods", "duration": "--durations", "durations": "--durations",
         "n": "--max-samples"}


def add_parser(sub):
    s = add_command(sub, "sweep",
                    "Measure every method over a ladder of durations.  Without --budget the "
                    "per-point budgets are planned so the whole sweep takes about --total "
                    "seconds.")
    s.add_argument("--methods", type=methods_list, metavar="A,B,...",
                   help="methods to measure (default: every available one; see `sleepacc info`)")
    s.add_argument("--durations", type=durations, metavar="D,D,...",
                   help="durations (default: 1ns,10ns,...,100ms,200ms,500ms as irtt sleep; "
                        "floor methods, syscall and clock, are measured at 0 only; "
                        f"--mode periodic skips 0; {UNITS_HELP})")
    s.add_argument("--budget", type=time_s, metavar="SECONDS",
                   help="time per point (default: planned to fit --total)")
    s.add_argument("--total", type=seconds, default=None, metavar="SECONDS",
                   help=f"target time for the whole sweep without --budget (default {DEFAULT_TOTAL_S:g})")
    s.add_argument("--max-samples", type=integer, default=DEFAULT_MAX_SAMPLES,
                   metavar="N", help=f"at most N samples a point (default {DEFAULT_MAX_SAMPLES})")
    add_mode_option(s)
    add_margin_option(s)
    add_env_options(s)
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
    add_wide(s)
    s.set_defaults(func=run)
    return s


def _settings(args, methods, durations_ns, env):
    return {
        "methods": methods,
        "durations_ns": durations_ns,
        "mode": args.mode,
        "budget": plain(args.budget),
        "total": None if args.budget else plain(args.total),
        "max_samples": plain(args.max_samples),
        "samples": bool(args.samples),
        "env": env,
        "version": sleepacc.__version__,
    }


def _check_resume_settings(results, mode, env):
    """A resumed file must have been written with the same mode and
    environment; otherwise its points would not be comparable."""
    old = results.existing.get("settings") or {}
    if old.get("mode", mode) != mode:
        raise arg_error("--resume", f"{results.path} was written with --mode {old.get('mode')}")
    if (old.get("env") or {}) != env:
        raise arg_error("--resume", f"{results.path} was written with environment "
                                    f"{old.get('env') or 'defaults'}, not {env or 'defaults'}")


def _check_flags(args):
    """The flags that only make sense together, before anything else."""
    if args.output is not None and not args.output.strip():
        raise arg_error("-o", "an empty file name (give a file, or - for the standard output)")
    if args.resume and not args.output:
        raise arg_error("--resume", "needs -o FILE")
    if args.samples and not args.output:
        raise arg_error("--samples", "needs -o FILE (the samples are stored in the file; "
                                     "the table shows statistics only)")
    if args.total is not None and args.budget is not None:
        raise arg_error("--total", "plans the budgets of a sweep without --budget; with "
                                   "--budget each point takes that long (give one of them)")
    if args.total is None:
        args.total = DEFAULT_TOTAL_S
    if args.output == "-":
        if args.resume:
            raise arg_error("--resume", "cannot continue the standard output (-o -)")
        if args.format not in (None, "none"):
            raise arg_error("--format", "-o - writes the results to the standard output; "
                                        "the table would be mixed into them (use -o FILE)")
        args.format = "none"
    elif args.format is None:
        args.format = "wide"


def _open_output(args, methods, durations_ns, env, env_plain):
    """The results file of -o, its header written (or, resumed, checked)."""
    results = open_results(args.output, args.resume)
    try:
        if results.existing is not None:
            _check_resume_settings(results, args.mode, env_plain)
        else:
            results.write_header(host_facts(), _settings(args, methods, durations_ns, env_plain),
                                 _now_iso())
    except OSError as exc:
        results.close()
        raise write_error(results.path, exc) from None
    except BaseException:
        results.close()
        raise
    return results


def _measure(sweep_loop, results, samples, state, total, resumed):
    """Each point of the loop written to the results file as it is done;
    the points kept for the table when there is no file to read back.  A
    Ctrl-C says what was kept (every point in the file is whole)."""
    measured = []
    try:
        for m in sweep_loop:
            if not samples:
                m.samples = None     # the statistics are kept, the buffer is not
            if results is not None:
                try:
                    results.write_point(m)
                except OSError as exc:
                    raise write_error(results.path, exc) from None
            if results is None or not results.regular:
                measured.append(m)
            else:
                # the statistics kept, for a table should the file vanish
                m.samples = None
                measured.append(m)
            state["done"] += 1
    except KeyboardInterrupt:
        kept = (f"; {state['done']} of {total} points are in {results.path} "
                "(continue with --resume)") if results is not None else ""
        raise Interrupted(f"after {state['done'] - resumed} points{kept}") from None
    return measured


def run(args):
    from sleepacc import _api
    _check_flags(args)
    names, env = args.methods, env_options(args)
    env_plain = {k: plain(v) for k, v in env.items()}
    durs = None if args.durations is None else [float(d) for d in args.durations]
    given = {"method": names, "duration": args.durations, "durations": args.durations,
             "n": args.max_samples, "budget": args.budget, "mode": args.mode, **env}
    # the ladder, each duration's range, the floor rule, periodic mode's
    # skipping a duration of 0 (left: "nothing to measure") and a margin
    # without a hybrid method to spend it: the core's plan of the sweep
    try:
        points = _api._points(names, durs, args.mode, env_plain.get("margin"))
    except ValueError as exc:
        raise core_error(exc, FLAGS, given) from None
    state = {"done": 0, "planner": None, "progress": None}

    def per_point(rest):
        """Before each point: its budget from the planner, the progress line."""
        kw = state["planner"](rest)
        state["progress"].update(state["done"], rest[0].method, rest[0].duration_ns,
                                 state["planner"].eta(rest))
        return kw

    kw = dict(mode=args.mode, n=plain(args.max_samples), keep_samples=True,
              budget=1.0 if args.budget is None else plain(args.budget),   # the planner's, per point
              per_point=per_point, **env_plain)

    def loop(skip=()):
        # every point's run checked by the core's rules now, before the file is touched
        try:
            return _api.iter_sweep(names, durs, skip=skip, **kw)
        except ValueError as exc:
            raise core_error(exc, FLAGS, given) from None

    sweep_loop = loop()
    if names is None:
        # what the core's plan leaves out of the default sweep (a signal
        # method under a blocked mask): one line each, and not in the header
        for why in _core.sweep_skips():
            print(f"sleepacc: skipping {why}", file=sys.stderr)
    methods = names or list(dict.fromkeys(p.method for p in points))
    durations_ns = ([d.ns for d in args.durations] if args.durations is not None
                    else [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS])
    results = None
    if args.output:
        results = _open_output(args, methods, durations_ns, env, env_plain)
    done_keys = set() if results is None else {(m, d) for m, mode, d in results.keys
                                               if mode == args.mode}
    todo = [p for p in points if (p.method, p.duration_ns) not in done_keys]
    if done_keys:
        sweep_loop = loop(done_keys)
    planner = state["planner"] = Planner(points, args.total, budget=plain(args.budget),
                                         max_samples=plain(args.max_samples), todo=todo)
    if todo and not planner.fits():   # said before the run, not found out after it
        echo(planner.promise(), columns(args), "sleepacc: ", "  ", file=sys.stderr)
    show = bool(args.progress) if args.progress is not None else (
        sys.stdout.isatty() and sys.stderr.isatty())
    progress = state["progress"] = Progress(len(points), show)
    resumed = state["done"] = len(points) - len(todo)
    try:
        measured = _measure(sweep_loop, results, args.samples, state, len(points), resumed)
        if results is not None and todo:
            try:
                results.write_footer(_now_iso())
            except OSError as exc:
                raise write_error(results.path, exc) from None
    finally:
        progress.close()
        if results is not None:
            results.close()
    return _finish(args, results, measured, len(todo), resumed, planner.elapsed())


def _finish(args, results, measured, done, resumed, wall):
    """After the points: the summary line, then the table of what the file
    holds (or of this run's points, where there is no file or it vanished
    while the sweep ran: then a one-line error after the table)."""
    note = f" ({resumed} already in the file)" if resumed else ""
    lost = results is not None and results.regular and _vanished(results.path)
    if results is not None and results.regular and not lost:
        # what is read back was read when the file was opened (a resumed
        # file's duplicates were warned of then; none is added since)
        sweep = load(results.path, warn=False)
        note += f"; results in {results.path}"
    else:
        sweep = sleepacc.Sweep(measured, host=host_facts())
    # a long path is not cut: where it does not fit, it is a line of its own
    echo(f"{done} point{'s' if done != 1 else ''} measured in {wall:.1f} s{note}",
         columns(args), "sleepacc: ", "  ", file=sys.stderr)
    if args.format != "none":
        emit_sweep(sweep, args.format)
    if lost:
        raise CliError(f"{results.path} was removed while the sweep ran ({lost}); "
                       f"the table shows this run's {len(measured)} points, without their samples")
    return 0

def _vanished(path):
    """Why a results file written to is no longer there (its directory
    deleted, or the file itself), or None."""
    if os.path.exists(path):
        return None
    d = os.path.dirname(os.path.abspath(path))
    return f"its directory {d} no longer exists" if not os.path.isdir(d) else "the file was deleted"
