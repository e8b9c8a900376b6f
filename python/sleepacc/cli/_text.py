"""Human text that fits the terminal: the width the commands write to
(``COLUMNS``, else the terminal's, else 80), the ``--wide`` option that
turns the fitting off, and the wrapping with a hanging indent that the
doctor's and the tables' long lines use.  Only layout lives here: what a
line says belongs to the command that prints it."""

from __future__ import annotations

import re
import shutil
import textwrap
from typing import List, Optional

# a number and its unit stay on one line ("16 µs" is not cut after the 16)
_UNIT = re.compile(r"(\d) (µs|us|ns|ms|s|%|CPUs?)(?=\W|$)")
DEFAULT_COLUMNS = 80
MIN_COLUMNS = 40      # below this, wrapping makes words of one letter a line


def add_wide(parser):
    """The ``--wide`` option of a command that fits its text to COLUMNS."""
    parser.add_argument("--wide", action="store_true",
                        help="print every line whole (no wrapping to COLUMNS)")


def columns(args=None) -> Optional[int]:
    """The width to fit, or None for --wide (no limit).  COLUMNS when it is
    set, else the terminal's width, else 80; never under MIN_COLUMNS."""
    if args is not None and getattr(args, "wide", False):
        return None
    cols = shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns
    return max(MIN_COLUMNS, cols if cols > 0 else DEFAULT_COLUMNS)


def wrap(text: str, width: Optional[int], first: str = "", rest: Optional[str] = None) -> List[str]:
    """`text` after the prefix `first`, wrapped to `width` columns; the
    following lines start with `rest` (a hanging indent: spaces as wide as
    `first` unless given).  Words longer than a line stay whole (a path or
    a command line is not cut).  width None: one line."""
    rest = " " * len(first) if rest is None else rest
    if width is None:
        return [first + text]
    out: List[str] = []
    text = _UNIT.sub("\\1\u00a0\\2", text)      # textwrap does not break at U+00A0
    for i, para in enumerate(text.split("\n")):
        out += textwrap.wrap(para, width=width, initial_indent=first if i == 0 else rest,
                             subsequent_indent=rest, break_long_words=False,
                             break_on_hyphens=False) or [(first if i == 0 else rest).rstrip()]
    return [line.replace("\u00a0", " ") for line in out]


def echo(text: str, width: Optional[int], first: str = "", rest: Optional[str] = None,
         file=None) -> None:
    """print() of wrap()'s lines (to `file`, default stdout)."""
    for line in wrap(text, width, first, rest):
        print(line, file=file)


def echo_lines(text: str, width: Optional[int], first: str = "") -> None:
    """Lines of an indented explanation, each wrapped under itself: a line
    keeps its own indent and its further lines hang two columns deeper.
    `first` starts the first line; the others are indented as wide."""
    pad = " " * len(first)
    for j, line in enumerate(str(text).split("\n")):
        body = line.lstrip(" ")
        lead = pad + line[: len(line) - len(body)]
        echo(body, width, first + line[: len(line) - len(body)] if j == 0 else lead, lead + "  ")
