/*
 * sweep.c -- the points of a sweep, the one place their rules live (both
 * bindings list them here): each method over the durations (default: every
 * available method over sleepacc_default_durations_ns), each method and each
 * duration once;
 * a floor method (registry family "baseline": it ignores the request) is
 * measured at duration 0 only; periodic mode skips a duration of 0 (a period
 * must be > 0), so it leaves floors out of a default sweep and refuses a
 * floor named explicitly.
 *
 * A list given must not be empty (NULL, not an empty list, asks for the
 * default).  A sweep is checked as a whole before anything runs
 * (sleepacc_sweep_check): its durations, its plan and the run of every
 * point, a fault naming the list ("methods", "durations"), its entry (i, j)
 * or the config field to blame.
 *
 * Owns: sleepacc_sweep_plan, sleepacc_sweep_check.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <string.h>

static const char FLOOR_MSG[] =
    "is a floor (family 'baseline', measured at duration 0 only): periodic mode cannot measure it";
static const char NOTHING_MSG[] = "nothing to measure: periodic mode needs a duration above 0";
static const char EMPTY_MSG[] = "must not be empty";

static int fault(sleepacc_sweep_fault *f, int rc, const char *field, size_t index,
                 const sleepacc_method *subject, const char *message) {
  if (f) f->field = field, f->index = index, f->subject = subject, f->message = message;
  return rc;
}

static void add(sleepacc_point *out, size_t cap, size_t *k, const sleepacc_method *m, int64_t d) {
  if (*k < cap) out[*k].method = m, out[*k].duration_ns = d;
  (*k)++;
}

int sleepacc_sweep_plan(const sleepacc_method *const *methods, size_t nm, const int64_t *durations,
                        size_t nd, int mode, sleepacc_point *out, size_t cap, sleepacc_sweep_fault *f) {
  int periodic = mode == SLEEPACC_MODE_PERIODIC;
  size_t k = 0, count = methods ? nm : sleepacc_method_count();
  fault(f, 0, NULL, (size_t)-1, NULL, NULL);
  if (methods && !nm) return fault(f, -EINVAL, "methods", (size_t)-1, NULL, EMPTY_MSG);
  if (durations && !nd) return fault(f, -EINVAL, "durations", (size_t)-1, NULL, EMPTY_MSG);
  if (!out && cap) return -EINVAL;
  if (!durations) durations = sleepacc_default_durations_ns, nd = SLEEPACC_DEFAULT_DURATION_COUNT;
  for (size_t i = 0; i < count; i++) {
    const sleepacc_method *m = methods ? methods[i] : sleepacc_method_at(i);
    size_t seen = 0;
    if (!m) return -EINVAL;
    if (!methods && !sleepacc_method_ready(m, NULL, 0)) continue; /* not here, or not now */
    while (methods && seen < i && methods[seen] != m) seen++; /* each method once */
    if (methods && seen < i) continue;
    if (m->family == SLEEPACC_FAMILY_BASELINE) {
      if (!periodic) add(out, cap, &k, m, 0);
      else if (methods) return fault(f, -EINVAL, "methods", i, m, FLOOR_MSG);
      continue;
    }
    for (size_t j = 0; j < nd; j++) {
      size_t seen = 0;
      while (seen < j && durations[seen] != durations[j]) seen++;
      if (seen == j && !(periodic && durations[j] == 0)) add(out, cap, &k, m, durations[j]);
    }
  }
  if (!k) return fault(f, -EINVAL, "durations", (size_t)-1, NULL, NOTHING_MSG);
  return k > (size_t)2147483647 ? -E2BIG : (int)k;
}

/* The first index of the n values at a (size bytes each) equal to v, or
 * (size_t)-1 (also when a is NULL: the default list). */
static size_t index_of(const void *a, size_t n, size_t size, const void *v) {
  for (size_t i = 0; a && i < n; i++)
    if (!memcmp((const char *)a + i * size, v, size)) return i;
  return (size_t)-1;
}

int sleepacc_sweep_check(const sleepacc_config *base, const sleepacc_method *const *methods, size_t nm,
                         const int64_t *durations, size_t nd, sleepacc_point *out, size_t cap,
                         sleepacc_sweep_fault *f) {
  const char *msg = NULL, *field = NULL;
  int total, rc;
  sleepacc_config c;
  fault(f, 0, NULL, (size_t)-1, NULL, NULL);
  if (!base) return -EINVAL;
  for (size_t j = 0; durations && j < nd; j++)
    if ((rc = sleepacc_duration_check(durations[j], &msg)) != 0)
      return fault(f, rc, "durations", j, NULL, msg);
  total = sleepacc_sweep_plan(methods, nm, durations, nd, base->mode, out, cap, f); /* its fault */
  if (total < 0 || (size_t)total > cap) return total; /* the points are checked with room for them */
  c = *base;
  for (int k = 0; k < total; k++) { /* every point, before anything runs */
    size_t i;
    c.method = out[k].method, c.duration_ns = out[k].duration_ns;
    if ((rc = sleepacc_config_explain(&c, &field, &msg)) == 0) continue;
    if (!strcmp(field, "method") && (i = index_of(methods, nm, sizeof *methods, &c.method)) != (size_t)-1)
      return fault(f, rc, "methods", i, NULL, msg);
    if (!strcmp(field, "duration_ns") &&
        (i = index_of(durations, nd, sizeof *durations, &c.duration_ns)) != (size_t)-1)
      return fault(f, rc, "durations", i, NULL, msg);
    return fault(f, rc, field, (size_t)-1, NULL, msg);
  }
  return total;
}
