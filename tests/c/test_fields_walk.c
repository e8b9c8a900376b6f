/* test_fields_walk.c -- sleepacc_fields_walk / sleepacc_field_walk
 * (csrc/fields.c): the core drives the shape of a
 * binding's object by the binding's rules.  A recording sink writes each
 * push and put as text, so the test reads the whole walk: a null as None
 * (Python) or left out (Lua), OMIT_NULL left out in both, a NULL_KEYS row
 * Lua's only, PAIRS a dict with int keys (Python) or an array of objects
 * (Lua), a list's null element a hole in Lua; a sink's failure ends the
 * walk; too deep a table -E2BIG. */
#include "check.h"
#include "sleepacc_binding.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The walk as text: push "<kind>[:value]" (O object, A<n> array), put
 * "=key" or "@index"; fail: the push number that fails (0 none). */
typedef struct record {
  char text[1024];
  size_t len;
  int pushes, fail, depth, deepest;
} record;

static int rec_push(void *ctx, const sleepacc_value *v) {
  record *r = (record *)ctx;
  char one[64];
  if (++r->pushes == r->fail) return -EIO;
  switch (v->kind) {
  case SLEEPACC_VALUE_INT: snprintf(one, sizeof one, " %lld", (long long)v->i); break;
  case SLEEPACC_VALUE_REAL: snprintf(one, sizeof one, " %g", v->d); break;
  case SLEEPACC_VALUE_BOOL: snprintf(one, sizeof one, " %s", v->i ? "T" : "F"); break;
  case SLEEPACC_VALUE_TEXT: snprintf(one, sizeof one, " '%s'", v->s); break;
  case SLEEPACC_VALUE_NESTED: snprintf(one, sizeof one, " O"); break;
  case SLEEPACC_VALUE_ITEMS: snprintf(one, sizeof one, " A%lld", (long long)v->i); break;
  default: snprintf(one, sizeof one, " null");
  }
  if (++r->depth > r->deepest) r->deepest = r->depth;
  r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, "%s", one);
  return 0;
}

static int rec_put(void *ctx, const char *key, int64_t index) {
  record *r = (record *)ctx;
  r->depth--;
  if (key) r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, " =%s", key);
  else r->len += (size_t)snprintf(r->text + r->len, sizeof r->text - r->len, " @%lld", (long long)index);
  return 0;
}

typedef struct inner {
  int64_t x;
} inner;

typedef struct probe {
  int64_t n, opt, omitted;
  const char *name;
  inner in;
  sleepacc_pairs pairs;
  sleepacc_list list;
  int64_t items[3];
  sleepacc_list nulls;
  const char *null_names[1];
} probe;

static const sleepacc_field inner_rows[] = {
    {"x", offsetof(inner, x), SLEEPACC_FIELD_INT64, NULL, 0},
    {NULL, 0, 0, NULL, 0},
};
static const sleepacc_field pair_rows[] = {
    {"k", offsetof(sleepacc_pair, key), SLEEPACC_FIELD_INT64, NULL, 0},
    {"v", offsetof(sleepacc_pair, value), SLEEPACC_FIELD_INT64, NULL, 0},
    {NULL, 0, 0, NULL, 0},
};
static const sleepacc_field item_row[] = {{"item", 0, SLEEPACC_FIELD_OPT_INT64, NULL, 0},
                                          {NULL, 0, 0, NULL, 0}};
static const sleepacc_field name_row[] = {{"name", 0, SLEEPACC_FIELD_STRING, NULL, 0},
                                          {NULL, 0, 0, NULL, 0}};
static const sleepacc_field rows[] = {
    {"n", offsetof(probe, n), SLEEPACC_FIELD_INT64, NULL, 0},
    {"opt", offsetof(probe, opt), SLEEPACC_FIELD_OPT_INT64, NULL, 0},
    {"omitted", offsetof(probe, omitted), SLEEPACC_FIELD_OPT_INT64, NULL, SLEEPACC_FIELD_OMIT_NULL},
    {"name", offsetof(probe, name), SLEEPACC_FIELD_STRING, NULL, 0},
    {"in", offsetof(probe, in), SLEEPACC_FIELD_NESTED, inner_rows, 0},
    {"pairs", offsetof(probe, pairs), SLEEPACC_FIELD_PAIRS, pair_rows, 0},
    {"list", offsetof(probe, list), SLEEPACC_FIELD_LIST, item_row, 0},
    {"unknown", offsetof(probe, nulls), SLEEPACC_FIELD_LIST, name_row, SLEEPACC_FIELD_NULL_KEYS},
    {NULL, 0, 0, NULL, 0},
};

static void fill(probe *p) {
  memset(p, 0, sizeof *p);
  p->n = 7, p->opt = -1, p->omitted = -1, p->name = "a", p->in.x = 3;
  p->pairs.n = 2;
  p->pairs.at[0] = (sleepacc_pair){10, 1}, p->pairs.at[1] = (sleepacc_pair){20, 2};
  p->items[0] = 5, p->items[1] = -1, p->items[2] = 6; /* the middle one null */
  p->list = (sleepacc_list){p->items, 3, sizeof p->items[0]};
  p->null_names[0] = "opt";
  p->nulls = (sleepacc_list){p->null_names, 1, sizeof p->null_names[0]};
}

static int walk(const probe *p, int binding, record *r, int fail) {
  sleepacc_field_sink sink = {rec_push, rec_put, r, binding};
  memset(r, 0, sizeof *r);
  r->fail = fail;
  return sleepacc_fields_walk(rows, p, &sink);
}

static void test_the_shape_by_each_bindings_rules(void) {
  record r;
  probe p;
  fill(&p);
  CHECK(walk(&p, SLEEPACC_BINDING_PYTHON, &r, 0) == 0);
  CHECKF(!strcmp(r.text, " O 7 =n null =opt 'a' =name O 3 =x =in O 1 @10 2 @20 =pairs"
                         " A3 5 @0 null @1 6 @2 =list"), "%s", r.text);
  CHECK(r.depth == 1 && r.deepest == 3); /* the object left on the stack; object, list, value */
  CHECK(walk(&p, SLEEPACC_BINDING_LUA, &r, 0) == 0);
  CHECKF(!strcmp(r.text, " O 7 =n 'a' =name O 3 =x =in A2 O 10 =k 1 =v @0 O 20 =k 2 =v @1 =pairs"
                         " A3 5 @0 6 @2 =list A1 'opt' @0 =unknown"), "%s", r.text);
  CHECK(r.depth == 1 && r.deepest == 4);
}

static void test_one_row_alone(void) {
  sleepacc_field_sink py = {rec_push, rec_put, NULL, SLEEPACC_BINDING_PYTHON}, lua = py;
  record r;
  probe p;
  fill(&p);
  py.ctx = lua.ctx = &r, lua.binding = SLEEPACC_BINDING_LUA;
  memset(&r, 0, sizeof r);
  CHECK(sleepacc_field_walk(&rows[0], &p, &lua) == 1 && !strcmp(r.text, " 7"));
  memset(&r, 0, sizeof r);
  CHECK(sleepacc_field_walk(&rows[1], &p, &lua) == 0 && r.len == 0); /* a null: nothing in Lua */
  CHECK(sleepacc_field_walk(&rows[1], &p, &py) == 1 && !strcmp(r.text, " null"));
  memset(&r, 0, sizeof r);
  CHECK(sleepacc_field_walk(&rows[2], &p, &py) == 0 && r.len == 0); /* OMIT_NULL: nothing */
  CHECK(sleepacc_field_walk(&rows[4], &p, &py) == 1 && !strcmp(r.text, " O 3 =x"));
}

static void test_failures(void) {
  static const sleepacc_field deep_rows[] = {{"in", 0, SLEEPACC_FIELD_NESTED, deep_rows, 0},
                                             {NULL, 0, 0, NULL, 0}};
  sleepacc_field_sink sink = {rec_push, rec_put, NULL, SLEEPACC_BINDING_PYTHON};
  record r;
  probe p;
  fill(&p);
  for (int k = 1; k <= 6; k++) { /* the sink's failure ends the walk, returned as it is */
    CHECK(walk(&p, SLEEPACC_BINDING_LUA, &r, k) == -EIO && r.pushes == k);
    CHECK(walk(&p, SLEEPACC_BINDING_PYTHON, &r, k) == -EIO && r.pushes == k);
  }
  memset(&r, 0, sizeof r);
  sink.ctx = &r;
  CHECK(sleepacc_fields_walk(deep_rows, &p, &sink) == -E2BIG); /* a table nested in itself */
  CHECK(r.pushes == SLEEPACC_FIELDS_DEPTH && r.deepest == SLEEPACC_FIELDS_DEPTH);
  CHECK(sleepacc_fields_walk(NULL, &p, &sink) == -EFAULT);
  CHECK(sleepacc_fields_walk(rows, NULL, &sink) == -EFAULT);
  CHECK(sleepacc_field_walk(rows, &p, NULL) == -EFAULT);
}

int main(void) {
  TEST(test_the_shape_by_each_bindings_rules);
  TEST(test_one_row_alone);
  TEST(test_failures);
  return check_summary();
}
