/* test_config.c -- what a run is: sleepacc_config_default fills every
 * field, sleepacc_config_check names the field each broken rule is about
 * (and run_start refuses the same configurations), the capacity hint, the
 * name and duration checks, the default ladder and the field tables. */
#include "check.h"
#include "sleepacc_binding.h"

#include <sched.h>
#include <stddef.h>
#include <string.h>

static sleepacc_run run; /* large: keep it off the stack */
static int64_t buf[16];

static void test_defaults(void) {
  sleepacc_config c;
  memset(&c, 0x5a, sizeof c);
  sleepacc_config_default(&c);
  CHECK(c.method == NULL && c.mode == SLEEPACC_MODE_RELATIVE && c.duration_ns == 0);
  CHECK(c.n == 0 && c.budget_ns == SLEEPACC_DEFAULT_BUDGET_NS && c.budget_ns == 1000000000LL);
  CHECK(c.warmup == SLEEPACC_DEFAULT_WARMUP && c.warmup == 2);
  CHECK(c.margin_ns == SLEEPACC_DEFAULT_MARGIN_NS && c.margin_ns == 125000);
  CHECK(c.chunk_ns == SLEEPACC_CHUNK_NS && c.keep_samples == 1);
  CHECK(c.env.slack_ns == -1 && c.env.policy == SLEEPACC_POLICY_KEEP && c.env.priority == 0 &&
        c.env.cpu == -1 && c.env.lock_memory == 0 && c.env.dma_latency_us == -1);
  /* a default config with a method is valid */
  c.method = sleepacc_method_find("nanosleep");
  CHECK(sleepacc_config_check(&c, NULL) == 0);
}

/* Each broken rule: the errno, the field named, a message, and run_start
 * refusing it too. */
static void test_each_bad_field(void) {
  sleepacc_config good, c;
  sleepacc_method gone = {"gone", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "gone",
                          NULL, NULL, NULL, NULL};
  int outside = -1;
  cpu_set_t set;
  sleepacc_config_default(&good);
  good.method = sleepacc_method_find("nanosleep");
  good.duration_ns = 1000;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int i = 0; i < CPU_SETSIZE && outside < 0; i++)
      if (!CPU_ISSET(i, &set)) outside = i;
#define BAD(expr, code, name)                                                              \
  do {                                                                                     \
    const char *f_ = "unset", *m_ = NULL;                                                  \
    c = good;                                                                              \
    expr;                                                                                  \
    int rc_ = sleepacc_config_explain(&c, &f_, &m_);                                       \
    CHECKF(rc_ == (code) && f_ && strcmp(f_, name) == 0 && m_ && *m_,                       \
           "%s -> %d %s (%s)", #expr, rc_, f_ ? f_ : "NULL", m_ ? m_ : "NULL");            \
    f_ = NULL;                                                                             \
    CHECK(sleepacc_config_check(&c, &f_) == (code) && f_ && strcmp(f_, name) == 0);        \
    CHECK(sleepacc_run_start(&run, &c, buf, 16) == (code));                                \
    CHECK(sleepacc_run_finish(&run) == 0);                                                 \
  } while (0)
  BAD(c.method = NULL, -EINVAL, "method");
  BAD(c.method = &gone, -EINVAL, "method"); /* no wait function */
  BAD(c.mode = 2, -EINVAL, "mode");
  BAD(c.duration_ns = -1, -EINVAL, "duration_ns");
  BAD(c.duration_ns = SLEEPACC_MAX_DURATION_NS + 1, -EINVAL, "duration_ns");
  BAD((c.mode = SLEEPACC_MODE_PERIODIC, c.duration_ns = 0), -EINVAL, "duration_ns");
  BAD(c.n = -1, -EINVAL, "n");
  BAD(c.budget_ns = -1, -EINVAL, "budget_ns");
  BAD(c.budget_ns = SLEEPACC_MAX_DURATION_NS + 1, -EINVAL, "budget_ns");
  BAD(c.budget_ns = 0, -EINVAL, "n"); /* nothing would stop the run */
  BAD(c.warmup = -1, -EINVAL, "warmup");
  BAD((c.n = INT64_MAX, c.warmup = 10), -EINVAL, "n");
  BAD(c.margin_ns = -1, -EINVAL, "margin_ns");
  BAD(c.margin_ns = SLEEPACC_MAX_DURATION_NS + 1, -EINVAL, "margin_ns");
  BAD(c.chunk_ns = -1, -EINVAL, "chunk_ns");
  BAD(c.keep_samples = 2, -EINVAL, "keep_samples");
  BAD((c.budget_ns = 0, c.n = SLEEPACC_MAX_SAMPLES + 1), -EINVAL, "n");
  /* one sample longer than the budget, n not given */
  BAD(c.duration_ns = 2 * SLEEPACC_DEFAULT_BUDGET_NS, -EINVAL, "duration_ns");
  BAD((c.mode = SLEEPACC_MODE_PERIODIC, c.duration_ns = SLEEPACC_MAX_DURATION_NS,
       c.budget_ns = 0, c.n = INT64_MAX / 2, c.keep_samples = 0), -EINVAL, "n");
  BAD(c.env.slack_ns = 0, -EINVAL, "env.slack_ns");
  BAD(c.env.slack_ns = SLEEPACC_MAX_SLACK_NS + 1, -EINVAL, "env.slack_ns");
  BAD(c.env.policy = 99, -EINVAL, "env.policy");
  BAD(c.env.priority = 5, -EINVAL, "env.priority");
  BAD((c.env.policy = SLEEPACC_POLICY_FIFO, c.env.priority = 0), -EINVAL, "env.priority");
  BAD((c.env.policy = SLEEPACC_POLICY_RR, c.env.priority = 100), -EINVAL, "env.priority");
  BAD(c.env.cpu = 100000, -EINVAL, "env.cpu");
  if (outside >= 0) BAD(c.env.cpu = outside, -EINVAL, "env.cpu");
  BAD(c.env.lock_memory = 2, -EINVAL, "env.lock_memory");
  BAD(c.env.dma_latency_us = -2, -EINVAL, "env.dma_latency_us");
  BAD(c.env.dma_latency_us = SLEEPACC_MAX_DMA_LATENCY_US + 1, -EINVAL, "env.dma_latency_us");
  BAD((c.method = sleepacc_method_find("spin"), c.budget_ns = 0, c.n = 10,
       c.env.policy = SLEEPACC_POLICY_FIFO, c.env.priority = 1), -EINVAL, "budget_ns");
#undef BAD
  /* n given explicitly: a sample longer than the budget is allowed */
  c = good;
  c.duration_ns = 2 * SLEEPACC_DEFAULT_BUDGET_NS;
  c.n = 1;
  CHECK(sleepacc_config_check(&c, NULL) == 0);
  CHECK(sleepacc_config_check(NULL, NULL) == -EINVAL);
}

static int no(void) { return 0; }
static int fake_wait(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)d; (void)dl;
  return 0;
}

static void test_unavailable_method(void) {
  sleepacc_method gone = {"gone", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "gone",
                          no, NULL, NULL, fake_wait};
  sleepacc_config c;
  const char *f = NULL, *m = NULL;
  sleepacc_config_default(&c);
  c.method = &gone;
  CHECK(sleepacc_config_explain(&c, &f, &m) == -ENOSYS && strcmp(f, "method") == 0);
  CHECK(strstr(m, "not available") != NULL);
}

static void test_capacity(void) {
  sleepacc_config c;
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find("nanosleep");
  c.duration_ns = 1000000; /* 1 ms, 1 s budget: 1001 samples */
  CHECK(sleepacc_config_capacity(&c) == 1001);
  c.n = 10;
  CHECK(sleepacc_config_capacity(&c) == 10);
  c.duration_ns = 0; /* 1 us floor: 1e6 + 1, capped by n */
  c.n = 0;
  CHECK(sleepacc_config_capacity(&c) == 1000001);
  c.budget_ns = SLEEPACC_MAX_DURATION_NS;
  CHECK(sleepacc_config_capacity(&c) == SLEEPACC_MAX_SAMPLES);
  c.budget_ns = 0;
  c.n = 77;
  CHECK(sleepacc_config_capacity(&c) == 77);
  c.keep_samples = 0;
  CHECK(sleepacc_config_capacity(&c) == 0);
}

static void test_names_and_durations(void) {
  const char *m = NULL;
  CHECK(sleepacc_name_check("nanosleep", 9) == 0);
  CHECK(sleepacc_name_check("nano\0sleep", 10) == -EINVAL);
  CHECK(sleepacc_name_check(NULL, 0) == -EINVAL);
  CHECK(sleepacc_duration_check(0, &m) == 0 && sleepacc_duration_check(SLEEPACC_MAX_DURATION_NS, &m) == 0);
  CHECK(sleepacc_duration_check(-1, &m) == -EINVAL && strstr(m, "non-negative"));
  CHECK(sleepacc_duration_check(SLEEPACC_MAX_DURATION_NS + 1, &m) == -EINVAL && strstr(m, "one day"));
  CHECK(sleepacc_default_durations_ns[0] == 1 && sleepacc_default_durations_ns[10] == 500000000);
  for (int i = 1; i < SLEEPACC_DEFAULT_DURATION_COUNT; i++)
    CHECK(sleepacc_default_durations_ns[i] > sleepacc_default_durations_ns[i - 1]);
}

/* Every table: names unique within it, offsets inside the struct, nested
 * rows with a sub-table; the record's rows in schema order. */
static void check_table(const sleepacc_field *t, size_t size) {
  for (const sleepacc_field *f = t; f->name; f++) {
    for (const sleepacc_field *g = t; g != f; g++) CHECK(strcmp(f->name, g->name) != 0);
    CHECK(f->offset < size);
    CHECK(f->type >= SLEEPACC_FIELD_INT64 && f->type <= SLEEPACC_FIELD_SAMPLES); /* a known type */
    if (f->type == SLEEPACC_FIELD_NESTED) {
      CHECK(f->sub != NULL);
      if (f->sub) check_table(f->sub, size); /* sub offsets are relative to the row */
    }
  }
}

static void test_tables(void) {
  static const char *const record[] = {"method", "mode", "requested_ns", "n", "stats",
                                       "missed", "cpu_ns_per_call", "cpu_percent",
                                       "ctx_switches", "wall_ns", "env"};
  size_t i = 0;
  check_table(sleepacc_result_fields, sizeof(sleepacc_result));
  check_table(sleepacc_sleeper_stats_fields, sizeof(sleepacc_sleeper_stats));
  check_table(sleepacc_pacer_stats_fields, sizeof(sleepacc_pacer_stats));
  for (const sleepacc_field *f = sleepacc_result_fields; f->name; f++, i++)
    CHECK(i < 11 && strcmp(f->name, record[i]) == 0);
  CHECK(i == 11);
  CHECK(strcmp(sleepacc_strategy_name(SLEEPACC_STRATEGY_AUTO), "auto") == 0);
  CHECK(strcmp(sleepacc_strategy_name(SLEEPACC_STRATEGY_KERNEL), "kernel") == 0);
  CHECK(sleepacc_strategy_name(5) == NULL && sleepacc_strategy_name(-1) == NULL);
}

/* A finished run's record: what ran, the environment applied, starts. */
static void test_result(void) {
  sleepacc_config c;
  sleepacc_result r;
  int64_t samples[8], starts[8], scratch[8];
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find("hybrid");
  c.duration_ns = 200000;
  c.n = 8;
  c.margin_ns = 0; /* the default */
  c.env.slack_ns = 1000;
  CHECK(sleepacc_run_start(&run, &c, samples, 8) == 0);
  CHECK(sleepacc_run_set_starts(&run, starts) == 0);
  while (sleepacc_run_step(&run) != 1) {}
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_count(&run) == 8);
  CHECK(sleepacc_run_result(&run, scratch, &r) == 0);
  CHECK(strcmp(r.method, "hybrid") == 0 && strcmp(r.mode, "relative") == 0);
  CHECK(r.requested_ns == 200000 && r.n == 8 && r.stats.n == 8 && r.stream_stats.n == 8);
  CHECK(r.stats.min >= 200000 && r.stats.p1 <= r.stats.p10 && r.stats.p10 <= r.stats.p25 &&
        r.stats.p25 <= r.stats.median && r.stats.median <= r.stats.p75 &&
        r.stats.p75 <= r.stats.p90);
  CHECK(r.env.slack_ns == 1000 && r.env.policy == NULL && r.env.priority == -1 &&
        r.env.cpu == -1 && r.env.dma_latency_us == -1 && r.env.margin_ns == 125000);
  CHECK(r.cpu_ns_per_call > 0 && r.cpu_percent > 0 && r.wall_ns >= 8 * 200000);
  /* starts: ns since the run's start, increasing, each a sample apart */
  CHECK(starts[0] >= 0);
  for (int i = 1; i < 8; i++) CHECK(starts[i] - starts[i - 1] >= samples[i - 1]);
  /* a kernel method has no margin in its record; no buffer, no starts */
  c.method = sleepacc_method_find("nanosleep");
  CHECK(sleepacc_run_start(&run, &c, NULL, 0) == 0);
  CHECK(sleepacc_run_set_starts(&run, starts) == -EINVAL);
  while (sleepacc_run_step(&run) != 1) {}
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_result(&run, NULL, &r) == 0 && r.env.margin_ns == -1 && r.n == 8);
}

/* The sleeper's and pacer's configuration: defaults, each rule naming its
 * field, open_config refusing the same and opening a good one. */
static void test_sleeper_config(void) {
  sleepacc_sleeper_config good, c;
  sleepacc_sleeper s;
  sleepacc_pacer p;
  const char *f = NULL, *m = NULL;
  sleepacc_sleeper_config_default(&good);
  CHECK(strcmp(good.method, "auto") == 0 && good.quantile == 0.99 && good.margin_ns == -1 &&
        good.handoff_ns == 0 && good.dma_latency_us == -1 && strcmp(good.missed, "skip") == 0);
  CHECK(sleepacc_sleeper_config_explain(&good, 0, &f, &m) == 0);
  CHECK(sleepacc_sleeper_config_explain(&good, 1, &f, &m) == -EINVAL && strcmp(f, "period_ns") == 0);
#define SBAD(expr, pacer, name)                                                            \
  do {                                                                                     \
    c = good;                                                                              \
    c.period_ns = 1000000;                                                                 \
    expr;                                                                                  \
    f = m = NULL;                                                                          \
    CHECKF(sleepacc_sleeper_config_explain(&c, pacer, &f, &m) < 0 && f &&                   \
               strcmp(f, name) == 0 && m && *m, "%s -> %s", #expr, f ? f : "NULL");          \
    f = NULL;                                                                              \
    CHECK((pacer ? sleepacc_pacer_open_config(&p, &c, &f)                                  \
                 : sleepacc_sleeper_open_config(&s, &c, &f)) < 0 && f && strcmp(f, name) == 0); \
  } while (0)
  SBAD(c.method = "nope", 0, "method");
  SBAD(c.method = "clock", 0, "method");
  SBAD(c.method = NULL, 1, "method");
  SBAD(c.quantile = 1.0, 0, "quantile");
  SBAD(c.quantile = 0.0 / 0.0, 0, "quantile");
  SBAD(c.margin_ns = -2, 0, "margin_ns");
  SBAD(c.handoff_ns = SLEEPACC_MAX_HANDOFF_NS + 1, 0, "handoff_ns");
  SBAD(c.dma_latency_us = -2, 0, "dma_latency_us");
  SBAD(c.period_ns = 0, 1, "period_ns");
  SBAD(c.period_ns = SLEEPACC_MAX_DURATION_NS + 1, 1, "period_ns");
  SBAD(c.missed = "later", 1, "missed");
#undef SBAD
  c = good;
  c.method = "hybrid";
  CHECK(sleepacc_sleeper_open_config(&s, &c, &f) == 0 && f == NULL);
  {
    sleepacc_sleeper_stats st;
    sleepacc_sleeper_stats_get(&s, &st);
    CHECK(st.margin_ns == SLEEPACC_DEFAULT_MARGIN_NS && strcmp(st.strategy, "hybrid") == 0);
  }
  sleepacc_sleeper_close(&s);
  c = good;
  c.period_ns = 1000000;
  c.missed = "burst";
  CHECK(sleepacc_pacer_open_config(&p, &c, &f) == 0 && f == NULL);
  {
    sleepacc_pacer_stats st;
    sleepacc_pacer_stats_get(&p, &st);
    CHECK(st.period_ns == 1000000 && strcmp(st.missed_policy, "burst") == 0 && st.missed == 0);
  }
  sleepacc_pacer_close(&p);
}

int main(void) {
  TEST(test_defaults);
  TEST(test_each_bad_field);
  TEST(test_unavailable_method);
  TEST(test_capacity);
  TEST(test_names_and_durations);
  TEST(test_tables);
  TEST(test_result);
  TEST(test_sleeper_config);
  return check_summary();
}
