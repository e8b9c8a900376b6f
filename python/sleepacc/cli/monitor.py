"""``sleepacc monitor``: periodic wake-ups of one method, one line per report
interval, until --duration, Ctrl-C or SIGTERM; the lines as JSON Lines
beside flent (-o), the totals in irtt's JSON shape at the end (--irtt-json).
Each report is one periodic ``sleepacc.measure`` run.  Within COLUMNS, the
method and period are said once above the lines and each line starts with
the time of day; --wide gives every line the whole stamp, method and
period."""

from __future__ import annotations

import datetime as _dt
import json
import signal
import sys
import time

import sleepacc
from sleepacc import _core, records
from sleepacc._api import _now_iso
from sleepacc._units import format_go, format_ns
from sleepacc.cli._common import (UNITS_HELP, add_env_options, arg_error, core_error, core_rules,
                                  duration, plain, seconds, time_s)
from sleepacc.cli._files import (check_writable_later, host_facts, open_results, write_error,
                                 write_json)
from sleepacc.cli._text import add_wide, columns, echo, wrap
from sleepacc.cli.commands import add_command

# the core's option -> the flag that gave it
FLAGS = {"duration": "--interval", "seconds": "--interval", "budget": "--report"}


def add_parser(sub):
    s = add_command(sub, "monitor",
                    "Wake up periodically with one method and print the lateness once per "
                    "report interval, until --duration, Ctrl-C or SIGTERM.")
    s.add_argument("--method", default="clock_nanosleep_abs", metavar="M",
                   help="method (default clock_nanosleep_abs)")
    s.add_argument("--interval", type=duration, default="10ms", metavar="D",
                   help="wake-up period (default 10ms)")
    s.add_argument("--report", type=time_s, default="1s", metavar="D",
                   help="one line per this much time (default 1s)")
    s.add_argument("--duration", type=seconds, default=None, metavar="D",
                   help="stop after this long (default: until Ctrl-C or SIGTERM; either prints "
                        f"the summary and exits 0; {UNITS_HELP})")
    add_env_options(s)
    s.add_argument("--json", action="store_true", help="JSON Lines instead of text")
    s.add_argument("-o", "--output", metavar="FILE",
                   help="also write the lines as JSON Lines to FILE, each with its Unix time "
                        "`t` (lines up with flent's data; - for the standard output)")
    s.add_argument("--irtt-json", metavar="FILE",
                   help="at the end, write the timer statistics in irtt's JSON shape "
                        "(stats.timer_error, timer_err_percent, timer_misses; - for the "
                        "standard output, which then holds that document alone: the "
                        "report lines go to stderr)")
    add_wide(s)
    s.set_defaults(func=run)
    return s


class _Stop(Exception):
    """SIGTERM (or Ctrl-C) asked the monitor to stop."""


def _now_unix_iso():
    """(Unix-epoch seconds, the same instant as docs/schema.md's ISO 8601)."""
    t = time.time()
    d = _dt.datetime.fromtimestamp(t, _dt.timezone.utc)
    return t, d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


def _check(args):
    """Every option by its rule before anything runs; the environment."""
    interval = args.interval
    try:   # --interval's range first (the core's seconds rule), then --report against it
        _core.seconds_ns(float(interval))
    except ValueError as exc:
        raise core_error(exc, FLAGS, {"seconds": interval}) from None
    if args.report < interval:   # (the core's words would name the duration, not --report)
        raise arg_error("--report", f"must be at least --interval ({format_go(interval.ns)})")
    # one report is a periodic run of --method every --interval for --report
    env = core_rules(args, FLAGS, method=args.method, duration=interval, mode="periodic",
                     budget=args.report)
    if args.irtt_json == "-" and (args.json or args.output == "-"):
        # two JSON forms in one stream: neither parses
        raise arg_error("--irtt-json", "cannot share the standard output with the JSON "
                        f"lines of {'--json' if args.json else '-o -'} (give a file)")
    if args.irtt_json and args.irtt_json != "-":
        check_writable_later(args.irtt_json)   # written at the end: not lost after the run
    return {k: plain(v) for k, v in env.items()}


def _open_output(args, env):
    if args.output is None or args.output == "-":
        return None
    out = open_results(args.output, False)
    settings = {"command": "monitor", "method": args.method, "interval_ns": args.interval.ns,
                "report": float(args.report), "env": env, "version": sleepacc.__version__}
    try:
        out.write_header(host_facts(), settings, _now_iso())
    except OSError as exc:
        out.close()
        raise write_error(out.path, exc) from None
    return out


def run(args):
    """Periodic wake-ups, one line per report interval, until --duration,
    Ctrl-C or SIGTERM (each a normal stop: the summary, exit 0).  -o FILE
    writes the lines as JSON Lines (records.monitor_line: Unix time `t`);
    --irtt-json FILE writes the totals in irtt's JSON shape at the end."""
    env = _check(args)
    out = _open_output(args, env)
    totals = records.TimerTotals()
    started_iso, t_begin = _now_iso(), time.monotonic()
    state = {"busy": False, "stop": None}

    def on_signal(signum, _frame):
        state["stop"] = signal.Signals(signum).name
        if not state["busy"]:       # never inside a write: the line goes out whole
            raise _Stop()
    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        _loop(args, env, out, totals, state)
    except (_Stop, KeyboardInterrupt):
        state["stop"] = state["stop"] or "SIGINT"
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if out is not None:
            out.close()
    _finish(args, totals, state["stop"], started_iso, int((time.monotonic() - t_begin) * 1e9))
    return 0


def _loop(args, env, out, totals, state):
    """One periodic run per report, each written and printed, until stopped."""
    interval, interval_ns, report = float(args.interval), args.interval.ns, float(args.report)
    to_stdout = args.json or args.output == "-"
    stream = sys.stderr if args.irtt_json == "-" else sys.stdout
    width = columns(args)
    if not to_stdout and width is not None:   # said once, above the lines
        state["busy"] = True
        echo(f"{args.method} every {format_go(interval_ns)}: one line per "
             f"{format_go(round(report * 1e9))}, times UTC from {_now_unix_iso()[1][:10]}",
             width, "", "  ", file=stream)
        stream.flush()
        state["busy"] = False
    end = None if args.duration is None else time.monotonic() + args.duration
    first = True
    while state["stop"] is None:
        budget = report
        if end is not None:
            left = end - time.monotonic()
            if left <= interval / 2:
                break
            # the last report holds at least one wake-up: the core refuses
            # a budget shorter than the period (one sample longer than it)
            budget = max(interval, min(report, left))
        t0 = time.time()
        m = sleepacc.measure(args.method, interval, mode="periodic", budget=budget,
                             warmup=1 if first else 0, keep_samples=False, **env)
        first = False
        state["busy"] = True
        t1, stamp = _now_unix_iso()
        st = m.stats
        totals.add(st, m.missed)
        rec = records.monitor_line(args.method, interval_ns, st, m.missed, t0, t1, stamp)
        if out is not None:
            try:
                out.write_line(json.dumps(rec))
            except OSError as exc:
                raise write_error(out.path, exc) from None
        if to_stdout:
            print(json.dumps(rec), flush=True)
        else:
            for line in _report_lines(args, st, m.missed, stamp, width):
                print(line, file=stream)
            stream.flush()
        state["busy"] = False


def _report_lines(args, st, missed, stamp, width):
    """One report as text: within `width`, the time of day and the
    figures (wrapped under the time should they pass it); with no width
    (--wide), the whole stamp, the method and its period too."""
    def f(v):
        return format_ns(v, 3) if st["n"] else "-"
    figures = (f"count={st['n']} median={f(st['median'])} p99={f(st['p99'])} "
               f"max={f(st['max'])} misses={missed}")
    if width is None:
        return [f"{stamp}  {args.method} every {format_go(args.interval.ns)}: {figures}"]
    clock = stamp[11:23]                     # 2026-12-05T06:40:29.518Z -> 06:40:29.518
    return wrap(figures, width, f"{clock}  ", " " * (len(clock) + 4))


def _finish(args, totals, stop, started_iso, wall_ns):
    """The summary line on stderr, and --irtt-json's document."""
    late = totals.lateness()
    interval_ns = args.interval.ns
    why = {"SIGTERM": " (stopped by SIGTERM)", "SIGINT": " (stopped by Ctrl-C)"}.get(stop, "")
    if totals.reports:
        worst = format_ns(late["max"], 3) if late["max"] is not None else "-"
        reports = f"{totals.reports} report{'' if totals.reports == 1 else 's'}"
        echo(f"{args.method} every {format_go(interval_ns)}: {reports}, "
             f"{late['n']} wake-ups, {totals.misses} missed, mean lateness "
             f"{format_ns(late['mean'], 3) if late['n'] else '-'}, worst {worst}{why} ---",
             columns(args), "--- ", "    ", file=sys.stderr)
    else:
        echo(f"{args.method}: no report finished{why} ---", columns(args), "--- ", "    ",
             file=sys.stderr)
    if args.irtt_json:
        doc = records.irtt_json(late, interval_ns, totals.misses, timer=f"sleepacc:{args.method}",
                                start_time=started_iso, duration_ns=wall_ns,
                                system_info=host_facts(), version=sleepacc.__version__)
        try:
            write_json(args.irtt_json, doc)
        except OSError as exc:
            raise write_error(args.irtt_json, exc) from None
