/* test_fields.c -- sleepacc_field_get / sleepacc_field_set (csrc/fields.c):
 * every field type read as the value kind a binding converts, and set back
 * from one, with the errors a binding maps (-EINVAL the wrong kind, -ERANGE
 * beyond int, -ENOENT an unknown name) and their words. */
#include "check.h"
#include "sleepacc_binding.h"

#include <stddef.h>
#include <string.h>

typedef struct probe {
  int64_t i64, opt;
  int i, b, mode;
  double d;
  const char *str;
  const sleepacc_method *method;
  char text[16];
  sleepacc_stats stats;
} probe;

#define ROW(name, type, sub) {#name, offsetof(probe, name), type, sub, 0}
static const sleepacc_field rows[] = {
  ROW(i64, SLEEPACC_FIELD_INT64, NULL),     ROW(opt, SLEEPACC_FIELD_OPT_INT64, NULL),
  ROW(i, SLEEPACC_FIELD_INT, NULL),         ROW(b, SLEEPACC_FIELD_BOOL, NULL),
  ROW(mode, SLEEPACC_FIELD_MODE, NULL),     ROW(d, SLEEPACC_FIELD_DOUBLE, NULL),
  ROW(str, SLEEPACC_FIELD_STRING, NULL),    ROW(method, SLEEPACC_FIELD_METHOD, NULL),
  ROW(text, SLEEPACC_FIELD_TEXT, NULL),     ROW(stats, SLEEPACC_FIELD_NESTED, sleepacc_stats_fields),
  {"none", 0, SLEEPACC_FIELD_NULL, NULL, 0},
  {NULL, 0, 0, NULL, 0},
};
enum { I64, OPT, I, B, MODE, D, STR, METHOD, TEXT, STATS, NONE };

static sleepacc_value get(const probe *p, int row) {
  sleepacc_value v;
  memset(&v, 0xff, sizeof v);
  sleepacc_field_get(&rows[row], p, &v);
  return v;
}

static void test_get(void) {
  probe p;
  sleepacc_value v;
  memset(&p, 0, sizeof p);
  p.i64 = -5, p.opt = 7, p.i = -3, p.b = 1, p.mode = SLEEPACC_MODE_PERIODIC, p.d = 2.5;
  p.str = "x", p.method = sleepacc_method_find("nanosleep"), p.stats.n = 9;
  strcpy(p.text, "tsc");
  v = get(&p, I64);
  CHECK(v.kind == SLEEPACC_VALUE_INT && v.i == -5);
  v = get(&p, OPT);
  CHECK(v.kind == SLEEPACC_VALUE_INT && v.i == 7);
  v = get(&p, I);
  CHECK(v.kind == SLEEPACC_VALUE_INT && v.i == -3);
  v = get(&p, B);
  CHECK(v.kind == SLEEPACC_VALUE_BOOL && v.i == 1);
  v = get(&p, MODE);
  CHECK(v.kind == SLEEPACC_VALUE_TEXT && strcmp(v.s, "periodic") == 0);
  v = get(&p, D);
  CHECK(v.kind == SLEEPACC_VALUE_REAL && v.d == 2.5);
  v = get(&p, STR);
  CHECK(v.kind == SLEEPACC_VALUE_TEXT && v.s == p.str);
  v = get(&p, METHOD);
  CHECK(v.kind == SLEEPACC_VALUE_TEXT && strcmp(v.s, "nanosleep") == 0);
  v = get(&p, TEXT);
  CHECK(v.kind == SLEEPACC_VALUE_TEXT && v.s == p.text);
  v = get(&p, STATS);
  CHECK(v.kind == SLEEPACC_VALUE_NESTED && v.sub == sleepacc_stats_fields && v.base == &p.stats);
  CHECK(get(&p, NONE).kind == SLEEPACC_VALUE_NULL);
  /* the nulls: a negative optional, a NULL string or method, a mode out of range */
  p.opt = -1, p.str = NULL, p.method = NULL, p.mode = 99;
  CHECK(get(&p, OPT).kind == SLEEPACC_VALUE_NULL && get(&p, STR).kind == SLEEPACC_VALUE_NULL);
  CHECK(get(&p, METHOD).kind == SLEEPACC_VALUE_NULL && get(&p, MODE).kind == SLEEPACC_VALUE_NULL);
}

static int set(probe *p, int row, int kind, int64_t i, double d, const char *s, const char **msg) {
  sleepacc_value v;
  memset(&v, 0, sizeof v);
  v.kind = kind, v.i = i, v.d = d, v.s = s;
  *msg = NULL;
  return sleepacc_field_set(&rows[row], p, &v, msg);
}

static void test_set(void) {
  probe p;
  const char *msg;
  memset(&p, 0, sizeof p);
  CHECK(set(&p, I64, SLEEPACC_VALUE_INT, INT64_MIN, 0, NULL, &msg) == 0 && p.i64 == INT64_MIN);
  CHECK(set(&p, OPT, SLEEPACC_VALUE_BOOL, 1, 0, NULL, &msg) == 0 && p.opt == 1);
  CHECK(set(&p, I, SLEEPACC_VALUE_INT, -7, 0, NULL, &msg) == 0 && p.i == -7);
  CHECK(set(&p, I, SLEEPACC_VALUE_INT, 1LL << 31, 0, NULL, &msg) == -ERANGE && p.i == -7);
  CHECK(msg && strcmp(msg, "out of range") == 0);
  CHECK(set(&p, B, SLEEPACC_VALUE_BOOL, 1, 0, NULL, &msg) == 0 && p.b == 1);
  CHECK(set(&p, D, SLEEPACC_VALUE_REAL, 0, 0.25, NULL, &msg) == 0 && p.d == 0.25);
  CHECK(set(&p, D, SLEEPACC_VALUE_INT, 3, 0, NULL, &msg) == 0 && p.d == 3.0);
  /* a string row keeps the pointer: 1 says so */
  CHECK(set(&p, STR, SLEEPACC_VALUE_TEXT, 0, 0, "abc", &msg) == 1 && strcmp(p.str, "abc") == 0);
  CHECK(set(&p, STR, SLEEPACC_VALUE_NULL, 0, 0, NULL, &msg) == 0 && p.str == NULL);
  CHECK(set(&p, METHOD, SLEEPACC_VALUE_TEXT, 0, 0, "nanosleep", &msg) == 0);
  CHECK(p.method == sleepacc_method_find("nanosleep"));
  CHECK(set(&p, METHOD, SLEEPACC_VALUE_TEXT, 0, 0, "no_such", &msg) == -ENOENT);
  CHECK(msg && strcmp(msg, "unknown method") == 0 && p.method == sleepacc_method_find("nanosleep"));
  CHECK(set(&p, METHOD, SLEEPACC_VALUE_NULL, 0, 0, NULL, &msg) == 0 && p.method == NULL);
  CHECK(set(&p, MODE, SLEEPACC_VALUE_TEXT, 0, 0, "periodic", &msg) == 0 && p.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&p, MODE, SLEEPACC_VALUE_TEXT, 0, 0, "nope", &msg) == -ENOENT);
  CHECK(msg && strcmp(msg, "unknown mode") == 0 && p.mode == SLEEPACC_MODE_PERIODIC);
  /* the wrong kinds: nothing changes */
  CHECK(set(&p, I64, SLEEPACC_VALUE_REAL, 0, 1.5, NULL, &msg) == -EINVAL && p.i64 == INT64_MIN);
  CHECK(msg && strcmp(msg, "cannot be set from") == 0);
  CHECK(set(&p, I, SLEEPACC_VALUE_TEXT, 0, 0, "1", &msg) == -EINVAL && p.i == -7);
  CHECK(set(&p, D, SLEEPACC_VALUE_TEXT, 0, 0, "1", &msg) == -EINVAL && p.d == 3.0);
  CHECK(set(&p, STR, SLEEPACC_VALUE_INT, 1, 0, NULL, &msg) == -EINVAL);
  CHECK(set(&p, MODE, SLEEPACC_VALUE_NULL, 0, 0, NULL, &msg) == -EINVAL);
  CHECK(set(&p, MODE, SLEEPACC_VALUE_INT, 1, 0, NULL, &msg) == -EINVAL && p.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&p, STATS, SLEEPACC_VALUE_INT, 1, 0, NULL, &msg) == -EINVAL);
  CHECK(set(&p, TEXT, SLEEPACC_VALUE_TEXT, 0, 0, "x", &msg) == -EINVAL && p.text[0] == '\0');
  CHECK(set(&p, NONE, SLEEPACC_VALUE_NULL, 0, 0, NULL, &msg) == -EINVAL);
  CHECK(sleepacc_field_set(&rows[I], &p, &(sleepacc_value){SLEEPACC_VALUE_INT, 4, 0, NULL, NULL, NULL, 0},
                           NULL) == 0 && p.i == 4);
}

/* A round trip through the core's own tables: what get reads, set takes. */
static void test_round_trip(void) {
  sleepacc_config a, b;
  sleepacc_config_default(&a);
  a.method = sleepacc_method_find("spin");
  a.mode = SLEEPACC_MODE_PERIODIC;
  a.duration_ns = 12345;
  memset(&b, 0, sizeof b);
  for (const sleepacc_field *f = sleepacc_config_fields; f->name; f++) {
    sleepacc_value v;
    sleepacc_field_get(f, &a, &v);
    if (v.kind == SLEEPACC_VALUE_NESTED) {
      for (const sleepacc_field *g = v.sub; g->name; g++) {
        sleepacc_value w;
        sleepacc_field_get(g, v.base, &w);
        CHECKF(sleepacc_field_set(g, (char *)&b + f->offset, &w, NULL) >= 0, "%s.%s", f->name, g->name);
      }
    } else {
      CHECKF(sleepacc_field_set(f, &b, &v, NULL) >= 0, "%s", f->name);
    }
  }
  CHECK(b.method == a.method && b.mode == a.mode && b.duration_ns == 12345 && b.n == a.n);
  CHECK(b.budget_ns == a.budget_ns && b.env.cpu == a.env.cpu && b.env.policy == a.env.policy);
  CHECK(b.keep_samples == a.keep_samples && b.env.slack_ns == a.env.slack_ns);
}

/* sleepacc_value_number: a double that is a whole number is INT (beyond
 * int64 saturated, .overflow its sign), any other REAL; the Lua binding's
 * every number on 5.1 and LuaJIT and a float on 5.3+. */
static void test_value_number(void) {
  static const struct { double d; int kind; int64_t i; int overflow; } cases[] = {
      {2.0, SLEEPACC_VALUE_INT, 2, 0},           {-3.0, SLEEPACC_VALUE_INT, -3, 0},
      {-0.0, SLEEPACC_VALUE_INT, 0, 0},          {0.5, SLEEPACC_VALUE_REAL, 0, 0},
      {9007199254740992.0, SLEEPACC_VALUE_INT, 9007199254740992LL, 0},
      {-9223372036854775808.0, SLEEPACC_VALUE_INT, INT64_MIN, 0},
      {9223372036854775808.0, SLEEPACC_VALUE_INT, INT64_MAX, 1},
      {-1e300, SLEEPACC_VALUE_INT, INT64_MIN, -1},
      {1.0 / 0.0, SLEEPACC_VALUE_REAL, 0, 0},     {0.0 / 0.0, SLEEPACC_VALUE_REAL, 0, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    sleepacc_value v;
    memset(&v, 0xff, sizeof v);
    sleepacc_value_number(&v, cases[k].d);
    CHECKF(v.kind == cases[k].kind, "case %zu: kind %d", k, v.kind);
    if (v.kind == SLEEPACC_VALUE_INT) CHECKF(v.i == cases[k].i, "case %zu: i %lld", k, (long long)v.i);
    else CHECKF(v.d == cases[k].d || v.d != v.d, "case %zu: d %g", k, v.d);
    CHECKF(v.overflow == cases[k].overflow, "case %zu: overflow %d", k, v.overflow);
    CHECK(v.s == NULL && v.sub == NULL && v.base == NULL);
  }
}

int main(void) {
  TEST(test_value_number);
  TEST(test_get);
  TEST(test_set);
  TEST(test_round_trip);
  return check_summary();
}
