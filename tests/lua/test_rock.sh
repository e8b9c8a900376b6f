#!/bin/sh
# test_rock.sh ROCK -- the packed source rock (`make rock`) as a user
# installs it: `luarocks install ROCK` into a fresh tree, with the network
# cut off (unshare -n where permitted), for Lua 5.1, Lua 5.4 and LuaJIT
# (LuaJIT: the 5.1 rock built against its headers); then the interpreter
# loads the module from that tree alone and measures a sleep.  A Lua whose
# interpreter or headers are missing is skipped, naming the package.
# Prints one line per Lua; exits 1 when any install or load failed.
set -u
rock=$(realpath "$1")
command -v luarocks >/dev/null 2>&1 || { echo "test_rock: skipped: luarocks is missing (Debian package luarocks)"; exit 0; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sleepacc-rock.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
offline=""
unshare -n true 2>/dev/null && offline="unshare -n"
[ -n "$offline" ] || echo "test_rock: unshare -n is not permitted here: installing with the network up"
fail=""
# one check: LABEL INTERPRETER LUA-VERSION INCDIR DEBIAN-PACKAGES
check() {
  label=$1 lua=$2 ver=$3 inc=$4 pkgs=$5
  if ! command -v "$lua" >/dev/null 2>&1 || [ ! -f "$inc/lua.h" ]; then
    echo "test_rock: skipped $label: $lua or $inc/lua.h missing (Debian packages: $pkgs; make deps installs them)"; return; fi
  tree="$tmp/tree-$label"
  # shellcheck disable=SC2086
  if ! (cd "$tmp" && $offline luarocks --lua-version="$ver" --tree "$tree" install "$rock" \
          LUA_INCDIR="$inc") > "$tmp/$label.log" 2>&1; then
    cat "$tmp/$label.log"; echo "test_rock: FAILED $label: luarocks install"; fail="$fail $label"; return; fi
  so="$tree/lib/lua/$ver/sleepacc.so"
  [ -f "$so" ] || { echo "test_rock: FAILED $label: no $so"; fail="$fail $label"; return; }
  out=$(LUA_PATH="" LUA_CPATH="$tree/lib/lua/$ver/?.so" "$lua" -e '
    local sa = require "sleepacc"
    local r = assert(sa.measure{method = "nanosleep", duration = 1e-3, n = 5, budget = false})
    local s = r.stats
    assert(r.n == 5 and s.min >= 1e6 and s.min <= s.median and s.median <= s.p99 and s.p99 <= s.max, "bad record")
    print(sa._VERSION .. ", nanosleep(1 ms) median " .. s.median .. " ns")' 2>&1) \
    || { echo "$out"; echo "test_rock: FAILED $label: the module does not load or measure"; fail="$fail $label"; return; }
  echo "test_rock: ok $label ($($lua -v 2>&1 | head -n 1 | cut -d' ' -f1-2)): sleepacc $out, from $so"
}
check 5.1 lua5.1 5.1 /usr/include/lua5.1 "lua5.1 liblua5.1-0-dev"
check 5.4 lua5.4 5.4 /usr/include/lua5.4 "lua5.4 liblua5.4-dev"
check luajit luajit 5.1 /usr/include/luajit-2.1 "luajit libluajit-5.1-dev"
[ -z "$fail" ] || { echo "test_rock: FAILED:$fail"; exit 1; }
