# The set-up step: every Debian package any suite (or make run) uses.
#   make deps   installs the missing ones with apt-get when run as root on
#               Debian; anyone else gets one line naming what is missing
#               (and how to install it); the suites that need a missing tool
#               then skip with a reason, or stop with a message naming it.
# It is a prerequisite of test, run and sanitize; no test installs anything.
# A suite that needs another package: add it to DEB_PACKAGES (one list).
# make DEPS=0 ... skips the step (e.g. a machine without dpkg you set up by hand).
DEB_PACKAGES := build-essential pkg-config python3-venv \
  lua5.1 liblua5.1-0-dev lua5.3 liblua5.3-dev lua5.4 liblua5.4-dev \
  luajit libluajit-5.1-dev luarocks \
  clang libclang-rt-14-dev valgrind strace \
  prometheus irtt rt-tests stress-ng flent
DEPS ?= 1

.PHONY: deps

deps:
ifeq ($(DEPS),1)
	@if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "make deps: not a Debian system (no dpkg-query); the suites use:" \
	       "$(DEB_PACKAGES) -- install their equivalents (make DEPS=0 skips this check)" >&2; \
	  exit 0; fi; \
	missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' \
	    || missing="$$missing $$p"; done; \
	[ -z "$$missing" ] && exit 0; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make deps: installing$$missing"; \
	  export DEBIAN_FRONTEND=noninteractive; \
	  apt-get install -y -q$$missing \
	    || { apt-get update -q && apt-get install -y -q$$missing; } \
	    || { echo "make deps: apt-get could not install$$missing" >&2; exit 1; }; \
	else \
	  echo "make deps: missing Debian packages:$$missing" >&2; \
	  echo "make deps: install them (sudo apt-get install$$missing) or run make as root;" \
	       "until then the suites that need them skip or stop naming them" >&2; \
	fi
endif
