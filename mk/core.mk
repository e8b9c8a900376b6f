# The C core: libsleepacc.a, libsleepacc.so, sleepacc.pc, C tests, examples,
# install/uninstall.
#   make install PREFIX=/usr/local DESTDIR=   the C API's header (csrc/sleepacc.h
#        only: csrc/sleepacc_binding.h is the bindings' protocol), libsleepacc.a,
#        libsleepacc.so.$(SLEEPACC_VER) (SONAME libsleepacc.so.$(SLEEPACC_SOVERSION)) + symlinks,
#        lib/pkgconfig/sleepacc.pc (LIBDIR, INCLUDEDIR, PKGCONFIGDIR override the layout)
#        then, without DESTDIR: ldconfig when root and LIBDIR is one the loader
#        searches (/usr/local/lib), else a line saying how a program finds it
#        (mk/install-loader)
#   make uninstall PREFIX=... DESTDIR=...     removes exactly those files
#   build/sleepacc-uninstalled.pc             pkg-config against this tree:
#        PKG_CONFIG_PATH=$(CURDIR)/build pkg-config --cflags --libs sleepacc-uninstalled
# Sources, flags, defines and libraries come from mk/sources.mk (the one
# build truth setup.py and the rockspec's mk/rock.make read too); the version
# from SLEEPACC_VERSION in csrc/sleepacc.h.  CI=true adds -Werror.
include mk/sources.mk

CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=
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
TEST_BUILD += $(CTEST_BIN)
EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)

SONAME := libsleepacc.so.$(SLEEPACC_SOVERSION)
SOFILE := libsleepacc.so.$(SLEEPACC_VER)
# Where the install test runs (sanitize-c turns it off: its objects need the
# sanitizer runtime an out-of-tree user build does not link).
CTEST_INSTALL ?= 1

.PHONY: test-c test-layers sanitize-c examples install uninstall test-install

lib: $(BUILD)/libsleepacc.a $(BUILD)/libsleepacc.so $(BUILD)/sleepacc.pc \
  $(BUILD)/sleepacc-uninstalled.pc

$(BUILD)/obj/%.o: csrc/%.c $(CORE_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c $< -o $@

$(BUILD)/libsleepacc.a: $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

# The versioned file with its SONAME; libsleepacc.so.0 and libsleepacc.so are
# symlinks to it, in the tree as once installed.  mk/libsleepacc.map
# exports the public sleepacc_* names only.
$(BUILD)/$(SOFILE): $(CORE_OBJ) mk/libsleepacc.map
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=mk/libsleepacc.map -o $@ \
	  $(CORE_OBJ) $(CORE_LIBS)

$(BUILD)/libsleepacc.so: $(BUILD)/$(SOFILE)
	ln -sf $(SOFILE) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# sed program of the .pc files (@LIBS@: Libs.private, for --static).
PC_SED = -e 's|@VERSION@|$(SLEEPACC_VER)|' -e 's|@LIBS@|$(CORE_LIBS)|'

$(BUILD)/sleepacc.pc: mk/sleepacc.pc.in $(SLEEPACC_HEADER) mk/sources.mk
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  $(PC_SED) $< > $@

$(BUILD)/sleepacc-uninstalled.pc: mk/sleepacc.pc.in $(SLEEPACC_HEADER) mk/sources.mk
	@mkdir -p $(BUILD)
	sed -e 's|@PREFIX@|$(CURDIR)|' -e 's|@LIBDIR@|$(abspath $(BUILD))|' \
	  -e 's|@INCLUDEDIR@|$(CURDIR)/csrc|' $(PC_SED) $< > $@

# The .pc is written at install time, so it names the PREFIX given here.
install: $(BUILD)/libsleepacc.a $(BUILD)/libsleepacc.so
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 $(SLEEPACC_HEADER) $(DESTDIR)$(INCLUDEDIR)/sleepacc.h
	install -m 644 $(BUILD)/libsleepacc.a $(DESTDIR)$(LIBDIR)/libsleepacc.a
	install -m 755 $(BUILD)/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SOFILE)
	ln -sf $(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libsleepacc.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	  $(PC_SED) mk/sleepacc.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/sleepacc.pc
	@[ -n "$(DESTDIR)" ] || LIBDIR="$(LIBDIR)" SONAME="$(SONAME)" mk/install-loader

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/sleepacc.h $(DESTDIR)$(LIBDIR)/libsleepacc.a \
	  $(DESTDIR)$(LIBDIR)/$(SOFILE) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	  $(DESTDIR)$(LIBDIR)/libsleepacc.so $(DESTDIR)$(PKGCONFIGDIR)/sleepacc.pc

# Install into temporary prefixes, build examples/*.c out of tree with
# pkg-config (shared and --static) and run them; uninstall; the same with
# build/sleepacc-uninstalled.pc.
test-install: lib
	CC="$(CC)" MAKE="$(MAKE_COMMAND)" tests/c/test_install.sh

$(BUILD)/tests/%: tests/c/%.c $(BUILD)/libsleepacc.a tests/c/check.h
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -Itests/c $< -o $@ $(BUILD)/libsleepacc.a $(CORE_LIBS) $(CTEST_EXTRA)

# test_unload dlopens the shared library (as a Lua state's close unloads the module).
$(BUILD)/tests/test_unload: $(BUILD)/libsleepacc.so
$(BUILD)/tests/test_unload: CTEST_EXTRA = -DSLEEPACC_SO='"$(abspath $(BUILD))/libsleepacc.so"' -ldl

$(BUILD)/examples/%: examples/%.c $(BUILD)/libsleepacc.a
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) $< -o $@ $(BUILD)/libsleepacc.a $(CORE_LIBS)

examples: $(EXAMPLE_BIN)

# The core's files call one another without a cycle (the object graph by nm).
test-layers: $(CORE_OBJ)
	CC="$(CC)" tests/c/test_layers.sh $(CORE_OBJ)

test-c: $(CTEST_BIN) test-layers $(if $(filter 1,$(CTEST_INSTALL)),test-install)
	@fail=""; for t in $(CTEST_BIN); do echo "== $$t"; $$t || fail="$$fail $$t"; done; \
	if [ -n "$$fail" ]; then echo "test-c: FAILED:$$fail" >&2; exit 1; fi

# The C tests again, built with AddressSanitizer + UndefinedBehaviorSanitizer.
sanitize-c:
	$(MAKE) BUILD=build/asan CC="$(CC)" CTEST_INSTALL=0 \
	  CORE_CFLAGS="$(CORE_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  CORE_LIBS="$(CORE_LIBS) -fsanitize=address,undefined" test-c
