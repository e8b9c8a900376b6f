/*
 * clock.c -- monotonic time, the four public clocks, their resolution and
 * the measured cost of one read (one clock, or all by field table), the
 * spin-loop CPU hint, and a script's seconds as the core's int64 ns
 * (sleepacc_seconds_to_ns, sleepacc_whole_seconds_to_ns: the conversion
 * both bindings share; the rules of a duration are config.c's).
 */
#include "sleepacc_int.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Row per sleepacc_clock_id: public name and the OS clock id. */
static const struct {
  const char *name;
  clockid_t os_id;
} sleepacc__clocks[SLEEPACC_CLOCK_COUNT] = {
    {"monotonic", CLOCK_MONOTONIC},
    {"monotonic_raw", CLOCK_MONOTONIC_RAW},
    {"realtime", CLOCK_REALTIME},
    {"boottime", CLOCK_BOOTTIME},
};

/* Most back-to-back pairs kept for the read-cost median (stack buffer). */
#define SLEEPACC__MAX_READS 4096

/* CLOCK_MONOTONIC now in ns.  clock_gettime cannot fail for this clock. */
int64_t sleepacc_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return sleepacc__ts_ns(&ts);
}

/* Read clock `id`: 0, -EINVAL for a bad id or NULL out, -errno from the OS. */
int sleepacc_clock_read(int id, int64_t *out) {
  struct timespec ts;
  if (id < 0 || id >= SLEEPACC_CLOCK_COUNT || !out) return -EINVAL;
  if (clock_gettime(sleepacc__clocks[id].os_id, &ts) != 0) return -errno;
  *out = sleepacc__ts_ns(&ts);
  return 0;
}

static int sleepacc__cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Fill *info: name, clock_getres() and the median of `reads` back-to-back
 * read pairs (0 = 1000; at most SLEEPACC__MAX_READS are kept).  -EINVAL for
 * a bad id, NULL info or negative reads. */
int sleepacc_clock_info_get(int id, int reads, sleepacc_clock_info *info) {
  int64_t diffs[SLEEPACC__MAX_READS];
  struct timespec ts, a, b;
  clockid_t cid;
  if (id < 0 || id >= SLEEPACC_CLOCK_COUNT || !info || reads < 0) return -EINVAL;
  if (reads == 0) reads = 1000;
  if (reads > SLEEPACC__MAX_READS) reads = SLEEPACC__MAX_READS;
  cid = sleepacc__clocks[id].os_id;
  info->name = sleepacc__clocks[id].name;
  info->resolution_ns = clock_getres(cid, &ts) == 0 ? sleepacc__ts_ns(&ts) : -1;
  info->read_cost_ns = -1;
  if (clock_gettime(cid, &a) != 0) return 0;
  for (int i = 0; i < reads; i++) {
    clock_gettime(cid, &a);
    clock_gettime(cid, &b);
    diffs[i] = sleepacc__ts_ns(&b) - sleepacc__ts_ns(&a);
  }
  qsort(diffs, (size_t)reads, sizeof diffs[0], sleepacc__cmp_i64);
  info->read_cost_ns = diffs[reads / 2];
  return 0;
}

const sleepacc_field sleepacc_clock_info_fields[] = {
  {"resolution_ns", offsetof(sleepacc_clock_info, resolution_ns), SLEEPACC_FIELD_OPT_INT64, NULL, 0},
  {"read_cost_ns", offsetof(sleepacc_clock_info, read_cost_ns), SLEEPACC_FIELD_OPT_INT64, NULL, 0},
  {NULL, 0, 0, NULL, 0},
};

/* A clock's row in sleepacc_clocks_fields (names as sleepacc__clocks). */
#define SLEEPACC__CLOCK(name, id)                                                          \
  {name, offsetof(sleepacc_clocks, clock) + (id) * sizeof(sleepacc_clock_info),       \
   SLEEPACC_FIELD_NESTED, sleepacc_clock_info_fields, 0}
const sleepacc_field sleepacc_clocks_fields[] = {
  SLEEPACC__CLOCK("monotonic", SLEEPACC_CLOCK_MONOTONIC),
  SLEEPACC__CLOCK("monotonic_raw", SLEEPACC_CLOCK_MONOTONIC_RAW),
  SLEEPACC__CLOCK("realtime", SLEEPACC_CLOCK_REALTIME),
  SLEEPACC__CLOCK("boottime", SLEEPACC_CLOCK_BOOTTIME),
  {NULL, 0, 0, NULL, 0},
};

/* Every clock's info: 0, or the first error (-EINVAL for a NULL out or
 * negative reads). */
int sleepacc_clocks_get(int reads, sleepacc_clocks *out) {
  int rc = out ? 0 : -EINVAL;
  for (int id = 0; rc == 0 && id < SLEEPACC_CLOCK_COUNT; id++)
    rc = sleepacc_clock_info_get(id, reads, &out->clock[id]);
  return rc;
}

/* Tell the CPU we are in a spin loop (PAUSE / YIELD), else a compiler barrier. */
void sleepacc_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
  __asm__ __volatile__("yield" ::: "memory");
#else
  __asm__ __volatile__("" ::: "memory");
#endif
}

/* ---------------------------------------------------------------- seconds */

int sleepacc_seconds_to_ns(double s, int64_t *ns) {
  if (!ns) return -EINVAL;
  if (!isfinite(s)) return -EDOM;
  s *= 1e9; /* beyond int64 saturates; any negative stays negative */
  *ns = s >= 9.2e18 ? INT64_MAX : s <= -9.2e18 ? -1 : (int64_t)llround(s);
  if (s < 0 && *ns >= 0) *ns = -1;
  return 0;
}

int64_t sleepacc_whole_seconds_to_ns(int64_t s, int overflow) {
  if (overflow > 0 || (!overflow && s > INT64_MAX / 1000000000LL)) return INT64_MAX;
  if (overflow < 0 || (!overflow && s < INT64_MIN / 1000000000LL)) return -1;
  return s * 1000000000LL;
}
