# The Python package: a virtualenv with sleepacc installed editable, its
# pytest suite, and the suite again over an ASan/UBSan build of the extension.
#   make venv-run         .venv with sleepacc (editable) and its runtime
#                         dependencies only (numpy, matplotlib): `make run`'s
#   make venv             the same .venv with the test extras added (pytest,
#                         mypy, hypothesis, jupyter, ...): `make test`'s
#   make test-python      pytest tests/python
#   make sanitize-python  the in-process suites, extension built with ASan + UBSan
PYTHON3 ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
PY_EXT_SRC := $(wildcard csrc/*.c csrc/*.h python/_ext/*.c python/_ext/*.h) setup.py
# Stamps: the venv with the runtime dependencies, with the test extras too,
# and the in-place extension.
PY_RUN_STAMP := $(VENV)/.sleepacc-run
PY_DEPS_STAMP := $(VENV)/.sleepacc-deps
PY_EXT_STAMP := $(VENV)/.sleepacc-ext
ASAN_BUILD := build/python-asan
# The build requirements pyproject.toml names (setuptools, wheel): installed
# into the venv once, so that each editable install builds with them there
# (--no-build-isolation) instead of fetching them into a throwaway venv.
PY_BUILD_REQUIRES = $(shell sed -n 's/^requires = \[\(.*\)\]/\1/p' pyproject.toml | tr -d '",')

.PHONY: venv venv-run test-python sanitize-python
TEST_BUILD += venv

venv-run: $(PY_EXT_STAMP)
venv: $(PY_DEPS_STAMP) $(PY_EXT_STAMP)

$(VPY):
	@$(PYTHON3) -c 'import venv, ensurepip' 2>/dev/null || { \
	  echo "error: '$(PYTHON3) -m venv' is not usable here (no venv/ensurepip module)."; \
	  echo "       On Debian/Ubuntu: apt-get install python3-venv"; exit 1; }
	$(PYTHON3) -m venv --without-pip $(VENV) || { rm -rf $(VENV); \
	  echo "error: creating $(VENV) failed (on Debian/Ubuntu: apt-get install python3-venv)"; exit 1; }
	@$(PYTHON3) -m pip --python $(VPY) --version >/dev/null 2>&1 || $(VPY) -m ensurepip >/dev/null

# The venv is made without pip (a tenth of a second; ensurepip's install
# of pip took ~6 s here) and filled by python3's own pip, which installs
# into another interpreter's environment with --python (pip >= 22.3);
# where python3 has no such pip, ensurepip puts one in the venv ($(VPY)'s
# recipe) and that one is used.  `make venv` adds pip to the venv (the
# tests and bench-frames run `python -m pip`).  Packages go in without
# their bytecode (--no-compile, ~8 s less here): Python writes it for the
# modules it imports, the first time.
VPIP = $(if $(shell $(VPY) -c 'import pip' 2>/dev/null && echo y),$(VPY) -m pip,$(PYTHON3) -m pip --python $(VPY))

# The editable install (sleepacc, its dependencies; the plot extra is
# matplotlib, which `make run` draws with) leaves the extension out
# (SLEEPACC_EXT=inplace, setup.py): it is compiled in place
# (python/sleepacc/_core*.so) at the same time, by setup.py build_ext.
PY_BUILD_EXT = $(VPY) setup.py -q build_ext --inplace --build-temp build/python/temp
$(PY_RUN_STAMP): $(VPY) pyproject.toml
	$(VPIP) install -q --no-compile $(foreach r,$(PY_BUILD_REQUIRES),'$(r)')
	$(PY_BUILD_EXT) & \
	SLEEPACC_EXT=inplace $(VPIP) install -q --no-compile --no-build-isolation -e '.[plot]'; \
	rc=$$?; wait $$! && exit $$rc
	touch $@

$(PY_DEPS_STAMP): $(PY_RUN_STAMP) pyproject.toml
	$(VPY) -c 'import pip' 2>/dev/null || $(VPY) -m ensurepip >/dev/null
	SLEEPACC_EXT=inplace $(VPY) -m pip install -q --no-compile --no-build-isolation -e '.[test]'
	touch $@

# A change to the core or the binding rebuilds the extension in place; an
# extension built from the same sources is not built again.
$(PY_EXT_STAMP): $(PY_RUN_STAMP) $(PY_EXT_SRC)
	@so=python/sleepacc/_core$$($(VPY) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))'); \
	if [ ! -f "$$so" ] || [ -n "$$(find $(PY_EXT_SRC) -newer "$$so" | head -n 1)" ]; then \
	  echo "$(PY_BUILD_EXT)"; $(PY_BUILD_EXT); fi
	touch $@

# The suite runs on PYTEST_JOBS pytest-xdist workers (0: in this process);
# tests that share something host-wide are grouped onto one worker
# (tests/python/conftest.py).
PYTEST_JOBS ?= 2
test-python: venv
	$(VPY) -m pytest tests/python -q -n $(PYTEST_JOBS) --dist loadgroup

# The suite over an ASan/UBSan build of the extension, kept apart from the
# normal in-place build: a copy of the package in $(ASAN_BUILD) goes first
# on PYTHONPATH.  libasan (and libstdc++, so C++ extensions such as
# matplotlib's can throw) is preloaded into the uninstrumented interpreter;
# PYTHONMALLOC=malloc lets ASan see every object allocation; reports go to
# $(ASAN_BUILD)/report.<pid> (pytest would swallow them on stderr) and any
# report fails the target, except one: when every test passed and the only
# report is LeakSanitizer's own tracer crashing at exit (no leak check ran;
# seen once in four CI runs here, google/sanitizers#1267) the suite runs
# again, up to three runs in all (each ~6.5 min here), so that a leak
# check does run.  tests/lsan.supp silences what the interpreter
# and third-party extensions allocate once at import and never free.
# SLEEPACC_SANITIZE_RUN tells tests/python/conftest.py to start child
# processes without the sanitizer runtime, so the suites whose work happens
# in child processes (CLI, notebooks, Lua, README blocks, mypy) would sanitize nothing and are
# left to test-python; every suite that drives the extension in this
# process runs (PY_SANITIZE_TESTS), the reliability suites included (their
# property tests, signal storm and load sweep call the extension in-process).
# Left out as well: the suites whose work is the Python meaning layer (model
# fits, plots, reports, unit parsing, the compare and monitor commands):
# under ASan with PYTHONMALLOC=malloc their numpy work takes most of the run,
# and the extension calls they make are the same measure/sweep that the API,
# precise, reliability and exporter suites sanitize.
PY_SANITIZE_TESTS ?= $(filter-out tests/python/test_cli.py tests/python/test_notebooks.py \
  tests/python/test_readme.py tests/python/test_types.py \
  tests/python/test_lua_% tests/python/test_api_packaging.py tests/python/test_flent.py \
  tests/python/test_measure_parity.py \
  tests/python/test_model.py tests/python/test_model_synthetic.py tests/python/test_plot.py \
  tests/python/test_compare.py tests/python/test_monitor.py tests/python/test_report.py \
  tests/python/test_units.py tests/python/test_doctor.py,\
  $(wildcard tests/python/test_*.py))
sanitize-python: venv
	rm -rf $(ASAN_BUILD)
	mkdir -p $(ASAN_BUILD)/sleepacc
	cd python/sleepacc && find . \( -name '*.py' -o -name '*.pyi' -o -name py.typed \) \
	  -not -path '*/__pycache__/*' -exec cp --parents {} $(CURDIR)/$(ASAN_BUILD)/sleepacc/ \;
	SLEEPACC_SANITIZE=1 $(VPY) setup.py -q build_ext --build-temp $(ASAN_BUILD)/temp \
	  --build-lib $(ASAN_BUILD) --force
	@set +e; \
	for attempt in 1 2 3; do \
	  rm -f $(ASAN_BUILD)/report.* $(ASAN_BUILD)/pytest.log; \
	  { SLEEPACC_SANITIZE_RUN=1 PYTHONPATH=$(CURDIR)/$(ASAN_BUILD) PYTHONMALLOC=malloc \
	  LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libstdc++.so.6)" \
	  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0:malloc_context_size=30:log_path=$(CURDIR)/$(ASAN_BUILD)/report \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:log_path=$(CURDIR)/$(ASAN_BUILD)/report \
	    $(VPY) -m pytest $(PY_SANITIZE_TESTS) -q -p no:cacheprovider 2>&1 \
	    && echo 0 > $(ASAN_BUILD)/rc || echo 1 > $(ASAN_BUILD)/rc; } | tee $(ASAN_BUILD)/pytest.log; \
	  rc=$$(cat $(ASAN_BUILD)/rc); \
	  if ! ls $(ASAN_BUILD)/report.* >/dev/null 2>&1; then exit $$rc; fi; \
	  cat $(ASAN_BUILD)/report.*; \
	  if [ $$attempt -lt 3 ] && \
	     grep -qE '^[0-9]+ passed(, [0-9]+ (skipped|deselected|xfailed|xpassed|warnings?))* in ' $(ASAN_BUILD)/pytest.log && \
	     ! grep -L "LeakSanitizer has encountered a fatal error" $(ASAN_BUILD)/report.* | grep -q . && \
	     ! grep -qE "ERROR: AddressSanitizer|ERROR: LeakSanitizer: detected|runtime error" $(ASAN_BUILD)/report.*; then \
	    echo "sanitize-python: every test passed, but LeakSanitizer's tracer crashed at exit, so no leak"; \
	    echo "  check ran (a known sanitizer flake: google/sanitizers#1267); running the suite once more"; \
	    continue; fi; \
	  echo "sanitize-python: sanitizer reports above"; exit 1; \
	done
