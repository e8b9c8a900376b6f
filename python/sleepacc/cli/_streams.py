"""The standard streams of a ``sleepacc`` command, whatever state they come
in: closed (``cmd >&-``, as cron and daemon wrappers leave them), a pipe whose
reader left, a full device, or an encoding that lacks a character the
output holds.

``standard_streams()`` wraps one command: a closed descriptor 0, 1 or 2 is
held on /dev/null (so that no file the command opens lands on it), a closed
standard output becomes a stream whose writes fail with one clear OSError
(caught by ``main`` as one line), a closed standard error one that drops
what is written (there is nowhere to say it), and a character the encoding
cannot hold is written escaped rather than failing the command after it
measured.  Everything is put back as found when the command ends.
``say`` writes a line on whichever stream is left; ``finish`` flushes the
standard output and turns a late failure (a full device) into one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys


class _Closed:
    """Stands in for a standard stream whose descriptor was closed."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, name, drop):
        self.name = name
        self.drop = drop   # True: writes vanish (the standard error)

    def write(self, text):
        if self.drop:
            return len(text)
        raise OSError(errno.EBADF, f"cannot write to the {self.name}: it is closed")

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        raise OSError(errno.EBADF, f"the {self.name} is closed")


def _closed_fd(fd):
    try:
        os.fstat(fd)
        return False
    except OSError:
        return True


@contextlib.contextmanager
def standard_streams():
    held = []                       # descriptors put on /dev/null here
    for fd in (0, 1, 2):
        if _closed_fd(fd):
            try:
                got = os.open(os.devnull, os.O_RDWR)
            except OSError:
                continue
            if got != fd:           # a lower descriptor was free too: place it
                os.dup2(got, fd)
                os.close(got)
            held.append(fd)
    saved = (sys.stdout, sys.stderr)
    if sys.stdout is None or 1 in held:
        sys.stdout = _Closed("standard output", drop=False)
    if sys.stderr is None or 2 in held:
        sys.stderr = _Closed("standard error", drop=True)
    escaped = []                    # streams whose errors were strict
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
                escaped.append(stream)
            except (OSError, ValueError, AttributeError):
                pass
    try:
        yield
    finally:
        for stream in escaped:
            with contextlib.suppress(OSError, ValueError, AttributeError):
                stream.reconfigure(errors="strict")
        sys.stdout, sys.stderr = saved
        for fd in held:
            with contextlib.suppress(OSError):
                os.close(fd)


def _usable(stream):
    return stream is not None and not isinstance(stream, _Closed)


def stdout_closed():
    """Was the standard output closed when the command started?"""
    return isinstance(sys.stdout, _Closed)


def say(line):
    """One line on the standard error, or on the standard output where the
    standard error is closed or fails; nothing where neither is left."""
    for stream in (sys.stderr, sys.stdout):
        if not _usable(stream):
            continue
        try:
            stream.write(line + "\n")
            stream.flush()
            return
        except (OSError, ValueError):
            continue


def quiet_stdout():
    """Point descriptor 1 at /dev/null, so that what is still buffered for
    a standard output that failed goes nowhere at exit, without a message."""
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


def finish(code):
    """The exit code once the standard output is flushed: a flush that fails
    (a full device, a reader gone) is one line and exit 1, not a message from
    the interpreter's shutdown."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_stdout()
        return code or 1
    except (OSError, ValueError) as exc:
        quiet_stdout()
        if code == 0:
            say(f"sleepacc: error: cannot write the output: {getattr(exc, 'strerror', None) or exc}")
        return code or 1
    return code
