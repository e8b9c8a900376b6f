/* test_sweep.c -- the sweep plan (csrc/sweep.c): the default ladder over
 * every available method, floors at 0 only, each method and duration once, periodic
 * mode skipping 0 and refusing an explicit floor, a list given but empty
 * refused naming it, the size-query contract;
 * and the whole sweep's check (sleepacc_sweep_check): each fault names the
 * list entry or the config field it blames. */
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
  int n = sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_RELATIVE, NULL, 0, NULL), k = 0;
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!sleepacc_method_available(m)) continue;
    avail++;
    floors += m->family == SLEEPACC_FAMILY_BASELINE;
  }
  CHECK(floors > 0);
  CHECKF(n == (int)(floors + (avail - floors) * SLEEPACC_DEFAULT_DURATION_COUNT), "%d", n);
  CHECK(sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_RELATIVE, p, 4096, NULL) == n);
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
  sleepacc_sweep_fault f;
  memset(p, 0, sizeof p);
  CHECK(ms[0] && ms[1]);
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_RELATIVE, p, 2, NULL) == 4); /* room for 2 */
  CHECK(p[0].duration_ns == 1000000 && p[1].duration_ns == 0 && p[2].method == NULL);
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_RELATIVE, p, 8, NULL) == 4);
  CHECK(p[2].method == ms[0] && p[2].duration_ns == 5000); /* the repeated 1 ms once */
  CHECK(p[3].method == ms[1] && p[3].duration_ns == 0);    /* a floor at 0 only */
  /* periodic: 0 skipped; an explicit floor is refused, naming its index */
  CHECK(sleepacc_sweep_plan(ms, 2, ds, 4, SLEEPACC_MODE_PERIODIC, p, 8, &f) == -EINVAL);
  CHECK(!strcmp(f.field, "methods") && f.index == 1 && f.subject == ms[1] && strstr(f.message, "is a floor"));
  CHECK(sleepacc_sweep_plan(ms, 1, ds, 4, SLEEPACC_MODE_PERIODIC, p, 8, NULL) == 2);
  CHECK(p[0].duration_ns == 1000000 && p[1].duration_ns == 5000);
  /* a repeated method is measured once, as a repeated duration */
  {
    const sleepacc_method *twice[3] = {ms[0], ms[1], ms[0]};
    CHECK(sleepacc_sweep_plan(twice, 3, ds, 4, SLEEPACC_MODE_RELATIVE, p, 8, NULL) == 4);
    CHECK(p[3].method == ms[1] && p[3].duration_ns == 0);
  }
  /* periodic over only 0: nothing left */
  CHECK(sleepacc_sweep_plan(ms, 1, ds + 1, 1, SLEEPACC_MODE_PERIODIC, p, 8, &f) == -EINVAL);
  CHECK(!strcmp(f.field, "durations") && f.index == (size_t)-1 && !f.subject &&
        strstr(f.message, "nothing to measure"));
  /* a default periodic sweep leaves floors out */
  {
    static sleepacc_point q[4096];
    int n = sleepacc_sweep_plan(NULL, 0, NULL, 0, SLEEPACC_MODE_PERIODIC, q, 4096, NULL);
    CHECK(n > 0);
    for (int i = 0; i < n; i++) CHECK(q[i].method->family != SLEEPACC_FAMILY_BASELINE && q[i].duration_ns > 0);
  }
}

static void test_bad_args(void) {
  const sleepacc_method *none[1] = {NULL};
  const int64_t d = 1000;
  sleepacc_sweep_fault f;
  /* a list given but empty is the list's fault (NULL asks for the default) */
  CHECK(sleepacc_sweep_plan(none, 0, &d, 1, 0, NULL, 0, &f) == -EINVAL);
  CHECK(!strcmp(f.field, "methods") && f.index == (size_t)-1 && !strcmp(f.message, "must not be empty"));
  CHECK(sleepacc_sweep_plan(NULL, 0, &d, 0, 0, NULL, 0, &f) == -EINVAL);
  CHECK(!strcmp(f.field, "durations") && f.index == (size_t)-1 && !strcmp(f.message, "must not be empty"));
  CHECK(sleepacc_sweep_plan(none, 0, &d, 0, 0, NULL, 0, NULL) == -EINVAL); /* fault may be NULL */
  /* no rule explains these: message NULL */
  CHECK(sleepacc_sweep_plan(none, 1, &d, 1, 0, NULL, 0, &f) == -EINVAL && !f.message);
  CHECK(sleepacc_sweep_plan(NULL, 0, &d, 1, 0, NULL, 3, &f) == -EINVAL && !f.message);
}

/* fault f is (rc, field, index, subject, message containing text) */
static int is_fault(int rc, const sleepacc_sweep_fault *f, int want_rc, const char *field, size_t index,
                    const sleepacc_method *subject, const char *text) {
  return rc == want_rc && f->field && !strcmp(f->field, field) && f->index == index &&
         f->subject == subject && f->message && strstr(f->message, text);
}

static void test_sweep_check(void) {
  const sleepacc_method *ms[2] = {sleepacc_method_find("nanosleep"), a_floor()};
  int64_t ds[2] = {1000000, -1};
  sleepacc_point p[64];
  sleepacc_sweep_fault f;
  sleepacc_config c;
  int rc;
  sleepacc_config_default(&c);
  /* a duration of the list, by its index */
  rc = sleepacc_sweep_check(&c, ms, 2, ds, 2, p, 64, &f);
  CHECKF(is_fault(rc, &f, -EINVAL, "durations", 1, NULL, "non-negative"), "%d %s", rc, f.message);
  ds[1] = SLEEPACC_MAX_DURATION_NS + 1;
  rc = sleepacc_sweep_check(&c, ms, 2, ds, 2, NULL, 0, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "durations", 1, NULL, "one day"));
  /* the plan's rules: an explicit floor in periodic mode (its name leads), nothing left */
  ds[1] = 0;
  c.mode = SLEEPACC_MODE_PERIODIC;
  rc = sleepacc_sweep_check(&c, ms, 2, ds, 2, NULL, 0, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "methods", 1, ms[1], "is a floor"));
  rc = sleepacc_sweep_check(&c, ms, 1, ds + 1, 1, NULL, 0, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "durations", (size_t)-1, NULL, "nothing to measure"));
  /* a list given but empty, the list as a whole */
  rc = sleepacc_sweep_check(&c, ms, 0, ds, 2, NULL, 0, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "methods", (size_t)-1, NULL, "must not be empty"));
  rc = sleepacc_sweep_check(&c, ms, 1, ds, 0, NULL, 0, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "durations", (size_t)-1, NULL, "must not be empty"));
  /* a point's run: the count first (points unchecked), then with room */
  c.mode = SLEEPACC_MODE_RELATIVE;
  c.budget_ns = 2000000;
  ds[0] = 1000000, ds[1] = 5000000;
  CHECK(sleepacc_sweep_check(&c, ms, 1, ds, 2, NULL, 0, &f) == 2 && !f.field);
  rc = sleepacc_sweep_check(&c, ms, 1, ds, 2, p, 64, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "durations", 1, NULL, "longer than the budget"));
  /* over the default ladder the config field itself is blamed */
  c.budget_ns = 200000000;
  rc = sleepacc_sweep_check(&c, ms, 1, NULL, 0, p, 64, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "duration_ns", (size_t)-1, NULL, "longer than the budget"));
  /* a field no list holds */
  c.budget_ns = SLEEPACC_DEFAULT_BUDGET_NS;
  c.env.priority = 5;
  rc = sleepacc_sweep_check(&c, ms, 2, ds, 2, p, 64, &f);
  CHECK(is_fault(rc, &f, -EINVAL, "env.priority", (size_t)-1, NULL, "must be 0"));
  /* a good sweep: its points, as the plan lists them */
  c.env.priority = 0;
  rc = sleepacc_sweep_check(&c, ms, 2, ds, 2, p, 64, &f);
  CHECK(rc == 3 && !f.field && p[0].method == ms[0] && p[1].duration_ns == 5000000 && p[2].method == ms[1]);
  /* bad arguments: -EINVAL, no rule to explain it */
  CHECK(sleepacc_sweep_check(NULL, ms, 2, ds, 2, p, 64, &f) == -EINVAL && !f.message);
  ms[1] = NULL;
  CHECK(sleepacc_sweep_check(&c, ms, 2, ds, 2, p, 64, &f) == -EINVAL && !f.message);
  CHECK(sleepacc_sweep_check(&c, ms, 1, ds, 2, p, 64, NULL) == 2); /* fault may be NULL */
}

int main(void) {
  TEST(test_default_plan);
  TEST(test_explicit_plan);
  TEST(test_bad_args);
  TEST(test_sweep_check);
  return check_summary();
}
