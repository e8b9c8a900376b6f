"""Benchmark: how long lua5.4 takes to end after SIGINT during a 30 s
sa.measure (spin and nanosleep at 1 ms, median of 5 each).  A figure for the
closing notes, not a gate: tests/python/test_lua_sigint.py checks the
behaviour (Ctrl-C ends the run within the issue's 0.5 s, the slack restored).

    python bench/lua_sigint.py [--runs N]     (make bench-lua-sigint)
"""
import argparse
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import test_lua_sigint as t  # noqa: E402  (the suite's harness: one copy of it)
from conftest import LUA_MODULE, child_env  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], check=True, env=child_env())
    exe = shutil.which("lua5.4")
    if exe is None:
        sys.exit("bench/lua_sigint.py: lua5.4 is not installed (make deps)")
    with tempfile.TemporaryDirectory() as d:
        script = pathlib.Path(d) / "interrupt.lua"
        script.write_text(t.SCRIPT)
        lua = (exe, str(script), child_env(LUA_CPATH=f"{LUA_MODULE.parent}/?.so;;"))
        rows = []
        for method in ("spin", "nanosleep"):
            runs = sorted(t.check_caught(lua, t.measure_call(method, 1e-3, budget=30))
                          for _ in range(args.runs))
            rows.append((method, runs[len(runs) // 2], runs[0], runs[-1]))
    print(f"lua5.4 SIGINT to exit during a 30 s measure ({args.runs} runs each)")
    print(f"{'method':<10} {'median':>10} {'min':>10} {'max':>10}")
    for method, med, lo, hi in rows:
        print(f"{method:<10} {med * 1e3:>8.1f}ms {lo * 1e3:>8.1f}ms {hi * 1e3:>8.1f}ms")


if __name__ == "__main__":
    main()
