# sleepacc -- top-level Makefile.
#   make run       set up what is needed, run the default sweep (the main job)
#   make deps      the Debian packages every suite uses (apt-get when root; else names them);
#                  make run needs fewer (deps-run), make bench others (deps-bench): mk/deps.mk
#   make test      build everything and run every test suite (C, fuzz replay, Python,
#                  Lua, notebooks), each even after one failed; fails naming which
#   make sanitize  C tests + Python suite under ASan/UBSan, Lua suite under valgrind
#   make bench     benchmarks (figures, not gates)
#   make fuzz      bounded libFuzzer runs over the core's entry points
# Each part keeps its rules in mk/<part>.mk.
# A part adds its suite with `TEST_SUITES += test-<part>` (and
# `SANITIZE_SUITES += sanitize-<part>`), never with `test: test-<part>`: a
# prerequisite that fails would stop make before the other suites run.
.PHONY: all lib test sanitize run bench fuzz clean
.DEFAULT_GOAL := all

all: lib

TEST_SUITES := test-c
TEST_BUILD := lib
SANITIZE_SUITES := sanitize-c

include mk/core.mk
include $(filter-out mk/core.mk,$(wildcard mk/*.mk))

TEST_SUITES += $(if $(wildcard mk/python.mk),test-python) $(if $(wildcard mk/lua.mk),test-lua)
SANITIZE_SUITES += $(if $(wildcard mk/python.mk),sanitize-python) $(if $(wildcard mk/lua.mk),sanitize-lua)

# mk/run-suites runs each suite even after one failed, then prints one line
# per suite and fails naming the failed ones.
# make test runs two suites at a time, the Python suite (the longest, on
# pytest-xdist workers) beside the others, after building what they share
# (TEST_BUILD, to which each part adds its own): two makes building one file
# at once would race.  A failed build stops nothing: each suite then builds
# what it needs and fails on its own.  SUITE_JOBS=1: one after another.
SUITE_JOBS ?= 2
test: deps
	@+$(if $(SUITES_PLAN),,$(MAKE) -s -k --no-print-directory $(TEST_BUILD) || \
	  echo "make test: building what the suites share failed; each suite says what it lacks";) \
	  SUITE_JOBS=$(SUITE_JOBS) mk/run-suites test "$(MAKE)" \
	  $(filter test-python,$(TEST_SUITES)) $(filter-out test-python,$(TEST_SUITES))

sanitize: deps
	@+mk/run-suites sanitize "$(MAKE)" $(SANITIZE_SUITES)

run: deps-run

clean:
	rm -rf build *.egg-info python/*.egg-info
