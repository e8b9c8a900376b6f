/* test_option_set.c -- sleepacc_option_set (csrc/options.c): every option
 * kind set from a script's value by the core's rule, a wrong kind -EINVAL,
 * a broken rule -ERANGE with its words, and nothing set on an error; and
 * the reader of a whole options table built on it (sleepacc_config_read,
 * sleepacc_sweep_read, sleepacc_sleeper_read, sleepacc_value_read). */
#include "check.h"
#include "sleepacc_binding.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static sleepacc_value val(int kind, int64_t i, double d, const char *s) {
  sleepacc_value v;
  memset(&v, 0, sizeof v);
  v.kind = kind, v.i = i, v.d = d, v.s = s;
  return v;
}
#define INTV(i) val(SLEEPACC_VALUE_INT, (i), 0.0, NULL)
#define REALV(d) val(SLEEPACC_VALUE_REAL, 0, (d), NULL)
#define BOOLV(b) val(SLEEPACC_VALUE_BOOL, (b), 0.0, NULL)
#define TEXTV(s) val(SLEEPACC_VALUE_TEXT, 0, 0.0, (s))
#define NULLV() val(SLEEPACC_VALUE_NULL, 0, 0.0, NULL)

static const sleepacc_option *opt(const char *name) {
  const sleepacc_option *o = sleepacc_option_find(sleepacc_options, name);
  CHECK(o != NULL);
  return o;
}

/* set name from v into c: the return code, msg filled */
static int set(sleepacc_config *c, const char *name, sleepacc_value v, char *msg) {
  return sleepacc_option_set(opt(name), c, &v, msg, SLEEPACC_OPTION_MESSAGE_MAX);
}

static void test_seconds_and_budget(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  sleepacc_config_default(&c);
  CHECK(set(&c, "duration", REALV(1e-3), msg) == 0 && c.duration_ns == 1000000);
  CHECK(set(&c, "duration", INTV(2), msg) == 0 && c.duration_ns == 2000000000LL);
  CHECK(set(&c, "duration", REALV(-1e-9), msg) == -ERANGE && !strcmp(msg, "must be non-negative"));
  CHECK(set(&c, "duration", REALV(NAN), msg) == -ERANGE && !strcmp(msg, "must be finite"));
  CHECK(set(&c, "duration", INTV(86401), msg) == -ERANGE && strstr(msg, "one day"));
  CHECK(c.duration_ns == 2000000000LL); /* untouched by the refusals */
  CHECK(set(&c, "duration", BOOLV(1), msg) == -EINVAL);
  CHECK(set(&c, "duration", TEXTV("1"), msg) == -EINVAL);
  CHECK(set(&c, "duration", NULLV(), msg) == -EINVAL);
  CHECK(set(&c, "margin", REALV(5e-5), msg) == 0 && c.margin_ns == 50000);
  /* budget: > 0, or none (NULL / false): 0 */
  CHECK(set(&c, "budget", REALV(0.2), msg) == 0 && c.budget_ns == 200000000);
  CHECK(set(&c, "budget", INTV(0), msg) == -ERANGE && strstr(msg, "must be positive"));
  CHECK(set(&c, "budget", REALV(1e-12), msg) == -ERANGE && strstr(msg, "must be positive"));
  /* negative: the same rule as 0 (it said "must be non-negative", which 0 is) */
  CHECK(set(&c, "budget", INTV(-1), msg) == -ERANGE && strstr(msg, "must be positive"));
  CHECK(set(&c, "budget", REALV(-0.5), msg) == -ERANGE && strstr(msg, "must be positive"));
  CHECK(c.budget_ns == 200000000);
  CHECK(set(&c, "budget", NULLV(), msg) == 0 && c.budget_ns == 0);
  c.budget_ns = 5;
  CHECK(set(&c, "budget", BOOLV(0), msg) == 0 && c.budget_ns == 0);
  CHECK(set(&c, "budget", BOOLV(1), msg) == -EINVAL);
}

static void test_integers_and_bools(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  sleepacc_config_default(&c);
  CHECK(set(&c, "n", INTV(10), msg) == 0 && c.n == 10);
  CHECK(set(&c, "n", INTV(0), msg) == -ERANGE && !strcmp(msg, "must be >= 1") && c.n == 10);
  CHECK(set(&c, "n", REALV(1.5), msg) == -EINVAL);
  CHECK(set(&c, "n", BOOLV(1), msg) == -EINVAL);
  CHECK(set(&c, "slack", INTV(-1), msg) == -ERANGE && !strcmp(msg, "must be >= 0"));
  CHECK(set(&c, "slack", INTV(1), msg) == 0 && c.env.slack_ns == 1);
  CHECK(set(&c, "cpu", INTV(1), msg) == 0 && c.env.cpu == 1);
  CHECK(set(&c, "cpu", INTV((int64_t)INT_MAX + 1), msg) == -ERANGE && !strcmp(msg, "must be <= 2147483647"));
  CHECK(c.env.cpu == 1);
  CHECK(set(&c, "keep_samples", BOOLV(0), msg) == 0 && c.keep_samples == 0);
  CHECK(set(&c, "keep_samples", BOOLV(7), msg) == 0 && c.keep_samples == 1);
  CHECK(set(&c, "keep_samples", INTV(1), msg) == -EINVAL);
  CHECK(set(&c, "lock_memory", NULLV(), msg) == -EINVAL);
}

static void test_names(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  const sleepacc_option *q;
  sleepacc_sleeper_config sc;
  sleepacc_value v;
  sleepacc_config_default(&c);
  CHECK(set(&c, "mode", TEXTV("periodic"), msg) == 0 && c.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&c, "mode", TEXTV("sideways"), msg) == -ERANGE);
  CHECK(!strcmp(msg, "must be 'relative' or 'periodic'") && c.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&c, "mode", INTV(1), msg) == -EINVAL);
  CHECK(set(&c, "policy", TEXTV("fifo"), msg) == 0 && c.env.policy == SLEEPACC_POLICY_FIFO);
  CHECK(set(&c, "policy", TEXTV("FIFO"), msg) == -ERANGE);
  CHECK(!strcmp(msg, "must be one of 'other', 'batch', 'idle', 'fifo', 'rr'"));
  CHECK(set(&c, "method", TEXTV("nanosleep"), msg) == 0 && c.method == sleepacc_method_find("nanosleep"));
  CHECK(set(&c, "method", TEXTV("nope"), msg) == -ERANGE && c.method == sleepacc_method_find("nanosleep"));
  CHECK(!strncmp(msg, "must be an available method (", 29) && strstr(msg, "nanosleep"));
  CHECK(msg[strlen(msg) - 1] == ')');
  CHECK(set(&c, "method", NULLV(), msg) == -EINVAL);
  /* a sleeper's options: NAME keeps the pointer, NUMBER takes both kinds */
  sleepacc_sleeper_config_default(&sc);
  q = sleepacc_option_find(sleepacc_sleeper_options, "missed");
  v = TEXTV("skip");
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.missed == v.s);
  q = sleepacc_option_find(sleepacc_sleeper_options, "quantile");
  v = INTV(1);
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.quantile == 1.0);
  v = REALV(0.5);
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.quantile == 0.5);
  v = TEXTV("0.5");
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == -EINVAL && sc.quantile == 0.5);
  /* a period (lo 1): > 0, one rule for 0, a negative value and below 1 ns */
  q = sleepacc_option_find(sleepacc_sleeper_options, "period");
  v = REALV(-0.5);
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == -ERANGE && !strcmp(msg, "must be positive"));
  v = INTV(0);
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == -ERANGE && !strcmp(msg, "must be positive"));
  v = REALV(1e-12);
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == -ERANGE && !strcmp(msg, "must be positive"));
  v = REALV(1e-3);
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.period_ns == 1000000);
  /* a short message buffer is cut, never overrun; NULL arguments */
  CHECK(sleepacc_option_set(opt("method"), &c, &(sleepacc_value){SLEEPACC_VALUE_TEXT, 0, 0, "x", 0, 0, 0},
                            msg, 8) == -ERANGE && strlen(msg) == 7);
  CHECK(sleepacc_option_set(opt("n"), &c, NULL, msg, sizeof msg) == -EFAULT);
  CHECK(sleepacc_option_set(NULL, &c, &v, NULL, 0) == -EFAULT);
  CHECK(sleepacc_option_set(opt("n"), &c, &(sleepacc_value){SLEEPACC_VALUE_INT, 0, 0, 0, 0, 0, 0}, NULL, 0)
        == -ERANGE);
}

/* --- The options reader: a whole table read through one
 * getter (sleepacc_getter), the required options, the keys, a sweep's lists
 * with their element rules and its plan, a sleeper's and a deadline's
 * rules, each refusal one fault (sleepacc_fault) naming the option, its
 * element and its kind. --- */

/* A fake table: name -> one value, or a list of values. */
typedef struct entry {
  const char *name;
  int arg;              /* 1: one of the call's arguments, not a key */
  sleepacc_value v;     /* the value; LIST: its elements are list[] */
  sleepacc_value list[4];
} entry;
typedef struct table {
  entry e[8];
  size_t n;
  void *room;           /* what the core asked for (freed by the test) */
  int rooms;            /* how many times */
} table;

#define LISTV(n) val(SLEEPACC_VALUE_LIST, (n), 0.0, NULL)

static void put(table *t, const char *name, sleepacc_value v) {
  t->e[t->n].name = name;
  t->e[t->n++].v = v;
}

static int get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  table *t = (table *)ctx;
  if (!name) { /* the keys: the index-th entry that is not an argument */
    for (size_t i = 0; i < t->n; i++)
      if (!t->e[i].arg && index-- == 0) return *out = t->e[i].name ? TEXTV(t->e[i].name) : INTV(1), 1;
    return 0;
  }
  for (size_t i = 0; i < t->n; i++) {
    if (!t->e[i].name || strcmp(t->e[i].name, name)) continue;
    if (index < 0) *out = t->e[i].v;
    else if (index < t->e[i].v.i) *out = t->e[i].list[index];
    else return 0;
    return out->kind == SLEEPACC_VALUE_NULL && index >= 0 ? 0 : 1;
  }
  return 0;
}

static void *room(void *ctx, size_t bytes) {
  table *t = (table *)ctx;
  t->rooms++;
  return t->room = malloc(bytes);
}

static sleepacc_getter getter(table *t) {
  sleepacc_getter g;
  memset(&g, 0, sizeof g);
  g.get = get, g.room = room, g.ctx = t;
  return g;
}

static void test_config_read(void) {
  table t = {0};
  sleepacc_getter g;
  sleepacc_config c;
  sleepacc_fault f;
  put(&t, "method", TEXTV("nanosleep"));
  put(&t, "duration", REALV(1e-3));
  put(&t, "policy", TEXTV("fifo"));
  g = getter(&t);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == 0 && f.kind == SLEEPACC_FAULT_NONE);
  CHECK(c.duration_ns == 1000000 && !strcmp(c.method->name, "nanosleep"));
  CHECK(c.env.priority == 1); /* completed: fifo without a priority */
  CHECK(c.budget_ns == SLEEPACC_DEFAULT_BUDGET_NS && c.warmup == SLEEPACC_DEFAULT_WARMUP);
  /* a wrong kind: TYPE, naming the option and what it takes */
  t.e[1].v = TEXTV("1ms");
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_TYPE);
  CHECK(!strcmp(f.option, "duration") && f.index == -1 && f.takes == SLEEPACC_OPT_SECONDS);
  /* a broken rule: RULE, the core's words, shown with the value */
  t.e[1].v = REALV(-1);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "duration") && f.show && !strcmp(f.words, "must be non-negative"));
  /* a rule of the whole config: named by its option */
  t.e[1].v = REALV(2.0);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) < 0 && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "duration") && f.show && strstr(f.words, "budget"));
  /* a required option absent: TYPE (its value is missing) */
  t.n = 0;
  put(&t, "duration", REALV(1e-3));
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_TYPE);
  CHECK(!strcmp(f.option, "method") && f.takes == SLEEPACC_OPT_METHOD);
  /* an unknown key: KEY, the known ones listed in the table's order */
  put(&t, "method", TEXTV("nanosleep"));
  put(&t, "durration", INTV(1));
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY);
  CHECK(!strcmp(f.option, "durration") && f.show && !strncmp(f.words, "method, duration, n, budget, ", 29));
  t.e[2].name = ""; /* a string, but no option's name */
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY && f.show);
  t.e[2].name = NULL; /* a key that is not a string */
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY && !f.show);
  /* a margin where the method has none (only the hybrid family spins one):
   * refused, not ignored; a sweep's point is exempt (its sweep was checked) */
  t.n = 2;
  put(&t, "margin", REALV(1e-4));
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "margin") && f.show && strstr(f.words, "only the hybrid family"));
  CHECK(sleepacc_config_read(&c, &g, 1, &f) == 0 && c.margin_ns == 100000);
  t.e[1].v = TEXTV("hybrid");
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == 0 && c.margin_ns == 100000);
  t.e[1].v = TEXTV("nanosleep");
  /* a sweep's point: n completed from the budget */
  t.n = 2;
  put(&t, "budget", REALV(0.2));
  CHECK(sleepacc_config_read(&c, &g, 1, &f) == 0 && c.n == SLEEPACC_MAX_SAMPLES);
}

static void test_take_and_own(void) {
  static const char *const take[] = {"method", "dma_latency", NULL};
  static const char *const own[] = {"colour", NULL};
  table t = {0};
  sleepacc_getter g = getter(&t);
  sleepacc_sleeper_config c;
  sleepacc_fault f;
  g.take = take, g.args = 1, g.own = own;
  put(&t, "method", TEXTV("spin"));
  t.e[0].arg = 1;
  put(&t, "colour", INTV(3)); /* the binding's own key: known, not read */
  CHECK(sleepacc_sleeper_read(&c, 0, &g, &f) == 0 && !strcmp(c.method, "spin"));
  /* an argument is not a key: a table's method is unknown */
  t.e[0].arg = 0;
  CHECK(sleepacc_sleeper_read(&c, 0, &g, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY);
  CHECK(!strcmp(f.option, "method") && !strcmp(f.words, "dma_latency, colour"));
  t.n = 0;
  put(&t, "quantile", REALV(0.5)); /* not taken: unknown */
  CHECK(sleepacc_sleeper_read(&c, 0, &g, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY);
  CHECK(!strcmp(f.option, "quantile") && !strcmp(f.words, "dma_latency, colour"));
  /* a rule of the sleeper's config: RULE, named by its option */
  t.n = 0;
  put(&t, "method", TEXTV("sideways"));
  t.e[0].arg = 1;
  CHECK(sleepacc_sleeper_read(&c, 0, &g, &f) < 0 && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "method") && f.show && f.words[0]);
  /* a pacer's period is required */
  t.n = 0;
  g.take = NULL, g.args = 0;
  CHECK(sleepacc_sleeper_read(&c, 1, &g, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_TYPE);
  CHECK(!strcmp(f.option, "period") && f.takes == SLEEPACC_OPT_SECONDS);
  put(&t, "period", REALV(0.01));
  t.e[0].arg = 0;
  CHECK(sleepacc_sleeper_read(&c, 1, &g, &f) == 0 && c.period_ns == 10000000);
}

static void test_sweep_read(void) {
  table t = {0};
  sleepacc_getter g = getter(&t);
  sleepacc_sweep_args s;
  sleepacc_fault f;
  int n;
  put(&t, "methods", LISTV(2));
  t.e[0].list[0] = TEXTV("nanosleep"), t.e[0].list[1] = TEXTV("clock");
  put(&t, "durations", LISTV(2));
  t.e[1].list[0] = REALV(1e-3), t.e[1].list[1] = INTV(0);
  put(&t, "n", INTV(3));
  n = sleepacc_sweep_read(&s, &g, 1, &f);
  CHECKF(n == 3, "%d %s", n, f.words); /* nanosleep at 1 ms and 0, clock (a floor) at 0 */
  CHECK(t.rooms == 1 && s.count == 3 && s.points[2].method == s.methods[1] && s.nd == 2);
  CHECK(s.config.n == 3 && s.config.budget_ns == SLEEPACC_SWEEP_BUDGET_NS && s.durations[0] == 1000000);
  free(t.room), t.room = NULL;
  /* an element of the wrong kind, or breaking its rule: named with its index */
  t.e[0].list[1] = INTV(7);
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_TYPE);
  CHECK(!strcmp(f.option, "methods") && f.index == 1 && f.takes == SLEEPACC_OPT_METHOD);
  free(t.room), t.room = NULL;
  t.e[0].list[1] = TEXTV("clock"), t.e[1].list[1] = REALV(-1);
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "durations") && f.index == 1 && f.show && !strcmp(f.words, "must be non-negative"));
  free(t.room), t.room = NULL;
  /* a list that is not a list: TYPE of the list kind */
  t.e[1].v = REALV(1e-3);
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_TYPE);
  CHECK(!strcmp(f.option, "durations") && f.index == -1 && f.takes == SLEEPACC_OPT_DURATIONS);
  /* the plan's rules: not shown (the words say it) */
  t.e[1].v = LISTV(0);
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "durations") && f.index == -1 && !f.show && !strcmp(f.words, "must not be empty"));
  free(t.room), t.room = NULL;
  t.e[1].v = LISTV(1), t.e[1].list[0] = REALV(1e-3);
  put(&t, "mode", TEXTV("periodic"));
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "methods") && f.index == 1 && !strncmp(f.words, "'clock' is a floor", 18));
  free(t.room), t.room = NULL;
  /* a point's run rule: the option of the field, shown */
  t.n = 2;
  put(&t, "budget", REALV(-1));
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -ERANGE && !strcmp(f.option, "budget"));
  free(t.room), t.room = NULL;
  /* a plan only: its options are the lists and mode */
  t.n = 2;
  put(&t, "mode", TEXTV("relative"));
  CHECK(sleepacc_sweep_read(&s, &g, 0, &f) == 2);
  free(t.room), t.room = NULL;
  /* a margin with no hybrid method in the sweep: the plan refuses it */
  put(&t, "margin", REALV(1e-4));
  CHECK(sleepacc_sweep_read(&s, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.option, "margin") && strstr(f.words, "only the hybrid family"));
  free(t.room), t.room = NULL;
  CHECK(sleepacc_sweep_read(&s, &g, 1, &f) == -EINVAL && !strcmp(f.option, "margin"));
  free(t.room), t.room = NULL;
  t.e[0].list[1] = TEXTV("hybrid");
  CHECK(sleepacc_sweep_read(&s, &g, 0, &f) == 2 && s.config.margin_ns == 100000);
  free(t.room), t.room = NULL;
  t.e[0].list[1] = TEXTV("clock"), t.n = 3;
  put(&t, "n", INTV(3));
  CHECK(sleepacc_sweep_read(&s, &g, 0, &f) == -EINVAL && f.kind == SLEEPACC_FAULT_KEY);
  CHECK(!strcmp(f.option, "n") && !strcmp(f.words, "methods, durations, mode, margin"));
  /* the defaults: every available method over the ladder */
  t.n = 0;
  CHECK(sleepacc_sweep_read(&s, &g, 0, &f) > SLEEPACC_DEFAULT_DURATION_COUNT && !s.methods && !s.durations);
  free(t.room), t.room = NULL;
}

static void test_value_read(void) {
  sleepacc_value v = INTV(-5);
  sleepacc_fault f;
  int64_t dl = 0;
  sleepacc_config c;
  CHECK(sleepacc_value_read(sleepacc_deadline_option, "monotonic_ns", &dl, &v, &f) == -ERANGE);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && !strcmp(f.option, "monotonic_ns") && f.show && f.words[0]);
  v = REALV(1.5);
  CHECK(sleepacc_value_read(sleepacc_deadline_option, NULL, &dl, &v, &f) == -EINVAL);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && !strcmp(f.option, "deadline_ns"));
  CHECK(f.takes == SLEEPACC_OPT_DEADLINE);
  v = INTV(sleepacc_now_ns() + 1000);
  CHECK(sleepacc_value_read(sleepacc_deadline_option, NULL, &dl, &v, &f) == 0 && dl == v.i);
  v = BOOLV(1);
  CHECK(sleepacc_value_read(sleepacc_option_find(sleepacc_options, "duration"), "seconds", &c, &v, &f) ==
        -EINVAL);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && !strcmp(f.option, "seconds"));
  CHECK(sleepacc_value_read(sleepacc_option_find(sleepacc_options, "duration"), "seconds", &c, NULL, &f) ==
        -EINVAL);
}

/* An integer beyond int64, as a binding reports it
 * (saturated, .overflow its sign), is refused by the bound on its side,
 * never taken as INT64_MAX/INT64_MIN. */
static sleepacc_value beyond(int sign) {
  sleepacc_value v = INTV(sign > 0 ? INT64_MAX : INT64_MIN);
  v.overflow = sign;
  return v;
}

/* The argument of the call row format_duration. */
static const sleepacc_option *format_duration_arg(void) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++)
    if (c->python && !strcmp(c->python, "format_duration")) return c->args;
  return NULL;
}

static void test_beyond_int64_is_refused(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  const sleepacc_option *ns = format_duration_arg();
  const sleepacc_option *q = sleepacc_option_find(sleepacc_sleeper_options, "quantile");
  const char *field = NULL, *why = NULL;
  table t = {0}, st = {0};
  sleepacc_getter g;
  sleepacc_call_args a = {.i64 = 5};
  sleepacc_config c;
  sleepacc_sleeper_config sc;
  sleepacc_value v;
  sleepacc_fault f;
  int64_t deadline = 7;
  /* a run's options: refused by the bound, after the rules that word it better */
  put(&t, "method", TEXTV("nanosleep"));
  put(&t, "duration", REALV(1e-3));
  put(&t, "warmup", beyond(1));
  g = getter(&t);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE && f.show);
  CHECK(!strcmp(f.option, "warmup") && !strcmp(f.words, "must be <= 9223372036854775807"));
  put(&t, "slack", beyond(1)); /* slack's own range words win for slack; warmup is still refused */
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && !strcmp(f.option, "warmup"));
  t.e[2].v = INTV(0);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -EINVAL && !strcmp(f.option, "slack"));
  CHECK(!strcmp(f.words, "must be 1 ns .. 1 s (or left as it is)"));
  t.e[3].v = beyond(-1);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && !strcmp(f.words, "must be >= 0"));
  t.e[3].v = INTV(1000);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == 0 && c.env.slack_ns == 1000);
  put(&t, "cpu", beyond(1));
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && !strcmp(f.words, "must be <= 2147483647"));
  /* a sleeper's: dma_latency's range words */
  put(&st, "dma_latency", beyond(1));
  g = getter(&st);
  CHECK(sleepacc_sleeper_read(&sc, 0, &g, &f) < 0 && !strcmp(f.option, "dma_latency"));
  CHECK(strstr(f.words, "0..2000000000 us") != NULL);
  /* a sweep's shared options */
  memset(&t, 0, sizeof t);
  put(&t, "methods", LISTV(1));
  t.e[0].list[0] = TEXTV("nanosleep");
  put(&t, "warmup", beyond(1));
  g = getter(&t);
  {
    sleepacc_sweep_args sw;
    CHECK(sleepacc_sweep_read(&sw, &g, 1, &f) == -ERANGE && !strcmp(f.option, "warmup"));
    CHECK(!strcmp(f.words, "must be <= 9223372036854775807"));
    free(t.room);
  }
  /* an argument whose least is INT64_MIN (format_duration's ns) */
  CHECK(ns && sleepacc_value_read(ns, NULL, &a, &(sleepacc_value){0}, &f) == -EINVAL);
  v = beyond(-1);
  CHECK(sleepacc_value_read(ns, NULL, &a, &v, &f) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE);
  CHECK(!strcmp(f.words, "must be >= -9223372036854775808") && !strcmp(f.option, "ns") && a.i64 == 5);
  v = beyond(1);
  CHECK(sleepacc_value_read(ns, NULL, &a, &v, &f) == -ERANGE && a.i64 == 5);
  CHECK(!strcmp(f.words, "must be <= 9223372036854775807") && f.show == 1);
  v = INTV(INT64_MIN);
  CHECK(sleepacc_value_read(ns, NULL, &a, &v, &f) == 0 && a.i64 == INT64_MIN);
  /* seconds and deadlines: their own rules' words, as for any too large value */
  CHECK(set(&c, "duration", beyond(1), msg) == -ERANGE && strstr(msg, "one day"));
  CHECK(set(&c, "duration", beyond(-1), msg) == -ERANGE && !strcmp(msg, "must be non-negative"));
  v = beyond(1);
  CHECK(sleepacc_value_read(sleepacc_deadline_option, NULL, &deadline, &v, &f) == -ERANGE && deadline == 7);
  /* a number: a too large quantile by the sleeper's rule */
  sleepacc_sleeper_config_default(&sc);
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0);
  CHECK(sleepacc_sleeper_config_explain(&sc, 0, &field, &why) < 0 && !strcmp(field, "quantile"));
  /* ... and through the reader, also when another rule breaks first (a number is not INT64) */
  memset(&st, 0, sizeof st);
  put(&st, "quantile", beyond(1));
  put(&st, "margin", REALV(-1));
  g = getter(&st);
  CHECK(sleepacc_sleeper_read(&sc, 0, &g, &f) < 0 && !strcmp(f.option, "margin"));
  st.e[1].v = REALV(1e-5);
  CHECK(sleepacc_sleeper_read(&sc, 0, &g, &f) < 0 && !strcmp(f.option, "quantile"));
  CHECK(strstr(f.words, "9223372036854775807") == NULL);
  /* a plain field (a record read back): "out of range" */
  {
    const sleepacc_field *row = &sleepacc_stats_fields[0];
    sleepacc_stats rec;
    const char *words = NULL;
    memset(&rec, 0, sizeof rec);
    CHECK(sleepacc_field_set(row, &rec, &v, &words) == -ERANGE && words && !strcmp(words, "out of range"));
    v = INTV(4);
    CHECK(sleepacc_field_set(row, &rec, &v, &words) == 0);
  }
}

/* A NUL byte in a text (given with its length) is the
 * core's rule, before any kind's; a field's too; the words for any text. */
static void test_nul_byte_is_refused(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  table t = {0};
  sleepacc_getter g;
  sleepacc_config c;
  sleepacc_fault f;
  sleepacc_value v = val(SLEEPACC_VALUE_TEXT, 9, 0.0, "nano\0sleep");
  const char *words = NULL;
  CHECK(sleepacc_text_words("ab", 2) == NULL && sleepacc_text_words("a\0b", 0) == NULL);
  CHECK(sleepacc_text_words(NULL, 3) == NULL);
  CHECK(!strcmp(sleepacc_text_words("a\0b", 3), "must not contain a NUL byte"));
  sleepacc_config_default(&c);
  CHECK(set(&c, "method", v, msg) == -ERANGE && !strcmp(msg, "must not contain a NUL byte"));
  CHECK(set(&c, "duration", v, msg) == -ERANGE && c.method == NULL); /* before the kind's rule */
  CHECK(set(&c, "method", val(SLEEPACC_VALUE_TEXT, 4, 0.0, "nano\0sleep"), msg) == -ERANGE);
  CHECK(set(&c, "method", val(SLEEPACC_VALUE_TEXT, 9, 0.0, "nanosleep"), msg) == 0 && c.method);
  /* through the reader: a RULE fault shown with the value */
  put(&t, "method", v);
  put(&t, "duration", REALV(1e-3));
  g = getter(&t);
  CHECK(sleepacc_config_read(&c, &g, 0, &f) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE && f.show);
  CHECK(!strcmp(f.option, "method") && !strcmp(f.words, "must not contain a NUL byte"));
  /* a field of a struct filled from a script's mapping */
  {
    const sleepacc_field *row = NULL;
    sleepacc_method_info info;
    for (const sleepacc_field *r = sleepacc_method_info_fields; r->name; r++)
      if (!strcmp(r->name, "family")) row = r;
    CHECK(row && sleepacc_field_set(row, &info, &v, &words) == -ERANGE);
    CHECK(words && !strcmp(words, "must not contain a NUL byte"));
  }
}

int main(void) {
  TEST(test_seconds_and_budget);
  TEST(test_integers_and_bools);
  TEST(test_names);
  TEST(test_config_read);
  TEST(test_take_and_own);
  TEST(test_sweep_read);
  TEST(test_value_read);
  TEST(test_beyond_int64_is_refused);
  TEST(test_nul_byte_is_refused);
  return check_summary();
}
