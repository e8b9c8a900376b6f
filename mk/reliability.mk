# Reliability: libFuzzer targets over the core's public entry points, and a
# replay of their corpus that joins `make test` and `make sanitize`.
#   make fuzz               each target for FUZZ_SECONDS (default 14 s each, about 60 s for the 4)
#                           with clang -fsanitize=fuzzer,address,undefined
#   make test-reliability   replay tests/fuzz/corpus/<target>/ (seeds and kept
#                           crash inputs) through a standalone driver, any $(CC)
#   make sanitize-reliability  the same replay built with ASan + UBSan
# Targets (tests/fuzz/fuzz_<name>.c): method_lookup, run_config, hist, table.
# A crash found by `make fuzz` is written to tests/fuzz/corpus/<target>/crash-*
# (commit it with the fix: the replay then keeps it as a regression input);
# new coverage goes to $(BUILD)/fuzz/corpus/<target>/ and is not committed.
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 14
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_DIR := build/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := $(filter-out -Werror -O2,$(CORE_CFLAGS)) -O1 -Itests/fuzz $(FUZZ_SAN)
FUZZ_OBJ := $(CORE_SRC:csrc/%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_BIN := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
REPLAY_BIN := $(FUZZ_TARGETS:%=$(BUILD)/reliability/replay_%)

.PHONY: fuzz fuzz-deps test-reliability sanitize-reliability
.SECONDARY: $(FUZZ_OBJ)

# `make test` and `make sanitize` also replay the fuzz corpus (a second or two).
TEST_SUITES += test-reliability
TEST_BUILD += $(REPLAY_BIN)
SANITIZE_SUITES += sanitize-reliability

fuzz-deps:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "reliability.mk: installing clang (for libFuzzer)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y clang \
	      || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y clang; } \
	      || { echo "reliability.mk: apt-get could not install clang" >&2; exit 1; }; \
	  else \
	    echo "reliability.mk: $(FUZZ_CC) is missing; make fuzz needs clang with libFuzzer" \
	         "(apt-get install clang, or run make as root). make test-reliability" \
	         "replays the corpus without it." >&2; exit 1; \
	  fi; }
	@d=$$(mktemp -d); \
	printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}\n' > $$d/p.c; \
	$(FUZZ_CC) -fsanitize=fuzzer $$d/p.c -o $$d/p 2>/dev/null || { rm -rf $$d; \
	  echo "reliability.mk: $(FUZZ_CC) cannot link -fsanitize=fuzzer (libFuzzer runtime missing;" \
	       "on Debian it comes with the clang package)" >&2; exit 1; }; rm -rf $$d

$(FUZZ_DIR)/obj/%.o: csrc/%.c $(CORE_HDR) | fuzz-deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJ) -o $@ $(CORE_LIBS)

# Each target: FUZZ_SECONDS of fuzzing (-timeout: an input running 10 s is a
# hang, reported as a failure), starting from the committed seeds.  Every
# target runs even when one fails; the first failure fails `make fuzz`.
fuzz: $(FUZZ_BIN)
	@fail=""; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t; \
	  echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix=tests/fuzz/corpus/$$t/ \
	    $(FUZZ_DIR)/corpus/$$t tests/fuzz/corpus/$$t > $(FUZZ_DIR)/fuzz_$$t.log 2>&1 \
	    || fail="$$fail $$t"; \
	  grep -E '^stat::number_of_executed_units|^stat::new_units_added|^Done|ERROR|invariant failed' \
	    $(FUZZ_DIR)/fuzz_$$t.log | sed 's/^/   /'; \
	done; \
	if [ -n "$$fail" ]; then echo "make fuzz: FAILED:$$fail (logs: $(FUZZ_DIR)/fuzz_*.log," \
	  "inputs: tests/fuzz/corpus/<target>/crash-*)" >&2; exit 1; fi; \
	echo "make fuzz: $(words $(FUZZ_TARGETS)) targets, no crash"

$(BUILD)/reliability/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz.h $(BUILD)/libsleepacc.a
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -Itests/fuzz $< tests/fuzz/replay.c -o $@ $(BUILD)/libsleepacc.a $(CORE_LIBS)

test-reliability: $(REPLAY_BIN)
	@set -e; for t in $(FUZZ_TARGETS); do \
	  printf '== replay %-14s ' "$$t"; $(BUILD)/reliability/replay_$$t tests/fuzz/corpus/$$t; done

sanitize-reliability:
	$(MAKE) BUILD=build/asan CC="$(CC)" \
	  CORE_CFLAGS="$(CORE_CFLAGS) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	  CORE_LIBS="$(CORE_LIBS) -fsanitize=address,undefined" test-reliability
