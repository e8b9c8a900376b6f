/* test_whole_seconds.c -- sleepacc_whole_seconds_to_ns (csrc/options.c): an
 * integer of seconds becomes ns exactly, and beyond int64 ns it saturates the
 * way sleepacc_seconds_to_ns does, so both bindings' integer and float paths
 * meet the same range rule (sleepacc_duration_check). */
#include "check.h"
#include "sleepacc_binding.h"

#include <stdint.h>

static void test_whole_seconds(void) {
  const char *msg = NULL;
  int64_t big = INT64_MAX / 1000000000LL;
  CHECK(sleepacc_whole_seconds_to_ns(0, 0) == 0);
  CHECK(sleepacc_whole_seconds_to_ns(1, 0) == 1000000000LL);
  CHECK(sleepacc_whole_seconds_to_ns(86400, 0) == SLEEPACC_MAX_DURATION_NS);
  CHECK(sleepacc_whole_seconds_to_ns(-3, 0) == -3000000000LL);
  CHECK(sleepacc_whole_seconds_to_ns(big, 0) == big * 1000000000LL);
  CHECK(sleepacc_whole_seconds_to_ns(big + 1, 0) == INT64_MAX);
  CHECK(sleepacc_whole_seconds_to_ns(-big - 1, 0) == -1);
  CHECK(sleepacc_whole_seconds_to_ns(INT64_MIN, 0) == -1);
  /* the caller's own overflow, by its sign (s is then meaningless) */
  CHECK(sleepacc_whole_seconds_to_ns(-1, 1) == INT64_MAX);
  CHECK(sleepacc_whole_seconds_to_ns(-1, -1) == -1);
  CHECK(sleepacc_whole_seconds_to_ns(0, -1) == -1);
  /* each saturated value meets the duration rule's own words */
  CHECK(sleepacc_duration_check(sleepacc_whole_seconds_to_ns(big + 1, 0), &msg) == -EINVAL && msg);
  CHECK(sleepacc_duration_check(sleepacc_whole_seconds_to_ns(-1, -1), &msg) == -EINVAL && msg);
  CHECK(sleepacc_duration_check(sleepacc_whole_seconds_to_ns(86400, 0), &msg) == 0);
}

int main(void) {
  TEST(test_whole_seconds);
  return check_summary();
}
