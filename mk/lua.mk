# The Lua 5.4 module: build/lua/sleepacc.so from lua/*.c and the SAME core
# objects as every other build (csrc/*.c, compiled once by mk/core.mk with
# -fPIC), its tests, its valgrind run and its example.
#   make lua-module    build $(BUILD)/lua/sleepacc.so
#   make test-lua      run tests/lua/run.lua against it
#   make sanitize-lua  the Lua suite under valgrind (zero reports)
#   make lua-example   lua/examples/sweep.lua (irtt table for every method)
#   make lua-rock      luarocks --lua-version=5.4 make into $(BUILD)/rocks (offline)
# lua5.4 and its headers are looked up with pkg-config (lua5.4) or in
# /usr/include/lua5.4; when missing, root installs lua5.4 + liblua5.4-dev
# with apt-get, anyone else gets a message naming what is missing.
LUA ?= lua5.4
LUA_INC ?= $(or $(shell pkg-config --cflags lua5.4 2>/dev/null),-I/usr/include/lua5.4)
LUA_SRC := $(sort $(wildcard $(SLEEPACC_LUA_SOURCES)))
LUA_HDR := $(wildcard lua/*.h)
LUA_OBJ := $(LUA_SRC:lua/%.c=$(BUILD)/lua/obj/%.o)
LUA_MOD := $(BUILD)/lua/sleepacc.so
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

test-lua: $(LUA_MOD) lua-rock
	cd $(CURDIR) && $(LUA_ENV) $(LUA) tests/lua/run.lua

# valgrind follows no fork here (the suite spawns none it must check).
sanitize-lua: $(LUA_MOD)
	@command -v $(VALGRIND) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y valgrind; \
	  else echo "lua.mk: valgrind is missing (apt-get install valgrind)" >&2; exit 1; fi; }
	cd $(CURDIR) && $(LUA_ENV) SLEEPACC_TEST_VALGRIND=1 $(VALGRIND) $(VALGRIND_FLAGS) \
	  $(LUA) tests/lua/run.lua

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
# root, installed into a private tree with the network cut off (unshare -n)
# where that is possible, then loaded once.  mk/rock.make builds out of the
# import paths and cleans up: the check below fails when `git status
# --ignored` shows anything new afterwards.
lua-rock: | lua-deps
	@command -v luarocks >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then DEBIAN_FRONTEND=noninteractive apt-get install -y luarocks; \
	  else echo "lua.mk: luarocks is missing (apt-get install luarocks)" >&2; exit 1; fi; }
	rm -rf $(BUILD)/rocks
	@mkdir -p $(BUILD)
	@git status --porcelain --ignored 2>/dev/null | grep -v '^!! $(BUILD)/' > $(BUILD)/rock-status.before || :
	$$(unshare -n true 2>/dev/null && echo unshare -n) \
	  luarocks --lua-version=5.4 --tree $(CURDIR)/$(BUILD)/rocks make $(LUA_ROCKSPEC)
	@git status --porcelain --ignored 2>/dev/null | grep -v '^!! $(BUILD)/' > $(BUILD)/rock-status.after || :
	@diff -u $(BUILD)/rock-status.before $(BUILD)/rock-status.after \
	  || { echo "lua-rock: luarocks make left files in the tree (above)" >&2; exit 1; }
	@! find $(BUILD)/rocks/share -name '*.c' -o -name '*.rockspec' -path '*/lua/*' 2>/dev/null | grep -q . \
	  || { echo "lua-rock: C sources were installed as Lua modules" >&2; exit 1; }
	LUA_CPATH="$(CURDIR)/$(BUILD)/rocks/lib/lua/5.4/?.so" $(LUA) -e \
	  'local sa = require "sleepacc"; assert(#sa.methods() > 0); print("lua-rock: sleepacc " .. sa._VERSION .. " from the rock loads")'
