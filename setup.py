"""Build the sleepacc._core extension from the C core and the binding.

Everything else (metadata, the pure-Python package) is in pyproject.toml.
The extension compiles csrc/*.c (the core, shared with the Lua module and
libsleepacc) and python/_ext/*.c (the thin binding) with relative paths, so
an sdist (which grafts both trees, see MANIFEST.in) builds anywhere.

Environment knobs (used by mk/python.mk):
  SLEEPACC_SANITIZE=1   build with -fsanitize=address,undefined (make sanitize-python)
"""
import glob
import os
import re

from setuptools import Extension, setup

sources = sorted(glob.glob("python/_ext/*.c")) + sorted(glob.glob("csrc/*.c"))
extra_compile_args = ["-std=gnu11", "-fvisibility=hidden"]
extra_link_args = []
if os.environ.get("SLEEPACC_SANITIZE"):
    san = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]
    extra_compile_args += san + ["-O1", "-g"]
    extra_link_args += san

# One source of truth for the version: SLEEPACC_VERSION in the public header.
with open("csrc/sleepacc.h", encoding="utf-8") as f:
    version = re.search(r'#define SLEEPACC_VERSION "([^"]+)"', f.read()).group(1)
readme = ""
if os.path.exists("README.md"):
    with open("README.md", encoding="utf-8") as f:
        readme = f.read()

setup(
    version=version,
    long_description=readme,
    long_description_content_type="text/markdown",
    ext_modules=[
        Extension(
            "sleepacc._core",
            sources=sources,
            include_dirs=["csrc", "python/_ext"],
            depends=sorted(glob.glob("csrc/*.h") + glob.glob("python/_ext/*.h")),
            define_macros=[("_GNU_SOURCE", None)],
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
            libraries=["pthread", "rt", "m"],
        )
    ],
)
