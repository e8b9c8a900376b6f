# The C core: libsleepacc.a, libsleepacc.so, sleepacc.pc, C tests, examples.
# Sources, flags, defines and libraries come from mk/sources.mk (the one
# build truth setup.py and the rockspec's mk/rock.mk read too); the version
# from SLEEPACC_VERSION in csrc/sleepacc.h.  CI=true adds -Werror.
include mk/sources.mk

CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
SLEEPACC_VER := $(shell sed -n 's/^\#define SLEEPACC_VERSION "\(.*\)"/\1/p' $(SLEEPACC_HEADER))
CORE_WARN := $(SLEEPACC_WARNINGS) $(if $(filter true,$(CI)),$(SLEEPACC_CI_WARNINGS))
CORE_CFLAGS := $(SLEEPACC_STD) -O2 -g $(CORE_WARN) -fPIC $(SLEEPACC_DEFINES:%=-D%) \
  $(SLEEPACC_INCDIRS:%=-I%)
CORE_LIBS := $(SLEEPACC_LIBRARIES:%=-l%)
CORE_SRC := $(sort $(wildcard $(SLEEPACC_CORE_SOURCES)))
CORE_HDR := $(wildcard csrc/*.h)
CORE_OBJ := $(CORE_SRC:csrc/%.c=$(BUILD)/obj/%.o)
CTEST_SRC := $(wildcard tests/c/test_*.c)
CTEST_BIN := $(CTEST_SRC:tests/c/%.c=$(BUILD)/tests/%)
EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)

.PHONY: test-c sanitize-c examples

lib: $(BUILD)/libsleepacc.a $(BUILD)/libsleepacc.so $(BUILD)/sleepacc.pc

$(BUILD)/obj/%.o: csrc/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(BUILD)/libsleepacc.a: $(CORE_OBJ)
	ar rcs $@ $^

$(BUILD)/libsleepacc.so: $(CORE_OBJ) mk/libsleepacc.map
	$(CC) -shared -Wl,--version-script=mk/libsleepacc.map -o $@ $(CORE_OBJ) $(CORE_LIBS)

$(BUILD)/sleepacc.pc: mk/sleepacc.pc.in $(SLEEPACC_HEADER)
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(SLEEPACC_VER)|' $< > $@

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/libsleepacc.a tests/c/check.h
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -Itests/c $< -o $@ $(BUILD)/libsleepacc.a $(CORE_LIBS)

$(BUILD)/examples/%: examples/%.c $(BUILD)/libsleepacc.a
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) $< -o $@ $(BUILD)/libsleepacc.a $(CORE_LIBS)

examples: $(EXAMPLE_BIN)

test-c: $(CTEST_BIN)
	@set -e; for t in $(CTEST_BIN); do echo "== $$t"; $$t; done

# The C tests again, built with AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize-c:
	$(MAKE) BUILD=build/asan CC="$(CC)" \
	  CORE_CFLAGS="$(CORE_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  CORE_LIBS="$(CORE_LIBS) -fsanitize=address,undefined" test-c
