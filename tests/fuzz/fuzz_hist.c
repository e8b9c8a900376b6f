/*
 * fuzz_hist.c -- the streaming histogram fed arbitrary values, checked
 * against the exact buffer statistics of the same values.
 *
 * Input: a threshold (8 bytes), a format byte, then values (raw int64, or
 * small int16 values that hit the exact buckets and make ties), then the
 * rest is also read as quantiles q (any double, NaN and inf included).
 *
 * Invariants: n, min, max and undersleeps equal the exact ones; the stats
 * are ordered; every quantile lies in [min, max] and grows with q; when
 * every |value| < 2^SLEEPACC_HIST_OCTAVES a quantile is within
 * SLEEPACC_HIST_PRECISION of the exact order statistic; mean is finite.
 */
#include "fuzz.h"

#include <math.h>

#define MAXV 4096

static int within(int64_t got, int64_t exact, double rel) {
  return fabs((double)got - (double)exact) <= rel * fabs((double)exact);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sleepacc_hist h; /* large: keep it off the stack */
  static int64_t v[MAXV], scratch[MAXV];
  fuzz_in in = {data, size};
  int64_t threshold = fuzz_i64(&in);
  uint8_t fmt = fuzz_u8(&in);
  size_t width = (fmt & 1) ? 2 : 8;
  size_t n = in.n / width;
  int bounded = 1;
  if (fmt & 2) n /= 2; /* leave the second half for quantiles */
  if (n > MAXV) n = MAXV;
  if (fmt & 4) threshold = (int16_t)threshold;

  sleepacc_hist_init(&h, threshold);
  for (size_t i = 0; i < n; i++) {
    v[i] = width == 2 ? (int64_t)(int16_t)fuzz_u64(&in, 2) : fuzz_i64(&in);
    if (v[i] <= -(INT64_C(1) << SLEEPACC_HIST_OCTAVES) ||
        v[i] >= (INT64_C(1) << SLEEPACC_HIST_OCTAVES))
      bounded = 0;
    sleepacc_hist_add(&h, v[i]);
  }

  sleepacc_stats hs, bs;
  sleepacc_hist_stats(&h, &hs);
  FUZZ_CHECK(h.count == (int64_t)n && hs.n == (int64_t)n, "count %lld n %zu",
             (long long)h.count, n);
  if (n == 0) {
    FUZZ_CHECK(hs.min == 0 && hs.max == 0 && hs.undersleeps == 0, "empty stats");
    FUZZ_CHECK(sleepacc_hist_quantile(&h, 0.5) == 0, "empty quantile");
    return 0;
  }
  FUZZ_CHECK(sleepacc_stats_compute(v, n, threshold, scratch, &bs) == 0, "stats_compute");
  FUZZ_CHECK(fuzz_stats_ordered(&hs), "hist stats out of order");
  FUZZ_CHECK(fuzz_stats_ordered(&bs), "buffer stats out of order");
  FUZZ_CHECK(hs.min == bs.min && hs.max == bs.max, "extremes %lld..%lld vs %lld..%lld",
             (long long)hs.min, (long long)hs.max, (long long)bs.min, (long long)bs.max);
  FUZZ_CHECK(hs.undersleeps == bs.undersleeps, "undersleeps %lld vs %lld",
             (long long)hs.undersleeps, (long long)bs.undersleeps);
  {
    double scale = fmax(fabs((double)hs.min), fabs((double)hs.max));
    double tol = 1e-9 * scale + 1.0;
    FUZZ_CHECK(isfinite(hs.mean) && hs.mean >= (double)hs.min - tol &&
                   hs.mean <= (double)hs.max + tol,
               "mean %.17g outside [%lld, %lld]", hs.mean, (long long)hs.min, (long long)hs.max);
  }
  FUZZ_CHECK(isfinite(hs.std) && hs.std >= 0, "std %.17g", hs.std);
  {
    int64_t below = 0;
    for (size_t i = 0; i < n; i++) below += v[i] < threshold;
    FUZZ_CHECK(bs.undersleeps == below, "exact undersleeps");
  }
  if (bounded) {
    const int64_t *hq[] = {&hs.median, &hs.p90, &hs.p99, &hs.p999};
    const int64_t *bq[] = {&bs.median, &bs.p90, &bs.p99, &bs.p999};
    for (int j = 0; j < 4; j++)
      FUZZ_CHECK(within(*hq[j], *bq[j], SLEEPACC_HIST_PRECISION), "q%d hist %lld exact %lld", j,
                 (long long)*hq[j], (long long)*bq[j]);
  }

  /* arbitrary quantiles: inside [min, max], monotone in q */
  double qs[16 + 2]; /* up to 16 from the input, then NaN and inf */
  size_t nq = 0;
  while (in.n >= 8 && nq < 16) qs[nq++] = fuzz_double(&in);
  qs[nq++] = NAN;
  qs[nq++] = INFINITY;
  for (size_t i = 0; i < nq; i++) {
    int64_t a = sleepacc_hist_quantile(&h, qs[i]);
    FUZZ_CHECK(a >= hs.min && a <= hs.max, "q=%g -> %lld outside [%lld, %lld]", qs[i],
               (long long)a, (long long)hs.min, (long long)hs.max);
    for (size_t k = 0; k < nq; k++) {
      if (qs[i] < qs[k])
        FUZZ_CHECK(a <= sleepacc_hist_quantile(&h, qs[k]), "quantile not monotone %g < %g",
                   qs[i], qs[k]);
    }
  }
  /* in-place selection (scratch == samples) gives the same answer */
  {
    sleepacc_stats is;
    memcpy(scratch, v, n * sizeof *v);
    FUZZ_CHECK(sleepacc_stats_compute(scratch, n, threshold, scratch, &is) == 0, "in place");
    FUZZ_CHECK(is.median == bs.median && is.p999 == bs.p999 && is.min == bs.min, "in place");
  }
  return 0;
}
