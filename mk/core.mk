# The C core: libsleepacc.a, libsleepacc.so, sleepacc.pc, C tests, examples.
CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
CORE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -D_GNU_SOURCE -Icsrc
CORE_LIBS := -lpthread -lrt -lm
# Opt-in io_uring method row: make LIBURING=1 (needs liburing-dev).  Off by
# default so every binding, which compiles csrc/*.c itself, has the same rows.
ifeq ($(LIBURING),1)
CORE_CFLAGS += -DSLEEPACC_HAVE_LIBURING=1 $(shell pkg-config --cflags liburing 2>/dev/null)
CORE_LIBS += $(or $(shell pkg-config --libs liburing 2>/dev/null),-luring)
endif
CORE_SRC := $(wildcard csrc/*.c)
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

$(BUILD)/libsleepacc.so: $(CORE_OBJ)
	$(CC) -shared -o $@ $^ $(CORE_LIBS)

$(BUILD)/sleepacc.pc: mk/sleepacc.pc.in csrc/sleepacc.h
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|'$$(sed -n 's/^#define SLEEPACC_VERSION "\(.*\)"/\1/p' csrc/sleepacc.h)'|' $< > $@

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
