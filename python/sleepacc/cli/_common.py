"""What every ``sleepacc`` command shares: its errors, the argument parser,
the argument types, the shared options (environment, margin), the mapping
of the core's rule words onto the flag the user typed, and the progress line.

An argument type parses the text once, into what the core's option takes
(seconds for a time, ns for a slack, an int for a count), and keeps the text
as typed: an error about the value quotes what the user wrote ("got 5m"),
not its conversion ("got 300.0").  Ranges are the core's rules, checked
where the value is used; no type here adds a rule of its own beyond "this
text is a number of the right kind".
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys

from sleepacc import _core
from sleepacc._units import UNITS_TEXT, format_go, parse_duration_ns, parse_durations_ns, \
    parse_slack_ns

POLICIES = "{" + ",".join(_core.policy_names) + "}"
MODES = "{" + ",".join(_core.mode_names) + "}"
DEFAULTS = _core.config_default()   # the core's defaults of a run (budget, warmup, margin)
# The help of every duration option ends with this (a typo of 5ms as 5m is
# five minutes: say so where the option is described).
UNITS_HELP = f"units: {UNITS_TEXT}; m is minutes, not ms; a bare number is seconds"


# --------------------------------------------------------------------------
# Errors and the argument parser
# --------------------------------------------------------------------------

class CliError(Exception):
    """A failure: one line on stderr, exit 1."""
    code = 1


class UsageError(CliError):
    """A bad argument: one line on stderr naming it, exit 2."""
    code = 2


class Interrupted(Exception):
    """Ctrl-C, with what was kept: one line on stderr, exit 130."""


class Parser(argparse.ArgumentParser):
    """argparse, but every error is one line and exit 2 (via UsageError),
    and a negative duration ("-1ms") is read as a value, so its own message
    ("negative") is what the user sees, not "DURATION required"."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        # argparse treats "-1ms" as an unknown option (its matcher knows only
        # plain numbers); no sleepacc option starts with a digit or a dot.
        self._negative_number_matcher = re.compile(r"^-\.?[0-9]")

    def error(self, message):
        raise UsageError(" ".join(str(message).split()))


def arg_error(name, message):
    return UsageError(f"argument {name}: {message}")


# --------------------------------------------------------------------------
# Argument types: the value the core takes, with the text as typed
# --------------------------------------------------------------------------

class Seconds(float):
    """A time as the user gave it: its value in seconds (what the core's
    options take) and `.text`, what was typed."""

    def __new__(cls, value, text):
        self = super().__new__(cls, value)
        self.text = text.strip()
        return self

    @property
    def ns(self) -> int:
        return round(self * 1e9)


class Integer(int):
    """An integer as the user gave it, with `.text`, what was typed."""

    def __new__(cls, value, text):
        self = super().__new__(cls, value)
        self.text = text.strip()
        return self


def typed(value):
    """What the user typed for a value an argument type made (None for a
    value the command chose itself)."""
    return getattr(value, "text", None)


def plain(value):
    """A typed value as the plain float or int the library stores."""
    if isinstance(value, Seconds):
        return float(value)
    if isinstance(value, Integer):
        return int(value)
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def argument(parse, text):
    """parse(text) for an argparse type: its ValueError is argparse's error
    (the option named, the words kept, exit 2)."""
    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _parse_ns(text):
    return argument(parse_duration_ns, text)


def duration(text):
    """argparse type: one duration ("10us", "1.5ms", "0"; a bare number is
    seconds) -> Seconds; its range is the core's rule where it is used."""
    return Seconds(_parse_ns(text) / 1e9, text)


def requested(text):
    """argparse type: a requested duration that selects points (compare
    --duration, plot --requested), in the core's seconds range (its rule and
    words: no point is ever outside it) -> Seconds."""
    d = duration(text)
    try:
        _core.seconds_ns(float(d))
    except ValueError as exc:
        raise argparse.ArgumentTypeError(with_typed(str(exc).partition(": ")[2], d)) from None
    return d


def durations(text):
    """argparse type: comma-separated durations -> list of Seconds, in
    order, duplicates dropped; "1ms,10" is refused naming the bare item."""
    values = argument(parse_durations_ns, text)
    items = {}
    for t in (t.strip() for t in text.split(",")):   # each value's first text
        items.setdefault(parse_duration_ns(t), t)
    return [Seconds(ns / 1e9, items[ns]) for ns in values]


def time_s(text):
    """argparse type: a time ("0.5" is seconds, "500ms") -> Seconds.  Its
    range is the rule of the option it feeds (the core's)."""
    try:
        return Seconds(parse_duration_ns(text) / 1e9, text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a positive number of seconds (or a duration like 500ms), got {text!r}"
        ) from None


def seconds(text):
    """argparse type: a positive time, for the CLI's own times (--total,
    monitor's --duration, the exporter's --every, --turn, --stop-after: no
    core rule has them)."""
    s = time_s(text)
    if s < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    if s <= 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text!r}")
    return s


def slack_ns(text):
    """argparse type: timer slack; a bare number is an integer of ns (the
    kernel's unit), suffixes allowed ("50us"); "1.0" is refused."""
    return Integer(argument(parse_slack_ns, text), text)


def int_range(lo, hi):
    def conv(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo} and {hi}, got {v}")
        return Integer(v, text)
    return conv


integer = int_range(-math.inf, math.inf)   # argparse type: any integer


def positive_int(text):
    """argparse type: a count of the CLI's own (doctor's --top)."""
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def methods_list(text):
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty item in {text!r}")
    return list(dict.fromkeys(names))


def method_name(text):
    """A method name as a file holds it (any text; `sleepacc info`'s names
    or another tool's): an empty one names nothing."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"must be a method name, got {text!r}")
    return text


# --------------------------------------------------------------------------
# Shared options
# --------------------------------------------------------------------------

def add_mode_option(p):
    p.add_argument("--mode", metavar=MODES, default="relative",
                   help="relative: each sample is one sleep's actual length (default); periodic: "
                        "sleeps to deadlines start + k*DURATION, each sample is the lateness, "
                        "and deadlines passed while sleeping count as missed")


def add_margin_option(p):
    p.add_argument("--margin", type=duration, metavar="D",
                   help="the hybrid method's margin: it sleeps in the kernel until this long "
                        f"before the deadline, then spins (default "
                        f"{format_go(DEFAULTS['margin_ns'])}; a bare number is seconds)")


def add_env_options(p):
    g = p.add_argument_group("environment (applied to the measuring thread, restored after)")
    g.add_argument("--slack", type=slack_ns, metavar="NS",
                   help="timer slack: a bare integer is ns, the kernel's unit (1 = none); "
                        "or with a unit: 50us")
    g.add_argument("--policy", metavar=POLICIES, help="scheduling policy")
    # --priority, --cpu, --dma-latency: any integer here; their ranges are the
    # core's rules, checked where the run is planned
    g.add_argument("--priority", type=integer, metavar="N",
                   help="real-time priority 1..99 (with --policy fifo/rr; default 1)")
    g.add_argument("--cpu", type=integer, metavar="N", help="pin to this CPU")
    g.add_argument("--dma-latency", type=integer, metavar="US",
                   help="hold /dev/cpu_dma_latency at US microseconds (0: no idle-exit "
                        "cost, as cyclictest does; needs root)")
    g.add_argument("--lock-memory", action="store_true",
                   help="mlockall for the run (needs CAP_IPC_LOCK or RLIMIT_MEMLOCK)")


def env_options(args):
    """The environment options a command was given, as sleepacc.measure
    keywords, values as typed (their rules are the core's)."""
    kw = {}
    for option in ("slack", "policy", "priority", "cpu", "dma_latency"):
        if getattr(args, option, None) is not None:
            kw[option] = getattr(args, option)
    if getattr(args, "lock_memory", False):
        kw["lock_memory"] = True
    if getattr(args, "margin", None) is not None:
        kw["margin"] = args.margin
    return kw


# --------------------------------------------------------------------------
# The core's rules, named by the flag
# --------------------------------------------------------------------------

def with_typed(why, value):
    """The core's "<rule>, got <value>" with the value as the user typed it."""
    text = typed(value)
    head, sep, _shown = why.rpartition(", got ")
    return f"{head}, got {text}" if sep and text is not None else why


def core_error(exc, flags=None, given=None, unnamed="--methods"):
    """The core's "<option>: <rule>, got <value>" as a usage error naming
    the option's flag (`flags`: option -> flag, else --option) and quoting
    the value as typed (`given`: option -> the value handed to the core).
    Words that name no option (the sweep's floor rule) go to `unnamed`, or
    stay as they are with `unnamed` None."""
    option, sep, why = str(exc).partition(": ")
    key = re.sub(r"\[[0-9]+\]$", "", option)     # "durations[2]": the list's item
    if not sep or not re.fullmatch(r"[a-z_]+", key):
        return arg_error(unnamed, str(exc)) if unnamed else UsageError(" ".join(str(exc).split()))
    value = (given or {}).get(key)
    index = re.search(r"\[([0-9]+)\]$", option)
    if index and isinstance(value, list):
        i = int(index.group(1))
        value = value[i] if i < len(value) else None
    return arg_error((flags or {}).get(key) or "--" + key.replace("_", "-"), with_typed(why, value))


def core_rules(args, flags=None, *, method="clock", duration=0.0, point=False, **run):
    """Check a run a command will make (later, or many times) by the core's
    rules now, before anything runs (_core.plan: each option by its kind's
    rule, then sleepacc_config_check), with `run`'s measure() options and
    args' environment; a floor method stands in when only those are
    checked.  A broken rule is a usage error naming the flag (core_error).
    point: a sweep's point.  Returns the environment keywords, as typed."""
    env = env_options(args)
    given = {"method": method, "duration": duration, **run, **env}
    try:
        _core.plan({k: plain(v) for k, v in given.items()}, point)
    except ValueError as exc:
        raise core_error(exc, flags, given) from None
    return env


# --------------------------------------------------------------------------
# The progress line
# --------------------------------------------------------------------------

class Progress:
    """One self-rewriting status line on stderr: a bar, points done/total,
    the point being measured and an ETA.  Silent unless enabled."""

    def __init__(self, total, enabled, stream=None):
        self.total = total
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.shown = False

    def update(self, done, method, d_ns, eta_s):
        if not self.enabled:
            return
        cols = shutil.get_terminal_size((80, 24)).columns
        eta = "--:--" if eta_s is None else "%d:%02d" % divmod(int(max(0, eta_s) + 0.5), 60)
        tail = f" {done}/{self.total}  {method} {format_go(d_ns)}  ETA {eta}"
        width = max(10, min(40, cols - len(tail) - 3))
        filled = int(width * done / max(1, self.total))
        line = "[" + "#" * filled + "." * (width - filled) + "]" + tail
        self.stream.write("\r" + line[: cols - 1] + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False
