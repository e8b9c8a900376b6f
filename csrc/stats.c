/*
 * stats.c -- summary statistics of samples: exact ones over a buffer and
 * streaming ones from a constant-size log-scale histogram.
 *
 * Owns: sleepacc_hist_init/add/quantile/stats, sleepacc_stats_compute,
 * sleepacc_stats_level and the field table sleepacc_stats_fields[].
 * Allocates nothing.
 *
 * Percentile definition (the one used everywhere in sleepacc, buffer and
 * histogram alike, so the two paths agree):
 *
 *   nearest rank.  For n sorted values x[1] <= ... <= x[n] and q in [0,1],
 *   the q-quantile is x[r] with r = ceil(q * n), clamped to 1 <= r <= n.
 *   So q = 0 is the minimum, q = 1 the maximum, q = 0.5 of 4 values is
 *   x[2].  q * n is shrunk by a relative 1e-12 before the ceiling so that
 *   rounding noise (0.99 * 100 -> 99.00000000000001) does not push the rank
 *   up by one; q outside [0,1] is clamped and a NaN q reads as 0.
 *   Every value is a sample that occurred: nothing is interpolated.
 *
 * Histogram layout and its precision bound:
 *
 *   A value v is filed by its magnitude u = |v| (into neg[] for v < 0,
 *   pos[] for v >= 0).  With S = SLEEPACC_HIST_SUB:
 *     - u < 2^S: bucket u (width 1, exact);
 *     - 2^e <= u < 2^(e+1), S <= e < SLEEPACC_HIST_OCTAVES: octave
 *       o = e - S + 1 split into 2^S linear sub-buckets of width
 *       w = 2^(e-S); bucket index o * 2^S + (u >> (e-S)) - 2^S;
 *     - u >= 2^SLEEPACC_HIST_OCTAVES: the top bucket (clamped).
 *   Indexes grow with u, so walking neg[] from the top index down and then
 *   pos[] upward visits buckets in increasing order of value.
 *
 *   Claim: for a value x with |x| < 2^SLEEPACC_HIST_OCTAVES, the quantile
 *   read from the histogram, h, satisfies |h - x| <= |x| * 2^-(S+1), where
 *   x is the exact nearest-rank order statistic of the same data.
 *   Proof.  (1) Both paths use the same rank r (function rank_of below) of
 *   the same n values.  Because buckets are disjoint intervals visited in
 *   increasing order of value, the bucket where the running count first
 *   reaches r is exactly the bucket B holding x[r] = x.  (2) sleepacc_hist
 *   returns the integer midpoint m = lo + (hi - lo) / 2 of the interval
 *   [lo, hi] = B intersected with [min, max] (the exact extremes), which
 *   still contains x.  Hence |m - x| <= ceil((hi - lo) / 2) <= w / 2
 *   when B has width w (hi - lo <= w - 1).  (3) If w = 1 the read is
 *   exact.  Otherwise B lies in octave e, so |x| >= 2^e and
 *   w / 2 = 2^(e-S-1) <= |x| * 2^-(S+1).  With S = 7 the bound is
 *   1/256 = 0.39% of |x|, inside SLEEPACC_HIST_PRECISION (1%).  []
 *   Ranks 1 and n return the exact min and max.  Values clamped into
 *   the top bucket carry no bound (min and max stay exact).  Bucket counters are uint32_t and saturate rather than wrap;
 *   ranks are taken over the sum of the counters, so a saturated run
 *   loses precision but never reads outside [min, max].
 *
 * Overflow: magnitudes are computed in uint64_t (|INT64_MIN| = 2^63 is
 * representable there), means and variances in floating point, so values
 * at the int64 extremes are well defined.
 */
#include "sleepacc_int.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* sleepacc_stats as a field table, NULL-terminated; the
 * quantiles in increasing order.  p1..p75 came within sleepacc/1 (LATER:
 * an older record lacks them). */
#define SLEEPACC__I(f) {#f, offsetof(sleepacc_stats, f), SLEEPACC_FIELD_INT64, NULL, 0}
#define SLEEPACC__D(f) {#f, offsetof(sleepacc_stats, f), SLEEPACC_FIELD_DOUBLE, NULL, 0}
#define SLEEPACC__LATER(f) {#f, offsetof(sleepacc_stats, f), SLEEPACC_FIELD_INT64, NULL, SLEEPACC_FIELD_LATER}
const sleepacc_field sleepacc_stats_fields[] = {
  SLEEPACC__I(n), SLEEPACC__I(min), SLEEPACC__I(max), SLEEPACC__D(mean), SLEEPACC__D(std),
  SLEEPACC__LATER(p1), SLEEPACC__LATER(p10), SLEEPACC__LATER(p25), SLEEPACC__I(median), SLEEPACC__LATER(p75),
  SLEEPACC__I(p90), SLEEPACC__I(p99), SLEEPACC__I(p999), SLEEPACC__I(undersleeps),
  {NULL, 0, 0, NULL, 0},
};

/* The quantiles reported in sleepacc_stats, in increasing order, and where
 * each goes. */
#define SLEEPACC__NQ 8
static const double stats_q[SLEEPACC__NQ] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999};
static const size_t stats_q_at[SLEEPACC__NQ] = {
  offsetof(sleepacc_stats, p1),     offsetof(sleepacc_stats, p10),
  offsetof(sleepacc_stats, p25),    offsetof(sleepacc_stats, median),
  offsetof(sleepacc_stats, p75),    offsetof(sleepacc_stats, p90),
  offsetof(sleepacc_stats, p99),    offsetof(sleepacc_stats, p999)};

/* The int64 quantile slot j of *st. */
static int64_t *stats_slot(sleepacc_stats *st, int j)
{
  return (int64_t *)(void *)((char *)st + stats_q_at[j]);
}

/* Nearest rank (1-based) of quantile q among n > 0 values; see above. */
static int64_t rank_of(double q, int64_t n)
{
  if (!(q > 0.0)) /* also NaN */
    return 1;
  if (q >= 1.0)
    return n;
  double x = q * (double)n;
  x -= x * 1e-12;
  double c = ceil(x);
  if (c < 1.0)
    return 1;
  if (c >= (double)n)
    return n;
  return (int64_t)c;
}

/* ---------------------------------------------------------------------
 * Histogram.
 * ------------------------------------------------------------------ */
#define HIST_S SLEEPACC_HIST_SUB
#define HIST_SUBN (1u << HIST_S)
#define HIST_TOPMAG ((uint64_t)1 << SLEEPACC_HIST_OCTAVES)

/* |v| as uint64_t, defined for INT64_MIN. */
static uint64_t magnitude(int64_t v)
{
  return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

/* Bucket index of magnitude u (see the layout above). */
static size_t bucket_of(uint64_t u)
{
  if (u < HIST_SUBN)
    return (size_t)u;
  if (u >= HIST_TOPMAG)
    return SLEEPACC_HIST_BUCKETS - 1;
  int e = 63 - __builtin_clzll(u);
  int shift = e - HIST_S;
  size_t o = (size_t)(e - HIST_S + 1);
  return (o << HIST_S) + (size_t)((u >> shift) - HIST_SUBN);
}

/* Magnitude range [*lo, *hi] of bucket b; the top bucket reaches 2^64-1. */
static void bucket_range(size_t b, uint64_t *lo, uint64_t *hi)
{
  size_t o = b >> HIST_S;
  uint64_t sub = b & (HIST_SUBN - 1);
  if (o == 0) {
    *lo = *hi = sub;
    return;
  }
  int shift = (int)o - 1; /* e - S */
  *lo = (HIST_SUBN + sub) << shift;
  *hi = *lo + (((uint64_t)1 << shift) - 1);
  if (b == SLEEPACC_HIST_BUCKETS - 1)
    *hi = UINT64_MAX;
}

/* Reset h; values < threshold will count as undersleeps. */
void sleepacc_hist_init(sleepacc_hist *h, int64_t threshold)
{
  memset(h, 0, sizeof *h);
  h->threshold = threshold;
}

/* Add one value: extremes, Welford mean/m2, undersleep count, bucket. */
void sleepacc_hist_add(sleepacc_hist *h, int64_t value)
{
  if (h->count == 0 || value < h->min)
    h->min = value;
  if (h->count == 0 || value > h->max)
    h->max = value;
  if (h->count < INT64_MAX)
    h->count++;
  double x = (double)value;
  double delta = x - h->mean;
  h->mean += delta / (double)h->count;
  h->m2 += delta * (x - h->mean);
  if (value < h->threshold)
    h->below++;
  uint32_t *slot = value < 0 ? &h->neg[bucket_of(magnitude(value))]
                             : &h->pos[bucket_of(magnitude(value))];
  if (*slot < UINT32_MAX)
    (*slot)++;
}

/* Signed value of magnitude u in the negative (neg != 0) or positive half;
 * u <= 2^63 for negatives (clamped), u <= INT64_MAX for positives. */
static int64_t signed_of(uint64_t u, int neg)
{
  if (neg) {
    if (u >= (uint64_t)1 << 63)
      return INT64_MIN;
    return -(int64_t)u;
  }
  return u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
}

/* Integer midpoint of [lo, hi], lo <= hi, without overflow. */
static int64_t midpoint(int64_t lo, int64_t hi)
{
  return lo + (int64_t)(((uint64_t)hi - (uint64_t)lo) / 2);
}

/* Representative of bucket b (half neg/pos): midpoint of the bucket's
 * value interval intersected with [min, max]. */
static int64_t bucket_value(const sleepacc_hist *h, size_t b, int neg)
{
  uint64_t ulo, uhi;
  bucket_range(b, &ulo, &uhi);
  int64_t lo, hi;
  if (neg) {
    lo = signed_of(uhi, 1);
    hi = signed_of(ulo, 1);
  } else {
    lo = signed_of(ulo, 0);
    hi = signed_of(uhi, 0);
  }
  if (lo < h->min)
    lo = h->min;
  if (hi > h->max)
    hi = h->max;
  if (lo > hi) /* cannot happen for a non-empty bucket; stay inside [min,max] */
    return hi < h->min ? h->min : hi;
  return midpoint(lo, hi);
}

/* Sum of all bucket counters (equals count unless a counter saturated). */
static int64_t hist_total(const sleepacc_hist *h)
{
  int64_t t = 0;
  for (size_t b = 0; b < SLEEPACC_HIST_BUCKETS; b++)
    t += (int64_t)h->neg[b] + (int64_t)h->pos[b];
  return t;
}

/* Value of nearest rank r (1 <= r <= total) from the buckets. */
static int64_t hist_at_rank(const sleepacc_hist *h, int64_t r)
{
  int64_t cum = 0;
  for (size_t b = SLEEPACC_HIST_BUCKETS; b-- > 0;) {
    cum += h->neg[b];
    if (h->neg[b] && cum >= r)
      return bucket_value(h, b, 1);
  }
  for (size_t b = 0; b < SLEEPACC_HIST_BUCKETS; b++) {
    cum += h->pos[b];
    if (h->pos[b] && cum >= r)
      return bucket_value(h, b, 0);
  }
  return h->max;
}

/* Value at quantile q (nearest rank), within SLEEPACC_HIST_PRECISION of the
 * exact order statistic (see the proof above).  0 for an empty histogram;
 * q = 0 and q = 1 return the exact min and max. */
int64_t sleepacc_hist_quantile(const sleepacc_hist *h, double q)
{
  if (h->count == 0)
    return 0;
  if (!(q > 0.0))
    return h->min;
  if (q >= 1.0)
    return h->max;
  int64_t total = hist_total(h);
  if (total == 0)
    return 0;
  int64_t r = rank_of(q, total);
  if (r == 1) /* the extremes are known exactly */
    return h->min;
  if (r == total)
    return h->max;
  return hist_at_rank(h, r);
}

/* Summary statistics from the histogram (all zero when it is empty). */
void sleepacc_hist_stats(const sleepacc_hist *h, sleepacc_stats *out)
{
  memset(out, 0, sizeof *out);
  if (h->count == 0)
    return;
  out->n = h->count;
  out->min = h->min;
  out->max = h->max;
  out->mean = h->mean;
  out->std = h->count > 1 ? sqrt(h->m2 > 0.0 ? h->m2 / (double)(h->count - 1) : 0.0) : 0.0;
  for (int j = 0; j < SLEEPACC__NQ; j++)
    *stats_slot(out, j) = sleepacc_hist_quantile(h, stats_q[j]);
  out->undersleeps = h->below;
}

/* ---------------------------------------------------------------------
 * Exact statistics over a buffer: introselect (quickselect with a
 * heapsort fallback), so the worst case stays O(n log n) and nothing is
 * allocated.
 * ------------------------------------------------------------------ */
static void swap64(int64_t *a, int64_t *b)
{
  int64_t t = *a;
  *a = *b;
  *b = t;
}

static void sift_down(int64_t *a, size_t start, size_t n)
{
  size_t root = start;
  for (;;) {
    size_t child = 2 * root + 1;
    if (child >= n)
      return;
    if (child + 1 < n && a[child] < a[child + 1])
      child++;
    if (a[root] >= a[child])
      return;
    swap64(&a[root], &a[child]);
    root = child;
  }
}

static void heapsort64(int64_t *a, size_t n)
{
  if (n < 2)
    return;
  for (size_t i = n / 2; i-- > 0;)
    sift_down(a, i, n);
  for (size_t end = n - 1; end > 0; end--) {
    swap64(&a[0], &a[end]);
    sift_down(a, 0, end);
  }
}

/* Rearrange a[lo..hi) so that a[k] holds the value it would hold sorted,
 * everything before it is <= and everything after it >=. */
static void select_kth(int64_t *a, size_t lo, size_t hi, size_t k)
{
  int depth = 0;
  for (size_t m = hi - lo; m > 1; m >>= 1)
    depth += 2;
  while (hi - lo > 16) {
    if (depth-- <= 0) {
      heapsort64(a + lo, hi - lo);
      return;
    }
    /* median of three as the pivot, then a three-way partition so runs of
     * equal values (common: clock ticks) do not degrade the selection */
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid] < a[lo])
      swap64(&a[mid], &a[lo]);
    if (a[hi - 1] < a[lo])
      swap64(&a[hi - 1], &a[lo]);
    if (a[hi - 1] < a[mid])
      swap64(&a[hi - 1], &a[mid]);
    int64_t pivot = a[mid];
    size_t lt = lo, i = lo, gt = hi; /* [lo,lt) < p, [lt,i) == p, [gt,hi) > p */
    while (i < gt) {
      if (a[i] < pivot)
        swap64(&a[lt++], &a[i++]);
      else if (a[i] > pivot)
        swap64(&a[i], &a[--gt]);
      else
        i++;
    }
    if (k < lt)
      hi = lt;
    else if (k >= gt)
      lo = gt;
    else
      return;
  }
  /* insertion sort of the small remainder */
  for (size_t i = lo + 1; i < hi; i++) {
    int64_t v = a[i];
    size_t j = i;
    while (j > lo && a[j - 1] > v) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = v;
  }
}

/* Summary of n samples (see sleepacc.h).  Percentiles are exact nearest
 * rank; mean and variance use a two-pass sum in long double; n == 0 gives
 * an all-zero summary and returns 0. */
int sleepacc_stats_compute(const int64_t *samples, size_t n, int64_t threshold,
                           int64_t *scratch, sleepacc_stats *out)
{
  if (!out)
    return -EINVAL;
  memset(out, 0, sizeof *out);
  if (n == 0)
    return 0;
  if (!samples || !scratch)
    return -EINVAL;
  if (n > (size_t)INT64_MAX)
    return -EINVAL;
  if (scratch != samples)
    memmove(scratch, samples, n * sizeof *scratch);

  int64_t mn = scratch[0], mx = scratch[0], below = 0;
  long double sum = 0.0L;
  for (size_t i = 0; i < n; i++) {
    int64_t v = scratch[i];
    if (v < mn)
      mn = v;
    if (v > mx)
      mx = v;
    if (v < threshold)
      below++;
    sum += (long double)v;
  }
  long double mean = sum / (long double)n;
  long double ss = 0.0L;
  for (size_t i = 0; i < n; i++) {
    long double d = (long double)scratch[i] - mean;
    ss += d * d;
  }

  out->n = (int64_t)n;
  out->min = mn;
  out->max = mx;
  out->mean = (double)mean;
  out->std = n > 1 ? (double)sqrtl(ss / (long double)(n - 1)) : 0.0;
  out->undersleeps = below;

  /* ranks are non-decreasing, so each selection only needs the part of
   * the array at or after the previous one */
  size_t from = 0;
  for (int j = 0; j < SLEEPACC__NQ; j++) {
    size_t k = (size_t)(rank_of(stats_q[j], (int64_t)n) - 1);
    if (k < from)
      k = from;
    select_kth(scratch, from, n, k);
    *stats_slot(out, j) = scratch[k];
    from = k;
  }
  return 0;
}

/* The quantile level of the statistic `name` (see sleepacc.h): min and max
 * are the levels 0 and 1 of the nearest-rank rule, the others the level of
 * their slot in stats_q. */
double sleepacc_stats_level(const char *name)
{
  if (!name)
    return -1.0;
  if (!strcmp(name, "min"))
    return 0.0;
  if (!strcmp(name, "max"))
    return 1.0;
  for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++)
    for (int j = 0; j < SLEEPACC__NQ && !strcmp(f->name, name); j++)
      if (stats_q_at[j] == f->offset)
        return stats_q[j];
  return -1.0;
}
