/*
 * sweep.c -- the points of a sweep, the one place their rules live (both
 * bindings list them here): each method over the durations (default: every
 * available method over sleepacc_default_durations_ns), each duration once;
 * a floor method (registry family "baseline": it ignores the request) is
 * measured at duration 0 only; periodic mode skips a duration of 0 (a period
 * must be > 0), so it leaves floors out of a default sweep and refuses a
 * floor named explicitly.
 *
 * Owns: sleepacc_sweep_plan.
 */
#include "sleepacc_int.h"

#include <errno.h>

static const char FLOOR_MSG[] =
    "is a floor (family 'baseline', measured at duration 0 only): periodic mode cannot measure it";
static const char NOTHING_MSG[] = "nothing to measure: periodic mode needs a duration above 0";

static void add(sleepacc_point *out, size_t cap, size_t *k, const sleepacc_method *m, int64_t d) {
  if (*k < cap) out[*k].method = m, out[*k].duration_ns = d;
  (*k)++;
}

int sleepacc_sweep_plan(const sleepacc_method *const *methods, size_t nm, const int64_t *durations,
                        size_t nd, int mode, sleepacc_point *out, size_t cap, size_t *bad,
                        const char **message) {
  int periodic = mode == SLEEPACC_MODE_PERIODIC;
  size_t k = 0, count = methods ? nm : sleepacc_method_count();
  if ((methods && !nm) || (durations && !nd) || (!out && cap)) return -EINVAL;
  if (!durations) durations = sleepacc_default_durations_ns, nd = SLEEPACC_DEFAULT_DURATION_COUNT;
  for (size_t i = 0; i < count; i++) {
    const sleepacc_method *m = methods ? methods[i] : sleepacc_method_at(i);
    if (!m) return -EINVAL;
    if (!methods && !sleepacc_method_available(m)) continue;
    if (m->family == SLEEPACC_FAMILY_BASELINE) {
      if (!periodic) add(out, cap, &k, m, 0);
      else if (methods) {
        if (bad) *bad = i;
        if (message) *message = FLOOR_MSG;
        return -EINVAL;
      }
      continue;
    }
    for (size_t j = 0; j < nd; j++) {
      size_t seen = 0;
      while (seen < j && durations[seen] != durations[j]) seen++;
      if (seen == j && !(periodic && durations[j] == 0)) add(out, cap, &k, m, durations[j]);
    }
  }
  if (!k) {
    if (bad) *bad = (size_t)-1;
    if (message) *message = NOTHING_MSG;
    return -EINVAL;
  }
  return k > (size_t)2147483647 ? -E2BIG : (int)k;
}
