/* test_sweep.c -- the sweep plan (csrc/sweep.c): the default ladder over
 * every available method, floors at 0 only, each duration once, periodic
 * mode skipping 0 and refusing an explicit floor, the size-query contract. */
#include "check.h"
#include "sleepacc.h"

#include <errno.h>
#include <string.h>

static const sleepacc_method *a_floor(void) {
  for (size_t i = 0; i < sleepacc_method_count(); i++)
    if (sleepacc_method_at(i)->family == SLEEPACC_FAMILY_BASELINE) return sleepacc_method_at(i);
  return NULL;
}

static void test_default_plan(void) {
  static sleepacc_point p[4096];
  size_t avail = 0, floors = 0;
  int n = sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_RELATIVE, NULL, 0, NULL, NULL), k = 0;
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!sleepacc_method_available(m)) continue;
    avail++;
    floors += m->family == SLEEPACC_FAMILY_BASELINE;
  }
  CHECK(floors > 0);
  CHECKF(n == (int)(floors + (avail - floors) * SLEEPACC_DEFAULT_DURATION_COUNT), "%d", n);
  CHECK(sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_RELATIVE, p, 4096, NULL, NULL) == n);
  for (size_t i = 0; i < sleepacc_method_count(); i++) { /* registry order, ladder order */
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!sleepacc_method_available(m)) continue;
    if (m->family == SLEEPACC_FAMILY_BASELINE) {
      CHECK(p[k].method == m && p[k].duration_ns == 0);
      k++;
      continue;
    }
    for (int j = 0; j < SLEEPACC_DEFAULT_DURATION_COUNT; j++, k++)
      CHECK(p[k].method == m && p[k].duration_ns == sleepacc_default_durations_ns[j]);
  }
  CHECK(k == n);
}

static void test_explicit_plan(void) {
  const sleepacc_method *ms[2] = {sleepacc_method_find("nanosleep"), a_floor()};
  const int64_t ds[4] = {1000000, 0, 1000000, 5000};
  sleepacc_point p[8];
  size_t bad = 7;
  const char *msg = NULL;
  memset(p, 0, sizeof p);
  CHECK(ms[0] && ms[1]);
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_RELATIVE, p, 2, NULL, NULL) == 4); /* room for 2 */
  CHECK(p[0].duration_ns == 1000000 && p[1].duration_ns == 0 && p[2].method == NULL);
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_RELATIVE, p, 8, NULL, NULL) == 4);
  CHECK(p[2].method == ms[0] && p[2].duration_ns == 5000); /* the repeated 1 ms once */
  CHECK(p[3].method == ms[1] && p[3].duration_ns == 0);    /* a floor at 0 only */
  /* periodic: 0 skipped; an explicit floor is refused, naming its index */
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_PERIODIC, p, 8, &bad, &msg) == -EINVAL);
  CHECK(bad == 1 && msg && strstr(msg, "is a floor"));
  CHECK(sleepacc_sweep_plan(ms, 1, ds, 4, SLEEPACC_MODE_PERIODIC, p, 8, NULL, NULL) == 2);
  CHECK(p[0].duration_ns == 1000000 && p[1].duration_ns == 5000);
  /* periodic over only 0: nothing left */
  CHECK(sleepacc_sweep_plan(ms, 1, ds + 1, 1, SLEEPACC_MODE_PERIODIC, p, 8, &bad, &msg) == -EINVAL);
  CHECK(bad == (size_t)-1 && strstr(msg, "nothing to measure"));
  /* a default periodic sweep leaves floors out */
  {
    static sleepacc_point q[4096];
    int n = sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_PERIODIC, q, 4096, NULL, NULL);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) CHECK(q[i].method->family != SLEEPACC_FAMILY_BASELINE && q[i].duration_ns > 0);
  }
}

static void test_bad_args(void) {
  const sleepacc_method *none[1] = {NULL};
  const int64_t d = 1000;
  CHECK(sleepacc_sweep_plan(none, 0, &d, 1, 0, NULL, 0, NULL, NULL) == -EINVAL);
  CHECK(sleepacc_sweep_plan(NULL, 0, &d, 0, 0, NULL, 0, NULL, NULL) == -EINVAL);
  CHECK(sleepacc_sweep_plan(none, 1, &d, 1, 0, NULL, 0, NULL, NULL) == -EINVAL);
  CHECK(sleepacc_sweep_plan(NULL, 0, &d, 1, 0, NULL, 3, NULL, NULL) == -EINVAL);
}

int main(void) {
  TEST(test_default_plan);
  TEST(test_explicit_plan);
  TEST(test_bad_args);
  return check_summary();
}
