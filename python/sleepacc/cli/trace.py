"""``sleepacc trace``: one method at one duration, each sample's lateness in
its parts, traced from the kernel (sleepacc.trace; Linux tracefs, root).

Prints the per-term table (median and p99 over the complete samples, the
complete count, the lateness traced against untraced), or with ``--json``
the Trace's dict (the ``trace`` key of docs/schema.md).  ``-o FILE`` saves
a results file (JSON, sleepacc.load reads it) whose one point is the
untraced run carrying the trace.  The options go to the
core as typed; it checks them before tracefs is touched, and a broken rule
is a usage error naming the flag.  Without root or CAP_DAC_OVERRIDE the
command fails with the core's one line naming ``trace`` and what it needs.
"""

from __future__ import annotations

import sleepacc
from sleepacc.cli._common import (DEFAULTS, UNITS_HELP, CliError, core_error, duration, integer,
                                  plain, slack_ns, time_s)
from sleepacc.cli._files import check_writable_later, host_facts, print_json, write_error
from sleepacc.cli.commands import add_command

# the core's option -> the flag that gave it
FLAGS = {"method": "METHOD", "duration": "DURATION", "n": "-n"}


def add_parser(sub):
    s = add_command(sub, "trace",
                    "Trace one method at one duration from the kernel: each sample's lateness "
                    "in its parts (rounding, slack, timer_irq, wake_to_run, to_user, other). "
                    "Linux tracefs; needs root or CAP_DAC_OVERRIDE.")
    s.add_argument("method", metavar="METHOD", help="a method of `sleepacc info`")
    s.add_argument("duration", type=duration, metavar="DURATION",
                   help=f"the requested duration ({UNITS_HELP})")
    s.add_argument("-n", type=integer, default=None, metavar="N",
                   help="samples per run (the untraced run, then the traced one)")
    s.add_argument("--budget", type=time_s, default=None, metavar="SECONDS",
                   help=f"time per run (default {DEFAULTS['budget_ns'] / 1e9:g} without -n)")
    s.add_argument("--slack", type=slack_ns, metavar="NS",
                   help="timer slack for the run: a bare integer is ns (1 = none), or 50us")
    s.add_argument("--cpu", type=integer, metavar="N", help="pin to this CPU for the run")
    s.add_argument("--json", action="store_true", help="the trace as JSON")
    s.add_argument("-o", dest="output", metavar="FILE",
                   help="also save a results file whose point carries the trace")
    s.set_defaults(func=run)
    return s


def run(args):
    if args.output:
        check_writable_later(args.output)
    given = {"method": args.method, "duration": args.duration,
             **{k: v for k, v in (("n", args.n), ("budget", args.budget), ("slack", args.slack),
                                  ("cpu", args.cpu)) if v is not None}}
    try:   # the core checks every option before tracefs is touched
        t = sleepacc.trace(**{k: plain(v) for k, v in given.items()})
    except ValueError as exc:
        raise core_error(exc, FLAGS, given, unnamed=None) from None
    except PermissionError as exc:   # the core's words: "trace: needs root or CAP_DAC_OVERRIDE"
        raise CliError(exc.strerror or str(exc)) from None
    except OSError as exc:
        raise CliError(exc.strerror or str(exc)) from None
    if args.output:
        _save(t, args.output)
    if args.json:
        print_json(t.to_dict())
    else:
        print(t.table())
    return 0



def _save(t, path):
    from sleepacc import records
    sweep = sleepacc.Sweep([sleepacc.Measurement.from_trace(t)], host=host_facts(),
                           settings={"command": "trace", "methods": [t.method],
                                     "durations_ns": [t.requested_ns]})
    try:
        records.save(sweep, path)
    except OSError as exc:
        raise write_error(path, exc) from None
