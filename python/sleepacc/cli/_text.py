"""Human text that fits the terminal: the width the commands write to
(``COLUMNS``, else the terminal's, else 80), the ``--wide`` option that
turns the fitting off, the wrapping with a hanging indent that the
doctor's and the tables' long lines use, and the two ways a table too wide
for the width is fitted: columns that leave it for lines under each row
(fit_table), or the columns spread over several tables (split_table).
Only layout lives here: what a line says belongs to the command that
prints it."""

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


def _longest(text: str) -> int:
    return max((len(line) for line in text.split("\n")), default=0)


def _columns_of(headers, rows, align, cols) -> str:
    """report.text_table of the columns `cols` (indices) only."""
    from sleepacc.report import text_table
    return text_table([headers[i] for i in cols], [[r[i] for i in cols] for r in rows],
                      "".join(align[i] for i in cols))


def fit_table(headers, rows, align: Optional[str] = None, width: Optional[int] = None,
              movable=()) -> str:
    """report.text_table's table when it fits `width` (or width is None);
    else the columns `movable` (indices, in the order they give way) leave
    it one at a time until it fits, each then a line "header: value" under
    its row, indented to the second column and wrapped there (a path is
    not cut: longer than the line, it passes it)."""
    n = len(headers)
    align = align or "<" + ">" * (n - 1)
    rows = [[str(c) for c in r] for r in rows]
    for k in range(len(movable) + 1):
        gone = set(movable[:k])
        table = _columns_of(headers, rows, align, [i for i in range(n) if i not in gone])
        if width is None or _longest(table) <= width:
            break
    if not gone:
        return table
    indent = " " * (max(len(str(r[0])) for r in [headers] + rows) + 2)
    lines = table.split("\n")
    out = lines[:1]
    for r, line in zip(rows, lines[1:]):
        out.append(line)
        for i in sorted(gone):
            out += wrap(r[i], width, f"{indent}{headers[i]}: ", indent + "  ")
    return "\n".join(out)


def split_table(headers, rows, align: Optional[str] = None, width: Optional[int] = None,
                keys: int = 1, groups=None) -> str:
    """report.text_table's table when it fits `width` (or width is None);
    else several tables, a blank line apart, each with the first `keys`
    columns and as many of the others as fit.  `groups` counts the other
    columns group by group (the errors, the ratios, ...): a group stays in
    one table where it fits in one."""
    n = len(headers)
    align = align or "<" + ">" * (n - 1)
    rows = [[str(c) for c in r] for r in rows]
    head = list(range(keys))

    def fits(cols):
        return _longest(_columns_of(headers, rows, align, head + cols)) <= width
    if width is None or fits(list(range(keys, n))):
        return _columns_of(headers, rows, align, list(range(n)))
    units: List[List[int]] = []
    start = keys
    for g in groups or [n - keys]:
        units.append(list(range(start, start + g)))
        start += g
    chunks: List[List[int]] = []
    cur: List[int] = []
    for unit in units:
        if cur and not fits(cur + unit):
            chunks.append(cur)
            cur = []
        if fits(cur + unit):
            cur += unit
            continue
        for c in unit:         # a group too wide for one table: column by column
            if cur and not fits(cur + [c]):
                chunks.append(cur)
                cur = []
            cur.append(c)
    chunks.append(cur)
    return "\n\n".join(_columns_of(headers, rows, align, head + c) for c in chunks if c)
