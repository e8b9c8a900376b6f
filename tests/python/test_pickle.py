"""Measurement and Sweep pickle, samples included, and come back equal: a
multiprocessing worker can return one (a memoryview alone does not pickle)."""
import base64
import multiprocessing
import pickle

import numpy as np
import pytest

import sleepacc
from sleepacc import Samples

from conftest import SANITIZED


def _measure_in_worker(method):
    return sleepacc.measure(method, 1e-4, n=7)


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_a_measurement_pickles_with_its_samples(protocol):
    m = sleepacc.measure("nanosleep", 1e-4, n=9)
    back = pickle.loads(pickle.dumps(m, protocol=protocol))
    assert back == m and back is not m
    for name in ("samples", "starts"):
        a, b = getattr(m, name), getattr(back, name)
        assert isinstance(b, Samples) and b.readonly
        assert b.tolist() == a.tolist()
    assert np.asarray(back.samples).dtype == np.int64
    assert back.errors_ns.tolist() == m.errors_ns.tolist()
    assert back.stats == m.stats and back.env == m.env and back.wall_ns == m.wall_ns


# A Measurement pickled (protocol 4) by the sleepacc whose Stats held a tuple
# and whose env and ctx_switches were plain attributes: it still loads.
_OLD_PICKLE = (
    "gASVrQEAAAAAAACMEXNsZWVwYWNjLl9yZXN1bHRzlIwLTWVhc3VyZW1lbnSUk5QpgZR9lCiMBm1ldGhvZJSMCW5h"
    "bm9zbGVlcJSMBG1vZGWUjAhyZWxhdGl2ZZSMDHJlcXVlc3RlZF9uc5RNECeMAW6USwOMA2VudpR9lCiMCHNsYWNr"
    "X25zlE1Qw4wDY3B1lE51jAdzYW1wbGVzlEMYLSsBAAAAAACWKwEAAAAAAD8vAQAAAAAAlIwGc3RhcnRzlE6MBXN0"
    "YXRzlGgAjAVTdGF0c5STlCmBlE59lIwEX3Jvd5QoSwNKLSsBAEo/LwEAR0DyyxAAAAAAR0CBzAAAAAAATk5OSpYr"
    "AQBOSj8vAQBKPy8BAEo/LwEASwB0lHOGlGKMDHN0cmVhbV9zdGF0c5ROjAZtaXNzZWSUSwCMD2NwdV9uc19wZXJf"
    "Y2FsbJRHAAAAAAAAAACMC2NwdV9wZXJjZW50lEe/8AAAAAAAAIwMY3R4X3N3aXRjaGVzlH2UKIwJdm9sdW50YXJ5"
    "lEsDjAtpbnZvbHVudGFyeZRLAHWMB3dhbGxfbnOUSwCMBXRyYWNllE51Yi4=")


def test_a_measurement_pickled_before_packing_loads():
    m = sleepacc.Measurement(
        method="nanosleep", mode="relative", requested_ns=10000, n=3,
        stats={"n": 3, "min": 76589, "max": 77631, "mean": 76977.0, "std": 569.5,
               "median": 76694, "p90": 77631, "p99": 77631, "p999": 77631, "undersleeps": 0},
        ctx_switches={"voluntary": 3, "involuntary": 0}, env={"slack_ns": 50000, "cpu": None},
        samples=[76589, 76694, 77631])
    old = pickle.loads(base64.b64decode(_OLD_PICKLE))
    assert old == m and old.to_dict() == m.to_dict() and old.stats.median == 76694
    assert pickle.loads(pickle.dumps(old)) == m


def test_a_streamed_measurement_and_a_sweep_pickle():
    m = sleepacc.measure("nanosleep", 1e-4, n=5, keep_samples=False)
    back = pickle.loads(pickle.dumps(m))
    assert back == m and back.samples is None and back.starts is None
    sw = sleepacc.sweep(["nanosleep", "clock"], [1e-5, 1e-4], n=3)
    back = pickle.loads(pickle.dumps(sw))
    assert back == sw and back.host == sw.host and back.settings == sw.settings
    assert [p.samples.tolist() for p in back] == [p.samples.tolist() for p in sw]


@pytest.mark.skipif(SANITIZED, reason="a spawned worker would import the ASan build of the "
                    "extension without the sanitizer runtime (make test-python runs it)")
def test_a_worker_process_returns_a_measurement():
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        m = pool.apply_async(_measure_in_worker, ("nanosleep",)).get(timeout=60)
    assert isinstance(m, sleepacc.Measurement) and m.n == 7
    assert len(m.samples) == 7 and min(m.samples.tolist()) >= m.requested_ns
