/* test_seconds_check.c -- sleepacc_seconds_check (csrc/config.c, py12b): a
 * binding's whole conversion of a seconds argument, real or whole, to ns
 * under the duration rule, each refusal with its words and *ns untouched. */
#include "check.h"
#include "sleepacc.h"

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

int main(void) {
  TEST(test_seconds_check);
  return check_summary();
}
