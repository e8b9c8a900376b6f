"""The Lua module's records are Python's: sa.save writes the sleepacc/1 JSON
Lines file that sleepacc.load reads (and `sleepacc report` / `compare`
take); a Lua point has the keys and types of Measurement.to_dict() (a None
there is an absent key in Lua, so in the file); a dma_latency the process
may not hold is an error naming it.  Real lua5.4, real files."""
import json
import os
import shutil
import subprocess
import sys

import pytest

import sleepacc
from conftest import LUA_MODULE as MODULE, ROOT, child_env

LUA = shutil.which("lua5.4")
pytestmark = pytest.mark.skipif(LUA is None, reason="lua5.4 is missing (Debian package lua5.4; make deps installs it)")

CALLS = [("nanosleep", 1e-4), ("spin", 1e-5), ("hybrid", 2e-4)]

SAVE = r"""
local sa = require "sleepacc"
local path = arg[1]
local rs = assert(sa.sweep{methods = {"nanosleep", "spin"}, durations = {0, 1e-4}, budget = 0.02})
for _, c in ipairs{{"nanosleep", 1e-4}, {"spin", 1e-5}, {"hybrid", 2e-4}} do
  rs[#rs + 1] = assert(sa.measure{method = c[1], duration = c[2], n = 20})
end
rs[#rs + 1] = assert(sa.measure{method = "nanosleep", duration = 1e-3, n = 5, mode = "periodic"})
rs[#rs + 1] = assert(sa.measure{method = "clock", duration = 0, n = 50, keep_samples = false})
assert(sa.save(rs, path))
print(#rs)
"""


@pytest.fixture(scope="module")
def module_built():
    build = subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], env=child_env(),
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr


def run_lua(script, *args, user=None):
    cmd = [LUA, "-", *args]
    if user:
        cmd = [shutil.which("setpriv"), "--reuid=nobody", "--regid=nogroup", "--clear-groups",
               *cmd]
    out = subprocess.run(cmd, input=script, env=child_env(LUA_CPATH=f"{MODULE.parent}/?.so;;"),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="module")
def saved(module_built, tmp_path_factory):
    path = tmp_path_factory.mktemp("lua") / "router.jsonl"
    count = int(run_lua(SAVE, str(path)).strip())
    return path, count


def types(d):
    """{key: type name} of a record, nested objects as sub-dicts; None left out."""
    return {k: types(v) if isinstance(v, dict) else type(v).__name__
            for k, v in d.items() if v is not None}


def test_save_is_sleepacc1_jsonl(saved):
    path, count = saved
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == count + 2  # header, points, footer
    header, footer = json.loads(lines[0]), json.loads(lines[-1])
    assert (header["schema"], header["type"]) == ("sleepacc/1", "header")
    assert header["host"]["hostname"] == os.uname().nodename
    assert header["settings"]["version"] == sleepacc.__version__
    assert footer["type"] == "footer" and footer["finished"].endswith("Z")
    assert all(json.loads(line)["type"] == "point" for line in lines[1:-1])
    assert not list(path.parent.glob("*.tmp*"))  # written beside, then renamed


def test_lua_points_load_with_python_keys_and_types(saved):
    path, count = saved
    # the sweep's nanosleep 100 us point and the measure's are one key: load says so (the
    # later one is the n = 20 point read below)
    with pytest.warns(RuntimeWarning, match=r"router.jsonl:6: duplicate point nanosleep relative "
                                            r"100000 ns \(first at line 3\)"):
        sw = sleepacc.load(path)
    assert len(sw.measurements) == count
    lua_points = {(m.method, m.mode, m.requested_ns): m.to_dict() for m in sw.measurements}
    for method, duration in CALLS:
        py = sleepacc.measure(method, duration, n=20).to_dict()
        lua = lua_points[(method, "relative", round(duration * 1e9))]
        assert types(lua) == types(py), method
        assert lua["n"] == 20 and len(lua["samples"]) == 20
        assert all(isinstance(s, int) for s in lua["samples"])
        assert lua["stats"]["min"] == min(lua["samples"])
    swept = lua_points[("spin", "relative", 0)]
    assert len(swept["samples"]) == swept["n"]  # a sweep keeps samples, as in Python
    assert lua_points[("clock", "relative", 0)]["samples"] is None  # streamed: null
    periodic = lua_points[("nanosleep", "periodic", 1000000)]
    assert periodic["stats"]["min"] >= 0  # lateness


def test_report_and_compare_take_the_lua_file(saved):
    path, _ = saved
    cli = [sys.executable, "-m", "sleepacc"]
    rep = subprocess.run([*cli, "report", str(path)], capture_output=True, text=True, timeout=60)
    assert rep.returncode == 0, rep.stderr
    assert "nanosleep" in rep.stdout and "spin" in rep.stdout
    cmp = subprocess.run([*cli, "compare", str(path), str(path)], capture_output=True, text=True,
                         timeout=60)
    assert cmp.returncode == 0, cmp.stderr
    assert "nanosleep" in cmp.stdout


def test_an_interrupted_sweep_output_loads(module_built, tmp_path):
    """sweep{output=} puts each point on disk as it finishes: a sweep stopped
    after two points leaves a file without a footer that loads with them."""
    path = tmp_path / "partial.jsonl"
    run_lua(r"""
local sa = require "sleepacc"
print(pcall(sa.sweep, {methods = {"nanosleep"}, durations = {1e-5, 2e-5, 3e-5}, budget = 0.01,
  output = arg[1], progress = function(done) if done == 2 then error("stop") end end}))
""", str(path))
    sw = sleepacc.load(path)
    assert [m.requested_ns for m in sw.measurements] == [10000, 20000]
    assert sw.finished is None  # no footer: the file says it was interrupted


def test_save_refuses_bad_input(module_built, tmp_path):
    out = run_lua(r"""
local sa = require "sleepacc"
local function named(f, ...)
  local ok, e = pcall(f, ...)
  return (not ok) and tostring(e):match("^([^:]+): ") or ("no error: " .. tostring(e))
end
print(named(sa.save, 42, arg[1]))
print(named(sa.save, {42}, arg[1]))
print(named(sa.save, {}, 7))
print(named(sa.save, {{method = "x", f = print}}, arg[1]))
print(select(3, sa.save({}, arg[2])))
""", str(tmp_path / "x.jsonl"), str(tmp_path / "no" / "such" / "dir.jsonl"))
    # records: the core reads the records key by key, so the key it lacks is named
    assert out.split() == ["results", "results[1]", "path", "results[1].mode", "ENOENT"]
    assert not list(tmp_path.iterdir())  # nothing left behind


def test_dma_latency_without_access_names_it(module_built):
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run lua5.4 as nobody")
    out = run_lua(r"""
local sa = require "sleepacc"
local r, msg, name = sa.measure{method = "nanosleep", duration = 1e-4, n = 3, dma_latency = 0}
print(type(r), name, msg)
""", user="nobody")
    rtype, name, msg = out.strip().split("\t", 2)
    assert rtype == "nil" and name in ("EACCES", "EPERM"), out
    assert "dma_latency" in msg, msg

