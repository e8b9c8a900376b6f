#!/bin/sh
# test_layers.sh -- the core's files call one another without a cycle
# (make test-c runs it; make test-layers alone).  check_layers.py builds
# the object -> object graph from nm (which object defines each symbol
# another uses) and fails naming a cycle.  First it must find the cycle of
# two objects made here that call each other, so a checker that could not
# fail does not pass.
#   tests/c/test_layers.sh build/obj/*.o
set -eu
here=$(cd "$(dirname "$0")" && pwd)
CC=${CC:-cc}
command -v python3 >/dev/null 2>&1 || { echo "test_layers: skipped: python3 is missing"; exit 0; }
command -v nm >/dev/null 2>&1 || { echo "test_layers: skipped: nm is missing (Debian package binutils)"; exit 0; }
[ $# -gt 0 ] || { echo "usage: test_layers.sh OBJECT.o ..." >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sleepacc-layers.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
printf 'int pong(int);\nint ping(int n) { return n ? pong(n - 1) : 0; }\n' > "$tmp/ping.c"
printf 'int ping(int);\nint pong(int n) { return n ? ping(n - 1) : 1; }\n' > "$tmp/pong.c"
$CC -c "$tmp/ping.c" -o "$tmp/ping.o"
$CC -c "$tmp/pong.c" -o "$tmp/pong.o"
if python3 "$here/check_layers.py" "$tmp/ping.o" "$tmp/pong.o" > "$tmp/out" 2>&1; then
  cat "$tmp/out"; echo "test_layers: FAIL: the checker missed ping <-> pong" >&2; exit 1
fi
grep -q "cycle of 2 files: ping pong" "$tmp/out" || { cat "$tmp/out"; echo "test_layers: FAIL: the cycle is not named" >&2; exit 1; }
echo "ok the checker names a cycle: $(head -1 "$tmp/out")"
python3 "$here/check_layers.py" "$@"
