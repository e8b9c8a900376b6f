/*
 * config.c -- what a run is: its defaults, every rule of its configuration
 * (each written once, naming the field it is about), the buffer it needs,
 * the default duration ladder, and the field tables of the result record
 * and of the sleeper's and pacer's statistics.
 *
 * The rules live in one X-macro table, SLEEPACC__RULES: (id, field, errno,
 * message).  sleepacc_config_explain() walks the configuration in a fixed
 * order and returns the first rule broken; the bindings turn the field into
 * their own argument name ("duration_ns" -> Python "duration") and print
 * "<argument>: <message>".  The engine calls the same function from
 * sleepacc_run_start, so a C caller, Python and Lua meet the same rules.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <string.h>

#define SLEEPACC__DAY_TEXT "must be at most 86400 s (one day)"

/* (id, field, errno, message), in the order they are checked. */
#define SLEEPACC__RULES(XX)                                                                    \
  XX(METHOD, "method", EINVAL, "is required")                                                  \
  XX(MODE, "mode", EINVAL, "must be 'relative' or 'periodic'")                                 \
  XX(FLOOR_PERIODIC, "method", EINVAL,                                                         \
     "is a floor (family 'baseline', measured at duration 0 only): periodic mode cannot "       \
     "measure it")                                                                              \
  XX(DURATION_NEG, "duration_ns", EINVAL, "must be non-negative")                              \
  XX(DURATION_DAY, "duration_ns", EINVAL, SLEEPACC__DAY_TEXT)                                  \
  XX(PERIOD_ZERO, "duration_ns", EINVAL, "must be > 0 in periodic mode (it is the period)")    \
  XX(N_NEG, "n", EINVAL, "must be >= 0 (0: only the budget stops the run)")                    \
  XX(BUDGET_NEG, "budget_ns", EINVAL, "must be non-negative")                                  \
  XX(BUDGET_DAY, "budget_ns", EINVAL, SLEEPACC__DAY_TEXT)                                      \
  XX(NO_STOP, "n", EINVAL, "is required when there is no budget (nothing would stop the run)") \
  XX(WARMUP, "warmup", EINVAL, "must be >= 0")                                                 \
  XX(N_OVERFLOW, "n", EINVAL, "must be <= 9223372036854775807 - warmup")                       \
  XX(WARMUP_OVERFLOW, "warmup", EINVAL, "must be <= 9223372036854775807 - n")                  \
  XX(MARGIN_NEG, "margin_ns", EINVAL, "must be non-negative")                                  \
  XX(MARGIN_DAY, "margin_ns", EINVAL, SLEEPACC__DAY_TEXT)                                      \
  XX(CHUNK, "chunk_ns", EINVAL, "must be in 0..86400 s (0: the default chunk)")                \
  XX(KEEP, "keep_samples", EINVAL, "must be 0 or 1")                                           \
  XX(N_BUFFER, "n", EINVAL,                                                                    \
     "samples to keep exceed the 4,000,000 sample buffer (32 MB): stream them "                \
     "(keep_samples off) or give a budget")                                                    \
  XX(SAMPLE_OVER_BUDGET, "duration_ns", EINVAL,                                                \
     "one sample is longer than the budget: give n explicitly or a longer budget")             \
  XX(BUDGET_OVERFLOW, "budget_ns", EINVAL, "deadline arithmetic would overflow int64")      \
  XX(PERIODIC_OVERFLOW, "n", EINVAL, "deadlines of n periods would overflow int64")         \
  XX(RT_SPIN, "budget_ns", EINVAL,                                                             \
     "is required for a spinning method under policy fifo or rr (real-time spinning "          \
     "stalls a CPU)")                                                                          \
  XX(UNAVAILABLE, "method", ENOSYS, "is not available on this system") \
  XX(S_METHOD, "method", EINVAL,                                                               \
     "is not 'auto', 'spin', 'hybrid', 'comp' or a registered method")                         \
  XX(S_NOT_KERNEL, "method", EINVAL,                                                           \
     "is not a kernel sleep: use 'auto', 'spin', 'hybrid', 'comp' or a kernel method")         \
  XX(S_QUANTILE, "quantile", EINVAL, "must be in (0, 1)")                                      \
  XX(S_MARGIN, "margin_ns", EINVAL, "must be 0..86400 s (one day)")                            \
  XX(S_HANDOFF, "handoff_ns", EINVAL, "must be at most 0.001 s")                               \
  XX(S_DMA, "dma_latency_us", EINVAL, "must be 0..2000000000 us (or left as it is)")           \
  XX(S_PERIOD, "period_ns", EINVAL, "must be positive and at most 86400 s (one day)")         \
  XX(S_MISSED, "missed", EINVAL, "must be 'skip', 'burst' or 'delay'")                        \
  XX(S_RT_PRIORITY, "rt_priority", EINVAL, "must be 0..99 (0: off)")                          \
  XX(S_SLICE, "slice_ns", EINVAL, "must be 0 (off) or 0.0001..0.1 s")                          \
  XX(S_DEADLINE_NEG, "deadline_ns", EINVAL, "must be a CLOCK_MONOTONIC time in ns")           \
  XX(S_DEADLINE_DAY, "deadline_ns", EINVAL, "must be at most one day ahead")                 \
  XX(SECONDS_FINITE, "duration_ns", EINVAL, "must be finite")                                 \
  XX(SLEEP_LONG, "seconds", EINVAL, "must end before the int64 ns clock does (292 years from boot)")

enum {
#define SLEEPACC__ID(id, field, err, msg) SLEEPACC__R_##id,
  SLEEPACC__RULES(SLEEPACC__ID)
#undef SLEEPACC__ID
  SLEEPACC__R_OK,
  SLEEPACC__R_ENV /* a rule of the environment's (env.c's, sleepacc__env_explain) */
};

static const struct {
  const char *field;
  int err;
  const char *message;
} sleepacc__rules[] = {
#define SLEEPACC__ROW(id, field, err, msg) {field, err, msg},
    SLEEPACC__RULES(SLEEPACC__ROW)
#undef SLEEPACC__ROW
};

/* Report rule `id` broken: -errno, field and message set. */
static int sleepacc__broken(int id, const char **field, const char **message) {
  if (field) *field = sleepacc__rules[id].field;
  if (message) *message = sleepacc__rules[id].message;
  return -sleepacc__rules[id].err;
}

/* The duration rule every duration field shares. */
static int sleepacc__duration_rule(int64_t ns, int neg, int day) {
  if (ns < 0) return neg;
  if (ns > SLEEPACC_MAX_DURATION_NS) return day;
  return SLEEPACC__R_OK;
}

int sleepacc_duration_check(int64_t ns, const char **message) {
  int id = sleepacc__duration_rule(ns, SLEEPACC__R_DURATION_NEG, SLEEPACC__R_DURATION_DAY);
  return id == SLEEPACC__R_OK ? 0 : sleepacc__broken(id, NULL, message);
}

int sleepacc_seconds_check(int real, double s, int64_t whole, int overflow, int64_t *ns,
                           const char **message) {
  int64_t v = sleepacc_whole_seconds_to_ns(whole, overflow);
  if (!ns) return -EINVAL;
  if (real && sleepacc_seconds_to_ns(s, &v) < 0)
    return sleepacc__broken(SLEEPACC__R_SECONDS_FINITE, NULL, message);
  if (sleepacc_duration_check(v, message) < 0) return -EINVAL;
  *ns = v;
  return 0;
}

/* A sleep's seconds have no day cap, only int64's: the deadline they end
 * at must fit the int64 ns clock (sleepacc_binding.h). */
int sleepacc_sleep_check(int real, double s, int64_t whole, int overflow, int64_t now_ns,
                         int64_t *deadline_ns, const char **message) {
  int64_t v = sleepacc_whole_seconds_to_ns(whole, overflow), end;
  if (!deadline_ns) return -EINVAL;
  if (real && sleepacc_seconds_to_ns(s, &v) < 0)
    return sleepacc__broken(SLEEPACC__R_SECONDS_FINITE, NULL, message);
  if (v < 0) return sleepacc__broken(SLEEPACC__R_DURATION_NEG, NULL, message);
  /* INT64_MAX: the conversion saturated (no whole or real seconds are exactly that many ns) */
  if (v == INT64_MAX || __builtin_add_overflow(now_ns, v, &end))
    return sleepacc__broken(SLEEPACC__R_SLEEP_LONG, NULL, message);
  *deadline_ns = end;
  return 0;
}

int sleepacc_deadline_check(int64_t deadline_ns, const char **message) {
  int id = deadline_ns < 0 ? SLEEPACC__R_S_DEADLINE_NEG
           : deadline_ns - sleepacc_now_ns() > SLEEPACC_MAX_DURATION_NS ? SLEEPACC__R_S_DEADLINE_DAY
                                                                       : SLEEPACC__R_OK;
  return id == SLEEPACC__R_OK ? 0 : sleepacc__broken(id, NULL, message);
}

int sleepacc_name_check(const char *name, size_t len) {
  return name && memchr(name, '\0', len) == NULL ? 0 : -EINVAL;
}

void sleepacc_config_default(sleepacc_config *c) {
  if (!c) return;
  memset(c, 0, sizeof *c);
  c->method = NULL;
  c->mode = SLEEPACC_MODE_RELATIVE;
  c->budget_ns = SLEEPACC_DEFAULT_BUDGET_NS;
  c->warmup = SLEEPACC_DEFAULT_WARMUP;
  c->margin_ns = SLEEPACC_DEFAULT_MARGIN_NS;
  c->chunk_ns = SLEEPACC_CHUNK_NS;
  c->keep_samples = 1;
  sleepacc_env_default(&c->env);
}

/* 1 when policy is FIFO or RR. */
static int sleepacc__rt_policy(int policy) {
  return policy == SLEEPACC_POLICY_FIFO || policy == SLEEPACC_POLICY_RR;
}

/* 1 when the calling thread will run under FIFO/RR for this env. */
static int sleepacc__runs_rt(const sleepacc_env *env) {
  int p;
  if (sleepacc__rt_policy(env->policy)) return 1;
  if (env->policy != SLEEPACC_POLICY_KEEP) return 0;
  p = sched_getscheduler(0);
  if (p < 0) return 0;
#ifdef SCHED_RESET_ON_FORK
  p &= ~SCHED_RESET_ON_FORK;
#endif
  return p == SCHED_FIFO || p == SCHED_RR;
}

/* The first rule c breaks, or SLEEPACC__R_OK. */
static int sleepacc__config_rule(const sleepacc_config *c) {
  const sleepacc_method *m = c->method;
  int64_t d = c->duration_ns, now;
  int id;
  if (!m || !m->wait) return SLEEPACC__R_METHOD;
  if (c->mode != SLEEPACC_MODE_RELATIVE && c->mode != SLEEPACC_MODE_PERIODIC)
    return SLEEPACC__R_MODE;
  /* a floor ignores the request: no deadline to be late for (the sweep's rule, sweep.c) */
  if (c->mode == SLEEPACC_MODE_PERIODIC && m->family == SLEEPACC_FAMILY_BASELINE)
    return SLEEPACC__R_FLOOR_PERIODIC;
  id = sleepacc__duration_rule(d, SLEEPACC__R_DURATION_NEG, SLEEPACC__R_DURATION_DAY);
  if (id != SLEEPACC__R_OK) return id;
  if (c->mode == SLEEPACC_MODE_PERIODIC && d == 0) return SLEEPACC__R_PERIOD_ZERO;
  if (c->n < 0) return SLEEPACC__R_N_NEG;
  id = sleepacc__duration_rule(c->budget_ns, SLEEPACC__R_BUDGET_NEG, SLEEPACC__R_BUDGET_DAY);
  if (id != SLEEPACC__R_OK) return id;
  if (c->n == 0 && c->budget_ns == 0) return SLEEPACC__R_NO_STOP;
  if (c->warmup < 0) return SLEEPACC__R_WARMUP;
  if (c->n > INT64_MAX - c->warmup) /* the larger of the two is to blame */
    return c->warmup > c->n ? SLEEPACC__R_WARMUP_OVERFLOW : SLEEPACC__R_N_OVERFLOW;
  id = sleepacc__duration_rule(c->margin_ns, SLEEPACC__R_MARGIN_NEG, SLEEPACC__R_MARGIN_DAY);
  if (id != SLEEPACC__R_OK) return id;
  if (c->chunk_ns < 0 || c->chunk_ns > SLEEPACC_MAX_DURATION_NS) return SLEEPACC__R_CHUNK;
  if (c->keep_samples != 0 && c->keep_samples != 1) return SLEEPACC__R_KEEP;
  if (c->keep_samples && c->budget_ns == 0 && c->n > SLEEPACC_MAX_SAMPLES)
    return SLEEPACC__R_N_BUFFER;
  if (c->n == 0 && c->budget_ns > 0 && d > c->budget_ns) return SLEEPACC__R_SAMPLE_OVER_BUDGET;
  /* deadline arithmetic must stay inside int64 (budget <= one day above) */
  now = sleepacc_now_ns();
  if (c->budget_ns > INT64_MAX - now - 2 * SLEEPACC_MAX_DURATION_NS)
    return SLEEPACC__R_BUDGET_OVERFLOW;
  if (c->mode == SLEEPACC_MODE_PERIODIC && c->budget_ns == 0 &&
      c->n + c->warmup > (INT64_MAX - now) / d - 2)
    return SLEEPACC__R_PERIODIC_OVERFLOW;
  if (sleepacc__env_explain(&c->env, NULL, NULL) < 0) return SLEEPACC__R_ENV;
  /* Real-time spinning stalls a CPU: a spinning run under FIFO/RR needs a budget. */
  if (m->family != SLEEPACC_FAMILY_KERNEL && m->family != SLEEPACC_FAMILY_BASELINE &&
      c->budget_ns == 0 && sleepacc__runs_rt(&c->env))
    return SLEEPACC__R_RT_SPIN;
  if (!sleepacc_method_available(m)) return SLEEPACC__R_UNAVAILABLE;
  return SLEEPACC__R_OK;
}

int sleepacc_config_explain(const sleepacc_config *c, const char **field, const char **message) {
  int id;
  if (!c) return sleepacc__broken(SLEEPACC__R_METHOD, field, message);
  id = sleepacc__config_rule(c);
  if (id == SLEEPACC__R_ENV) return sleepacc__env_explain(&c->env, field, message);
  return id == SLEEPACC__R_OK ? 0 : sleepacc__broken(id, field, message);
}

int sleepacc_config_check(const sleepacc_config *c, const char **bad_field) {
  return sleepacc_config_explain(c, bad_field, NULL);
}

void sleepacc_sleeper_config_default(sleepacc_sleeper_config *c) {
  if (!c) return;
  memset(c, 0, sizeof *c);
  c->method = "auto";
  c->quantile = 0.99;
  c->margin_ns = -1;
  c->dma_latency_us = -1;
  c->missed = "skip";
}

/* The first rule a sleeper (pacer) configuration breaks, or SLEEPACC__R_OK. */
static int sleepacc__sleeper_rule(const sleepacc_sleeper_config *c, int pacer) {
  const sleepacc_method *k = NULL;
  int st = c->method ? sleepacc_strategy_from_name(c->method, &k) : -EINVAL;
  if (st == -ENOTSUP) return SLEEPACC__R_S_NOT_KERNEL;
  if (st < 0) return SLEEPACC__R_S_METHOD;
  if (k && !sleepacc_method_available(k)) return SLEEPACC__R_UNAVAILABLE;
  if (!(c->quantile > 0.0 && c->quantile < 1.0)) return SLEEPACC__R_S_QUANTILE; /* NaN too */
  if (c->margin_ns < -1 || c->margin_ns > SLEEPACC_MAX_DURATION_NS) return SLEEPACC__R_S_MARGIN;
  if (c->handoff_ns < 0 || c->handoff_ns > SLEEPACC_MAX_HANDOFF_NS) return SLEEPACC__R_S_HANDOFF;
  if (c->dma_latency_us < -1 || c->dma_latency_us > SLEEPACC_MAX_DMA_LATENCY_US)
    return SLEEPACC__R_S_DMA;
  if (c->rt_priority < 0 || c->rt_priority > 99) return SLEEPACC__R_S_RT_PRIORITY;
  if (c->slice_ns != 0 && (c->slice_ns < SLEEPACC_MIN_SLICE_NS || c->slice_ns > SLEEPACC_MAX_SLICE_NS))
    return SLEEPACC__R_S_SLICE;
  if (!pacer) return SLEEPACC__R_OK;
  if (c->period_ns <= 0 || c->period_ns > SLEEPACC_MAX_DURATION_NS) return SLEEPACC__R_S_PERIOD;
  if (sleepacc_missed_from_name(c->missed) < 0) return SLEEPACC__R_S_MISSED;
  return SLEEPACC__R_OK;
}

int sleepacc_sleeper_config_explain(const sleepacc_sleeper_config *c, int pacer,
                                    const char **field, const char **message) {
  int id;
  if (!c) return sleepacc__broken(SLEEPACC__R_S_METHOD, field, message);
  id = sleepacc__sleeper_rule(c, pacer);
  return id == SLEEPACC__R_OK ? 0 : sleepacc__broken(id, field, message);
}

int64_t sleepacc_config_capacity(const sleepacc_config *c) {
  int64_t per, cap;
  if (!c || !c->keep_samples) return 0;
  if (c->budget_ns == 0) return c->n;
  per = c->duration_ns > SLEEPACC_SAMPLE_FLOOR_NS ? c->duration_ns : SLEEPACC_SAMPLE_FLOOR_NS;
  cap = (c->budget_ns + per - 1) / per + 1;
  if (c->n > 0 && c->n < cap) cap = c->n;
  return cap < SLEEPACC_MAX_SAMPLES ? cap : SLEEPACC_MAX_SAMPLES;
}

const int64_t sleepacc_default_durations_ns[SLEEPACC_DEFAULT_DURATION_COUNT] = {
    1LL,       10LL,       100LL,       1000LL,      10000LL,    100000LL,
    1000000LL, 10000000LL, 100000000LL, 200000000LL, 500000000LL};

/* ------------------------------------------------------------ field tables */

#define SLEEPACC__F(s, f, t) {#f, offsetof(s, f), (t), NULL, 0}
#define SLEEPACC__AS(s, name, f, t) {name, offsetof(s, f), (t), NULL, 0}
#define SLEEPACC__SUB(s, f, sub) {#f, offsetof(s, f), SLEEPACC_FIELD_NESTED, sub, 0}
#define SLEEPACC__END {NULL, 0, 0, NULL, 0}
#define I64 SLEEPACC_FIELD_INT64
#define DBL SLEEPACC_FIELD_DOUBLE
#define STR SLEEPACC_FIELD_STRING
#define BOOL SLEEPACC_FIELD_BOOL
#define OPT SLEEPACC_FIELD_OPT_INT64
#define INT SLEEPACC_FIELD_INT

static const sleepacc_field sleepacc__config_env_fields[] = {
    SLEEPACC__F(sleepacc_env, slack_ns, I64),
    SLEEPACC__F(sleepacc_env, policy, INT),
    SLEEPACC__F(sleepacc_env, priority, INT),
    SLEEPACC__F(sleepacc_env, cpu, INT),
    SLEEPACC__F(sleepacc_env, lock_memory, INT),
    SLEEPACC__F(sleepacc_env, dma_latency_us, INT),
    SLEEPACC__END,
};

const sleepacc_field sleepacc_config_fields[] = {
    SLEEPACC__F(sleepacc_config, method, SLEEPACC_FIELD_METHOD),
    SLEEPACC__F(sleepacc_config, mode, INT),
    SLEEPACC__F(sleepacc_config, duration_ns, I64),
    SLEEPACC__F(sleepacc_config, n, I64),
    SLEEPACC__F(sleepacc_config, budget_ns, I64),
    SLEEPACC__F(sleepacc_config, warmup, I64),
    SLEEPACC__F(sleepacc_config, margin_ns, I64),
    SLEEPACC__F(sleepacc_config, chunk_ns, I64),
    SLEEPACC__F(sleepacc_config, keep_samples, INT),
    SLEEPACC__SUB(sleepacc_config, env, sleepacc__config_env_fields),
    SLEEPACC__END,
};

static const sleepacc_field sleepacc__env_fields[] = {
    SLEEPACC__F(sleepacc_run_env, slack_ns, OPT),
    SLEEPACC__F(sleepacc_run_env, policy, STR),
    SLEEPACC__F(sleepacc_run_env, priority, OPT),
    SLEEPACC__F(sleepacc_run_env, cpu, OPT),
    SLEEPACC__F(sleepacc_run_env, lock_memory, BOOL),
    SLEEPACC__F(sleepacc_run_env, dma_latency_us, OPT),
    {"margin_ns", offsetof(sleepacc_run_env, margin_ns), OPT, NULL, SLEEPACC_FIELD_OMIT_NULL},
    SLEEPACC__END,
};

/* ctx_switches: a nested view of two flat fields (offsets from the result). */
static const sleepacc_field sleepacc__ctx_fields[] = {
    SLEEPACC__AS(sleepacc_result, "voluntary", ctx_voluntary, I64),
    SLEEPACC__AS(sleepacc_result, "involuntary", ctx_involuntary, I64),
    SLEEPACC__END,
};

/* The record's rows: each key a record read back (sleepacc_fields_read, Lua's
 * sa.save) must hold (REQUIRED; a null is left out, so the env's rows are not),
 * and every statistic and context switch but a LATER one (COMPLETE). */
#define SLEEPACC__R(f, t) {#f, offsetof(sleepacc_result, f), (t), NULL, SLEEPACC_FIELD_REQUIRED}
#define SLEEPACC__RSUB(name, off, sub) {name, off, SLEEPACC_FIELD_NESTED, sub, SLEEPACC_FIELD_REQUIRED}
#define SLEEPACC__RP(f, t, rule) {#f, offsetof(sleepacc_result, f), (t), NULL, SLEEPACC_FIELD_REQUIRED | (rule)}
const sleepacc_field sleepacc_result_fields[] = {
    SLEEPACC__RP(method, STR, SLEEPACC_FIELD_NAME), /* the point rules of a file's reader */
    SLEEPACC__RP(mode, STR, SLEEPACC_FIELD_MODE_NAME),
    SLEEPACC__RP(requested_ns, I64, SLEEPACC_FIELD_NONNEG),
    SLEEPACC__RP(n, I64, SLEEPACC_FIELD_NONNEG),
    {"stats", offsetof(sleepacc_result, stats), SLEEPACC_FIELD_NESTED, sleepacc_stats_fields,
     SLEEPACC_FIELD_REQUIRED | SLEEPACC_FIELD_COMPLETE},
    SLEEPACC__R(missed, I64),
    SLEEPACC__R(cpu_ns_per_call, DBL),
    SLEEPACC__R(cpu_percent, DBL),
    {"ctx_switches", 0, SLEEPACC_FIELD_NESTED, sleepacc__ctx_fields, SLEEPACC_FIELD_REQUIRED | SLEEPACC_FIELD_COMPLETE},
    SLEEPACC__R(wall_ns, I64),
    SLEEPACC__RSUB("env", offsetof(sleepacc_result, env), sleepacc__env_fields),
    SLEEPACC__END,
};
#undef SLEEPACC__R
#undef SLEEPACC__RP
#undef SLEEPACC__RSUB

const sleepacc_field sleepacc_sleeper_config_fields[] = {
    SLEEPACC__F(sleepacc_sleeper_config, method, STR),
    SLEEPACC__F(sleepacc_sleeper_config, quantile, DBL),
    SLEEPACC__F(sleepacc_sleeper_config, margin_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_config, handoff_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_config, dma_latency_us, I64),
    SLEEPACC__F(sleepacc_sleeper_config, period_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_config, missed, STR),
    SLEEPACC__F(sleepacc_sleeper_config, rt_priority, I64),
    SLEEPACC__F(sleepacc_sleeper_config, slice_ns, I64),
    SLEEPACC__END,
};

/* margins: the pairs' two columns (SLEEPACC_FIELD_PAIRS, Lua's names). */
static const sleepacc_field sleepacc__margin_fields[] = {
    SLEEPACC__AS(sleepacc_pair, "band_lo_ns", key, I64),
    SLEEPACC__AS(sleepacc_pair, "margin_ns", value, I64),
    SLEEPACC__END,
};

const sleepacc_field sleepacc_sleeper_stats_fields[] = {
    SLEEPACC__F(sleepacc_sleeper_stats, count, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, misses, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, spin_ns, I64),
    SLEEPACC__SUB(sleepacc_sleeper_stats, lateness, sleepacc_stats_fields),
    SLEEPACC__F(sleepacc_sleeper_stats, strategy, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, kernel, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, kernel_skipped, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, kernel_skipped_err, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, quantile, DBL),
    SLEEPACC__F(sleepacc_sleeper_stats, margin_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, handoff_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, clock_cost_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, comp_ratio, DBL),
    SLEEPACC__F(sleepacc_sleeper_stats, kernel_waits, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, rt_fallbacks, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, preempted_spins, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, contended, BOOL),
    SLEEPACC__F(sleepacc_sleeper_stats, last_wake_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, dma_latency_us, OPT),
    {"margins", offsetof(sleepacc_sleeper_stats, margins), SLEEPACC_FIELD_PAIRS,
     sleepacc__margin_fields, 0},
    SLEEPACC__F(sleepacc_sleeper_stats, decision, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, reason, STR),
    SLEEPACC__F(sleepacc_sleeper_stats, contention, DBL),
    SLEEPACC__F(sleepacc_sleeper_stats, cpu_pressure, DBL),
    SLEEPACC__F(sleepacc_sleeper_stats, wake_delay_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, contended_episodes, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, slice_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, rt_priority, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, rt_spins, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, rt_denied, BOOL),
    SLEEPACC__F(sleepacc_sleeper_stats, slice_held_ns, I64),
    SLEEPACC__F(sleepacc_sleeper_stats, slice_denied, BOOL),
    SLEEPACC__END,
};

/* timer_err: irtt's DurationStats, a nested view of four flat fields. */
static const sleepacc_field sleepacc__timer_err_fields[] = {
    SLEEPACC__AS(sleepacc_pacer_stats, "mean", timer_err_mean, DBL),
    SLEEPACC__AS(sleepacc_pacer_stats, "min", timer_err_min, DBL),
    SLEEPACC__AS(sleepacc_pacer_stats, "max", timer_err_max, DBL),
    SLEEPACC__AS(sleepacc_pacer_stats, "stddev", timer_err_stddev, DBL),
    SLEEPACC__END,
};

const sleepacc_field sleepacc_pacer_stats_fields[] = {
    SLEEPACC__F(sleepacc_pacer_stats, count, I64),
    SLEEPACC__F(sleepacc_pacer_stats, misses, I64),
    SLEEPACC__SUB(sleepacc_pacer_stats, lateness, sleepacc_stats_fields),
    SLEEPACC__F(sleepacc_pacer_stats, timer_misses, I64),
    SLEEPACC__F(sleepacc_pacer_stats, missed, I64),
    SLEEPACC__F(sleepacc_pacer_stats, timer_err_percent, DBL),
    {"timer_err", 0, SLEEPACC_FIELD_NESTED, sleepacc__timer_err_fields, 0},
    SLEEPACC__F(sleepacc_pacer_stats, period_ns, I64),
    SLEEPACC__F(sleepacc_pacer_stats, missed_policy, STR),
    SLEEPACC__F(sleepacc_pacer_stats, start_ns, I64),
    SLEEPACC__F(sleepacc_pacer_stats, last_deadline_ns, I64),
    SLEEPACC__SUB(sleepacc_pacer_stats, sleeper, sleepacc_sleeper_stats_fields),
    SLEEPACC__END,
};
