"""Every code block of README.md runs as written.

The blocks are extracted from README.md and run by language:

  python        in a fresh interpreter (this venv's), cwd a temporary directory
  lua           with lua5.4 and the module from `make lua-module`
  c             compiled against csrc/ and build/libsleepacc.a, then run
  sh/shell/...  each command in bash from the repository root

A block may say how it is exercised instead, in an HTML comment on the line
just before its fence (invisible on GitHub):

  <!-- readme-test: run instead: CMD ; CMD (why) -->
      the block's commands are too long to run here; each CMD is run instead,
      and each command line of the block must be the start of one of them
      (so a command added to the block without a stand-in fails this test).
      {tmp} is a temporary directory.
  <!-- readme-test: output of make run (...) -->
      a transcript: its section headers ("== ...", "results:", "plot:") and
      its table header are compared with the output of the stand-in
      `make run` of the block marked "run instead".
  <!-- readme-test: skip: REASON -->
      not run; REASON is shown as the skip reason.

Any other fenced block (a language this file does not know) fails the test,
so no block goes unexercised silently.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

from conftest import LUA_MODULE, ROOT, child_env

README = ROOT / "README.md"
MARK = re.compile(r"<!--\s*readme-test:\s*(.*?)\s*-->")
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\s*$")
LANGS = {"python": "python", "py": "python", "lua": "lua", "c": "c",
         "sh": "sh", "shell": "sh", "bash": "sh", "console": "sh", "": "text"}
TIMEOUT_S = 300


def blocks():
    """[(line number, language, code, marker or None)] of README.md."""
    out = []
    lines = README.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i + 1, m.group(1).lower()
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        assert j < len(lines), f"README.md:{start}: unclosed code block"
        prev = lines[i - 1] if i else ""
        mark = MARK.search(prev)
        out.append((start, lang, "\n".join(lines[i + 1:j]) + "\n", mark.group(1) if mark else None))
        i = j + 1
    return out


BLOCKS = blocks()


def _env(**extra):
    env = child_env(**extra)
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT", "MAKE_TERMERR"):
        env.pop(k, None)
    return env


def _run(cmd, **kw):
    kw.setdefault("env", _env())
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                       stdin=subprocess.DEVNULL, **kw)
    return r


def _commands(code):
    """The command lines of a shell block (comments and blanks dropped)."""
    cmds = []
    for line in code.splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#"):
            cmds.append(line)
    return cmds


def _stand_ins(mark):
    """`run instead: A ; B (why)` -> ["A", "B"]."""
    text = mark[len("run instead:"):]
    text = re.sub(r"\s*\([^()]*\)\s*$", "", text)
    return [c.strip() for c in text.split(" ; ") if c.strip()]


@pytest.fixture(scope="module")
def stand_in_runs(tmp_path_factory):
    """Runs the commands of every 'run instead' block once: {cmd: result}."""
    tmp = tmp_path_factory.mktemp("readme-run")
    results = {}
    for _, _, _, mark in BLOCKS:
        if mark and mark.startswith("run instead:"):
            for cmd in _stand_ins(mark):
                cmd = cmd.replace("{tmp}", str(tmp))
                results[cmd] = _run(["bash", "-c", cmd], cwd=ROOT)
    return results


def _id(block):
    return f"README.md:{block[0]}:{block[1] or 'text'}"


def test_readme_has_blocks_of_each_kind():
    langs = {LANGS.get(b[1], b[1]) for b in BLOCKS}
    assert {"python", "lua", "sh"} <= langs, langs
    unknown = [_id(b) for b in BLOCKS if b[1] not in LANGS]
    assert not unknown, f"README blocks in a language this test does not run: {unknown}"
    unmarked_text = [_id(b) for b in BLOCKS if LANGS.get(b[1]) == "text" and not b[3]]
    assert not unmarked_text, ("README blocks without a language must say how they are "
                               f"exercised (<!-- readme-test: ... -->): {unmarked_text}")


@pytest.mark.parametrize("block", BLOCKS, ids=_id)
def test_readme_block(block, tmp_path, stand_in_runs):
    line, lang, code, mark = block
    kind = LANGS.get(lang)
    if mark and mark.startswith("skip:"):
        pytest.skip(f"README.md:{line}: {mark[5:].strip()}")
    if mark and mark.startswith("run instead:"):
        return _check_stand_in(line, code, mark, stand_in_runs)
    if mark and mark.startswith("output of make run"):
        return _check_make_run_output(line, code, stand_in_runs)
    assert mark is None, f"README.md:{line}: unknown readme-test marker {mark!r}"
    if kind == "python":
        r = _run([sys.executable, "-c", code], cwd=tmp_path)
    elif kind == "lua":
        r = _run_lua(code, tmp_path)
    elif kind == "c":
        r = _run_c(code, tmp_path)
    elif kind == "sh":
        r = _run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=ROOT)
    else:
        pytest.fail(f"README.md:{line}: a {lang or 'plain'} block needs a readme-test marker")
    assert r.returncode == 0, f"README.md:{line} ({lang}) failed:\n{code}\n{r.stdout}\n{r.stderr}"


def _run_lua(code, tmp_path):
    lua = shutil.which("lua5.4")
    if lua is None:
        pytest.skip("lua5.4 is not installed (make deps)")
    build = _run(["make", "-s", "-C", str(ROOT), "lua-module"])
    assert build.returncode == 0, build.stdout + build.stderr
    script = tmp_path / "block.lua"
    script.write_text(code)
    return _run([lua, str(script)], cwd=tmp_path,
                env=_env(LUA_CPATH=f"{LUA_MODULE.parent}/?.so;;"))


def _run_c(code, tmp_path):
    build = _run(["make", "-s", "-C", str(ROOT), "lib"])
    assert build.returncode == 0, build.stdout + build.stderr
    src = tmp_path / "block.c"
    src.write_text(code)
    exe = tmp_path / "block"
    cc = os.environ.get("CC", "cc")
    r = _run([cc, "-std=gnu11", "-Wall", "-Werror", f"-I{ROOT / 'csrc'}", str(src), "-o", str(exe),
              str(ROOT / "build" / "libsleepacc.a"), "-lpthread", "-lrt", "-lm"])
    assert r.returncode == 0, f"README C block does not compile:\n{r.stderr}"
    return _run([str(exe)], cwd=tmp_path)


def _covers(stand_in, cmd):
    """The words of `cmd`, in order, are among the stand-in's ("make test"
    is covered by "make test SUITES_PLAN=1", "make run" by "make run RUN_FLAGS=...")."""
    words = iter(shlex.split(stand_in))
    return all(w in words for w in shlex.split(cmd))


def _check_stand_in(line, code, mark, runs):
    cmds = _commands(code)
    stand_ins = [c for c in runs if any(_covers(c, x) for x in cmds)]
    for cmd in cmds:
        assert any(_covers(s, cmd) for s in runs), (
            f"README.md:{line}: `{cmd}` has no stand-in in its readme-test marker")
    for cmd in stand_ins:
        r = runs[cmd]
        assert r.returncode == 0, f"README.md:{line}: `{cmd}` failed:\n{r.stdout}\n{r.stderr}"
        if "SUITES_PLAN=1" in cmd:
            # the plan names every suite
            for suite in ("test-c", "test-reliability", "test-python", "test-lua"):
                assert f"==== test: {suite} (planned)" in r.stdout, r.stdout


def _make_run_output(runs):
    outs = [r for c, r in runs.items() if c.startswith("make run")]
    assert outs, "no block runs a stand-in `make run`"
    r = outs[0]
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def _shape(line):
    """A transcript line with its host, times and numbers blanked."""
    line = re.sub(r"\S+\.(jsonl|png)\b", "FILE", line)
    line = re.sub(r"(--\S+(?:[ =](?!-)\S+)?)", "", line)  # the stand-in's extra flags
    return " ".join(line.split())


def _check_make_run_output(line, code, runs):
    real = _make_run_output(runs).splitlines()
    real_shapes = {_shape(x) for x in real}
    want = [x for x in code.splitlines()
            if x.startswith("== ") or x.startswith(("results:", "plot:"))]
    assert want, f"README.md:{line}: the transcript has no '== ' headers"
    for x in want:
        assert _shape(x) in real_shapes, (f"README.md:{line}: `{x}` does not match make run's "
                                          "output:\n" + "\n".join(real))
    # the table's header line, column for column
    header = next((x for x in code.splitlines() if x.startswith("method ")), None)
    assert header is not None, f"README.md:{line}: no table header in the transcript"
    # (the wide table sizes its columns to the values: compare the columns)
    assert any(r.split() == header.split() for r in real), (
        f"README.md:{line}: table header differs:\n{header}\n" + "\n".join(real))
    for x in code.splitlines():
        if x.startswith("sleepacc: wrote ") or x.startswith("sleepacc doctor: "):
            head = x.split(":", 1)[0] + ": " + x.split(":", 1)[1].split()[0]
            assert any(r.startswith(head) for r in real), (x, real)
