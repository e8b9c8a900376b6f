"""``sleepacc plot``: figures of sleepacc.plot from result files (one figure
per kind), hosts side by side (--compare), or a monitor's lateness beside
flent's latency on one time axis (--flent)."""

from __future__ import annotations

import os
import sys

import sleepacc
from sleepacc import records
from sleepacc._units import format_go
from sleepacc.cli._common import CliError, arg_error, int_range, methods_list, requested
from sleepacc.cli._files import load, need_points
from sleepacc.cli.commands import add_command
from sleepacc.cli.compare import compare_inputs
from sleepacc.cli._text import columns, echo

PLOT_KINDS = ("error", "cdf", "pareto", "model", "histogram", "all")
PLOT_SUFFIXES = (".png", ".svg", ".pdf")   # the formats plot -o writes (from the file name)


def add_parser(sub):
    from sleepacc.fleet import STAT_FIELDS
    s = add_command(sub, "plot",
                    "Draw figures of a result file (error against duration, CDF, cost, the "
                    "model's fit, a histogram), hosts side by side, or a monitor beside flent.")
    s.add_argument("file", metavar="FILE", nargs="?")
    s.add_argument("--compare", nargs="+", metavar="FILE",
                   help="hosts side by side: these result files (--methods: the first is "
                        "the method drawn; --requested: the duration ranked; --stat, "
                        "--labels as for compare)")
    s.add_argument("--labels", metavar="A,B,...", help="with --compare: host names, one a file")
    s.add_argument("--flent", metavar="RESULT.flent.gz",
                   help="flent's latency series and the timer lateness of FILE (written by "
                        "`sleepacc monitor -o FILE` beside flent) on one time axis")
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
    s.add_argument("--requested", type=requested, default=None, metavar="D",
                   help="the requested duration of the cdf, pareto and histogram plots, "
                        "or ranked by --compare (default 1ms)")
    s.add_argument("--methods", type=methods_list, metavar="A,B,...",
                   help="only these methods (default: all in the file)")
    s.add_argument("--dpi", type=int_range(10, 1200), default=110)
    s.set_defaults(func=run)
    return s


def _check_plot_output(path, stdout=True):
    """plot -o: a file name ending in one of PLOT_SUFFIXES, or (stdout) "-"."""
    if (stdout and path == "-") or os.path.splitext(path)[1].lower() in PLOT_SUFFIXES:
        return
    names = ", ".join(PLOT_SUFFIXES[:-1]) + " or " + PLOT_SUFFIXES[-1]
    hint = " (or - for a PNG on the standard output)" if stdout else ""
    raise arg_error("-o", f"{path!r}: the file name must end in {names}{hint}")


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
    return {m.name for m in sleepacc.methods() if m.family == "baseline"}


def run(args):
    """One figure of sleepacc.plot per kind; --kind all writes the four
    beside each other: FIG, FIG-cdf, FIG-pareto and FIG-model."""
    if args.compare:
        if args.file:
            raise arg_error("--compare", "takes the files itself: plot --compare A B ... -o FIG")
        for flag, given in (("--kind", args.kind), ("--flent", args.flent)):
            if given is not None:   # --compare draws its one figure: they were ignored
                raise arg_error(flag, "does not apply to --compare (its figure is the hosts "
                                      "side by side)")
        return _plot_compare(args)
    for flag, given in (("--labels", args.labels), ("--stat", args.stat)):
        if given is not None:   # they name and rank hosts: without --compare, ignored
            raise arg_error(flag, "needs --compare (plot --compare A B ... -o FIG)")
    if args.flent:
        for flag, given in (("--kind", args.kind), ("--requested", args.requested),
                            ("--methods", args.methods)):
            if given is not None:   # the flent figure is one method's lateness over time
                raise arg_error(flag, "does not apply to --flent (its figure is the "
                                      "monitor's lateness over time)")
        return _plot_flent(args)
    args.kind = args.kind or "error"
    if args.requested is not None and args.kind in ("error", "model"):
        raise arg_error("--requested", f"does not apply to --kind {args.kind} (it draws "
                                       "every duration): use it with cdf, pareto, histogram "
                                       "or all")
    if not args.file:
        raise arg_error("FILE", "a result file is required (or --compare FILES...)")
    sweep = load(args.file)
    need_points(sweep, args.file, "plot")
    try:
        from sleepacc import plot
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise CliError(f"plotting needs matplotlib ({exc}): pip install 'sleepacc[plot]'") from None
    kinds = ["error", "cdf", "pareto", "model"] if args.kind == "all" else [args.kind]
    to_stdout = args.output == "-"
    if to_stdout and len(kinds) > 1:
        raise arg_error("-o", "--kind all writes several files: give -o FIG.png, not -")
    root, ext = os.path.splitext(args.output)
    _check_plot_output(args.output)
    for i, kind in enumerate(kinds):
        path = args.output if i == 0 else f"{root}-{kind}{ext}"
        try:
            fig = _plot_figure(plot, sweep, kind, args.methods,
                               None if args.requested is None else args.requested.ns)
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
        fmt = os.path.splitext(path)[1].lstrip(".").lower()
        records.write_atomic(path, lambda f: fig.savefig(f, dpi=dpi, format=fmt), binary=True)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror or exc}") from None
    echo(f"wrote {path}", columns(), "sleepacc: ", "  ", file=sys.stderr)   # a path is not cut


def _plot_flent(args):
    """plot --flent RESULT.flent.gz MONITOR.jsonl: one figure, one time axis."""
    if not args.file:
        raise arg_error("FILE", "--flent needs the monitor's file: "
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
    sweeps, labels = compare_inputs(args, "--compare")
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
                                 else float(args.requested))
    except ValueError as exc:
        raise CliError(f"cannot draw the compare plot: {exc}") from None
    _save_plot(fig, args.output, args.dpi)
    return 0


def _plot_figure(plot, sweep, kind, methods, requested_ns=None):
    req_s = None if requested_ns is None else requested_ns / 1e9
    if kind == "error":
        return plot.error_vs_requested(sweep, methods)
    if kind == "cdf":
        return plot.lateness_cdf(sweep, methods, requested=req_s)
    if kind == "pareto":
        return plot.cost_pareto(sweep, methods, requested=req_s)
    if kind == "histogram":
        return plot.histogram(_one_point(sweep, methods, requested_ns))
    from sleepacc import model
    fitted = next(iter(model.fit(sweep).values()))   # several groups: the first
    return plot.model_fit(fitted, sweep, methods)
