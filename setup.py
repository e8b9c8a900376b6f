"""Build the sleepacc._core extension from the C core and the binding.

Everything else (metadata, the pure-Python package) is in pyproject.toml.
The extension compiles the core (csrc/*.c, shared with the Lua module and
libsleepacc) and the thin binding (python/_ext/*.c) with relative paths, so
an sdist (which grafts both trees and mk/sources.mk, see MANIFEST.in) builds
anywhere.  Which files, flags, defines and libraries: mk/sources.mk, the one
build truth make and the rockspec use too (read by read_build_truth below).

Environment knobs:
  SLEEPACC_SANITIZE=1   build with -fsanitize=address,undefined (make sanitize-python)
  CI=true               -Werror, as in every other build
  SLEEPACC_EXT=inplace  leave the extension out of this (editable) install: make
                        compiles it in place meanwhile (mk/python.mk, venv-run)
"""
import glob
import os
import re
from concurrent.futures import ThreadPoolExecutor

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

BUILD_TRUTH = "mk/sources.mk"


def read_build_truth(path=BUILD_TRUTH):
    """The `NAME := value` lines of mk/sources.mk, as a dict of word lists."""
    truth = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^(SLEEPACC_[A-Z_]+)\s*:=\s*(.*?)\s*$", line)
            if m:
                truth[m.group(1)] = m.group(2).split()
    return truth


def expand(patterns):
    """Glob patterns -> sorted file list (every reader sorts the same way)."""
    return sorted({f for p in patterns for f in glob.glob(p)})


truth = read_build_truth()
sources = expand(truth["SLEEPACC_PY_SOURCES"]) + expand(truth["SLEEPACC_CORE_SOURCES"])
extra_compile_args = (truth["SLEEPACC_STD"] + truth["SLEEPACC_WARNINGS"]
                      + truth["SLEEPACC_MODULE_FLAGS"])
if os.environ.get("CI") == "true":
    extra_compile_args += truth["SLEEPACC_CI_WARNINGS"]
extra_link_args = []
if os.environ.get("SLEEPACC_SANITIZE"):
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
    extra_compile_args += san + ["-O1", "-g"]
    extra_link_args += san

# One source of truth for the version: SLEEPACC_VERSION in the public header.
with open(truth["SLEEPACC_HEADER"][0], encoding="utf-8") as f:
    version = re.search(r'#define SLEEPACC_VERSION "([^"]+)"', f.read()).group(1)
readme = ""
if os.path.exists("README.md"):
    with open("README.md", encoding="utf-8") as f:
        readme = f.read()



class parallel_build_ext(build_ext):
    """build_ext compiling an extension's sources side by side, one compiler
    per CPU (setuptools compiles them one after the other)."""

    def build_extension(self, ext):
        one = self.compiler.compile

        def every(sources, *args, **kwargs):
            with ThreadPoolExecutor(max(1, len(os.sched_getaffinity(0)))) as pool:
                done = pool.map(lambda src: one([src], *args, **kwargs), sources)
                return [obj for objs in done for obj in objs]

        self.compiler.compile = every
        try:
            return super().build_extension(ext)
        finally:
            del self.compiler.compile


setup(
    cmdclass={"build_ext": parallel_build_ext},
    version=version,
    long_description=readme,
    long_description_content_type="text/markdown",
    ext_modules=[] if os.environ.get("SLEEPACC_EXT") == "inplace" else [
        Extension(
            "sleepacc._core",
            sources=sources,
            include_dirs=truth["SLEEPACC_INCDIRS"] + ["python/_ext"],
            depends=sorted(glob.glob("csrc/*.h") + glob.glob("python/_ext/*.h")) + [BUILD_TRUTH],
            define_macros=[(d, None) for d in truth["SLEEPACC_DEFINES"]],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
            libraries=truth["SLEEPACC_LIBRARIES"],
        )
    ],
)
