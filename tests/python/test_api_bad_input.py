"""Bad input: a clear exception naming the argument, raised before anything
runs, and the calling thread left exactly as it was."""
import math
import platform
import re
import subprocess
import sys

import pytest

import sleepacc
from conftest import thread_state

OK = dict(method="nanosleep", duration=1e-4)

# (arguments changed from OK, expected exception, regex the message must match)
BAD_MEASURE = [
    (dict(duration=-1.0), ValueError, r"^duration: must be non-negative, got -1\.0$"),
    (dict(duration=-1), ValueError, r"^duration: must be non-negative, got -1$"),
    (dict(duration=math.nan), ValueError, r"^duration: must be finite, got nan$"),
    (dict(duration=math.inf), ValueError, r"^duration: must be finite, got inf$"),
    (dict(duration=-math.inf), ValueError, r"^duration: must be finite"),
    (dict(duration=86401), ValueError, r"^duration: must be at most 86400 s \(one day\), got 86401$"),
    (dict(duration=1e10), ValueError, r"^duration: must be at most"),
    (dict(duration=10**30), ValueError, r"^duration: must be at most"),
    (dict(duration=True), TypeError, r"^duration: must be a number of seconds.*bool"),
    (dict(duration="1"), TypeError, r"^duration: must be a number of seconds.*str"),
    (dict(duration=None), TypeError, r"^duration: must be a number of seconds.*NoneType"),
    (dict(duration=[1]), TypeError, r"^duration: must be a number.*list"),
    (dict(duration=1j), TypeError, r"^duration: must be a number.*complex"),
    # the core's one method rule (sleepacc_option_set), Lua's words too
    (dict(method="nope"), ValueError, r"^method: must be an available method \(.*nanosleep.*\), got 'nope'$"),
    (dict(method="NANOSLEEP"), ValueError, r"^method: must be an available method \(.*\), got 'NANOSLEEP'$"),
    (dict(method=None), TypeError, r"^method: must be a str, got NoneType$"),
    (dict(method=3), TypeError, r"^method: must be a str, got int$"),
    (dict(n=0), ValueError, r"^n: must be >= 1, got 0$"),
    (dict(n=-5), ValueError, r"^n: must be >= 1, got -5$"),
    (dict(n=2**63 - 1), ValueError, r"^n: must be <= 9223372036854775807 - warmup, got 9223372036854775807$"),
    (dict(n=2**63), ValueError, r"^n: must be <= 9223372036854775807 - warmup, got 9223372036854775808$"),
    (dict(n=1.5), TypeError, r"^n: must be an int, got float$"),
    (dict(n=True), TypeError, r"^n: must be an int, got bool$"),
    (dict(n="10"), TypeError, r"^n: must be an int, got str$"),
    (dict(budget=0), ValueError, r"^budget: must be positive \(or none: only n stops the run\), got 0$"),
    (dict(budget=1e-12), ValueError, r"^budget: must be positive"),
    (dict(budget=-1), ValueError, r"^budget: must be positive \(or none: only n stops the run\), got -1$"),
    (dict(budget=math.nan), ValueError, r"^budget: must be finite, got nan$"),
    (dict(budget=math.inf), ValueError, r"^budget: must be finite"),
    (dict(budget=1e6), ValueError, r"^budget: must be at most"),
    (dict(budget="1"), TypeError, r"^budget: must be a number of seconds"),
    # false is "no budget" (the core's rule, Lua's): then n is required
    (dict(budget=False), ValueError,
     r"^n: is required when there is no budget \(nothing would stop the run\), got None$"),
    (dict(budget=True), TypeError, r"^budget: must be a number of seconds \(int or float\), got bool$"),
    (dict(budget=None), ValueError, r"^n: is required when there is no budget \(nothing would stop the run\), got None$"),
    (dict(mode="sideways"), ValueError, r"^mode: must be 'relative' or 'periodic', got 'sideways'$"),
    (dict(mode=1), TypeError, r"^mode: must be a str, got int$"),
    (dict(mode="periodic", duration=0), ValueError, r"^duration: must be > 0 in periodic mode \(it is the period\), got 0$"),
    # a floor ignores the request: periodic mode has no deadline for it (the sweep's rule too);
    # it ran, reporting a lateness of minus the period (monitor --method syscall: "-1705 s")
    (dict(method="syscall", mode="periodic"), ValueError,
     r"^method: is a floor \(family 'baseline', measured at duration 0 only\): periodic mode "
     r"cannot measure it, got 'syscall'$"),
    (dict(method="clock", mode="periodic", duration=0), ValueError, r"^method: is a floor"),
    (dict(warmup=-1), ValueError, r"^warmup: must be >= 0, got -1$"),
    (dict(warmup=0.5), TypeError, r"^warmup: must be an int, got float$"),
    (dict(keep_samples="yes"), TypeError, r"^keep_samples: must be a bool, got str$"),
    (dict(keep_samples=None), TypeError, r"^keep_samples: must be a bool"),
    (dict(slack=0), ValueError, r"^slack: must be 1 ns \.\. 1 s \(or left as it is\), got 0$"),
    (dict(slack=-1), ValueError, r"^slack: must be >= 0, got -1$"),
    (dict(slack=1.5), TypeError, r"^slack: must be an int, got float$"),
    (dict(slack=10**18), ValueError, r"^slack: must be 1 ns \.\. 1 s"),
    (dict(slack=10**9 + 1), ValueError, r"^slack: must be 1 ns \.\. 1 s \(or left as it is\), got 1000000001$"),
    (dict(policy="realtime"), ValueError, r"^policy: must be one of 'other', .*'fifo', 'rr', got 'realtime'$"),
    (dict(policy="FIFO"), ValueError, r"^policy: must be one of"),
    (dict(policy=3), TypeError, r"^policy: must be a str, got int$"),
    (dict(priority=50), ValueError, r"^priority: must be 0 unless the policy is fifo or rr, got 50$"),
    (dict(policy="fifo", priority=0), ValueError, r"^priority: must be 1\.\.99 with policy fifo or rr, got 0$"),
    (dict(policy="fifo", priority=100), ValueError, r"^priority: must be 1\.\.99 with policy fifo or rr, got 100$"),
    (dict(policy="other", priority=5), ValueError, r"^priority: must be 0 unless the policy is fifo or rr, got 5$"),
    (dict(priority=-1), ValueError, r"^priority: must be >= 0, got -1$"),
    (dict(priority="high", policy="rr"), TypeError, r"^priority: must be an int, got str$"),
    (dict(cpu=4096), ValueError, r"^cpu: is not in this thread's allowed CPU set, got 4096$"),
    (dict(cpu=-1), ValueError, r"^cpu: must be >= 0, got -1$"),
    (dict(cpu="0"), TypeError, r"^cpu: must be an int, got str$"),
    (dict(lock_memory="no"), TypeError, r"^lock_memory: must be a bool, got str$"),
    (dict(margin=-1e-6), ValueError, r"^margin: must be non-negative"),
    (dict(margin=math.nan), ValueError, r"^margin: must be finite"),
    (dict(margin="1ms"), TypeError, r"^margin: must be a number of seconds"),
    # a margin for a method with none (only the hybrid family spins one): it was ignored
    (dict(margin=1e-4), ValueError, r"^margin: only the hybrid family has a margin, and no "
                                    r"method measured here is one, got 0\.0001$"),
    (dict(method="spin", policy="fifo", budget=None, n=10), ValueError,
     r"^budget: is required for a spinning method under policy fifo or rr \(real-time spinning stalls a CPU\), got None$"),
    (dict(method="hybrid", policy="rr", budget=None, n=10), ValueError,
     r"^budget: is required for a spinning method under policy fifo or rr"),
]


def _id(case):
    return ",".join(f"{k}={v!r}" for k, v in case[0].items())


@pytest.mark.parametrize("change,exc,match", BAD_MEASURE, ids=[_id(c) for c in BAD_MEASURE])
def test_bad_measure_arguments(change, exc, match):
    assert len(BAD_MEASURE) >= 30
    kwargs = dict(OK, **change)
    before = thread_state()
    with pytest.raises(exc, match=match):
        sleepacc.measure(kwargs.pop("method"), kwargs.pop("duration"), **kwargs)
    assert thread_state() == before


def test_unknown_keyword_is_a_type_error():
    with pytest.raises(TypeError, match="verbose"):
        sleepacc.measure("nanosleep", 1e-3, verbose=True)


# A child that makes epoll_pwait2 fail with ENOSYS (a seccomp filter, as a
# kernel before 5.11 answers), then asks for it: the core's probe finds it
# unavailable and the core's config check refuses it.
UNAVAILABLE_CHILD = r"""
import ctypes, errno, struct
libc = ctypes.CDLL(None, use_errno=True)
def ins(code, jt, jf, k):   # one struct sock_filter
    return struct.pack("HBBI", code, jt, jf, k)
prog = b"".join([
    ins(0x20, 0, 0, 4),                           # A = seccomp_data.arch
    ins(0x15, 0, 3, 0xC000003E),                  # not AUDIT_ARCH_X86_64: allow
    ins(0x20, 0, 0, 0),                           # A = seccomp_data.nr
    ins(0x15, 0, 1, 441),                         # __NR_epoll_pwait2:
    ins(0x06, 0, 0, 0x00050000 | errno.ENOSYS),   #   SECCOMP_RET_ERRNO | ENOSYS
    ins(0x06, 0, 0, 0x7FFF0000),                  # SECCOMP_RET_ALLOW
])
class Fprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]
buf = ctypes.create_string_buffer(prog, len(prog))
fprog = Fprog(len(prog) // 8, ctypes.cast(buf, ctypes.c_char_p))
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(fprog), 0, 0):  # NO_NEW_PRIVS, SECCOMP
    raise SystemExit("SKIP: seccomp filter refused: " + errno.errorcode[ctypes.get_errno()])
import sleepacc
assert not {m.name: m for m in sleepacc.methods()}["epoll_pwait2"].available
try:
    sleepacc.measure("epoll_pwait2", 1e-3)
except ValueError as e:
    print(e)
"""


@pytest.mark.skipif(platform.machine() != "x86_64" or sys.platform != "linux",
                    reason="the seccomp filter is written for x86_64 Linux")
def test_unavailable_method_says_so():
    # a method the running kernel lacks (e.g. epoll_pwait2 before Linux 5.11):
    # availability is the core's rule (sleepacc_config_check says ENOSYS for
    # "method"); every method is available here, so a child's seccomp filter
    # takes epoll_pwait2 away (the core's own probe and check then run)
    r = subprocess.run([sys.executable, "-c", UNAVAILABLE_CHILD], capture_output=True, text=True,
                       timeout=60)
    if r.returncode != 0 and r.stderr.startswith("SKIP: "):
        pytest.skip(r.stderr.strip())
    assert r.returncode == 0, r.stderr
    assert re.match(r"^method: is not available on this system; available "
                    r"methods: .*, got 'epoll_pwait2'$", r.stdout.strip())
    assert "epoll_pwait2," not in r.stdout   # the available ones only


BAD_SWEEP = [
    (dict(durations=[1e-3, -1]), ValueError, r"^durations\[1\]: must be non-negative"),
    (dict(durations=[math.nan]), ValueError, r"^durations\[0\]: must be finite"),
    (dict(durations=["1ms"]), TypeError, r"^durations\[0\]: must be a number of seconds"),
    (dict(durations="1ms"), TypeError, r"durations must be a list of seconds or None"),
    (dict(durations=[]), ValueError, r"^durations: must not be empty$"),   # the core's rule
    (dict(methods=["nanosleep", "nope"]), ValueError,
     r"^methods\[1\]: must be an available method \(.*\), got 'nope'$"),
    (dict(methods=[]), ValueError, r"^methods: must not be empty$"),   # the core's rule
    (dict(methods=3), TypeError, r"methods must be a list of method names or None"),
    (dict(methods=[None]), TypeError, r"^methods\[0\]: must be a str"),
    # a floor named in a periodic sweep: its entry, as Lua names it (the core's sweep read)
    (dict(methods=["nanosleep", "syscall"], mode="periodic"), ValueError,
     r"^methods\[1\]: 'syscall' is a floor \(family 'baseline', measured at duration 0 only\): "
     r"periodic mode cannot measure it$"),
    (dict(budget=0), ValueError, r"^budget: must be positive"),
    (dict(mode="both"), ValueError, r"^mode: must be 'relative' or 'periodic'"),
    (dict(progress=3), TypeError, r"progress must be callable or None, got int"),
    (dict(verbose=True), TypeError, r"unexpected keyword argument 'verbose'"),
    (dict(policy="realtime"), ValueError, r"^policy: must be one of"),
    (dict(n=0), ValueError, r"^n: must be >= 1"),
    (dict(cpu=4096), ValueError, r"^cpu: .*got 4096$"),
    (dict(methods=["nanosleep", "timerfd"], margin=1e-4), ValueError,
     r"^margin: only the hybrid family has a margin"),
]


@pytest.mark.parametrize("change,exc,match", BAD_SWEEP, ids=[_id(c) for c in BAD_SWEEP])
def test_bad_sweep_arguments(change, exc, match):
    kwargs = dict(dict(methods=["nanosleep"], durations=[1e-4], budget=0.01), **change)
    calls = []
    kwargs.setdefault("progress", lambda *a: calls.append(a))
    before = thread_state()
    with pytest.raises(exc, match=match):
        sleepacc.sweep(**kwargs)
    assert calls == []  # nothing ran
    assert thread_state() == before


@pytest.mark.parametrize("skip,match", [
    (5, r"^skip: must be an iterable of \(method, duration_ns\) pairs, got int$"),
    ("ab", r"^skip: must be an iterable .* got str$"),
    ([5], r"^skip\[0\]: must be a \(method, duration_ns\) pair, got 5$"),
    ([("nanosleep", 1000000), ("a",)], r"^skip\[1\]: must be a \(method, duration_ns\) pair"),
    ([("nanosleep", 1.5e6)], r"^skip\[0\]: .* of a str and an integer"),
    ([("nanosleep", True)], r"^skip\[0\]: .* of a str and an integer"),
])
def test_bad_skip_is_a_type_error_naming_skip(skip, match):
    # it raised "cannot unpack non-iterable int object" and int('x') errors,
    # naming nothing; a float duration was truncated and matched
    with pytest.raises(TypeError, match=match):
        sleepacc.iter_sweep(["nanosleep"], [1e-3], budget=0.01, skip=skip)


def test_skip_takes_any_integer_duration():
    np = pytest.importorskip("numpy")
    it = sleepacc.iter_sweep(["nanosleep"], [1e-3, 2e-3], budget=0.01,
                             skip=[("nanosleep", np.int64(1_000_000))])
    assert [m.requested_ns for m in it] == [2_000_000]


@pytest.mark.parametrize("stat,exc", [("bogus", ValueError), ("n", ValueError),
                                      ("std", ValueError), (None, TypeError)])
def test_measurement_error_names_stat(stat, exc):
    # a bare KeyError 'bogus'; "n" and "std" gave n - requested, std - requested
    m = sleepacc.measure("nanosleep", 1e-4, n=2)
    with pytest.raises(exc, match=r"^stat: must be "):
        m.error(stat)
    assert m.error("p99") == m.stats.p99 - m.requested_ns


def test_measurement_error_takes_fleets_statistics_and_none_when_left_out():
    # the one list of statistics an error is taken of (records.STAT_FIELDS,
    # from the core's quantile levels, and mean; fleet ranks by the same);
    # a record older than p1 lacks it: None, as the docstring says (it
    # raised KeyError 'p1')
    from sleepacc import fleet
    from sleepacc.records import STAT_FIELDS
    assert fleet.STAT_FIELDS is STAT_FIELDS and "median" in STAT_FIELDS and "mean" in STAT_FIELDS
    m = sleepacc.measure("nanosleep", 1e-4, n=2)
    assert [s for s in STAT_FIELDS if m.error(s) is None] == []
    d = m.to_dict()
    del d["stats"]["p1"]
    assert sleepacc.Measurement.from_dict(d).error("p1") is None
