"""The command table of ``sleepacc``: each command's name, the module that
holds it (its ``add_parser(sub)`` and ``run(args)``) and its one-line
summary, in the order ``sleepacc --help`` lists them.  The listing needs only
this table: a command's module is imported when that command runs.
"""

from __future__ import annotations

from typing import NamedTuple


class CommandInfo(NamedTuple):
    module: str    # the module under sleepacc.cli
    summary: str   # the line of `sleepacc --help`, and the subcommand's help


COMMANDS = {
    "sweep": CommandInfo("sweep", "measure methods x durations (the main job)"),
    "report": CommandInfo("report", "print a result file in one of the formats"),
    "measure": CommandInfo("measure", "one method at one duration, in detail"),
    "doctor": CommandInfo("doctor", "find what makes this host sleep badly, and the fix"),
    "model": CommandInfo("model", "explain a result file: verdict and causes per method"),
    "info": CommandInfo("info", "host and clock facts, and the methods"),
    "compare": CommandInfo("compare", "hosts side by side: one row per result file, ranked"),
    "plot": CommandInfo("plot", "figures of a result file"),
    "trace": CommandInfo("trace", "one method's lateness in its parts, traced from the kernel"),
    "monitor": CommandInfo("monitor", "periodic wake-ups, one line per report interval"),
    "exporter": CommandInfo("exporter", "measure in the background and serve Prometheus metrics"),
}


def add_command(sub, name, description):
    """The subparser of command `name` in `sub`, with its table summary."""
    return sub.add_parser(name, help=COMMANDS[name].summary, description=description)
