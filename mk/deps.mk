# The set-up step: the Debian packages each command uses, one list per
# command, installed by mk/deb-deps (apt-get --no-install-recommends when
# run as root on Debian; anyone else gets one line naming what is missing,
# and what needs a missing tool skips with a reason or stops naming it).
#   make deps-run    DEB_RUN: what `make run` needs (a C compiler and the C
#                    library's headers, Python's headers, venv)
#   make deps        DEB_PACKAGES: every package any suite uses (`make test`,
#                    `make sanitize`)
#   make deps-bench  DEB_BENCH: what `make bench` compares against
# No test installs anything.  A suite that needs another package: add it to
# DEB_TEST; a benchmark: DEB_BENCH.
# make DEPS=0 ... skips the step (e.g. a machine without dpkg you set up by hand).
DEB_RUN := gcc libc6-dev python3-dev python3-venv
DEB_TEST := build-essential pkg-config \
  lua5.1 liblua5.1-0-dev lua5.3 liblua5.3-dev lua5.4 liblua5.4-dev \
  luajit libluajit-5.1-dev luarocks \
  clang libclang-rt-14-dev valgrind strace \
  prometheus irtt rt-tests stress-ng flent iputils-ping
DEB_BENCH := $(DEB_RUN) stress-ng irtt rt-tests lua5.4
DEB_PACKAGES := $(DEB_RUN) $(DEB_TEST)
DEPS ?= 1

.PHONY: deps deps-run deps-bench

deps:
	@$(if $(filter 1,$(DEPS)),mk/deb-deps deps $(DEB_PACKAGES))

deps-run:
	@$(if $(filter 1,$(DEPS)),mk/deb-deps run $(DEB_RUN))

deps-bench:
	@$(if $(filter 1,$(DEPS)),mk/deb-deps bench $(DEB_BENCH))

# `make bench` and each benchmark alone install what they compare against.
bench bench-precise bench-frames bench-lua-sigint bench-exporter bench-model: deps-bench
