# The Lua module: build/lua/sleepacc.so (Lua 5.4) from lua/*.c and the SAME
# core objects as every other build (csrc/*.c, compiled once by mk/core.mk
# with -fPIC), the same module for Lua 5.3, 5.1 and LuaJIT from the same
# source (lua/binding.h maps 5.2+ names onto 5.1), its tests, its valgrind run and its example.
#   make lua-module    build $(BUILD)/lua/sleepacc.so (5.4)
#   make test-lua      tests/lua/run.lua on every installed interpreter
#                      (lua5.4, lua5.3, lua5.1, luajit; a missing one is
#                      skipped with a message), plus the luarocks build
#   make sanitize-lua  the Lua suite under valgrind (lua5.4, 5.3, 5.1; zero reports)
#   make lua-example   lua/examples/sweep.lua (irtt table for every method)
#   make lua-rock      luarocks --lua-version=5.4 make, from the repo root
#   make rockspec      regenerate lua/sleepacc-<version>-1.rockspec
#   make rock          build/rock/sleepacc-<version>-1.src.rock (luarocks pack; installs offline)
#   make test-rock     that rock installed into fresh trees (5.1, 5.4, LuaJIT), offline
# lua5.4 and its headers are looked up with pkg-config (lua5.4) or in
# /usr/include/lua5.4; when missing, root installs lua5.4 + liblua5.4-dev
# with apt-get, anyone else gets a message naming what is missing.
LUA ?= lua5.4
LUA_INC ?= $(or $(shell pkg-config --cflags lua5.4 2>/dev/null),-I/usr/include/lua5.4)
LUA_SRC := $(sort $(wildcard $(SLEEPACC_LUA_SOURCES)))
LUA_HDR := $(wildcard lua/*.h)
LUA_OBJ := $(LUA_SRC:lua/%.c=$(BUILD)/lua/obj/%.o)
LUA_MOD := $(BUILD)/lua/sleepacc.so
TEST_BUILD += $(LUA_MOD)
LUA_ENV := LUA_CPATH="$(CURDIR)/$(BUILD)/lua/?.so;;" LUA_PATH="$(CURDIR)/tests/lua/?.lua;;"
VALGRIND ?= valgrind
VALGRIND_FLAGS ?= --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,possible \
  --suppressions=$(CURDIR)/tests/lua/valgrind.supp --quiet

.PHONY: lua-deps lua-module test-lua sanitize-lua lua-example lua-rock

# Check (and as root, install) lua5.4 and its headers.
lua-deps:
	@need=""; \
	command -v $(LUA) >/dev/null 2>&1 || need="$$need lua5.4"; \
	{ pkg-config --exists lua5.4 2>/dev/null || test -f /usr/include/lua5.4/lua.h; } || need="$$need liblua5.4-dev"; \
	if [ -n "$$need" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "lua.mk: installing$$need"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y$$need \
	      || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y$$need; } \
	      || { echo "lua.mk: apt-get could not install$$need" >&2; exit 1; }; \
	  else \
	    echo "lua.mk: missing$$need (the lua5.4 interpreter and liblua5.4-dev headers);" \
	         "install them (apt-get install lua5.4 liblua5.4-dev) or run make as root" >&2; \
	    exit 1; \
	  fi; \
	fi

$(BUILD)/lua/obj/%.o: lua/%.c $(LUA_HDR) $(CORE_HDR) | lua-deps
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) $(SLEEPACC_MODULE_FLAGS) $(LUA_INC) -Ilua -c $< -o $@

# lua/sleepacc.map: only luaopen_sleepacc is exported (the core objects are
# the ones libsleepacc.so exports from; here they become local).
$(LUA_MOD): $(LUA_OBJ) $(CORE_OBJ) lua/sleepacc.map
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,--version-script=lua/sleepacc.map -o $@ $(LUA_OBJ) $(CORE_OBJ) $(CORE_LIBS)

lua-module: $(LUA_MOD)

# The other interpreters: one module each, from the same lua/*.c, built in
# one compile-and-link step against that interpreter's headers.
LUA_VERSIONS := 5.4 5.3 5.1 jit
LUA_BIN_5.4 := $(LUA)
LUA_BIN_5.3 := lua5.3
LUA_BIN_5.1 := lua5.1
LUA_BIN_jit := luajit
LUA_INC_5.4 := $(LUA_INC)
LUA_INC_5.3 := $(or $(shell pkg-config --cflags lua5.3 2>/dev/null),-I/usr/include/lua5.3)
LUA_INC_5.1 := $(or $(shell pkg-config --cflags lua5.1 2>/dev/null),-I/usr/include/lua5.1)
LUA_INC_jit := $(or $(shell pkg-config --cflags luajit 2>/dev/null),-I/usr/include/luajit-2.1)
LUA_PKG_5.4 := lua5.4 liblua5.4-dev
LUA_PKG_5.3 := lua5.3 liblua5.3-dev
LUA_PKG_5.1 := lua5.1 liblua5.1-0-dev
LUA_PKG_jit := luajit libluajit-5.1-dev
LUA_MOD_5.4 := $(LUA_MOD)
LUA_MOD_5.3 := $(BUILD)/lua-5.3/sleepacc.so
LUA_MOD_5.1 := $(BUILD)/lua-5.1/sleepacc.so
LUA_MOD_jit := $(BUILD)/lua-jit/sleepacc.so
lua_hdr = $(patsubst -I%,%,$(firstword $(filter -I%,$(LUA_INC_$(1)))))/lua.h

$(BUILD)/lua-%/sleepacc.so: $(LUA_SRC) $(LUA_HDR) $(CORE_HDR) $(CORE_OBJ) lua/sleepacc.map
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) $(SLEEPACC_MODULE_FLAGS) $(LUA_INC_$*) -Ilua -shared \
	  -Wl,--version-script=lua/sleepacc.map -o $@ $(LUA_SRC) $(CORE_OBJ) $(CORE_LIBS)

# The whole suite on each installed interpreter; a missing interpreter or
# header set is skipped with a message; the summary names each result, and
# the target fails when any suite failed.
test-lua: $(LUA_MOD) lua-rock
	@cd $(CURDIR); fail=""; summary=""; \
	$(foreach v,$(LUA_VERSIONS),\
	if ! command -v $(LUA_BIN_$(v)) >/dev/null 2>&1; then \
	  echo "test-lua: skipped $(LUA_BIN_$(v)): not installed (apt-get install $(LUA_PKG_$(v)))"; \
	  summary="$$summary\n  $(LUA_BIN_$(v)): skipped (not installed)"; \
	elif [ ! -f "$(call lua_hdr,$(v))" ]; then \
	  echo "test-lua: skipped $(LUA_BIN_$(v)): no $(call lua_hdr,$(v)) (apt-get install $(LUA_PKG_$(v)))"; \
	  summary="$$summary\n  $(LUA_BIN_$(v)): skipped (no headers)"; \
	else \
	  $(MAKE) -s $(LUA_MOD_$(v)) || exit 1; \
	  echo "== $(LUA_BIN_$(v)) tests/lua/run.lua ($(LUA_MOD_$(v)))"; \
	  LUA_CPATH="$(CURDIR)/$(dir $(LUA_MOD_$(v)))?.so;;" LUA_PATH="$(CURDIR)/tests/lua/?.lua;;" \
	    $(LUA_BIN_$(v)) tests/lua/run.lua > $(dir $(LUA_MOD_$(v)))suite.log 2>&1; st=$$?; \
	  cat $(dir $(LUA_MOD_$(v)))suite.log; \
	  line=$$(tail -n 1 $(dir $(LUA_MOD_$(v)))suite.log); \
	  summary="$$summary\n  $$($(LUA_BIN_$(v)) -v 2>&1 | head -n 1 | cut -d' ' -f1-2): $$line"; \
	  [ $$st = 0 ] || fail="$$fail $(LUA_BIN_$(v))"; \
	fi;) \
	printf "test-lua summary:$$summary\n"; \
	if [ -n "$$fail" ]; then echo "test-lua: FAILED on:$$fail" >&2; exit 1; fi

# valgrind follows no fork here (the suite spawns none it must check).  The
# suite runs under it on lua5.4, lua5.3 and lua5.1 (each installed one; the
# modules of test-lua); LuaJIT is left out: its allocator and JIT need a
# LuaJIT built for valgrind.
SANITIZE_LUA_VERSIONS ?= 5.4 5.3 5.1
sanitize-lua: $(LUA_MOD)
	@command -v $(VALGRIND) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind; \
	  else echo "lua.mk: valgrind is missing (apt-get install valgrind)" >&2; exit 1; fi; }
	@cd $(CURDIR); $(foreach v,$(SANITIZE_LUA_VERSIONS),\
	if ! command -v $(LUA_BIN_$(v)) >/dev/null 2>&1 || [ ! -f "$(call lua_hdr,$(v))" ]; then \
	  echo "sanitize-lua: skipped $(LUA_BIN_$(v)) (apt-get install $(LUA_PKG_$(v)))"; \
	else \
	  $(MAKE) -s $(LUA_MOD_$(v)) || exit 1; \
	  echo "== valgrind $(LUA_BIN_$(v)) tests/lua/run.lua"; \
	  LUA_CPATH="$(CURDIR)/$(dir $(LUA_MOD_$(v)))?.so;;" LUA_PATH="$(CURDIR)/tests/lua/?.lua;;" \
	    SLEEPACC_TEST_VALGRIND=1 $(VALGRIND) $(VALGRIND_FLAGS) $(LUA_BIN_$(v)) tests/lua/run.lua \
	    || exit 1; \
	fi;) true

lua-example: $(LUA_MOD)
	cd $(CURDIR) && $(LUA_ENV) $(LUA) lua/examples/sweep.lua

# The rockspec: GENERATED from mk/rockspec.in with SLEEPACC_VERSION (its file
# name too); `make rockspec` rewrites it, tests/lua/test_build.lua fails when
# the committed one is stale.
LUA_ROCKSPEC := lua/sleepacc-$(SLEEPACC_VER)-1.rockspec
.PHONY: rockspec
rockspec: mk/rockspec.in $(SLEEPACC_HEADER)
	rm -f $(filter-out $(LUA_ROCKSPEC),$(wildcard lua/sleepacc-*.rockspec))
	sed -e 's|@VERSION@|$(SLEEPACC_VER)|g' mk/rockspec.in > $(LUA_ROCKSPEC)

# The rockspec built by luarocks exactly as the README says, from the repo
# root, for each installed Lua (5.4, 5.3, 5.1), installed into a private
# tree with the network cut off (unshare -n) where that is possible, then
# loaded once.  mk/rock.make builds out of the
# import paths and cleans up: the check below fails when `git status
# --ignored` shows anything new afterwards.
lua-rock: | lua-deps
	@command -v luarocks >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y luarocks; \
	  else echo "lua.mk: luarocks is missing (apt-get install luarocks)" >&2; exit 1; fi; }
	rm -rf $(BUILD)/rocks
	@mkdir -p $(BUILD)
	@git status --porcelain --ignored 2>/dev/null | grep -v '^!! $(BUILD)/' > $(BUILD)/rock-status.before || :
	@set -e; for v in 5.4 5.3 5.1; do \
	  if ! command -v lua$$v >/dev/null 2>&1 || [ ! -f /usr/include/lua$$v/lua.h ]; then \
	    echo "lua-rock: skipped Lua $$v (lua$$v or its headers missing)"; continue; fi; \
	  echo "lua-rock: luarocks --lua-version=$$v make $(LUA_ROCKSPEC)"; \
	  $$(unshare -n true 2>/dev/null && echo unshare -n) \
	    luarocks --lua-version=$$v --tree $(CURDIR)/$(BUILD)/rocks make $(LUA_ROCKSPEC) >/dev/null; \
	  LUA_CPATH="$(CURDIR)/$(BUILD)/rocks/lib/lua/$$v/?.so" lua$$v -e \
	    'local sa = require "sleepacc"; assert(#sa.methods() > 0); print("lua-rock: sleepacc " .. sa._VERSION .. " from the rock loads in " .. _VERSION)'; \
	done
	@git status --porcelain --ignored 2>/dev/null | grep -v '^!! $(BUILD)/' > $(BUILD)/rock-status.after || :
	@diff -u $(BUILD)/rock-status.before $(BUILD)/rock-status.after \
	  || { echo "lua-rock: luarocks make left files in the tree (above)" >&2; exit 1; }
	@! find $(BUILD)/rocks/share -name '*.c' -o -name '*.rockspec' -path '*/lua/*' 2>/dev/null | grep -q . \
	  || { echo "lua-rock: C sources were installed as Lua modules" >&2; exit 1; }

# A source rock that installs anywhere, offline: the tree's files the
# rockspec builds from (csrc/, lua/, mk/rock.make, mk/sources.mk, LICENSE) in
# a tarball, and the rockspec pointing at it, packed by `luarocks pack` into
# $(LUA_SRC_ROCK); `luarocks install $(LUA_SRC_ROCK)` builds it from what
# it carries.  tests/lua/test_rock.sh (test-rock, part of test-lua) installs
# it into fresh trees for Lua 5.1, 5.4 and LuaJIT with the network cut off.
ROCK_DIR := $(BUILD)/rock
ROCK_NAME := sleepacc-$(SLEEPACC_VER)
LUA_SRC_ROCK := $(ROCK_DIR)/$(ROCK_NAME)-1.src.rock
ROCK_FILES := LICENSE mk/rock.make mk/sources.mk lua/sleepacc.map $(CORE_SRC) $(CORE_HDR) $(LUA_SRC) $(LUA_HDR)
.PHONY: rock test-rock

rock: $(LUA_SRC_ROCK)

$(LUA_SRC_ROCK): $(LUA_ROCKSPEC) $(ROCK_FILES)
	@command -v luarocks >/dev/null 2>&1 || { echo "lua.mk: luarocks is missing (apt-get install luarocks)" >&2; exit 1; }
	rm -rf $(ROCK_DIR) && mkdir -p $(ROCK_DIR)/$(ROCK_NAME)
	tar -cf - $(ROCK_FILES) | tar -C $(ROCK_DIR)/$(ROCK_NAME) -xf -
	cd $(ROCK_DIR) && tar -czf $(ROCK_NAME).tar.gz $(ROCK_NAME) && rm -rf $(ROCK_NAME)
	sed -e 's|^   url = .*|   url = "file://$(abspath $(ROCK_DIR))/$(ROCK_NAME).tar.gz",|' -e '/^   tag = /d' \
	  $(LUA_ROCKSPEC) > $(ROCK_DIR)/$(notdir $(LUA_ROCKSPEC))
	cd $(ROCK_DIR) && luarocks pack $(notdir $(LUA_ROCKSPEC)) >/dev/null
	@echo "rock: $(LUA_SRC_ROCK) ($$(stat -c %s $(LUA_SRC_ROCK)) bytes)"

test-lua: test-rock
test-rock: $(LUA_SRC_ROCK)
	tests/lua/test_rock.sh $(LUA_SRC_ROCK)
