#!/bin/sh
# test_install.sh -- the C user's route (make test-c runs it; make test-install alone):
#   1. make install PREFIX=<tmp>/prefix, then build every examples/*.c OUT of
#      tree with `pkg-config --cflags --libs sleepacc` (shared) and with
#      `--static`, run each; the shared build must need libsleepacc.so.0
#      (its SONAME) and run from the installed library;
#   2. make install with DESTDIR staging (PREFIX=/opt/...): layout, SONAME,
#      symlinks, the .pc naming PREFIX (not DESTDIR); make uninstall leaves
#      no file;
#   3. build/sleepacc-uninstalled.pc: the examples against the tree;
#   4. the installed header alone with -std=c99 -pedantic -Werror, -std=c11
#      -pedantic -Werror and a C++ compiler (its extern "C": a C++ program
#      links against libsleepacc);
#   5. README.md's C recipes, taken from README.md and run as written (not a
#      copy here) in a copy of the tree beside the README's app.c: the
#      private prefix one with HOME a temporary directory; the /usr/local one
#      (make install runs ldconfig; ./app starts without LD_LIBRARY_PATH) as
#      root in a mount namespace whose /usr/local and /etc are overlays over
#      temporary directories (skipped, naming why, where that cannot be made).
# Prints what it runs (the transcript for the closing note).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
CC=${CC:-cc}
MAKE=${MAKE:-make}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sleepacc-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
fail() { echo "test_install: FAIL: $*" >&2; exit 1; }
run() { echo "\$ $*"; "$@"; }
command -v pkg-config >/dev/null 2>&1 || { echo "test_install: skipped: pkg-config is missing (Debian package pkg-config; make deps installs it)"; exit 0; }
ver=$(sed -n 's/^#define SLEEPACC_VERSION "\(.*\)"/\1/p' "$root/csrc/sleepacc.h")
[ -n "$ver" ] || fail "no SLEEPACC_VERSION"
examples=$(ls "$root"/examples/*.c)
# short arguments for each example, so the test takes seconds
args_for() {
  case "$(basename "$1" .c)" in
    methods_table) echo "3 5" ;;   # 3 samples, 5 ms budget per cell
    pacer_60hz) echo "10 1000" ;;  # 10 ticks of 1 ms
    *) echo "" ;;
  esac
}
# build every example from a copy outside the tree with the given pkg-config
# flags; run each and check it links as expected
build_examples() { # label pkg-config-args...
  label=$1; shift
  out="$tmp/ex-$label"
  mkdir -p "$out"
  for src in $examples; do
    name=$(basename "$src" .c)
    cp "$src" "$out/$name.c"
    # --static: pkg-config adds Libs.private; -static makes the link static
    # (with both libsleepacc.a and .so installed, ld would take the .so)
    static=""; case "$label" in *static*) static=-static ;; esac
    # shellcheck disable=SC2046
    run $CC -std=gnu11 -Wall -Wextra -Werror "$out/$name.c" -o "$out/$name" $(pkg-config "$@") $static
    needed=$(readelf -d "$out/$name" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
    case "$label" in
      *static*) [ -z "$needed" ] || fail "$name ($label) is not static: needs $needed" ;;
      *) case " $needed " in *" libsleepacc.so.0 "*) ;; *) fail "$name ($label) needs [$needed], not libsleepacc.so.0" ;; esac ;;
    esac
    # shellcheck disable=SC2046
    echo "\$ $out/$name $(args_for "$src")"
    "$out/$name" $(args_for "$src") > "$out/$name.out" 2>&1 || { cat "$out/$name.out"; fail "$name ($label) failed"; }
    awk 'NR == 1 { print "    " $0 } END { if (NR > 1) print "    " $0 }' "$out/$name.out"
  done
}

echo "== 1. make install PREFIX=$tmp/prefix"
prefix="$tmp/prefix"
run $MAKE -s -C "$root" install PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
run pkg-config --modversion sleepacc
[ "$(pkg-config --modversion sleepacc)" = "$ver" ] || fail "pkg-config version is not $ver"
run pkg-config --cflags --libs sleepacc
run pkg-config --static --libs sleepacc
export LD_LIBRARY_PATH="$prefix/lib"
build_examples shared --cflags --libs sleepacc
# the runtime loader must have used the installed file
ldd "$tmp/ex-shared/pacer_60hz" | grep -q "$prefix/lib/libsleepacc.so.0" \
  || fail "ldd does not resolve libsleepacc.so.0 to $prefix/lib"
unset LD_LIBRARY_PATH
build_examples static --static --cflags --libs sleepacc
run $MAKE -s -C "$root" uninstall PREFIX="$prefix" >/dev/null
left=$(find "$prefix" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"

echo "== 2. make install PREFIX=/opt/sleepacc DESTDIR=$tmp/stage"
stage="$tmp/stage"
run $MAKE -s -C "$root" install PREFIX=/opt/sleepacc DESTDIR="$stage" >/dev/null
(cd "$stage" && find . \( -type f -o -type l \) | sort | while read -r f; do
  if [ -L "$f" ]; then echo "    $f -> $(readlink "$f")"; else echo "    $f"; fi; done)
lib="$stage/opt/sleepacc/lib"
[ -f "$lib/libsleepacc.so.$ver" ] || fail "no libsleepacc.so.$ver"
[ "$(readlink "$lib/libsleepacc.so.0")" = "libsleepacc.so.$ver" ] || fail "libsleepacc.so.0 symlink"
[ "$(readlink "$lib/libsleepacc.so")" = "libsleepacc.so.0" ] || fail "libsleepacc.so symlink"
soname=$(readelf -d "$lib/libsleepacc.so.$ver" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "    SONAME: $soname"
[ "$soname" = "libsleepacc.so.0" ] || fail "SONAME is '$soname'"
grep -qx "prefix=/opt/sleepacc" "$lib/pkgconfig/sleepacc.pc" || fail ".pc does not name PREFIX"
! grep -q "$stage" "$lib/pkgconfig/sleepacc.pc" || fail ".pc names DESTDIR"
exported=$(nm -D --defined-only "$lib/libsleepacc.so.$ver" | awk '{print $3}')
echo "$exported" | grep -qv '^sleepacc_[a-z]' && fail "libsleepacc exports more than sleepacc_*: $(echo "$exported" | grep -v '^sleepacc_[a-z]' | tr '\n' ' ')"
echo "    exports $(echo "$exported" | wc -l) symbols, all sleepacc_*"
run $MAKE -s -C "$root" uninstall PREFIX=/opt/sleepacc DESTDIR="$stage" >/dev/null
left=$(find "$stage" -type f -o -type l)
[ -z "$left" ] || fail "uninstall left: $left"

echo "== 3. build/sleepacc-uninstalled.pc (against the tree)"
export PKG_CONFIG_PATH="$root/build"
run pkg-config --cflags --libs sleepacc-uninstalled
export LD_LIBRARY_PATH="$root/build"
build_examples uninstalled --cflags --libs sleepacc-uninstalled
unset LD_LIBRARY_PATH
echo "== 4. the installed header: C99, C11 (-pedantic -Werror), C++"
prefix="$tmp/prefix4"
run $MAKE -s -C "$root" install PREFIX="$prefix" >/dev/null
printf '#include <sleepacc.h>\nint main(void) { return sleepacc_now_ns() > 0 ? 0 : 1; }\n' > "$tmp/h.c"
for std in "-std=c99 -pedantic" "-std=c11 -pedantic"; do
  # shellcheck disable=SC2086
  run $CC $std -Wall -Wextra -Werror -I"$prefix/include" "$tmp/h.c" -o "$tmp/h" "$prefix/lib/libsleepacc.a" -lpthread -lrt -lm
  "$tmp/h" || fail "the $std program failed"
done
CXX=${CXX:-$(command -v c++ || command -v g++ || command -v clang++ || :)}
if [ -n "$CXX" ]; then
  cp "$tmp/h.c" "$tmp/h.cc"
  run "$CXX" -std=c++11 -pedantic -Wall -Wextra -Werror -I"$prefix/include" "$tmp/h.cc" -o "$tmp/hxx" \
    -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -lsleepacc
  "$tmp/hxx" || fail "the C++ program failed"
else
  echo "    skipped C++: no c++, g++ or clang++"
fi
run $MAKE -s -C "$root" uninstall PREFIX="$prefix" >/dev/null

echo "== 5. README.md's C recipes, as written"
# the fenced block after the README line with MARK; its text on stdout
readme_block() { # MARK [LANG]
  awk -v mark="$1" -v lang="${2:-}" '
    !seen && index($0, mark) { seen = 1; next }
    seen == 1 && /^```/ { if (lang == "" || $0 == "```" lang) { seen = 2; next } }
    seen == 2 && /^```/ { exit }
    seen == 2 { print }' "$root/README.md"
}
private=$(readme_block "runs this block as written, with HOME a temporary directory")
system=$(readme_block "runs this block as written, with /usr/local and /etc overlaid")
app=$(awk '/^C \(`#include "sleepacc.h"`/ { c = 1 } c && /^```c$/ { p = 1; next } p && /^```/ { exit } p' "$root/README.md")
[ -n "$private" ] && [ -n "$system" ] && [ -n "$app" ] || fail "README.md: the C recipes or app.c were not found"
# a copy of the tree (its built objects too, so make builds nothing again), app.c at its top
work="$tmp/tree"
mkdir -p "$work/build"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$root" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$work" -xf -
else
  tar -C "$root" --exclude=./build --exclude=./.venv -cf - . | tar -C "$work" -xf -
fi
cp -a "$root/build/obj" "$root"/build/libsleepacc.* "$work/build/"
printf '%s\n' "$app" > "$work/app.c"
recipe() { # LABEL SHOWN TEXT [ENV...]: run TEXT in the copy with bash -e; show SHOWN and the output
  label=$1 text=$3; echo "-- $label:"; printf '%s\n' "$2" | sed 's/^/   $ /'; shift 3
  (cd "$work" && env -u LD_LIBRARY_PATH -u PKG_CONFIG_PATH "$@" bash -e -c "$text") > "$tmp/recipe.out" 2>&1 \
    || { cat "$tmp/recipe.out"; fail "README.md's $label recipe failed"; }
  grep -E 'woke|ldconfig|make install:' "$tmp/recipe.out" | sed 's/^/    /'
  [ "$(grep -c 'woke .* ns after the deadline' "$tmp/recipe.out")" -ge 1 ] || fail "$label: app printed no wake-up"
}
mkdir -p "$tmp/home"
recipe "private prefix" "$private" "$private" HOME="$tmp/home"
left=$(find "$tmp/home" -type f -o -type l)
[ -z "$left" ] || fail "the private recipe's uninstall left: $left"
rm -f "$work/app" "$work/app-norpath"
if [ "$(id -u)" != 0 ]; then
  echo "-- /usr/local recipe: skipped: needs root (a mount namespace with /usr/local and /etc overlaid)"
elif ! unshare -m true 2>/dev/null; then
  echo "-- /usr/local recipe: skipped: unshare -m is not permitted here"
else
  mkdir -p "$tmp/ov/usr-up" "$tmp/ov/usr-work" "$tmp/ov/etc-up" "$tmp/ov/etc-work"
  ov="mount --make-rprivate / && \
    mount -t overlay overlay -o lowerdir=/usr/local,upperdir=$tmp/ov/usr-up,workdir=$tmp/ov/usr-work /usr/local && \
    mount -t overlay overlay -o lowerdir=/etc,upperdir=$tmp/ov/etc-up,workdir=$tmp/ov/etc-work /etc"
  if ! unshare -m sh -c "$ov" 2>"$tmp/ov.err"; then
    echo "-- /usr/local recipe: skipped: no overlay mount here ($(head -n 1 "$tmp/ov.err"))"
  else
    printf '%s\n' "$system" > "$tmp/system.sh"
    recipe "/usr/local" "$system" "$ov && cd '$work' && bash -e '$tmp/system.sh'" unshare -m
    grep -q ldconfig "$tmp/recipe.out" || fail "make install into /usr/local did not run ldconfig"
    left=$(find "$tmp/ov/usr-up" -type f)
    [ -z "$left" ] || fail "the /usr/local recipe's uninstall left: $left"
  fi
fi
echo "test_install: ok (installed, built $(echo "$examples" | wc -w) examples shared + static out of tree, ran them, uninstalled; the header as C99, C11 and C++; README.md's recipes)"
