"""Numbers independent of the locale: a Python, Lua or C program that set a
comma-decimal locale (setlocale(LC_ALL, "") under de_DE) still gets result
files a JSON reader takes, tables with a decimal point that parse back, and
host facts read right (/proc/loadavg's "0.39" is 0.39, not 0.0).  The locale
is compiled with localedef into a temporary LOCPATH; each writer runs in a
child process under it.  (The C writer: tests/c/test_locale.c.)"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import LUA_MODULE, child_env, lua54_with_module

SOURCE = "/usr/share/i18n/locales/de_DE"


@pytest.fixture(scope="module")
def comma_env(tmp_path_factory):
    """The environment of a child under de_DE.UTF-8 (compiled for the test)."""
    if shutil.which("localedef") is None:
        pytest.skip("localedef is missing (Debian package libc-bin)")
    if not os.path.exists(SOURCE):
        pytest.skip(f"no locale source {SOURCE} (Debian package locales)")
    d = tmp_path_factory.mktemp("locale")
    made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(d / "de_DE.UTF-8")],
                          capture_output=True, text=True, timeout=120)
    if not (d / "de_DE.UTF-8").exists():
        pytest.skip(f"localedef could not compile de_DE.UTF-8: {made.stderr.strip()[:200]}")
    return child_env(LOCPATH=str(d), LC_ALL="de_DE.UTF-8")


PY = r"""
import json, locale, sys
locale.setlocale(locale.LC_ALL, "")
assert locale.localeconv()["decimal_point"] == ",", locale.localeconv()
import sleepacc
before = float(open("/proc/loadavg").read().split()[0])
info = sleepacc.system_info()
after = float(open("/proc/loadavg").read().split()[0])
s = sleepacc.Sweep([sleepacc.measure("nanosleep", 1e-4, n=20)])
s.save(sys.argv[1])
print(json.dumps({"load": info["loadavg_1m"], "before": before, "after": after,
                  "irtt": s.table("irtt"), "wide": s.table("wide")}))
"""


def test_python_writer_and_reader_under_a_comma_locale(comma_env, tmp_path):
    path = tmp_path / "py.jsonl"
    out = subprocess.run([sys.executable, "-c", PY, str(path)], env=comma_env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["load"] in (got["before"], got["after"]), got
    text = path.read_text()
    try:                                  # the JSON form, or JSON Lines: all JSON
        points = json.loads(text)["measurements"]
    except json.JSONDecodeError:
        points = [x for x in map(json.loads, text.splitlines()) if x.get("type") == "point"]
    assert len(points) == 1 and isinstance(points[0]["stats"]["mean"], float)
    for text in (got["irtt"], got["wide"]):
        assert "," not in text, text
    import sleepacc
    from sleepacc import records
    rows = records.parse_irtt_table(got["irtt"])     # the printed table parses back
    assert len(rows) == 1 and rows[0][1] == 100_000
    assert len(sleepacc.load(path).measurements) == 1


LUA = r"""
assert(os.setlocale("", "all"))
assert(string.format("%.1f", 0.5) == "0,5", "the locale is not comma-decimal")
local sa = require "sleepacc"
local r = assert(sa.measure{method = "nanosleep", duration = 1e-4, n = 20})
assert(sa.save({r}, arg[1]))
io.write(assert(sa.table({r}, "wide")))
"""


def test_lua_writer_under_a_comma_locale(comma_env, tmp_path):
    lua = lua54_with_module()
    path = tmp_path / "lua.jsonl"
    env = dict(comma_env, LUA_CPATH=f"{LUA_MODULE.parent}/?.so;;")
    out = subprocess.run([lua, "-", str(path)], input=LUA, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["header", "point", "footer"]
    assert "," not in out.stdout.splitlines()[1], out.stdout
