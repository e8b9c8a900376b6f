"""The files of the ``sleepacc`` commands: result files read back
(sleepacc.load), the results file a command appends to
(sleepacc.records.ResultsFile), JSON documents and tables on the standard
output, each failure as one line naming the file.
"""

from __future__ import annotations

import errno
import json
import os
import sys

import sleepacc
from sleepacc import records
from sleepacc.cli._common import CliError, arg_error

SCHEMA = records.SCHEMA
# the tables of sleepacc.report a result file is printed as (sweep, report)
FORMATS = ("irtt", "midas", "xmame", "testsleep", "wide", "markdown", "csv", "json")
clean = records.clean   # NaN and infinities -> None, so the JSON is strict


def host_facts():
    from sleepacc._api import sweep_host
    return sweep_host()


def load(path, warn=True):
    """sleepacc.load with failures mapped to one line ("<file>:<line>: what"),
    and its warnings (duplicate points, a second header) one line each
    (none with `warn` False: said already, as sweep --resume does)."""
    import warnings
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sweep = sleepacc.load(path)
    except FileNotFoundError:
        raise CliError(f"cannot read {path}: no such file") from None
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, KeyError, TypeError) as exc:
        msg = " ".join(str(exc).split())
        raise CliError(msg if msg.startswith(os.fspath(path)) else
                       f"{path} is not a sleepacc result file: {msg}") from None
    for w in caught if warn else ():
        print(f"sleepacc: warning: {w.message}", file=sys.stderr)
    return sweep


def need_points(data, path, what):
    """A file (a Sweep, or tidy records) without points is a data error,
    said the same way by every command that reads one: "<file> has no
    points to <what>" (a monitor -o file holds report lines, not points)."""
    if len(data) == 0:
        monitor = (getattr(data, "settings", None) or {}).get("command") == "monitor"
        hint = (": it is a monitor -o file (its lines are reports, not points; "
                "plot --flent draws them)" if monitor else "")
        raise CliError(f"{path} has no points to {what}{hint}")


def emit_sweep(sweep, fmt):
    """A Sweep as a table of sleepacc.report on the standard output."""
    from sleepacc import report
    text = report.format(sweep, fmt)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()


def open_results(path, resume):
    """records.ResultsFile opened for appending, its failures mapped to
    one line (a usage error for an existing file without --resume)."""
    import warnings
    from sleepacc.cli import _streams
    if path == "-" and _streams.stdout_closed():   # its descriptor holds /dev/null
        raise CliError("cannot write results to the standard output (-o -): it is closed")
    results = records.ResultsFile(path)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results.open(resume)
        for w in caught:   # duplicate points, a second header: one line each
            print(f"sleepacc: warning: {w.message}", file=sys.stderr)
    except FileExistsError:
        raise arg_error("-o", f"{path} already exists "
                              "(use --resume to continue it, or another name)") from None
    except ValueError as exc:
        raise CliError(f"cannot resume {path}: {exc}") from None
    except OSError as exc:
        raise write_error(path, exc) from None
    return results


def check_writable_later(path):
    """A file written only when the command ends (monitor --irtt-json): its
    directory must exist and be writable, and the path not be a directory,
    now, before anything runs (as the exporter's --textfile and --snapshot)."""
    d = os.path.dirname(os.path.abspath(path))
    for bad, err in ((os.path.isdir(path), errno.EISDIR), (not os.path.isdir(d), errno.ENOENT),
                     (not os.access(d, os.W_OK), errno.EACCES)):
        if bad:
            raise write_error(path, OSError(err, os.strerror(err), path))


def write_error(path, exc):
    if exc.errno == errno.EPIPE:    # `sleepacc sweep -o - | head`: a quiet exit
        return BrokenPipeError(exc.errno, exc.strerror)
    name = errno.errorcode.get(exc.errno) if exc.errno else None
    return CliError(f"cannot write results to {path}: {exc.strerror or exc}"
                    + (f" ({name})" if name else ""))


def write_json(path, doc):
    """One JSON document to path ("-": the standard output), atomically."""
    text = json.dumps(records.clean(doc), indent=1) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    records.write_atomic(path, lambda f: f.write(text))


def print_json(doc, **kw):
    """One strict JSON document (NaN and infinities as null) on the standard output."""
    json.dump(clean(doc), sys.stdout, **kw)
    sys.stdout.write("\n")
