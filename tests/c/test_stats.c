/* test_stats.c -- exact buffer statistics against an independent sort,
 * the histogram's precision bound, streaming vs buffer agreement, Welford,
 * undersleeps, bad arguments and int64 extremes. */
#include "check.h"
#include "sleepacc_binding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic data: xorshift64*. */
static uint64_t rng_state;
static void rng_seed(uint64_t s) { rng_state = s ? s : 0x9E3779B97F4A7C15ULL; }
static uint64_t rng_u64(void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1DULL;
}
static double rng_unit(void) { return (double)(rng_u64() >> 11) * 0x1.0p-53; } /* [0,1) */

static int cmp64(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Independent nearest rank: the smallest r with r >= q*n, q = num/den,
 * in integer arithmetic (no floating point), clamped to [1, n]. */
static size_t ref_rank(uint64_t num, uint64_t den, size_t n)
{
  unsigned __int128 r = ((unsigned __int128)num * n + den - 1) / den;
  if (r < 1)
    r = 1;
  if (r > n)
    r = n;
  return (size_t)r;
}

#define NQ 4
static const uint64_t q_num[NQ] = {1, 9, 99, 999};
static const uint64_t q_den[NQ] = {2, 10, 100, 1000};

static int64_t stat_q(const sleepacc_stats *s, int j)
{
  return j == 0 ? s->median : j == 1 ? s->p90 : j == 2 ? s->p99 : s->p999;
}

static int ordered(const sleepacc_stats *s)
{
  return s->min <= s->median && s->median <= s->p90 && s->p90 <= s->p99 &&
         s->p99 <= s->p999 && s->p999 <= s->max;
}

static int within(int64_t got, int64_t exact, double rel)
{
  double d = fabs((double)got - (double)exact);
  return d <= rel * fabs((double)exact);
}

/* Run every check on one data set; `bounded`: all |values| < 2^OCTAVES,
 * so the histogram's precision bound applies. */
static void check_dataset(const char *name, const int64_t *v, size_t n, int64_t threshold, int bounded)
{
  int64_t *scratch = malloc(n * sizeof *scratch + 1);
  int64_t *sorted = malloc(n * sizeof *sorted + 1);
  int64_t *copy = malloc(n * sizeof *copy + 1);
  memcpy(sorted, v, n * sizeof *v);
  memcpy(copy, v, n * sizeof *v);
  qsort(sorted, n, sizeof *sorted, cmp64);

  sleepacc_stats b, h;
  CHECK(sleepacc_stats_compute(v, n, threshold, scratch, &b) == 0);
  CHECKF(memcmp(copy, v, n * sizeof *v) == 0, "%s: samples modified", name);

  /* exact: n, min, max, percentiles, undersleeps vs the independent sort */
  int64_t below = 0;
  long double sum = 0;
  for (size_t i = 0; i < n; i++) {
    below += v[i] < threshold;
    sum += v[i];
  }
  CHECKF(b.n == (int64_t)n && b.min == sorted[0] && b.max == sorted[n - 1], "%s", name);
  for (int j = 0; j < NQ; j++) {
    int64_t want = sorted[ref_rank(q_num[j], q_den[j], n) - 1];
    CHECKF(stat_q(&b, j) == want, "%s: q%d %lld want %lld", name, j, (long long)stat_q(&b, j),
           (long long)want);
  }
  CHECKF(b.undersleeps == below, "%s", name);
  CHECKF(ordered(&b), "%s: buffer stats out of order", name);

  /* streaming: same data through the histogram */
  static sleepacc_hist hist;
  sleepacc_hist_init(&hist, threshold);
  for (size_t i = 0; i < n; i++)
    sleepacc_hist_add(&hist, v[i]);
  sleepacc_hist_stats(&hist, &h);
  CHECKF(ordered(&h), "%s: histogram stats out of order", name);
  CHECKF(h.n == b.n && h.min == b.min && h.max == b.max, "%s", name);
  CHECKF(h.undersleeps == b.undersleeps, "%s: undersleeps %lld vs %lld", name,
         (long long)h.undersleeps, (long long)b.undersleeps);
  if (bounded) {
    /* the stated precision, and the tighter bound proven in stats.c */
    const double proven = 1.0 / (double)(2 << SLEEPACC_HIST_SUB);
    for (int j = 0; j < NQ; j++) {
      CHECKF(within(stat_q(&h, j), stat_q(&b, j), SLEEPACC_HIST_PRECISION),
             "%s: q%d stream %lld buffer %lld", name, j, (long long)stat_q(&h, j),
             (long long)stat_q(&b, j));
      CHECKF(within(stat_q(&h, j), stat_q(&b, j), proven), "%s: q%d beyond 2^-(SUB+1)", name, j);
    }
    /* and at many other quantiles through sleepacc_hist_quantile */
    for (int k = 0; k <= 1000; k += 7) {
      int64_t exact = sorted[ref_rank((uint64_t)k, 1000, n) - 1];
      int64_t got = sleepacc_hist_quantile(&hist, k / 1000.0);
      CHECKF(within(got, exact, proven), "%s: q=%d/1000 got %lld exact %lld", name, k,
             (long long)got, (long long)exact);
    }
  }
  /* Welford vs the buffer's two-pass mean/std */
  double scale = fabs(b.mean) + b.std + 1.0;
  CHECKF(fabs(h.mean - b.mean) <= 1e-9 * scale, "%s: mean %.17g vs %.17g", name, h.mean, b.mean);
  CHECKF(fabs(h.std - b.std) <= 1e-9 * scale, "%s: std %.17g vs %.17g", name, h.std, b.std);
  CHECKF(fabs(b.mean - (double)(sum / n)) <= 1e-12 * scale, "%s: mean", name);

  /* scratch may be the samples themselves (reordered) */
  sleepacc_stats b2;
  memcpy(scratch, v, n * sizeof *v);
  CHECK(sleepacc_stats_compute(scratch, n, threshold, scratch, &b2) == 0);
  CHECKF(memcmp(&b, &b2, sizeof b) == 0, "%s: in-place differs", name);

  free(scratch);
  free(sorted);
  free(copy);
}

enum { N = 20000 };

static void test_distributions(void)
{
  static int64_t v[N];
  rng_seed(1);
  for (size_t i = 0; i < N; i++) /* uniform sleep-like durations */
    v[i] = 1000000 + (int64_t)(rng_u64() % 200000);
  check_dataset("uniform", v, N, 1000000 + 100000, 1);

  for (size_t i = 0; i < N; i++) /* heavy tail: exponential plus rare spikes */
    v[i] = 50000 + (int64_t)(-log(1.0 - rng_unit()) * 20000.0) +
           (rng_u64() % 100 == 0 ? (int64_t)(rng_u64() % 50000000) : 0);
  check_dataset("heavy tail", v, N, 50000, 1);

  for (size_t i = 0; i < N; i++) /* signed lateness around 0 */
    v[i] = (int64_t)((rng_unit() - 0.5) * 2e6);
  check_dataset("signed", v, N, 0, 1);

  for (size_t i = 0; i < N; i++) /* all negative */
    v[i] = -1 - (int64_t)(rng_u64() % 1000000000);
  check_dataset("negative", v, N, -500000000, 1);

  for (size_t i = 0; i < N; i++) /* every scale, up to just under 2^OCTAVES */
    v[i] = (int64_t)(rng_u64() >> (64 - SLEEPACC_HIST_OCTAVES + (rng_u64() % 40))) *
           ((rng_u64() & 1) ? 1 : -1);
  check_dataset("log-uniform", v, N, 0, 1);

  for (size_t i = 0; i < N; i++) /* huge but inside the histogram's range */
    v[i] = ((int64_t)1 << (SLEEPACC_HIST_OCTAVES - 1)) + (int64_t)(rng_u64() % 1000000000000LL);
  check_dataset("huge", v, N, 0, 1);

  for (size_t i = 0; i < N; i++) /* small integers: the exact buckets */
    v[i] = (int64_t)(rng_u64() % 300) - 150;
  check_dataset("small", v, N, 0, 1);
}

/* Inputs that break naive quickselects, plus tiny sizes. */
static void test_adversarial(void)
{
  static int64_t v[N];
  for (size_t i = 0; i < N; i++)
    v[i] = (int64_t)i;
  check_dataset("ascending", v, N, 100, 1);
  for (size_t i = 0; i < N; i++)
    v[i] = (int64_t)(N - i);
  check_dataset("descending", v, N, 100, 1);
  for (size_t i = 0; i < N; i++)
    v[i] = 777;
  check_dataset("constant", v, N, 777, 1);
  for (size_t i = 0; i < N; i++)
    v[i] = (int64_t)(i % 3);
  check_dataset("three values", v, N, 1, 1);
  for (size_t i = 0; i < N; i++) /* organ pipe */
    v[i] = (int64_t)(i < N / 2 ? i : N - i);
  check_dataset("organ pipe", v, N, 0, 1);
  for (size_t i = 0; i < N; i++) /* median-of-three killer-ish: alternating */
    v[i] = (i & 1) ? (int64_t)i : (int64_t)(N + i);
  check_dataset("alternating", v, N, 0, 1);
  for (size_t n = 1; n <= 12; n++) {
    for (size_t i = 0; i < n; i++)
      v[i] = (int64_t)((i * 7919) % 13) * 1000;
    check_dataset("tiny", v, n, 5000, 1);
  }
}

/* Values at the int64 extremes: no UB (sanitizers), exact min/max, order. */
static void test_extremes(void)
{
  int64_t v[] = {INT64_MIN, INT64_MAX, 0, -1, 1, INT64_MIN + 1, INT64_MAX - 1, INT64_MIN, INT64_MAX};
  size_t n = sizeof v / sizeof v[0];
  check_dataset("extremes", v, n, INT64_MIN, 0);
  check_dataset("extremes-threshold-max", v, n, INT64_MAX, 0);
  sleepacc_hist h;
  sleepacc_hist_init(&h, 0);
  for (int i = 0; i < 1000; i++)
    sleepacc_hist_add(&h, (i & 1) ? INT64_MAX : INT64_MIN);
  sleepacc_stats s;
  sleepacc_hist_stats(&h, &s);
  CHECK(ordered(&s) && s.min == INT64_MIN && s.max == INT64_MAX && s.undersleeps == 500);
  CHECK(isfinite(s.mean) && isfinite(s.std));
  CHECK(sleepacc_hist_quantile(&h, 0.0) == INT64_MIN);
  CHECK(sleepacc_hist_quantile(&h, 1.0) == INT64_MAX);
  CHECK(sleepacc_hist_quantile(&h, NAN) == INT64_MIN);
  CHECK(sleepacc_hist_quantile(&h, -3.0) == INT64_MIN);
  CHECK(sleepacc_hist_quantile(&h, 7.0) == INT64_MAX);
}

/* The bound, value by value: each power of two and its neighbours, both
 * signs, read back as the middle of three values (rank 2). */
static void test_bucket_bound(void)
{
  const double proven = 1.0 / (double)(2 << SLEEPACC_HIST_SUB);
  for (int k = 0; k < SLEEPACC_HIST_OCTAVES; k++) {
    for (int d = -1; d <= 1; d++) {
      for (int sign = -1; sign <= 1; sign += 2) {
        int64_t x = sign * (((int64_t)1 << k) + d);
        sleepacc_hist h;
        sleepacc_hist_init(&h, 0);
        sleepacc_hist_add(&h, INT64_MIN);
        sleepacc_hist_add(&h, x);
        sleepacc_hist_add(&h, INT64_MAX);
        int64_t got = sleepacc_hist_quantile(&h, 0.5);
        CHECKF(within(got, x, proven), "x=%lld got %lld", (long long)x, (long long)got);
        if (k < SLEEPACC_HIST_SUB)
          CHECKF(got == x, "x=%lld must be exact, got %lld", (long long)x, (long long)got);
      }
    }
  }
}

static void test_empty_and_bad(void)
{
  sleepacc_stats s;
  int64_t one = 5, scratch[1];
  memset(&s, 0xAB, sizeof s);
  CHECK(sleepacc_stats_compute(NULL, 0, 0, NULL, &s) == 0);
  CHECK(s.n == 0 && s.min == 0 && s.max == 0 && s.mean == 0 && s.std == 0 && s.median == 0 &&
        s.p999 == 0 && s.undersleeps == 0);
  CHECK(sleepacc_stats_compute(NULL, 1, 0, scratch, &s) == -EINVAL);
  CHECK(sleepacc_stats_compute(&one, 1, 0, NULL, &s) == -EINVAL);
  CHECK(sleepacc_stats_compute(&one, 1, 0, scratch, NULL) == -EINVAL);
  CHECK(sleepacc_stats_compute(&one, 1, 10, scratch, &s) == 0);
  CHECK(s.n == 1 && s.min == 5 && s.max == 5 && s.median == 5 && s.p999 == 5 && s.std == 0.0 &&
        s.mean == 5.0 && s.undersleeps == 1);

  sleepacc_hist h;
  sleepacc_hist_init(&h, 0);
  memset(&s, 0xAB, sizeof s);
  sleepacc_hist_stats(&h, &s);
  CHECK(s.n == 0 && s.min == 0 && s.max == 0 && s.mean == 0 && s.std == 0 && s.p99 == 0);
  CHECK(sleepacc_hist_quantile(&h, 0.5) == 0);
  sleepacc_hist_add(&h, 42);
  sleepacc_hist_stats(&h, &s);
  CHECK(s.n == 1 && s.median == 42 && s.std == 0.0 && s.mean == 42.0);
  sleepacc_hist_add(&h, 44);
  sleepacc_hist_stats(&h, &s);
  CHECK(s.n == 2 && s.median == 42 && s.p90 == 44 && fabs(s.std - sqrt(2.0)) < 1e-12);
}

/* A saturated bucket counter stays saturated instead of wrapping. */
static void test_saturation(void)
{
  static sleepacc_hist h;
  sleepacc_hist_init(&h, 0);
  sleepacc_hist_add(&h, 5);
  h.pos[5] = UINT32_MAX;
  sleepacc_hist_add(&h, 5);
  CHECK(h.pos[5] == UINT32_MAX);
  sleepacc_hist_add(&h, 1000);
  int64_t q = sleepacc_hist_quantile(&h, 0.5);
  CHECK(q >= h.min && q <= h.max);
}

static void test_fields(void)
{
  static const char *const names[] = {"n", "min", "max", "mean", "std", "p1", "p10", "p25",
                                      "median", "p75", "p90", "p99", "p999", "undersleeps"};
  sleepacc_stats s = {.n = 1, .min = 2, .max = 3, .mean = 4.5, .std = 5.5, .p1 = 6, .p10 = 7,
                      .p25 = 8, .median = 9, .p75 = 10, .p90 = 11, .p99 = 12, .p999 = 13,
                      .undersleeps = 14};
  size_t i = 0;
  for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++, i++) {
    CHECK(i < 14);
    if (i >= 14)
      break;
    CHECK(strcmp(f->name, names[i]) == 0);
    CHECK(f->type == SLEEPACC_FIELD_DOUBLE || f->type == SLEEPACC_FIELD_INT64);
    const char *base = (const char *)&s + f->offset;
    if (f->type == SLEEPACC_FIELD_DOUBLE) {
      double d;
      memcpy(&d, base, sizeof d);
      CHECK(d == (i == 3 ? 4.5 : 5.5));
    } else {
      int64_t x;
      memcpy(&x, base, sizeof x);
      CHECK(f->type == SLEEPACC_FIELD_INT64 && x == (int64_t)i + 1);
    }
  }
  CHECK(i == 14);
}

/* The quantile level of each statistic: the order statistics increase with
 * their level, which matches the values the core computes (nearest rank of
 * 1..1000: the level's share of 1000); the other fields have none. */
static void test_levels(void)
{
  static const char *const order[] = {"min", "p1", "p10", "p25", "median", "p75", "p90",
                                      "p99", "p999", "max"};
  static const double want[] = {0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};
  int64_t v[1000], scratch[1000];
  sleepacc_stats st;
  for (int i = 0; i < 1000; i++)
    v[i] = 1000 - i; /* 1..1000, reversed */
  CHECK(sleepacc_stats_compute(v, 1000, 0, scratch, &st) == 0);
  for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
    double q = sleepacc_stats_level(order[i]);
    int64_t x = 0;
    for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++)
      if (!strcmp(f->name, order[i]))
        memcpy(&x, (const char *)&st + f->offset, sizeof x);
    CHECKF(q == want[i], "%s: %g", order[i], q);
    CHECKF(x == (q == 0.0 ? 1 : (int64_t)llround(q * 1000)), "%s: %lld", order[i], (long long)x);
  }
  CHECK(sleepacc_stats_level("n") == -1.0 && sleepacc_stats_level("mean") == -1.0);
  CHECK(sleepacc_stats_level("std") == -1.0 && sleepacc_stats_level("undersleeps") == -1.0);
  CHECK(sleepacc_stats_level("p50") == -1.0 && sleepacc_stats_level(NULL) == -1.0);
}

int main(void)
{
  TEST(test_distributions);
  TEST(test_adversarial);
  TEST(test_extremes);
  TEST(test_bucket_bound);
  TEST(test_empty_and_bad);
  TEST(test_saturation);
  TEST(test_fields);
  TEST(test_levels);
  return check_summary();
}
