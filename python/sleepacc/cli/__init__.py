"""The ``sleepacc`` command: sweep, measure, doctor, model, info, compare, trace, plot,
monitor, report, exporter.

This package parses arguments and runs one command.  The command table
(``commands.COMMANDS``: name -> module, summary) lists them; each command
lives in its own module with ``add_parser(sub)`` (its flags, beside its body)
and ``run(args)``, and only the command being run is imported and has its
parser built.  ``_common`` holds the argument types and shared options,
``_files`` the result files.  Nothing here measures or summarises by itself:
every point is one ``sleepacc.measure`` call (the C core sleeps, times,
checks the options and computes the statistics), a sweep's budgets come from
``sleepacc.plan``, tables from ``sleepacc.report``, explanations from
``sleepacc.model``, figures from ``sleepacc.plot``, and result files are read
back by ``sleepacc.load``.

Exit codes (every subcommand):
    0    success
    1    a failure, with one line on stderr ("sleepacc: error: ...")
    2    a usage error, one line naming the bad argument
    130  Ctrl-C; whatever was written so far stays intact and parseable

The JSON and JSON Lines schema ("sleepacc/1") is described in docs/schema.md.
"""

from __future__ import annotations

import importlib
import sys

from sleepacc._units import UNITS_TEXT
from sleepacc.cli import _streams
from sleepacc.cli._common import CliError, Interrupted, Parser, UsageError
from sleepacc.cli.commands import COMMANDS

__all__ = ["main", "build_parser", "COMMANDS", "CliError", "UsageError", "Interrupted"]

# Names this module had before the commands moved into their own modules,
# kept importable from here: name -> (module under sleepacc, attribute).
_MOVED = {
    **{name: ("plan", name) for name in (
        "DEFAULT_TOTAL_S", "MIN_POINT_BUDGET_S", "MAX_POINT_BUDGET_S", "PLAN_LATE_NS",
        "PLAN_OVERHEAD_S", "DEFAULT_MAX_SAMPLES", "warmup_for", "point_budget", "point_cost",
        "plan_budget")},
    **{f"cmd_{name}": (f"cli.{info.module}", "run") for name, info in COMMANDS.items()},
    "SCHEMA": ("cli._files", "SCHEMA"), "FORMATS": ("cli._files", "FORMATS"),
    "POLICIES": ("cli._common", "POLICIES"), "MODES": ("cli._common", "MODES"),
    "UNITS_HELP": ("cli._common", "UNITS_HELP"), "Progress": ("cli._common", "Progress"),
    "PLOT_KINDS": ("cli.plot", "PLOT_KINDS"), "PLOT_SUFFIXES": ("cli.plot", "PLOT_SUFFIXES"),
    "EXPORTER_METHODS": ("cli.exporter", "EXPORTER_METHODS"),
}


def __getattr__(name):
    if name in _MOVED:
        module, attr = _MOVED[name]
        return getattr(importlib.import_module(f"sleepacc.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _top_parser():
    from sleepacc import __version__
    p = Parser(prog="sleepacc",
               description="Measure how well this machine sleeps, explain why, "
                           f"and compare hosts.  Durations take a unit ({UNITS_TEXT}: "
                           "m is minutes, not ms); a bare number is seconds.",
               epilog="Exit codes: 0 success, 1 failure, 2 usage error, 130 Ctrl-C.  "
                      "File schema: docs/schema.md.")
    p.add_argument("--version", action="version", version=f"sleepacc {__version__}")
    return p, p.add_subparsers(dest="command", metavar="COMMAND", required=True)


def build_parser(command=None):
    """The parser of ``sleepacc``: with `command`, only that command's
    subparser is built (what main() runs); without, every command's."""
    p, sub = _top_parser()
    for name, info in COMMANDS.items():
        if command is None or name == command:
            importlib.import_module(f"sleepacc.cli.{info.module}").add_parser(sub)
    return p


def _listing_parser():
    """The parser for a command line naming no command (--help, --version,
    a typo): every command listed by its summary, none built."""
    p, sub = _top_parser()
    for name, info in COMMANDS.items():
        sub.add_parser(name, help=info.summary, add_help=False)
    return p


def _command_in(argv):
    """The command a command line names: its first word that is not an
    option (the top level's options, -h and --version, take no value;
    given before the command, they are about the whole program)."""
    for word in argv:
        if word == "--" or not word.startswith("-"):
            return word if word in COMMANDS else None
        if word in ("-h", "--help", "--version"):
            return None
    return None


def main(argv=None) -> int:
    """Run the command line; returns the exit code (see the module doc).

    Whatever state the standard streams are in (closed by a daemon wrapper,
    a pipe whose reader left, a full disk, an encoding that lacks a
    character), the outcome is one line on the stream that is left and the
    documented exit code, never a traceback (_streams)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    with _streams.standard_streams():
        code = _run(argv)
        return _streams.finish(code)


def _run(argv) -> int:
    say = _streams.say
    try:
        command = _command_in(argv)   # inside: a Ctrl-C while it loads is exit 130 too
        parser = build_parser(command) if command else _listing_parser()
        args = parser.parse_args(argv)
        return int(args.func(args) or 0)
    except SystemExit as exc:         # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt:
        _flush_quietly()
        say("sleepacc: interrupted")
        return 130
    except Interrupted as exc:
        _flush_quietly()
        say(f"sleepacc: interrupted {exc}")
        return 130
    except CliError as exc:
        _flush_quietly()
        say(f"sleepacc: error: {exc}")
        return exc.code
    except MemoryError:
        _flush_quietly()
        say("sleepacc: error: out of memory")
        return 1
    except BrokenPipeError:
        # stdout closed early (`sleepacc ... | head`): not worth a message.
        _streams.quiet_stdout()
        return 1
    except PermissionError as exc:
        say(f"sleepacc: error: {exc}")
        return 1
    except UnicodeError as exc:
        # text the standard output's encoding cannot hold: not a bad argument
        say(f"sleepacc: error: cannot write the output: {' '.join(str(exc).split())}")
        return 1
    except (ValueError, TypeError) as exc:
        # The library refused an argument the parser let through.
        say(f"sleepacc: error: {' '.join(str(exc).split())}")
        return 2
    except OSError as exc:
        say(f"sleepacc: error: {exc.strerror or exc}")
        return 1


def _flush_quietly():
    try:
        sys.stdout.flush()
    except (OSError, ValueError, AttributeError):
        pass
