# mk/sources.mk -- the ONE build truth: which C files make up the core and
# each binding, and the flags, defines and libraries every build uses.
#
# Read by: mk/core.mk and mk/lua.mk (make includes it), mk/rock.make (the
# luarocks build: the rockspec's make back-end), setup.py (the CPython
# extension parses the `NAME := value` lines below, see its
# read_build_truth) and tests/lua/test_build.lua (checks the committed
# rockspec against mk/rockspec.in and SLEEPACC_VERSION).
#
# Keep this file to plain `NAME := value` lines (no make functions): other
# tools than make read it.  Source lists are glob patterns, sorted by each
# reader, so a new csrc/*.c file joins every build without an edit here.
# The version is not here: it is SLEEPACC_VERSION in csrc/sleepacc.h.
ifndef SLEEPACC_SOURCES_MK
SLEEPACC_SOURCES_MK := 1

# The C core (compiled by every build) and its public header.
SLEEPACC_CORE_SOURCES := csrc/*.c
SLEEPACC_HEADER := csrc/sleepacc.h
# The bindings.
SLEEPACC_LUA_SOURCES := lua/*.c
SLEEPACC_PY_SOURCES := python/_ext/*.c
# Include directories (the core; each binding adds its own directory).
SLEEPACC_INCDIRS := csrc

# Compiler flags of every build.  -Werror is added when CI=true.
SLEEPACC_STD := -std=gnu11
SLEEPACC_WARNINGS := -Wall -Wextra
SLEEPACC_CI_WARNINGS := -Werror
SLEEPACC_DEFINES := _GNU_SOURCE
# Binding modules (Python extension, Lua module) hide every symbol but their
# entry point.  libsleepacc.so exports the public sleepacc_* names instead
# (mk/libsleepacc.map), so the core objects themselves keep default visibility.
SLEEPACC_MODULE_FLAGS := -fvisibility=hidden
# Libraries, named once (-l is added by each reader).
SLEEPACC_LIBRARIES := pthread rt m

# The shared library's ABI version (SONAME libsleepacc.so.$(SLEEPACC_SOVERSION)).
SLEEPACC_SOVERSION := 0
endif
