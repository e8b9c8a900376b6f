# mk/rock.make -- (not *.mk: the top Makefile includes those) the luarocks build (the rockspec's `make` back-end), standalone:
#   luarocks make lua/sleepacc-<version>-1.rockspec     (from the repo root)
# runs `make -f mk/rock.make build` then `make -f mk/rock.make install` with the
# variables luarocks passes (CC, CFLAGS, LIBFLAG, LUA_INCDIR, INST_LIBDIR).
# Sources, flags, defines and libraries come from mk/sources.mk, like every
# other build.  Objects and the module are built OUT of the tree's import
# paths, in $(ROCK_BUILD) (under build/), and that directory is removed once
# the module is installed: no sleepacc.so or .o is left where Python imports
# from (`git status --ignored` shows nothing new).
include mk/sources.mk

CC ?= cc
CFLAGS ?= -O2 -fPIC
LIBFLAG ?= -shared
LUA_INCDIR ?= /usr/include/lua5.4
INST_LIBDIR ?=
ROCK_BUILD ?= build/rock-$(notdir $(LUA_INCDIR))

ROCK_SRC := $(sort $(wildcard $(SLEEPACC_CORE_SOURCES) $(SLEEPACC_LUA_SOURCES)))
ROCK_OBJ := $(ROCK_SRC:%.c=$(ROCK_BUILD)/%.o)
ROCK_CFLAGS := $(SLEEPACC_STD) $(SLEEPACC_WARNINGS) $(if $(filter true,$(CI)),$(SLEEPACC_CI_WARNINGS)) \
  $(SLEEPACC_MODULE_FLAGS) $(SLEEPACC_DEFINES:%=-D%) $(SLEEPACC_INCDIRS:%=-I%) -Ilua -I$(LUA_INCDIR)
ROCK_MOD := $(ROCK_BUILD)/sleepacc.so

.PHONY: build install
build: $(ROCK_MOD)

$(ROCK_BUILD)/%.o: %.c $(wildcard csrc/*.h lua/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(ROCK_CFLAGS) -c $< -o $@

$(ROCK_MOD): $(ROCK_OBJ) lua/sleepacc.map
	$(CC) $(LIBFLAG) -Wl,--version-script=lua/sleepacc.map -o $@ $(ROCK_OBJ) \
	  $(SLEEPACC_LIBRARIES:%=-l%)

install: $(ROCK_MOD)
	@test -n "$(INST_LIBDIR)" || { echo "rock.make: INST_LIBDIR is not set (luarocks sets it)" >&2; exit 1; }
	mkdir -p "$(INST_LIBDIR)"
	cp $(ROCK_MOD) "$(INST_LIBDIR)/sleepacc.so"
	rm -rf $(ROCK_BUILD)
	-@rmdir build 2>/dev/null || :
