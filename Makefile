# sleepacc -- top-level Makefile.
#   make run       set up what is needed, run the default sweep (the main job)
#   make test      build everything and run every test suite (C, Python, Lua, notebooks)
#   make sanitize  C tests + Python suite under ASan/UBSan, Lua suite under valgrind
#   make bench     benchmarks (figures, not gates)
#   make fuzz      bounded libFuzzer runs over the core's entry points
# Each part keeps its rules in mk/<part>.mk.
.PHONY: all lib test sanitize run bench fuzz clean
.DEFAULT_GOAL := all

all: lib

include mk/core.mk
include $(filter-out mk/core.mk,$(wildcard mk/*.mk))

test: test-c $(if $(wildcard mk/python.mk),test-python) $(if $(wildcard mk/lua.mk),test-lua)
	@echo "make test: all suites passed"

sanitize: sanitize-c $(if $(wildcard mk/python.mk),sanitize-python) $(if $(wildcard mk/lua.mk),sanitize-lua)
	@echo "make sanitize: clean"

clean:
	rm -rf build *.egg-info python/*.egg-info
