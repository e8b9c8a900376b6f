/* test_calls_options.c -- calls with options: the rows
 * whose argument is a whole options table (plan, sweep_plan) read it
 * through the binding's getter, a refusal comes back as the answer's fault
 * (the binding's one fault mapper words it), seconds_ns converts its
 * argument by its SECONDS row, and stats reads values a binding lends. */
#include "check.h"
#include "sleepacc_binding.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

/* A fake options table: keys in order, each one value or a list of values
 * (a LIST value's .i is its length, its elements are items). */
typedef struct opt {
  const char *key;
  sleepacc_value v;
  const sleepacc_value *items;
} opt;
typedef struct fake {
  const opt *opts; /* ends with a NULL key */
  void *room;      /* what the core asked for (freed by the test) */
} fake;

static int fake_get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  const fake *t = (const fake *)ctx;
  size_t k = 0;
  memset(out, 0, sizeof *out);
  if (name == NULL) { /* the key number index */
    while (t->opts[k].key && (int64_t)k < index) k++;
    if (!t->opts[k].key) return 0;
    out->kind = SLEEPACC_VALUE_TEXT, out->s = t->opts[k].key;
    return 1;
  }
  for (; t->opts[k].key; k++) {
    if (strcmp(t->opts[k].key, name) != 0) continue;
    if (index < 0) *out = t->opts[k].v;
    else if (index < t->opts[k].v.i) *out = t->opts[k].items[index];
    else return 0;
    return 1;
  }
  return 0;
}

static void *fake_room(void *ctx, size_t bytes) {
  return ((fake *)ctx)->room = malloc(bytes);
}

static sleepacc_value text(const char *s) {
  sleepacc_value v = {SLEEPACC_VALUE_TEXT, (int64_t)strlen(s), 0.0, s, NULL, NULL, 0};
  return v;
}
static sleepacc_value real(double d) {
  sleepacc_value v = {SLEEPACC_VALUE_REAL, 0, d, NULL, NULL, NULL, 0};
  return v;
}
static sleepacc_value list(int64_t n) {
  sleepacc_value v = {SLEEPACC_VALUE_LIST, n, 0.0, NULL, NULL, NULL, 0};
  return v;
}

/* The Python row named name. */
static const sleepacc_call *py_row(const char *name) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++)
    if (c->python && strcmp(c->python, name) == 0) return c;
  return NULL;
}

/* Call c over the table opts (a->i: flag) into a fresh buffer, freed by
 * the caller with the room; *rc its result. */
static void *run(const sleepacc_call *c, fake *t, int flag, sleepacc_answer *out, int *rc) {
  sleepacc_getter g = {fake_get, fake_room, t, NULL, 0, NULL, NULL}; /* a flat table: no enter */
  sleepacc_call_args a;
  void *buf = malloc(c->size);
  memset(&a, 0, sizeof a);
  memset(out, 0xa5, sizeof *out); /* sleepacc_call_run resets the fault */
  a.options = &g, a.i = flag;
  *rc = sleepacc_call_run(c, &a, buf, out);
  return buf;
}

static void test_rows(void) {
  const char *names[] = {"plan", "sweep_plan", "seconds_ns"};
  for (size_t k = 0; k < 3; k++) {
    const sleepacc_call *c = py_row(names[k]);
    CHECKF(c != NULL && c->lua == NULL && c->required == 1, "%s", names[k]);
    /* the getter runs in the binding's interpreter: never with its lock released */
    CHECKF(c && !(c->flags & SLEEPACC_CALL_BLOCKS), "%s", names[k]);
  }
  for (size_t k = 0; k < 2; k++) { /* a table's argument is the getter slot */
    const sleepacc_option *o = py_row(names[k])->args;
    CHECK(o[0].kind == SLEEPACC_OPT_TABLE && o[0].offset == offsetof(sleepacc_call_args, options));
  }
  CHECK(py_row("plan")->args[1].kind == SLEEPACC_OPT_BOOL && py_row("plan")->args[2].name == NULL);
  CHECK(py_row("sweep_plan")->args[1].name == NULL);
  CHECK(py_row("plan")->fields == sleepacc_config_fields);
}

static void test_plan_reads_the_table(void) {
  const opt opts[] = {{"method", text("nanosleep"), NULL}, {"duration", real(1e-3), NULL}, {NULL}};
  const opt budget[] = {{"method", text("nanosleep"), NULL}, {"duration", real(0.5), NULL},
                        {"budget", real(0.2), NULL}, {NULL}};
  fake t = {opts, NULL};
  sleepacc_answer out;
  sleepacc_config *c;
  int rc;
  c = (sleepacc_config *)run(py_row("plan"), &t, 0, &out, &rc);
  CHECK(rc == 0 && out.fault.kind == SLEEPACC_FAULT_NONE && out.base == c);
  CHECK(c->method == sleepacc_method_find("nanosleep") && c->duration_ns == 1000000);
  CHECK(out.fields == sleepacc_config_fields);
  free(c);
  /* sweep_point: a sweep's point still takes its one sample */
  t.opts = budget;
  c = (sleepacc_config *)run(py_row("plan"), &t, 1, &out, &rc);
  CHECK(rc == 0 && c->n == SLEEPACC_MAX_SAMPLES && c->budget_ns == 200000000);
  free(c);
  /* not a point: one run of 0.5 s does not fit its 0.2 s budget */
  c = (sleepacc_config *)run(py_row("plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_RULE && strcmp(out.fault.option, "duration") == 0);
  free(c);
}

static void test_plan_refusals_are_the_faults(void) {
  const opt long_run[] = {{"method", text("nanosleep"), NULL}, {"duration", real(2.0), NULL}, {NULL}};
  const opt no_method[] = {{"duration", real(1e-3), NULL}, {NULL}};
  const opt colour[] = {{"method", text("nanosleep"), NULL}, {"duration", real(0), NULL},
                        {"colour", real(1), NULL}, {NULL}};
  fake t = {long_run, NULL};
  sleepacc_call_args none;
  sleepacc_answer out;
  void *buf;
  int rc;
  buf = run(py_row("plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_RULE && strcmp(out.fault.option, "duration") == 0);
  CHECKF(strstr(out.fault.words, "budget") != NULL, "%s", out.fault.words);
  free(buf);
  t.opts = no_method; /* required: a TYPE fault naming it */
  buf = run(py_row("plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_TYPE && strcmp(out.fault.option, "method") == 0);
  CHECK(out.fault.takes == SLEEPACC_OPT_METHOD);
  free(buf);
  t.opts = colour;
  buf = run(py_row("plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_KEY && strcmp(out.fault.option, "colour") == 0);
  free(buf);
  /* no table given (a binding's bug): -EFAULT, no fault to word */
  memset(&none, 0, sizeof none);
  buf = malloc(py_row("plan")->size);
  CHECK(sleepacc_call_run(py_row("plan"), &none, buf, &out) == -EFAULT);
  CHECK(out.fault.kind == SLEEPACC_FAULT_NONE);
  free(buf);
  buf = malloc(py_row("sweep_plan")->size);
  CHECK(sleepacc_call_run(py_row("sweep_plan"), NULL, buf, &out) == -EFAULT);
  free(buf);
}

/* sweep_plan's answer: one list, each point by sleepacc_point_fields. */
static void test_sweep_plan_lists_the_points(void) {
  const sleepacc_value names[] = {text("nanosleep"), text("spin")}, ds[] = {real(1e-3), real(2e-3)};
  const opt opts[] = {{"methods", list(2), names}, {"durations", list(2), ds}, {NULL}};
  const sleepacc_value bad[] = {text("nanosleep"), text("nope")};
  const opt nope[] = {{"methods", list(2), bad}, {NULL}};
  const opt empty[] = {{"methods", list(0), NULL}, {NULL}};
  const opt run_option[] = {{"n", real(1), NULL}, {NULL}}; /* a plan takes methods, durations, mode */
  fake t = {opts, NULL};
  sleepacc_answer out;
  sleepacc_value v, e, f;
  const sleepacc_list *l;
  void *buf;
  int rc;
  buf = run(py_row("sweep_plan"), &t, 0, &out, &rc);
  CHECK(rc == 0 && py_row("sweep_plan")->shape == SLEEPACC_CALL_VALUE && t.room != NULL);
  sleepacc_field_get(&out.fields[0], out.base, &v);
  CHECK(v.kind == SLEEPACC_VALUE_ITEMS && strcmp(out.fields[0].name, "points") == 0);
  l = (const sleepacc_list *)v.base;
  CHECK(l->n == 4 && l->stride == sizeof(sleepacc_point));
  for (size_t i = 0; i < l->n; i++) {
    sleepacc_field_get(&v.sub[0], (const char *)l->at + i * l->stride, &e);
    CHECK(e.kind == SLEEPACC_VALUE_NESTED && e.sub == sleepacc_point_fields);
    sleepacc_field_get(&e.sub[0], e.base, &f); /* method, by name */
    CHECKF(f.kind == SLEEPACC_VALUE_TEXT && strcmp(f.s, i < 2 ? "nanosleep" : "spin") == 0, "%zu", i);
    sleepacc_field_get(&e.sub[1], e.base, &f); /* duration_ns */
    CHECKF(f.kind == SLEEPACC_VALUE_INT && f.i == (i % 2 ? 2000000 : 1000000), "%zu", i);
  }
  free(buf), free(t.room), t.room = NULL;
  t.opts = nope; /* an element named by its index */
  buf = run(py_row("sweep_plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_RULE && strcmp(out.fault.option, "methods") == 0);
  CHECK(out.fault.index == 1);
  free(buf), free(t.room), t.room = NULL;
  t.opts = empty; /* the plan's rule */
  buf = run(py_row("sweep_plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_RULE && strcmp(out.fault.option, "methods") == 0);
  free(buf), free(t.room), t.room = NULL;
  t.opts = run_option;
  buf = run(py_row("sweep_plan"), &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_KEY && strcmp(out.fault.option, "n") == 0);
  free(buf), free(t.room);
}

/* seconds_ns: its argument by its SECONDS row, refusals named "seconds". */
static void test_seconds_ns(void) {
  const sleepacc_call *c = py_row("seconds_ns");
  sleepacc_value half = real(0.5), negative = real(-1), day = real(86400);
  sleepacc_call_args a;
  sleepacc_answer out;
  sleepacc_fault f;
  int64_t ns = 0;
  memset(&a, 0, sizeof a);
  CHECK(c->args[0].kind == SLEEPACC_OPT_SECONDS && strcmp(c->args[0].name, "seconds") == 0);
  CHECK(c->args == sleepacc_seconds_option); /* the duration rule's row (a sleep's: sleepacc_sleep_option) */
  CHECK(sleepacc_value_read(&c->args[0], NULL, &a, &half, &f) == 0 && a.i64 == 500000000);
  CHECK(sleepacc_call_run(c, &a, &ns, &out) == 0 && ns == 500000000 && out.base == &ns);
  CHECK(sleepacc_value_read(&c->args[0], NULL, &a, &day, &f) == 0 && a.i64 == SLEEPACC_MAX_DURATION_NS);
  CHECK(sleepacc_value_read(&c->args[0], NULL, &a, &negative, &f) == -ERANGE);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && strcmp(f.option, "seconds") == 0);
}

/* stats: the values lent, its scratch asked for once by the row's room. */
static void test_stats_of_lent_values(void) {
  const sleepacc_call *c = py_row("stats");
  const int64_t values[] = {50, 10, 30, 20, 40};
  fake t = {NULL, NULL};
  sleepacc_call_args a;
  sleepacc_answer out;
  sleepacc_stats st;
  CHECK(c && c->lua == NULL && c->required == 2 && c->fields == sleepacc_stats_fields);
  CHECK(!(c->flags & SLEEPACC_CALL_BLOCKS)); /* its room is the interpreter's (PyMem) */
  CHECK(c->args[0].kind == SLEEPACC_OPT_VALUES && c->args[0].offset == offsetof(sleepacc_call_args, values));
  CHECK(c->args[1].kind == SLEEPACC_OPT_INT64 && c->args[1].offset == offsetof(sleepacc_call_args, i64));
  memset(&a, 0, sizeof a);
  a.values = values, a.count = 5, a.i64 = 25;
  CHECK(sleepacc_call_run(c, &a, &st, &out) == -ENOMEM); /* no room given */
  a.room = fake_room, a.ctx = &t;
  CHECK(sleepacc_call_run(c, &a, &st, &out) == 0 && t.room != NULL && out.base == &st);
  CHECK(st.n == 5 && st.min == 10 && st.max == 50 && st.median == 30 && st.undersleeps == 2);
  CHECK(values[0] == 50 && values[1] == 10); /* the values lent are left as they were */
  free(t.room), t.room = NULL;
  a.values = NULL, a.count = 0; /* none: the empty stats */
  CHECK(sleepacc_call_run(c, &a, &st, &out) == 0 && st.n == 0);
  free(t.room);
}

static sleepacc_value integer(int64_t i) {
  sleepacc_value v = {SLEEPACC_VALUE_INT, i, 0.0, NULL, NULL, NULL, 0};
  return v;
}

/* env_hold applies the thread's settings read from the table by the core's
 * rules (a refusal is the answer's fault, naming the option), env_release
 * puts back what the last hold found; with nothing held it does nothing. */
static void test_env_hold_and_release(void) {
  long slack0 = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0), want = slack0 == 7 ? 9 : 7;
  int policy0 = sched_getscheduler(0);
  const opt batch[] = {{"slack", integer(want), NULL}, {"policy", text("batch"), NULL}, {NULL}};
  const opt priority[] = {{"priority", integer(3), NULL}, {NULL}};
  const opt method[] = {{"method", text("nanosleep"), NULL}, {NULL}};
  const sleepacc_call *hold = py_row("env_hold"), *release = py_row("env_release");
  fake t = {batch, NULL};
  sleepacc_answer out;
  int rc, released = -1;
  void *buf;
  CHECK(hold && release && hold->lua == NULL && !(hold->flags & SLEEPACC_CALL_BLOCKS));
  CHECK(sleepacc_call_run(release, NULL, &released, &out) == 0 && released == 0); /* none held */
  buf = run(hold, &t, 0, &out, &rc);
  CHECKF(rc == 0, "env_hold: %d", rc);
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == want && sched_getscheduler(0) == SCHED_BATCH);
  CHECK(out.fields && strcmp(out.fields[0].name, "env") == 0);
  free(buf);
  CHECK(sleepacc_call_run(release, NULL, &released, &out) == 0 && released == 1);
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == slack0 && sched_getscheduler(0) == policy0);
  t.opts = priority; /* the environment's rule, nothing applied */
  buf = run(hold, &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_RULE && strcmp(out.fault.option, "priority") == 0);
  free(buf);
  t.opts = method; /* only the thread's settings are its options */
  buf = run(hold, &t, 0, &out, &rc);
  CHECK(rc < 0 && out.fault.kind == SLEEPACC_FAULT_KEY && strcmp(out.fault.option, "method") == 0);
  free(buf);
  CHECK(sleepacc_call_run(release, NULL, &released, &out) == 0 && released == 0);
  CHECK(prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0) == slack0 && sched_getscheduler(0) == policy0);
}

int main(void) {
  TEST(test_rows);
  TEST(test_plan_reads_the_table);
  TEST(test_plan_refusals_are_the_faults);
  TEST(test_sweep_plan_lists_the_points);
  TEST(test_seconds_ns);
  TEST(test_stats_of_lent_values);
  TEST(test_env_hold_and_release);
  return check_summary();
}
