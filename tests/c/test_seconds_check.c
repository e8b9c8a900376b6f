/* test_seconds_check.c -- sleepacc_seconds_check (csrc/config.c): a
 * binding's whole conversion of a seconds argument, real or whole, to ns
 * under the duration rule, each refusal with its words and *ns untouched;
 * and sleepacc_sleep_check, a sleep's seconds as its deadline. */
#include "check.h"
#include "sleepacc_binding.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static void test_seconds_check(void) {
  const char *msg = NULL;
  int64_t ns = 7;
  /* a real: rounded to the nearest ns */
  CHECK(sleepacc_seconds_check(1, 1.5e-9, 0, 0, &ns, &msg) == 0 && ns == 2);
  CHECK(sleepacc_seconds_check(1, 86400.0, 0, 0, &ns, &msg) == 0 && ns == SLEEPACC_MAX_DURATION_NS);
  /* whole seconds: exact; s is ignored */
  CHECK(sleepacc_seconds_check(0, 99.0, 3, 0, &ns, &msg) == 0 && ns == 3000000000LL);
  ns = 7, msg = NULL;
  CHECK(sleepacc_seconds_check(1, NAN, 0, 0, &ns, &msg) == -EINVAL && ns == 7);
  CHECK(msg && !strcmp(msg, "must be finite"));
  CHECK(sleepacc_seconds_check(1, -INFINITY, 0, 0, &ns, &msg) == -EINVAL && !strcmp(msg, "must be finite"));
  CHECK(sleepacc_seconds_check(1, -1e-9, 0, 0, &ns, &msg) == -EINVAL && !strcmp(msg, "must be non-negative"));
  CHECK(sleepacc_seconds_check(0, 0.0, -1, 0, &ns, &msg) == -EINVAL && !strcmp(msg, "must be non-negative"));
  CHECK(sleepacc_seconds_check(1, 86400.5, 0, 0, &ns, &msg) == -EINVAL && strstr(msg, "one day"));
  CHECK(sleepacc_seconds_check(1, 1e300, 0, 0, &ns, &msg) == -EINVAL && strstr(msg, "one day"));
  /* the caller's own int overflow, by its sign */
  CHECK(sleepacc_seconds_check(0, 0.0, 0, 1, &ns, &msg) == -EINVAL && strstr(msg, "one day"));
  CHECK(sleepacc_seconds_check(0, 0.0, 0, -1, &ns, &msg) == -EINVAL && !strcmp(msg, "must be non-negative"));
  CHECK(sleepacc_seconds_check(0, 0.0, INT64_MAX, 0, &ns, &msg) == -EINVAL && ns == 7);
  /* message may be NULL; ns may not */
  CHECK(sleepacc_seconds_check(1, NAN, 0, 0, &ns, NULL) == -EINVAL);
  CHECK(sleepacc_seconds_check(1, 1.0, 0, 0, NULL, &msg) == -EINVAL);
}

/* sleepacc_sleep_check, a sleep's seconds as its deadline from
 * now: no day cap, only int64's, each refusal with its words and
 * *deadline untouched. */
static void test_sleep_check(void) {
  const char *msg = NULL;
  int64_t dl = 7, max_s = INT64_MAX / 1000000000LL; /* the most whole seconds int64 ns hold */
  CHECK(sleepacc_sleep_check(0, 0.0, 86401, 0, 100, &dl, &msg) == 0 && dl == 86401000000000LL + 100);
  CHECK(sleepacc_sleep_check(1, 2 * 86400.0, 0, 0, 5, &dl, &msg) == 0 && dl == 172800000000000LL + 5);
  CHECK(sleepacc_sleep_check(1, 1.5e-9, 0, 0, 0, &dl, &msg) == 0 && dl == 2); /* the nearest ns */
  CHECK(sleepacc_sleep_check(0, 0.0, 0, 0, 42, &dl, &msg) == 0 && dl == 42);
  CHECK(sleepacc_sleep_check(0, 0.0, max_s, 0, 0, &dl, &msg) == 0 && dl == max_s * 1000000000LL);
  dl = 7, msg = NULL;
  /* now + ns beyond int64, by 1 ns */
  CHECK(sleepacc_sleep_check(0, 0.0, max_s, 0, INT64_MAX - max_s * 1000000000LL + 1, &dl, &msg) == -EINVAL);
  CHECK(dl == 7 && msg && strstr(msg, "int64") && strstr(msg, "292 years"));
  CHECK(sleepacc_sleep_check(0, 0.0, max_s, 0, INT64_MAX - max_s * 1000000000LL, &dl, &msg) == 0 &&
        dl == INT64_MAX);
  dl = 7, msg = NULL;
  /* ns beyond int64: a real, whole seconds, the caller's own int overflow */
  CHECK(sleepacc_sleep_check(1, 1e300, 0, 0, 0, &dl, &msg) == -EINVAL && strstr(msg, "int64"));
  CHECK(sleepacc_sleep_check(0, 0.0, max_s + 1, 0, 0, &dl, &msg) == -EINVAL && strstr(msg, "int64"));
  CHECK(sleepacc_sleep_check(0, 0.0, 0, 1, 0, &dl, &msg) == -EINVAL && strstr(msg, "int64"));
  CHECK(sleepacc_sleep_check(1, NAN, 0, 0, 0, &dl, &msg) == -EINVAL && !strcmp(msg, "must be finite"));
  CHECK(sleepacc_sleep_check(1, INFINITY, 0, 0, 0, &dl, &msg) == -EINVAL && !strcmp(msg, "must be finite"));
  CHECK(sleepacc_sleep_check(1, -1e-9, 0, 0, 0, &dl, &msg) == -EINVAL);
  CHECK(!strcmp(msg, "must be non-negative"));
  CHECK(sleepacc_sleep_check(0, 0.0, -1, 0, 0, &dl, &msg) == -EINVAL && !strcmp(msg, "must be non-negative"));
  CHECK(sleepacc_sleep_check(0, 0.0, 0, -1, 0, &dl, &msg) == -EINVAL);
  CHECK(!strcmp(msg, "must be non-negative"));
  CHECK(dl == 7);
  /* message may be NULL; the deadline may not */
  CHECK(sleepacc_sleep_check(1, NAN, 0, 0, 0, &dl, NULL) == -EINVAL);
  CHECK(sleepacc_sleep_check(1, 1.0, 0, 0, 0, NULL, &msg) == -EINVAL);
  /* the duration rule keeps its day (measure, sweep, seconds_ns) */
  CHECK(sleepacc_seconds_check(0, 0.0, 86401, 0, &dl, &msg) == -EINVAL && strstr(msg, "one day"));
}

int main(void) {
  TEST(test_seconds_check);
  TEST(test_sleep_check);
  return check_summary();
}
