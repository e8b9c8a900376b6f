"""``sleepacc report``: a result file (or irtt sleep's output) printed as one
of sleepacc.report's tables."""

from __future__ import annotations

from sleepacc.cli._common import CliError
from sleepacc.cli._files import FORMATS, emit_sweep, load, need_points
from sleepacc.cli.commands import add_command


def add_parser(sub):
    s = add_command(sub, "report",
                    "Print a result file (sweep -o, Sweep.save, Lua's save, or irtt sleep's "
                    "text) as one of the tables.")
    s.add_argument("file", metavar="FILE",
                   help="a file written by sweep -o (or Sweep.save), or irtt sleep's output")
    s.add_argument("--format", choices=FORMATS, default=None,
                   help="(default wide; irtt for irtt sleep's text, which has means only)")
    s.set_defaults(func=run)
    return s


def run(args):
    sweep = load(args.file)
    need_points(sweep, args.file, "report")
    fmt = args.format
    if fmt is None:   # irtt's own table holds means only: it reads back as irtt's table
        fmt = "irtt" if (sweep.settings or {}).get("source") == "irtt sleep" else "wide"
    try:
        emit_sweep(sweep, fmt)
    except UnicodeError:         # the output's encoding, not the file: main says so
        raise
    except ValueError as exc:    # what the file holds cannot fill the table: a data error
        raise CliError(f"{args.file}: {exc}") from None
    return 0
