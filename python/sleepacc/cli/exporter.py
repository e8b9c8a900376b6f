"""``sleepacc exporter``: measure in turns within a CPU budget and serve the
lateness as Prometheus metrics (sleepacc.exporter), or write them for
node_exporter's textfile collector; options also from a --config file."""

from __future__ import annotations

import argparse
import math
import sys

from sleepacc import _core
from sleepacc._units import format_go
from sleepacc.cli._common import (MODES, UNITS_HELP, CliError, UsageError, add_env_options,
                                  arg_error, argument, core_rules, durations, methods_list, plain, seconds,
                                  with_typed)
from sleepacc.cli.commands import add_command

EXPORTER_METHODS = ["nanosleep", "timerfd", "auto"]


def add_parser(sub):
    s = add_command(sub, "exporter",
                    "Measure each method in turns within a CPU budget and serve the "
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
    s.add_argument("--every", type=seconds, metavar="D",
                   help="how often --textfile and --snapshot are written (default 60s)")
    s.add_argument("--snapshot", metavar="FILE",
                   help="also write a sleepacc/1 result file (every --every and on exit), "
                        "for compare, plot and doctor --from")
    s.add_argument("--methods", type=methods_list, metavar="A,B,...",
                   help="methods, or auto for sleepacc.Sleeper (default nanosleep,timerfd,auto)")
    s.add_argument("--duration", type=durations, metavar="D,D,...",
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
    s.add_argument("--turn", type=seconds, metavar="D",
                   help="the longest a measuring turn lasts (default 250ms); every --duration "
                        "must fit in it")
    s.add_argument("--stop-after", type=seconds, metavar="D",
                   help="stop after this long (default: run until SIGTERM)")
    add_env_options(s)
    s.set_defaults(func=run, exporter_parser=s)
    return s


def _listen_arg(text):
    from sleepacc.exporter import parse_listen
    return argument(parse_listen, text)


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
    return 0.0 if text.strip() in ("0", "off", "never") else seconds(text)


def _exporter_config(path, parser):
    """The `key = value` lines of a --config file, parsed by the exporter's
    own parser (keys are its long options without the dashes)."""
    try:   # utf-8-sig: a byte-order mark (a file saved by Notepad) is no part of a key
        with open(path, encoding="utf-8-sig") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise arg_error("--config", f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise arg_error("--config", f"{path}: not UTF-8 text ({exc.reason} at byte "
                                    f"{exc.start})") from None
    argv = []
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        key, sep, value = (t.strip() for t in line.partition("="))
        key = key.replace("_", "-")
        if not sep or not key or key == "config":
            raise arg_error("--config", f"{path}:{lineno}: expected `option = value` "
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
            raise arg_error("--config", f"{path}:{lineno}: {exc}") from None
        argv += line_argv
    try:
        return parser.parse_args(argv)
    except UsageError as exc:
        raise arg_error("--config", f"{path}: {exc}") from None


def _series(args, ex):
    """The methods and durations (ns) measured: each duration's range by the
    core's seconds rule, the exporter's own rules of its series
    (exporter.check_series, worded by the flags here), then each series by
    the core's rules ("auto" is a Sleeper)."""
    methods = args.methods or EXPORTER_METHODS
    given = args.duration or []
    durations = [d.ns for d in given] or [1_000_000]
    for d in given:               # each duration's range first (the core's seconds rule)
        if d.ns == 0:
            continue              # the exporter's rule below says why 0 is refused
        try:
            _core.seconds_ns(float(d))
        except ValueError as exc:
            raise arg_error("--duration", with_typed(str(exc).partition(": ")[2], d)) from None
    turn = args.turn if args.turn is not None else ex.DEFAULT_TURN_S
    flags = {"methods": "--methods", "durations_ns": "--duration", "turn_s": "--turn"}
    try:
        ex.check_series(methods, durations, turn)
    except ValueError as exc:
        arg, _, words = str(exc).partition(": ")
        for name, flag in flags.items():
            words = words.replace(name, flag)
        raise arg_error(flags.get(arg, arg), words) from None
    for name in methods:
        for d in (given or [d / 1e9 for d in durations]) if name != "auto" else ():
            # a turn's budget is --turn
            core_rules(args, {"method": "--methods", "budget": "--turn"}, method=name,
                       duration=d, mode=args.mode or "relative", budget=turn)
    return methods, durations


def run(args):
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
    methods, durations = _series(args, ex)
    if args.every is not None and not (args.textfile or args.snapshot):
        raise arg_error("--every", "needs --textfile or --snapshot (what it times)")
    every = args.every if args.every is not None else 60.0
    listen = args.listen
    if listen is None and not args.textfile:
        listen = ex.parse_listen("127.0.0.1:9851")
    env = {k: plain(v) for k, v in core_rules(args, mode=args.mode or "relative").items()}
    options = {k: plain(v) for k, v in (("mode", args.mode), ("cpu_budget", args.cpu_budget),
                                        ("doctor_every", args.doctor_every), ("turn_s", args.turn))
               if v is not None}      # the others: ex.Exporter's defaults
    e = ex.Exporter(methods, durations, env=env, **options)
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
    except RuntimeError as exc:       # no thread left for the measuring: say why, exit 1
        raise CliError(str(exc)) from None
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
