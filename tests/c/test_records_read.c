/* test_records_read.c -- records: a struct read back from a
 * script's tables by its field table through the getter
 * (sleepacc_fields_read, the getter's enter), the way to a bad value in
 * the fault and in both bindings' sentences, and the table call row over
 * one record or a list of them (its style an option of the STYLE kind). */
#include "check.h"
#include "sleepacc_binding.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A fake script value: a scalar, a table of keys, or a list. */
typedef struct node {
  const char *key;          /* its key in the table holding it (NULL: a list element) */
  sleepacc_value v;         /* a scalar (a table: NESTED, a list: LIST with .i its length) */
  const struct node *items; /* a table's keyed nodes (a NULL key ends them), a list's elements */
} node;

/* The getter over the one value `results` and the tables entered. */
typedef struct fake {
  const node *results;
  const node *at[SLEEPACC_GETTER_DEPTH]; /* the tables entered */
  int depth, entered, rooms;
  void *room[2];
} fake;

static int is_table(const node *n) { return n && n->v.kind == SLEEPACC_VALUE_NESTED; }

/* The node of name (element index) where t stands, or NULL. */
static const node *lookup(const fake *t, const char *name, int64_t index) {
  const node *n = NULL;
  if (t->depth == 0 && strcmp(name, "results") == 0) n = t->results;
  for (const node *k = t->depth && is_table(t->at[t->depth - 1]) ? t->at[t->depth - 1]->items : NULL;
       k && k->key; k++)
    if (strcmp(k->key, name) == 0) n = k;
  if (n && index >= 0) n = n->v.kind == SLEEPACC_VALUE_LIST && index < n->v.i ? &n->items[index] : NULL;
  return n;
}

static int fake_get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  const node *n = name ? lookup((fake *)ctx, name, index) : NULL;
  memset(out, 0, sizeof *out);
  if (n) *out = n->v;
  return n != NULL;
}

static int fake_enter(void *ctx, const char *name, int64_t index) {
  fake *t = (fake *)ctx;
  const node *n;
  if (name == NULL) return t->depth > 0 ? (t->depth--, 1) : 0;
  if (!is_table(n = lookup(t, name, index)) || t->depth >= SLEEPACC_GETTER_DEPTH) return 0;
  t->at[t->depth++] = n;
  t->entered++;
  return 1;
}

static void *fake_room(void *ctx, size_t bytes) { /* as Python's: at most twice; never zeroed */
  fake *t = (fake *)ctx;
  if (t->rooms >= 2) return NULL;
  return memset(t->room[t->rooms++] = malloc(bytes), 0xa5, bytes);
}

static void fake_free(fake *t) {
  free(t->room[0]);
  free(t->room[1]);
}

static sleepacc_getter getter(fake *t) {
  sleepacc_getter g = {fake_get, fake_room, t, NULL, 0, NULL, fake_enter};
  return g;
}

#define INTV(x) {SLEEPACC_VALUE_INT, (x), 0.0, NULL, NULL, NULL, 0}
#define REALV(x) {SLEEPACC_VALUE_REAL, 0, (x), NULL, NULL, NULL, 0}
#define TEXTV(s) {SLEEPACC_VALUE_TEXT, 0, 0.0, (s), NULL, NULL, 0}
#define TABLEV {SLEEPACC_VALUE_NESTED, 0, 0.0, NULL, NULL, NULL, 0}

static const node stats_a[] = {
    {"n", INTV(3), NULL},          {"min", INTV(1000), NULL},   {"max", INTV(3000), NULL},
    {"mean", REALV(2000.5), NULL}, {"std", INTV(1), NULL},      {"median", INTV(2000), NULL},
    {"p99", INTV(2900), NULL},     {"undersleeps", INTV(0), NULL}, {NULL, INTV(0), NULL}};
static const node stats_bad[] = {{"median", TEXTV("a"), NULL}, {NULL, INTV(0), NULL}};

static const node rec_good[] = {
    {"method", TEXTV("nanosleep"), NULL}, {"requested_ns", INTV(1000000), NULL},
    {"mode", TEXTV("periodic"), NULL},    {"stats", TABLEV, stats_a},
    {"cpu_percent", INTV(2), NULL},       {"samples", INTV(5), NULL}, /* no row's: not read */
    {NULL, INTV(0), NULL}};
static const node rec_no_requested[] = {
    {"method", TEXTV("x"), NULL}, {"mode", TEXTV("relative"), NULL}, {"stats", TABLEV, stats_a},
    {"cpu_percent", REALV(1.0), NULL}, {NULL, INTV(0), NULL}};
static const node rec_bad_mode[] = {
    {"method", TEXTV("x"), NULL}, {"requested_ns", INTV(1), NULL}, {"mode", TEXTV("nope"), NULL},
    {"stats", TABLEV, stats_a}, {"cpu_percent", REALV(1.0), NULL}, {NULL, INTV(0), NULL}};
static const node rec_bad_median[] = {
    {"method", TEXTV("x"), NULL}, {"requested_ns", INTV(1), NULL}, {"mode", TEXTV("relative"), NULL},
    {"stats", TABLEV, stats_bad}, {"cpu_percent", REALV(1.0), NULL}, {NULL, INTV(0), NULL}};
static const node rec_stats_number[] = {
    {"method", TEXTV("x"), NULL}, {"requested_ns", INTV(1), NULL}, {"mode", TEXTV("relative"), NULL},
    {"stats", INTV(5), NULL}, {"cpu_percent", REALV(1.0), NULL}, {NULL, INTV(0), NULL}};

static const node one_good = {NULL, TABLEV, rec_good};

/* A list of three records, the third rec. */
static node list_of(const node *rec, node items[3]) {
  node l = {NULL, {SLEEPACC_VALUE_LIST, 3, 0.0, NULL, NULL, NULL, 0}, items};
  items[0] = items[1] = one_good;
  items[2] = (node){NULL, TABLEV, rec};
  return l;
}

static void test_a_record_reads_every_row(void) {
  fake t = {&one_good, {NULL}, 0, 0, 0, {NULL, NULL}};
  sleepacc_getter g = getter(&t);
  sleepacc_row row;
  sleepacc_fault f;
  memset(&row, 0, sizeof row);
  CHECK(sleepacc_fields_read(sleepacc_row_fields, &g, "results", -1, &row, &f) == 0);
  CHECK(row.method && strcmp(row.method, "nanosleep") == 0);
  CHECK(row.requested_ns == 1000000 && row.mode == SLEEPACC_MODE_PERIODIC && row.cpu_percent == 2.0);
  CHECK(row.stats.n == 3 && row.stats.median == 2000 && row.stats.mean == 2000.5 && row.stats.std == 1.0);
  CHECK(row.stats.p10 == 0); /* absent, not required: the struct's value stays */
  CHECK(t.depth == 0 && t.entered == 2); /* the record and its stats, each left again */
  CHECK(f.kind == SLEEPACC_FAULT_NONE);
}

/* Read results[2] of a list whose third record is rec: the fault. */
static int read_third(const node *rec, sleepacc_fault *f, int *depth) {
  node items[3], l = list_of(rec, items);
  fake t = {&l, {NULL}, 0, 0, 0, {NULL, NULL}};
  sleepacc_getter g = getter(&t);
  sleepacc_row row;
  int rc = sleepacc_fields_read(sleepacc_row_fields, &g, "results", 2, &row, f);
  *depth = t.depth;
  return rc;
}

static void text_is(const sleepacc_fault *f, int binding, const char *type, const char *shown,
                    const char *want) {
  char buf[SLEEPACC_FAULT_TEXT_MAX];
  sleepacc_fault_text(f, binding, NULL, type, shown, buf, sizeof buf);
  CHECKF(strcmp(buf, want) == 0, "want \"%s\", got \"%s\"", want, buf);
}

static void test_the_fault_names_the_way_to_the_value(void) {
  sleepacc_fault f;
  int depth;
  CHECK(read_third(rec_no_requested, &f, &depth) == -EINVAL);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && strcmp(f.option, "requested_ns") == 0 && f.index == -1);
  CHECK(f.depth == 1 && strcmp(f.at[0].name, "results") == 0 && f.at[0].index == 2);
  CHECK(depth == 1); /* the getter stays where the fault is: the binding finds the value there */
  text_is(&f, SLEEPACC_BINDING_PYTHON, "NoneType", NULL,
          "results[2].requested_ns: must be an int, got NoneType");
  text_is(&f, SLEEPACC_BINDING_LUA, "nil", NULL, "results[3].requested_ns: must be an integer, got nil");

  CHECK(read_third(rec_bad_mode, &f, &depth) == -ENOENT);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && f.show && strcmp(f.words, "unknown mode") == 0);
  text_is(&f, SLEEPACC_BINDING_PYTHON, "str", "'nope'", "results[2].mode: unknown mode, got 'nope'");

  CHECK(read_third(rec_bad_median, &f, &depth) == -EINVAL);
  CHECK(f.depth == 2 && strcmp(f.at[1].name, "stats") == 0 && f.at[1].index == -1 && depth == 2);
  text_is(&f, SLEEPACC_BINDING_LUA, "string", NULL,
          "results[3].stats.median: must be an integer, got string");

  CHECK(read_third(rec_stats_number, &f, &depth) == -EINVAL);
  CHECK(f.takes == SLEEPACC_OPT_RECORD && f.depth == 1);
  text_is(&f, SLEEPACC_BINDING_PYTHON, "int", NULL, "results[2].stats: must be a record (a dict), got int");
  text_is(&f, SLEEPACC_BINDING_LUA, "number", NULL,
          "results[3].stats: must be a record (a table), got number");
}

static void test_a_value_that_is_no_table_and_a_getter_that_cannot_enter(void) {
  static const node five = {NULL, INTV(5), NULL};
  fake t = {&five, {NULL}, 0, 0, 0, {NULL, NULL}};
  sleepacc_getter g = getter(&t);
  sleepacc_row row;
  sleepacc_fault f;
  CHECK(sleepacc_fields_read(sleepacc_row_fields, &g, "results", -1, &row, &f) == -EINVAL);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && f.takes == SLEEPACC_OPT_RECORD && f.depth == 0);
  text_is(&f, SLEEPACC_BINDING_LUA, "number", NULL, "results: must be a record (a table), got number");
  g.enter = NULL;
  CHECK(sleepacc_fields_read(sleepacc_row_fields, &g, "results", -1, &row, &f) == -ENOTSUP);
  CHECK(sleepacc_fields_read(NULL, &g, NULL, -1, &row, &f) == -EFAULT);
}

static const sleepacc_call *table_row(void) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++)
    if (c->python && strcmp(c->python, "table") == 0) return c;
  return NULL;
}

/* The table call over results, style (NULL: not given) set by its option row. */
static int call_table(const node *results, const char *style, char *text, size_t cap, sleepacc_fault *f) {
  const sleepacc_call *c = table_row();
  fake t = {results, {NULL}, 0, 0, 0, {NULL, NULL}};
  sleepacc_getter g = getter(&t);
  sleepacc_call_args a;
  sleepacc_answer ans;
  const char *p;
  char buf[sizeof(char *)];
  int rc;
  memset(&a, 0, sizeof a);
  a.options = &g, a.room = g.room, a.ctx = g.ctx;
  if (style) {
    sleepacc_value v = TEXTV(style);
    if ((rc = sleepacc_value_read(&c->args[1], "style", &a, &v, f)) < 0) return rc;
  }
  rc = sleepacc_call_run(c, &a, buf, &ans);
  *f = ans.fault;
  text[0] = '\0';
  if (rc == 0) {
    memcpy(&p, buf, sizeof p);
    snprintf(text, cap, "%s", p);
  }
  CHECK(rc < 0 || t.rooms == 2); /* the rows, then the text */
  fake_free(&t);
  return rc;
}

static void test_the_table_row_renders_one_record_or_a_list(void) {
  const sleepacc_call *c = table_row();
  char one[4096], list[4096], wide[4096], want[4096];
  node items[3], l = list_of(rec_good, items);
  sleepacc_row rows[3];
  sleepacc_fault f;
  CHECK(c && c->lua && strcmp(c->lua, "table") == 0 && c->shape == SLEEPACC_CALL_VALUE);
  CHECK(call_table(&one_good, NULL, one, sizeof one, &f) == 0);
  CHECK(call_table(&l, "irtt", list, sizeof list, &f) == 0);
  CHECK(call_table(&l, "wide", wide, sizeof wide, &f) == 0);
  /* the same bytes as the renderer's of the rows built in C */
  memset(rows, 0, sizeof rows);
  for (int i = 0; i < 3; i++) {
    rows[i] = (sleepacc_row){"nanosleep", 1000000, SLEEPACC_MODE_PERIODIC, {0}, 2.0};
    rows[i].stats.n = 3, rows[i].stats.min = 1000, rows[i].stats.max = 3000, rows[i].stats.mean = 2000.5;
    rows[i].stats.std = 1.0, rows[i].stats.median = 2000, rows[i].stats.p99 = 2900;
  }
  CHECK(sleepacc_table_irtt(rows, 1, want, sizeof want, NULL) > 0 && strcmp(one, want) == 0);
  CHECK(sleepacc_table_irtt(rows, 3, want, sizeof want, NULL) > 0 && strcmp(list, want) == 0);
  CHECK(sleepacc_table_wide(rows, 3, want, sizeof want, NULL) > 0 && strcmp(wide, want) == 0);
  CHECK(strcmp(one, list) != 0);
}

/* A statistic a record leaves out is 0 in the table (the row's stats are
 * not COMPLETE): the rows were the room's bytes, unset, so the table
 * showed whatever the memory held (valgrind: uninitialised value). */
static void test_the_table_row_zeroes_what_a_record_leaves_out(void) {
  static const node stats_n[] = {{"n", INTV(3), NULL}, {NULL, INTV(0), NULL}};
  static const node rec[] = {
      {"method", TEXTV("nanosleep"), NULL}, {"requested_ns", INTV(1000), NULL},
      {"mode", TEXTV("relative"), NULL},    {"stats", TABLEV, stats_n},
      {"cpu_percent", REALV(1.0), NULL},    {NULL, INTV(0), NULL}};
  const node one = {NULL, TABLEV, rec};
  char text[4096], want[4096];
  sleepacc_row row = {"nanosleep", 1000, SLEEPACC_MODE_RELATIVE, {0}, 1.0};
  sleepacc_fault f;
  row.stats.n = 3;
  CHECK(call_table(&one, "wide", text, sizeof text, &f) == 0);
  CHECK(sleepacc_table_wide(&row, 1, want, sizeof want, NULL) > 0);
  CHECKF(strcmp(text, want) == 0, "got:\n%s\nwant:\n%s", text, want);
}

static void test_the_table_row_refuses_by_the_core_rules(void) {
  static const node five = {NULL, INTV(5), NULL};
  node items[3], l = list_of(rec_bad_mode, items);
  char text[256];
  sleepacc_fault f;
  CHECK(call_table(&five, NULL, text, sizeof text, &f) == -EINVAL);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && strcmp(f.option, "results") == 0 && f.takes == SLEEPACC_OPT_RECORDS);
  text_is(&f, SLEEPACC_BINDING_PYTHON, "int", NULL, "results: must be a list of records, got int");
  text_is(&f, SLEEPACC_BINDING_LUA, "number", NULL, "results: must be an array of records, got number");
  CHECK(call_table(NULL, NULL, text, sizeof text, &f) == -EINVAL); /* not given */
  CHECK(call_table(&l, NULL, text, sizeof text, &f) == -ENOENT && f.depth == 1 && f.at[0].index == 2);
  /* the style: an option of the STYLE kind, the choices' words */
  CHECK(call_table(&one_good, "fancy", text, sizeof text, &f) == -ERANGE);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && strcmp(f.words, "must be 'irtt' or 'wide'") == 0);
  text_is(&f, SLEEPACC_BINDING_LUA, "string", "\"fancy\"", "style: must be 'irtt' or 'wide', got \"fancy\"");
  CHECK(strcmp(sleepacc_table_style_name(0), "irtt") == 0);
  CHECK(strcmp(sleepacc_table_style_name(1), "wide") == 0);
  CHECK(sleepacc_table_style_name(2) == NULL && sleepacc_table_style_name(-1) == NULL);
}

/* ------------------------------------------------------------ save */

static const int64_t kept[] = {1500, 2500, 3500};
static const node ctx_a[] = {{"voluntary", INTV(3), NULL}, {"involuntary", INTV(0), NULL},
                             {NULL, INTV(0), NULL}};
static const node env_a[] = {{"lock_memory", {SLEEPACC_VALUE_BOOL, 0, 0.0, NULL, NULL, NULL, 0}, NULL},
                             {"cpu", INTV(1), NULL}, /* the other nulls left out, as Lua does */
                             {"slack_ns", {SLEEPACC_VALUE_NULL, 5, 0.0, NULL, NULL, NULL, 0}, NULL},
                             {NULL, INTV(0), NULL}}; /* a null given (Python's None): null too */
/* A run's statistics as a record holds them (sleepacc_result_fields' stats
 * are COMPLETE): every one but p1..p75 (LATER: an older record lacks them). */
static const node stats_run[] = {
    {"n", INTV(3), NULL},          {"min", INTV(1000), NULL},   {"max", INTV(3000), NULL},
    {"mean", REALV(2000.5), NULL}, {"std", INTV(1), NULL},      {"median", INTV(2000), NULL},
    {"p90", INTV(2800), NULL},     {"p99", INTV(2900), NULL},   {"p999", INTV(3000), NULL},
    {"undersleeps", INTV(0), NULL}, {NULL, INTV(0), NULL}};
/* ... less one: p90 (it was written as 0, a statistic that never occurred). */
static const node stats_no_p90[] = {
    {"n", INTV(3), NULL},          {"min", INTV(1000), NULL},   {"max", INTV(3000), NULL},
    {"mean", REALV(2000.5), NULL}, {"std", INTV(1), NULL},      {"median", INTV(2000), NULL},
    {"p99", INTV(2900), NULL},     {"p999", INTV(3000), NULL},  {"undersleeps", INTV(0), NULL},
    {NULL, INTV(0), NULL}};

static const node run_a[] = {
    {"method", TEXTV("nanosleep"), NULL}, {"mode", TEXTV("relative"), NULL},
    {"requested_ns", INTV(1000), NULL},   {"n", INTV(3), NULL},
    {"stats", TABLEV, stats_run},         {"missed", INTV(0), NULL},
    {"cpu_ns_per_call", REALV(700.5), NULL}, {"cpu_percent", REALV(12.5), NULL},
    {"ctx_switches", TABLEV, ctx_a},      {"wall_ns", INTV(90000), NULL},
    {"env", TABLEV, env_a},
    {"samples", {SLEEPACC_VALUE_SAMPLES, 3, 0.0, NULL, NULL, kept, 0}, NULL},
    {NULL, INTV(0), NULL}};
static const node run_no_p90[] = {
    {"method", TEXTV("nanosleep"), NULL}, {"mode", TEXTV("relative"), NULL},
    {"requested_ns", INTV(1000), NULL},   {"n", INTV(3), NULL},
    {"stats", TABLEV, stats_no_p90},      {"missed", INTV(0), NULL},
    {"cpu_ns_per_call", REALV(700.5), NULL}, {"cpu_percent", REALV(12.5), NULL},
    {"ctx_switches", TABLEV, ctx_a},      {"wall_ns", INTV(90000), NULL},
    {"env", TABLEV, env_a},               {NULL, INTV(0), NULL}};
static const node run_no_wall[] = {
    {"method", TEXTV("nanosleep"), NULL}, {"mode", TEXTV("relative"), NULL},
    {"requested_ns", INTV(1000), NULL},   {"n", INTV(3), NULL},
    {"stats", TABLEV, stats_run},         {"missed", INTV(0), NULL},
    {"cpu_ns_per_call", REALV(700.5), NULL}, {"cpu_percent", REALV(12.5), NULL},
    {"ctx_switches", TABLEV, ctx_a},      {"env", TABLEV, env_a}, {NULL, INTV(0), NULL}};

static const sleepacc_call *lua_row(const char *name) {
  for (const sleepacc_call *c = sleepacc_calls; c->fn; c++)
    if (c->lua && strcmp(c->lua, name) == 0 && c->shape != SLEEPACC_CALL_MODULE) return c;
  return NULL;
}

/* The save call of results to path; *f its fault, *context what a failure names. */
static int call_save(const node *results, const char *path, sleepacc_fault *f, const char **context) {
  const sleepacc_call *c = lua_row("save");
  fake t = {results, {NULL}, 0, 0, 0, {NULL, NULL}};
  sleepacc_getter g = getter(&t);
  sleepacc_call_args a;
  sleepacc_answer ans;
  void *buf = malloc(c->size);
  int rc;
  memset(&a, 0, sizeof a);
  a.options = &g, a.room = g.room, a.ctx = g.ctx, a.name = path;
  a.writer = "c-test", a.writer_version = "1";
  rc = sleepacc_call_run(c, &a, buf, &ans);
  CHECK(rc < 0 || *(int *)buf == 1); /* the answer: true */
  *f = ans.fault, *context = ans.context;
  free(buf);
  fake_free(&t);
  return rc;
}

/* Line k (1-based) of path into buf. */
static int line_of(const char *path, int k, char *buf, size_t cap) {
  FILE *fp = fopen(path, "r");
  int found = 0;
  if (!fp) return 0;
  for (int i = 1; fgets(buf, (int)cap, fp); i++)
    if (i == k) {
      found = 1;
      break;
    }
  fclose(fp);
  return found;
}

static void test_save_writes_the_point_of_a_record_read_back(void) {
  char path[] = "/tmp/sleepacc-test-records-XXXXXX", line[8192], want[8192];
  node items[2] = {{NULL, TABLEV, run_a}, {NULL, TABLEV, run_a}};
  node l = {NULL, {SLEEPACC_VALUE_LIST, 2, 0.0, NULL, NULL, NULL, 0}, items};
  sleepacc_result res;
  const char *context = NULL;
  sleepacc_fault f;
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  unlink(path);
  CHECK(call_save(&l, path, &f, &context) == 0);
  /* the point the core writes of the same record built in C */
  memset(&res, 0, sizeof res);
  res.method = "nanosleep", res.mode = "relative", res.requested_ns = 1000, res.n = 3;
  res.stats.n = 3, res.stats.min = 1000, res.stats.max = 3000, res.stats.mean = 2000.5, res.stats.std = 1.0;
  res.stats.median = 2000, res.stats.p90 = 2800, res.stats.p99 = 2900, res.stats.p999 = 3000;
  res.cpu_ns_per_call = 700.5, res.cpu_percent = 12.5, res.ctx_voluntary = 3, res.wall_ns = 90000;
  res.env = (sleepacc_run_env){-1, NULL, -1, 1, 0, -1, -1}; /* absent OPT rows: null */
  CHECK(sleepacc_json_point(&res, kept, 3, want, sizeof want, NULL) > 0);
  CHECK(line_of(path, 2, line, sizeof line) && strcmp(line, want) == 0);
  CHECK(line_of(path, 3, line, sizeof line) && strcmp(line, want) == 0);
  CHECK(line_of(path, 4, line, sizeof line) && strncmp(line, "{\"type\":\"footer\"", 16) == 0);
  CHECK(line_of(path, 1, line, sizeof line) && strstr(line, "\"c-test\""));
  unlink(path);
}

static void test_save_refuses_before_it_writes(void) {
  char path[] = "/tmp/sleepacc-test-records-XXXXXX", buf[SLEEPACC_FAULT_TEXT_MAX];
  node items[3], l = list_of(run_no_wall, items);
  const char *context = NULL;
  sleepacc_fault f;
  int fd = mkstemp(path);
  close(fd);
  unlink(path);
  items[0] = items[1] = (node){NULL, TABLEV, run_a};
  CHECK(call_save(&l, path, &f, &context) == -EINVAL); /* a required key absent */
  sleepacc_fault_text(&f, SLEEPACC_BINDING_LUA, NULL, "nil", NULL, buf, sizeof buf);
  CHECKF(strcmp(buf, "results[3].wall_ns: must be an integer, got nil") == 0, "%s", buf);
  CHECK(access(path, F_OK) != 0); /* nothing written: every record is read first */
  items[2] = (node){NULL, TABLEV, run_no_p90}; /* a statistic left out: refused, not written as 0 */
  CHECK(call_save(&l, path, &f, &context) == -EINVAL);
  sleepacc_fault_text(&f, SLEEPACC_BINDING_LUA, NULL, "nil", NULL, buf, sizeof buf);
  CHECKF(strcmp(buf, "results[3].stats.p90: must be an integer, got nil") == 0, "%s", buf);
  CHECK(access(path, F_OK) != 0);
  CHECK(call_save(&one_good, path, &f, &context) == -EINVAL && f.depth == 1); /* a table's row only */
  CHECK(call_save(&l, "/nonexistent-dir/x.jsonl", &f, &context) == -EINVAL);
  items[2] = items[0];
  CHECK(call_save(&l, "/nonexistent-dir/x.jsonl", &f, &context) == -ENOENT);
  CHECK(f.kind == SLEEPACC_FAULT_NONE && context && strcmp(context, "/nonexistent-dir/x.jsonl") == 0);
}

/* A record a reader of the file would refuse (Python's records.check_point)
 * is refused by save, by the point rules of its rows, before any file: it
 * was written, and sleepacc.load, report and compare then refused the whole
 * file ("mode must be 'relative' or 'periodic', got 'sideways'"). */
static void test_save_holds_a_record_to_the_point_rules(void) {
  static const struct {
    const char *key;
    sleepacc_value v;
    const char *shown; /* a number as the binding shows it (a string: the core) */
    const char *want;
  } bad[] = {
      {"mode", TEXTV("sideways"), NULL, "results[1].mode: must be 'relative' or 'periodic', got \"sideways\""},
      {"method", TEXTV(""), NULL, "results[1].method: must be a method name (printable text), got \"\""},
      {"method", TEXTV("a\tb"), NULL, "results[1].method: must be a method name (printable text), got \"a\\tb\""},
      {"requested_ns", INTV(-5), "-5", "results[1].requested_ns: must be >= 0, got -5"},
      {"n", INTV(-1), "-1", "results[1].n: must be >= 0, got -1"},
  };
  char path[] = "/tmp/sleepacc-test-records-XXXXXX", buf[SLEEPACC_FAULT_TEXT_MAX];
  node one = {NULL, TABLEV, run_a};
  const char *context = NULL;
  sleepacc_fault f;
  int fd = mkstemp(path);
  close(fd);
  unlink(path);
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    node rec[sizeof run_a / sizeof run_a[0]], items[1];
    node l = {NULL, {SLEEPACC_VALUE_LIST, 1, 0.0, NULL, NULL, NULL, 0}, items};
    sleepacc_value v = bad[i].v;
    memcpy(rec, run_a, sizeof rec);
    for (node *k = rec; k->key; k++)
      if (strcmp(k->key, bad[i].key) == 0) k->v = v;
    items[0] = (node){NULL, TABLEV, rec};
    if (v.kind == SLEEPACC_VALUE_TEXT) v.i = (int64_t)strlen(v.s);
    CHECK(call_save(&l, path, &f, &context) == -ERANGE && f.kind == SLEEPACC_FAULT_RULE);
    sleepacc_fault_text(&f, SLEEPACC_BINDING_LUA, &v, v.kind == SLEEPACC_VALUE_TEXT ? "string" : "number",
                        bad[i].shown, buf, sizeof buf);
    CHECKF(strcmp(buf, bad[i].want) == 0, "%s", buf);
    CHECK(access(path, F_OK) != 0); /* refused before any file */
  }
  CHECK(call_save(&one, path, &f, &context) == 0); /* a run's record passes them */
  unlink(path);
}

int main(void) {
  TEST(test_a_record_reads_every_row);
  TEST(test_the_fault_names_the_way_to_the_value);
  TEST(test_a_value_that_is_no_table_and_a_getter_that_cannot_enter);
  TEST(test_the_table_row_renders_one_record_or_a_list);
  TEST(test_the_table_row_refuses_by_the_core_rules);
  TEST(test_the_table_row_zeroes_what_a_record_leaves_out);
  TEST(test_save_writes_the_point_of_a_record_read_back);
  TEST(test_save_refuses_before_it_writes);
  TEST(test_save_holds_a_record_to_the_point_rules);
  return check_summary();
}
