/* test_calls.c -- the bindings' queries as rows (csrc/calls.c):
 * every row of sleepacc_calls is answered by sleepacc_call_run into a
 * buffer of the row's size, and its field table addresses what it names,
 * so both bindings' one dispatcher can convert any row. */
#include "check.h"
#include "sleepacc_binding.h"

#include <stdlib.h>
#include <string.h>

/* The row named name in a binding (python != 0: Python's names, else Lua's). */
static const sleepacc_call *row(const char *name, int python) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++)
    if ((python ? c->python : c->lua) && strcmp(python ? c->python : c->lua, name) == 0) return c;
  return NULL;
}

/* The answer of c with args a into a fresh buffer (freed by the caller). */
static void *answer(const sleepacc_call *c, const sleepacc_call_args *a, sleepacc_answer *out, int *rc) {
  void *buf = malloc(c->size);
  memset(buf, 0xa5, c->size); /* sleepacc_call_run zeroes it */
  *rc = sleepacc_call_run(c, a, buf, out);
  return buf;
}

static void test_rows_are_complete(void) {
  size_t n = 0;
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++, n++) {
    const char *name = c->python ? c->python : c->lua;
    size_t nargs = 0;
    CHECKF(name != NULL, "row %zu has no binding", n);
    CHECKF(c->doc && c->what && c->size > 0, "%s", name);
    CHECKF(c->shape >= SLEEPACC_CALL_OBJECT && c->shape <= SLEEPACC_CALL_MODULE, "%s", name);
    while (c->args && c->args[nargs].name) nargs++;
    CHECKF(c->required >= 0 && (size_t)c->required <= nargs && nargs <= SLEEPACC_CALL_MAX_ARGS, "%s", name);
    /* a name is used once per binding */
    CHECKF(!c->python || row(c->python, 1) == c, "%s twice in Python", name);
    CHECKF(!c->lua || row(c->lua, 0) == c, "%s twice in Lua", name);
    /* an argument's slot lies inside sleepacc_call_args */
    for (size_t i = 0; i < nargs; i++)
      CHECKF(c->args[i].offset < sizeof(sleepacc_call_args), "%s %s", name, c->args[i].name);
  }
  CHECK(n >= 9 && n <= SLEEPACC_CALL_MAX);
  CHECK(sleepacc_call_run(NULL, NULL, &n, NULL) == -EFAULT);
  CHECK(sleepacc_call_run(sleepacc_calls, NULL, NULL, NULL) == -EFAULT);
}

/* Every row without a required argument answers, and its answer's fields
 * read (a VALUE row's first one is its value). */
static void test_every_row_answers(void) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++) {
    sleepacc_answer out;
    sleepacc_value v;
    int rc;
    void *buf;
    if (c->required) continue;
    buf = answer(c, NULL, &out, &rc);
    CHECKF(rc == 0, "%s: %d", c->python ? c->python : c->lua, rc);
    CHECK(out.fields != NULL && out.fields[0].name != NULL && out.base != NULL);
    for (const sleepacc_field *f = out.fields; rc == 0 && f->name; f++) sleepacc_field_get(f, out.base, &v);
    free(buf);
  }
}

/* Where both bindings show one query, one row serves both. */
static void test_shared_rows(void) {
  CHECK(row("config_default", 1) != NULL && row("config_default", 1) == row("defaults", 0));
  CHECK(row("host_facts", 1) != NULL && row("host_facts", 1) == row("system_info", 0));
  CHECK(row("methods", 1) != NULL && row("methods", 1) == row("methods", 0));
  CHECK(row("clock_info", 1) != NULL && row("clock_info", 1) == row("clock_info", 0));
  CHECK(row("now_ns", 0) != NULL && row("now_ns", 0)->python == NULL);
}

static void test_methods_list(void) {
  const sleepacc_call *c = row("methods", 1);
  sleepacc_answer out;
  sleepacc_value v;
  int rc;
  void *buf = answer(c, NULL, &out, &rc);
  const sleepacc_list *l;
  CHECK(rc == 0 && c->shape == SLEEPACC_CALL_VALUE);
  sleepacc_field_get(&out.fields[0], out.base, &v);
  CHECK(v.kind == SLEEPACC_VALUE_ITEMS && v.sub && v.sub[0].type == SLEEPACC_FIELD_NESTED);
  l = (const sleepacc_list *)v.base;
  CHECK(l->n == sleepacc_method_count() && l->stride == sizeof(sleepacc_method_info));
  for (size_t i = 0; i < l->n; i++) {
    sleepacc_value e, name;
    sleepacc_field_get(&v.sub[0], (const char *)l->at + i * l->stride, &e);
    CHECK(e.kind == SLEEPACC_VALUE_NESTED && e.sub == sleepacc_method_info_fields);
    sleepacc_field_get(&e.sub[0], e.base, &name); /* "name" first */
    CHECKF(name.kind == SLEEPACC_VALUE_TEXT && strcmp(name.s, sleepacc_method_at(i)->name) == 0, "%zu", i);
  }
  free(buf);
}

/* Element i of the list l, by its row row0. */
static sleepacc_value element(const sleepacc_list *l, const sleepacc_field *row0, size_t i) {
  sleepacc_value e;
  sleepacc_field_get(row0, (const char *)l->at + i * l->stride, &e);
  return e;
}

static void test_constants(void) {
  const sleepacc_call *py = row("constants", 1), *lua = row("constants", 0);
  sleepacc_answer out;
  sleepacc_value v;
  int rc;
  sleepacc_constants *k;
  size_t n = 0;
  CHECK(py && lua && py->shape == SLEEPACC_CALL_MODULE && lua->shape == SLEEPACC_CALL_MODULE);
  k = (sleepacc_constants *)answer(py, NULL, &out, &rc);
  CHECK(rc == 0 && strcmp(k->version, SLEEPACC_VERSION) == 0);
  CHECK(k->max_duration_ns == SLEEPACC_MAX_DURATION_NS && k->max_samples == SLEEPACC_MAX_SAMPLES);
  CHECK(k->sweep_budget_ns == SLEEPACC_SWEEP_BUDGET_NS && k->hist_precision == SLEEPACC_HIST_PRECISION);
  /* stats_fields: the rows' names of sleepacc_stats_fields, in order */
  for (const sleepacc_field *f = out.fields; f->name; f++) {
    if (strcmp(f->name, "stats_fields") != 0) continue;
    sleepacc_field_get(f, out.base, &v);
    CHECK(v.kind == SLEEPACC_VALUE_ITEMS);
    for (n = 0; sleepacc_stats_fields[n].name; n++) {
      sleepacc_value e = element(&k->stats_fields, v.sub, n);
      CHECK(e.kind == SLEEPACC_VALUE_TEXT && strcmp(e.s, sleepacc_stats_fields[n].name) == 0);
    }
  }
  CHECK(n > 0 && k->stats_fields.n == n);
  /* policy and mode names by value, up to the first NULL */
  for (size_t i = 0; i < k->policy_names.n; i++)
    CHECK(strcmp(((const char *const *)k->policy_names.at)[i], sleepacc_policy_name((int)i)) == 0);
  CHECK(sleepacc_policy_name((int)k->policy_names.n) == NULL && k->policy_names.n >= 5);
  CHECK(k->mode_names.n == 2 && sleepacc_mode_name(2) == NULL);
  CHECK(k->durations_ns.n == SLEEPACC_DEFAULT_DURATION_COUNT);
  CHECK(((const int64_t *)k->durations_ns.at)[0] == sleepacc_default_durations_ns[0]);
  free(k);
  /* Lua's: _VERSION alone */
  k = (sleepacc_constants *)answer(lua, NULL, &out, &rc);
  CHECK(rc == 0 && strcmp(out.fields[0].name, "_VERSION") == 0 && out.fields[1].name == NULL);
  sleepacc_field_get(&out.fields[0], out.base, &v);
  CHECK(v.kind == SLEEPACC_VALUE_TEXT && strcmp(v.s, SLEEPACC_VERSION) == 0);
  free(k);
}

static void test_values_with_arguments(void) {
  const sleepacc_call *fd = row("format_duration", 1), *lvl = row("stats_level", 1);
  sleepacc_call_args a;
  sleepacc_answer out;
  sleepacc_value v;
  int rc;
  void *buf;
  memset(&a, 0, sizeof a);
  CHECK(fd->required == 1 && strcmp(fd->args[0].name, "ns") == 0 && fd->args[0].kind == SLEEPACC_OPT_INT64);
  /* the argument by its option row, as a binding sets it */
  sleepacc_value in = {SLEEPACC_VALUE_INT, 1500, 0.0, NULL, NULL, NULL, 0};
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  CHECK(sleepacc_option_set(&fd->args[0], &a, &in, msg, sizeof msg) == 0 && a.i64 == 1500);
  buf = answer(fd, &a, &out, &rc);
  sleepacc_field_get(&out.fields[0], out.base, &v);
  CHECKF(rc == 0 && v.kind == SLEEPACC_VALUE_TEXT && strcmp(v.s, "1.5\xc2\xb5s") == 0, "%s", v.s);
  free(buf);
  a.name = "p99";
  buf = answer(lvl, &a, &out, &rc);
  sleepacc_field_get(&out.fields[0], out.base, &v);
  CHECK(rc == 0 && v.kind == SLEEPACC_VALUE_REAL && v.d == 0.99);
  free(buf);
  a.name = NULL; /* what NAME's option row refuses before: the core's -1 still */
  buf = answer(lvl, &a, &out, &rc);
  CHECK(rc == 0 && *(double *)buf == -1.0);
  free(buf);
  /* clock_info's reads: >= 0 by its row (the core's clocks refuse a negative) */
  in.i = -1;
  CHECK(sleepacc_option_set(&row("clock_info", 1)->args[0], &a, &in, msg, sizeof msg) == -ERANGE);
  a.i = -1;
  buf = answer(row("clock_info", 1), &a, &out, &rc);
  CHECK(rc == -EINVAL);
  free(buf);
}

/* Host facts: the rows built for the facts, an unknown one null (what Lua's
 * `nulls` key lists). */
static void test_host_facts(void) {
  const sleepacc_call *c = row("host_facts", 1);
  sleepacc_answer out;
  int rc;
  size_t n = 0;
  void *buf = answer(c, NULL, &out, &rc);
  size_t nulls = 0, listed = (size_t)-1;
  CHECK(rc == 0 && c->fields == NULL && out.fields != NULL && (c->flags & SLEEPACC_CALL_BLOCKS));
  for (const sleepacc_field *f = out.fields; f->name; f++, n++) {
    sleepacc_value v;
    sleepacc_field_get(f, out.base, &v);
    if (strcmp(f->name, "hz") == 0) CHECK(v.kind == SLEEPACC_VALUE_INT && v.i > 0);
    if (strcmp(f->name, "arch") == 0) CHECK(v.kind == SLEEPACC_VALUE_TEXT);
    nulls += v.kind == SLEEPACC_VALUE_NULL;
    if (!(f->flags & SLEEPACC_FIELD_NULL_KEYS)) continue;
    /* the last row, "unknown": the keys of the null ones before it */
    CHECK(strcmp(f->name, "unknown") == 0 && f[1].name == NULL && v.kind == SLEEPACC_VALUE_ITEMS);
    listed = ((const sleepacc_list *)v.base)->n;
    for (size_t i = 0; i < listed; i++) {
      const char *key = ((const char *const *)((const sleepacc_list *)v.base)->at)[i];
      for (const sleepacc_field *g = out.fields; g < f; g++) {
        sleepacc_value w;
        if (strcmp(g->name, key) != 0) continue;
        sleepacc_field_get(g, out.base, &w);
        CHECKF(w.kind == SLEEPACC_VALUE_NULL, "%s", key);
      }
    }
  }
  CHECK(n > 10 && n <= SLEEPACC_MAX_FACTS + 1 && listed == nulls);
  free(buf);
}

int main(void) {
  TEST(test_rows_are_complete);
  TEST(test_every_row_answers);
  TEST(test_shared_rows);
  TEST(test_methods_list);
  TEST(test_constants);
  TEST(test_values_with_arguments);
  TEST(test_host_facts);
  return check_summary();
}
