"""Durations: the parser every time on the command line goes through
(sleepacc._units), and sleeps longer than a day (the core's rule of a
sleep's seconds, sleepacc_sleep_check: no day cap, only int64's).
"""
import os
import signal
import threading
import time

import pytest

import sleepacc
from sleepacc._units import has_unit, parse_duration_ns, parse_durations_ns, parse_slack_ns


@pytest.mark.parametrize("text,ns", [
    ("0", 0), ("1", 1_000_000_000), ("0.5", 500_000_000), ("2e-3", 2_000_000),
    ("100ns", 100), ("10us", 10_000), ("5µs", 5_000), ("5μs", 5_000), ("1.5ms", 1_500_000),
    ("1s", 1_000_000_000), ("1m30s", 90_000_000_000), (" 2 ms ", 2_000_000)])
def test_durations_take_units_and_bare_numbers_are_seconds(text, ns):
    assert parse_duration_ns(text) == ns


@pytest.mark.parametrize("text,says", [
    ("1xs", "unit"), ("", "empty"), ("-", "sign"), ("1ms 5", "missing unit"), ("nan", "parse"),
    ("1e400s", "not finite")])
def test_bad_durations_say_why(text, says):
    with pytest.raises(ValueError, match=says):
        parse_duration_ns(text)


@pytest.mark.parametrize("text,unit", [("2d", "'d'"), ("1MS", r"'MS' \(units are lower case: 'ms'\)"),
                                       ("5 parsec", "'parsec'"), ("1m30x", "'x'")])
def test_an_unknown_unit_is_named_with_the_accepted_ones(text, unit):
    """Not "missing unit": the unit is there, and not one of ours."""
    with pytest.raises(ValueError, match=f"unknown unit {unit}; the units are ns, us or µs, "
                                         r"ms, s or sec, m or min \(minutes\), h \(hours\)$"):
        parse_duration_ns(text)
    assert parse_duration_ns("5m") == 300 * 10**9     # m is minutes (Go's, irtt's), not ms


@pytest.mark.parametrize("text,ns,says", [
    ("-1ms", -1_000_000, r"^duration: must be non-negative, got -0\.001$"),
    ("-1", -1_000_000_000, r"^duration: must be non-negative"),
    ("25h", 90_000 * 10**9, r"^duration: must be at most 86400 s \(one day\)")])
def test_a_durations_range_is_the_cores_rule_where_it_is_used(text, ns, says):
    """The parser reads the text; the range (non-negative, at most one day)
    is the core's seconds rule, in its words, where the duration is used."""
    assert parse_duration_ns(text) == ns
    with pytest.raises(ValueError, match=says):
        sleepacc.measure("nanosleep", parse_duration_ns(text) / 1e9, n=1)


def test_lists_refuse_mixing_bare_and_suffixed_items():
    assert parse_durations_ns("0,1us,1ms,1us") == [0, 1_000, 1_000_000]
    assert parse_durations_ns("1,2") == [1_000_000_000, 2_000_000_000]
    for text, item in (("1ms,10", "'10'"), ("10,1ms", "'10'"), ("1ms,0.5", "'0.5'")):
        with pytest.raises(ValueError, match=item):
            parse_durations_ns(text)
    assert parse_durations_ns("1ms,-2ms") == [1_000_000, -2_000_000]   # the core refuses it where used
    assert has_unit("10us") and not has_unit("10") and not has_unit("1e-3")


def test_slack_bare_numbers_are_integer_ns():
    assert parse_slack_ns("1") == 1 and parse_slack_ns("50000") == 50_000
    assert parse_slack_ns("50us") == 50_000 and parse_slack_ns("1ns") == 1
    for text, says in (("1.0", "nanoseconds"), ("1e3", "nanoseconds")):
        with pytest.raises(ValueError, match=says):
            parse_slack_ns(text)
    # the range is the core's rule (>= 0, 1 ns .. 1 s), where the slack is used
    assert parse_slack_ns("-1") == -1 and parse_slack_ns("-1us") == -1000
    for text in ("-1", "-1us"):
        with pytest.raises(ValueError, match=r"^slack: must be >= 0, got -1"):
            sleepacc.measure("nanosleep", 1e-4, n=1, slack=parse_slack_ns(text))
    for text in ("0", "0ns", "2s"):
        with pytest.raises(ValueError, match=r"^slack: must be 1 ns \.\. 1 s"):
            sleepacc.measure("nanosleep", 1e-4, n=1, slack=parse_slack_ns(text))


@pytest.mark.parametrize("how", ["sleep", "Sleeper.sleep"])
@pytest.mark.parametrize("seconds", [86400.5, 86401, 100000, 2 * 86400, 10 ** 9])
def test_sleeps_longer_than_a_day_are_accepted_like_time_sleep(seconds, how, unchanged_thread):
    """time.sleep(100000) is valid: so is sleepacc.sleep(100000), slept by the
    core toward one deadline.  Ctrl-C ends it (the test sends SIGINT after
    0.2 s): it was still sleeping then (not refused, not returned early), and
    no sleep was counted (one sleep, not day chunks)."""
    assert threading.current_thread() is threading.main_thread()
    s = sleepacc.Sleeper()
    run = sleepacc.sleep if how == "sleep" else s.sleep
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    t0 = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run(seconds)
    finally:
        timer.cancel()
    assert 0.2 <= time.monotonic() - t0 < 5
    assert s.stats["count"] == 0


TOO_LONG = "must end before the int64 ns clock does (292 years from boot)"


@pytest.mark.parametrize("bad,exc,words", [
    (-1, ValueError, "must be non-negative"), (-1e-9, ValueError, "must be non-negative"),
    (float("inf"), ValueError, "must be finite"), (float("nan"), ValueError, "must be finite"),
    (1e300, ValueError, TOO_LONG), (10 ** 12, ValueError, TOO_LONG), (2 ** 63, ValueError, TOO_LONG),
    (2 ** 100, ValueError, TOO_LONG), (-2 ** 100, ValueError, "must be non-negative"),
    (True, TypeError, "must be a number of seconds (int or float)"),
    ("1", TypeError, "must be a number of seconds (int or float)")])
def test_bad_sleeps_still_raise_naming_seconds(bad, exc, words, unchanged_thread):
    # the core's words (its sleep row), before anything sleeps: 1e300 and
    # 10**12 were slept in day chunks for ever before daysleep
    s = sleepacc.Sleeper()
    for run in (sleepacc.sleep, s.sleep):
        # a sleep that started instead: Ctrl-C after 2 s, not the error, fails the test
        timer = threading.Timer(2, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        err = None
        try:
            run(bad)
        except (exc, KeyboardInterrupt) as caught:
            err = caught
        finally:
            timer.cancel()
        assert isinstance(err, exc) and str(err).startswith(f"seconds: {words}, got "), repr(err)
    assert s.stats["count"] == 0


def test_sleep_until_keeps_its_day_guard():
    # a deadline more than a day ahead is a wall-clock ns passed by mistake
    with pytest.raises(ValueError, match=r"^monotonic_ns: must be at most one day ahead, got "):
        sleepacc.Sleeper().sleep_until(time.monotonic_ns() + 86401 * 10**9)
    # the duration rule keeps its day too (measure, the CLI's durations)
    with pytest.raises(ValueError, match=r"^seconds: must be at most 86400 s \(one day\), got 86401$"):
        sleepacc._core.seconds_ns(86401)
