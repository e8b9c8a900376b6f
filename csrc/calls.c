/*
 * calls.c -- the bindings' queries as rows of one table:
 * the registry's rows, the defaults of a run and of a sleeper, host facts,
 * clocks, a formatted duration, a statistic's quantile level, the clock's
 * now, seconds in ns, the statistics of values a binding lends, the plan of
 * a run and of a sweep from a whole options table (read through the
 * binding's getter), the text table of records (read the same way), and
 * the module constants.
 * Each row says how a binding shows the answer; each function fills a
 * caller's buffer of the row's size, so a binding has one dispatcher for
 * all of them (python/_ext/module.c's py_call, lua/lsleepacc.c's
 * sleepacc__call) and a new query is one row and one function here.
 *
 * Owns: sleepacc_calls, sleepacc_call_run, sleepacc_point_fields, and the
 * answers' structs and field tables below.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ arguments */

/* The rows of an argument: option rows over sleepacc_call_args, so each
 * binding converts them with its option converter and words (lo: the least
 * value). */
static const sleepacc_option ns_arg[] = {
    {"ns", SLEEPACC_OPT_INT64, "ns", offsetof(sleepacc_call_args, i64), INT64_MIN},
    {NULL, 0, NULL, 0, 0}};
static const sleepacc_option reads_arg[] = {
    {"reads", SLEEPACC_OPT_INT, "reads", offsetof(sleepacc_call_args, i), 0},
    {NULL, 0, NULL, 0, 0}};
static const sleepacc_option name_arg[] = {
    {"name", SLEEPACC_OPT_NAME, "name", offsetof(sleepacc_call_args, name), 0},
    {NULL, 0, NULL, 0, 0}};
static const sleepacc_option path_arg[] = {
    {"path", SLEEPACC_OPT_NAME, "path", offsetof(sleepacc_call_args, name), 1}, /* lo 1: not empty */
    {NULL, 0, NULL, 0, 0}};
/* seconds_ns's argument is sleepacc_seconds_option, the duration rule's
 * row (at most one day; a sleep's seconds are sleepacc_sleep_option's, with
 * no day cap): its offset 0 is the i64 slot. */
_Static_assert(offsetof(sleepacc_call_args, i64) == 0, "sleepacc_seconds_option fills i64");
/* A whole options table, read by the core (calls with options, below). */
static const sleepacc_option table_arg[] = {
    {"options", SLEEPACC_OPT_TABLE, "options", offsetof(sleepacc_call_args, options), 0},
    {NULL, 0, NULL, 0, 0}};
static const sleepacc_option stats_args[] = {
    {"values", SLEEPACC_OPT_VALUES, "values", offsetof(sleepacc_call_args, values), 0},
    {"threshold", SLEEPACC_OPT_INT64, "threshold", offsetof(sleepacc_call_args, i64), INT64_MIN},
    {NULL, 0, NULL, 0, 0}};
/* A table of records (read by the core through a getter over the one
 * value, sleepacc_fields_read) and its style. */
static const sleepacc_option table_args[] = {
    {"results", SLEEPACC_OPT_RECORDS, "results", offsetof(sleepacc_call_args, options), 0},
    {"style", SLEEPACC_OPT_STYLE, "style", offsetof(sleepacc_call_args, i), 0},
    {NULL, 0, NULL, 0, 0}};
/* Records to save and the path of the results file. */
static const sleepacc_option save_args[] = {
    {"results", SLEEPACC_OPT_RECORDS, "results", offsetof(sleepacc_call_args, options), 0},
    {"path", SLEEPACC_OPT_NAME, "path", offsetof(sleepacc_call_args, name), 1}, /* lo 1: not empty */
    {NULL, 0, NULL, 0, 0}};
static const sleepacc_option plan_args[] = {
    {"options", SLEEPACC_OPT_TABLE, "options", offsetof(sleepacc_call_args, options), 0},
    {"sweep_point", SLEEPACC_OPT_BOOL, "sweep_point", offsetof(sleepacc_call_args, i), 0},
    {NULL, 0, NULL, 0, 0}};

/* The row of a list element (sleepacc_list) that is a field table's row name, a name, an int64. */
static const sleepacc_field row_name[] = {
    {"", offsetof(sleepacc_field, name), SLEEPACC_FIELD_STRING, NULL, 0},
    {NULL, 0, 0, NULL, 0}};
static const sleepacc_field a_name[] = {
    {"", 0, SLEEPACC_FIELD_STRING, NULL, 0},
    {NULL, 0, 0, NULL, 0}};
static const sleepacc_field an_int64[] = {
    {"", 0, SLEEPACC_FIELD_INT64, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* ------------------------------------------------------------ methods */

/* Room for the registry's rows (sleepacc_method_count() is checked). */
#define CALLS_MAX_METHODS 64

typedef struct {
  sleepacc_list list;                         /* the rows below */
  sleepacc_method_info at[CALLS_MAX_METHODS]; /* by sleepacc_method_info_fields */
} methods_answer;

static const sleepacc_field method_row[] = {
    {"", 0, SLEEPACC_FIELD_NESTED, sleepacc_method_info_fields, 0},
    {NULL, 0, 0, NULL, 0}};
static const sleepacc_field methods_fields[] = {
    {"methods", offsetof(methods_answer, list), SLEEPACC_FIELD_LIST, method_row, 0},
    {NULL, 0, 0, NULL, 0}};

static int call_methods(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  methods_answer *m = (methods_answer *)buf;
  size_t n = sleepacc_method_count();
  (void)a, (void)out;
  if (n > CALLS_MAX_METHODS)
    return -ENOSPC;
  for (size_t i = 0; i < n; i++) {
    int rc = sleepacc_method_info_get(sleepacc_method_at(i), &m->at[i]);
    if (rc < 0)
      return rc;
  }
  m->list = (sleepacc_list){m->at, n, sizeof m->at[0]};
  return 0;
}

/* ------------------------------------------------------------ defaults */

static int call_config_default(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)a, (void)out;
  sleepacc_config_default((sleepacc_config *)buf);
  return 0;
}

static int call_sleeper_default(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)a, (void)out;
  sleepacc_sleeper_config_default((sleepacc_sleeper_config *)buf);
  return 0;
}

/* ------------------------------------------------------------ host facts */

typedef struct {
  sleepacc_fact facts[SLEEPACC_MAX_FACTS];
  sleepacc_field rows[SLEEPACC_MAX_FACTS + 2]; /* sleepacc_fact_fields of facts, then "unknown" */
  const char *unknown[SLEEPACC_MAX_FACTS];     /* the keys of the facts not read */
  sleepacc_list unknown_list;                  /* over unknown */
} facts_answer;

/* The facts by the rows built for them (each fact by its key, an unknown
 * one null), and "unknown": the keys of those not read (a NULL_KEYS row). */
static int call_host_facts(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  facts_answer *f = (facts_answer *)buf;
  size_t count = 0, n = 0;
  int rc = sleepacc_host_facts(f->facts, SLEEPACC_MAX_FACTS, &count);
  (void)a;
  if (rc < 0)
    return rc;
  sleepacc_fact_fields(f->facts, count, f->rows);
  for (size_t i = 0; i < count; i++)
    if (f->facts[i].type == SLEEPACC_FACT_UNKNOWN)
      f->unknown[n++] = f->facts[i].key;
  f->unknown_list = (sleepacc_list){f->unknown, n, sizeof f->unknown[0]};
  /* the facts' rows' offsets are relative to facts, the first member */
  f->rows[count] = (sleepacc_field){"unknown", offsetof(facts_answer, unknown_list),
                                    SLEEPACC_FIELD_LIST, a_name, SLEEPACC_FIELD_NULL_KEYS};
  f->rows[count + 1] = (sleepacc_field){NULL, 0, 0, NULL, 0};
  out->fields = f->rows;
  return 0;
}

/* ------------------------------------------------------------ clocks */

static int call_clock_info(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)out;
  return sleepacc_clocks_get(a->i, (sleepacc_clocks *)buf);
}

static int call_now_ns(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)a, (void)out;
  *(int64_t *)buf = sleepacc_now_ns();
  return 0;
}

static const sleepacc_field now_fields[] = {
    {"now_ns", 0, SLEEPACC_FIELD_INT64, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* ------------------------------------------------------------ one value */

#define CALLS_DURATION_TEXT 64 /* room for sleepacc_format_duration's text */

static int call_format_duration(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  int len = sleepacc_format_duration(a->i64, (char *)buf, CALLS_DURATION_TEXT);
  (void)out;
  return len < 0 ? len : 0;
}

static const sleepacc_field duration_fields[] = {
    {"text", 0, SLEEPACC_FIELD_TEXT, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

static int call_stats_level(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)out;
  *(double *)buf = sleepacc_stats_level(a->name);
  return 0;
}

static const sleepacc_field level_fields[] = {
    {"level", 0, SLEEPACC_FIELD_DOUBLE, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

static int call_seconds_ns(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)out;
  *(int64_t *)buf = a->i64; /* converted by its option row: the SECONDS rule */
  return 0;
}

/* The statistics of the values lent (values below a->i64 count as
 * undersleeps), in scratch memory of their size the call asks for. */
static int call_stats(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  size_t n = a->count ? a->count : 1;
  int64_t *scratch = a->room ? (int64_t *)a->room(a->ctx, n * sizeof *scratch) : NULL;
  (void)out;
  if (scratch == NULL)
    return -ENOMEM;
  return sleepacc_stats_compute(a->values, a->count, a->i64, scratch, (sleepacc_stats *)buf);
}

/* ------------------------------------------------------------ calls with options */

/* The checked config of a run from the table a->options (sleepacc_config_read;
 * a->i: a sweep's point), its refusal in out->fault. */
static int call_plan(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  if (!a->options)
    return -EFAULT;
  return sleepacc_config_read((sleepacc_config *)buf, a->options, a->i, &out->fault);
}

typedef struct {
  sleepacc_sweep_args sweep; /* as read: its points in the getter's room */
  sleepacc_list points;      /* over sweep.points */
} sweep_answer;

const sleepacc_field sleepacc_point_fields[] = {
    {"method", offsetof(sleepacc_point, method), SLEEPACC_FIELD_METHOD, NULL, 0},
    {"duration_ns", offsetof(sleepacc_point, duration_ns), SLEEPACC_FIELD_INT64, NULL, 0},
    {NULL, 0, 0, NULL, 0}};
static const sleepacc_field point_row[] = {
    {"", 0, SLEEPACC_FIELD_NESTED, sleepacc_point_fields, 0},
    {NULL, 0, 0, NULL, 0}};
static const sleepacc_field sweep_fields[] = {
    {"points", offsetof(sweep_answer, points), SLEEPACC_FIELD_LIST, point_row, 0},
    {NULL, 0, 0, NULL, 0}};

/* The points of the sweep a->options plans (sleepacc_sweep_read, check 0:
 * methods, durations and mode; the plan's rules), its refusal in out->fault. */
static int call_sweep_plan(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  sweep_answer *w = (sweep_answer *)buf;
  int n;
  if (!a->options)
    return -EFAULT;
  if ((n = sleepacc_sweep_read(&w->sweep, a->options, 0, &out->fault)) < 0)
    return n;
  w->points = (sleepacc_list){w->sweep.points, (size_t)n, sizeof w->sweep.points[0]};
  return 0;
}

/* Why the default sweep leaves out methods the system has (one line each,
 * sleepacc_method_ready): a signal method with no free real-time signal. */
#define CALLS_SKIP_TEXT 320
typedef struct {
  sleepacc_list list;                          /* over at */
  const char *at[CALLS_MAX_METHODS];           /* into text */
  char text[CALLS_MAX_METHODS][CALLS_SKIP_TEXT];
} skips_answer;
static const sleepacc_field skips_fields[] = {
    {"skips", offsetof(skips_answer, list), SLEEPACC_FIELD_LIST, a_name, 0},
    {NULL, 0, 0, NULL, 0}};

static int call_sweep_skips(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  skips_answer *w = (skips_answer *)buf;
  size_t k = 0;
  (void)a, (void)out;
  for (size_t i = 0; i < sleepacc_method_count() && k < CALLS_MAX_METHODS; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (sleepacc_method_available(m) && !sleepacc_method_ready(m, w->text[k], CALLS_SKIP_TEXT))
      w->at[k] = w->text[k], k++;
  }
  w->list = (sleepacc_list){w->at, k, sizeof w->at[0]};
  return 0;
}

/* ------------------------------------------------------------ the thread's environment */

/* What env_hold applied to the calling thread, to be undone by env_release
 * on that thread, the last held first. */
#define CALLS_ENV_DEPTH 4
static __thread sleepacc_env_saved env_held[CALLS_ENV_DEPTH];
static __thread int env_depth;

typedef struct {
  sleepacc_config config;                    /* its env: what was applied */
  char words[SLEEPACC_PRIVILEGE_MESSAGE_MAX]; /* what a refused setting needs */
} env_answer;

/* The env row of sleepacc_config_fields: the answer of env_hold. */
static const sleepacc_field *env_row(void) {
  const sleepacc_field *row = sleepacc_config_fields;
  while (row->name && strcmp(row->name, "env")) row++;
  return row;
}

/* The calling thread's slack, policy, priority and cpu from a->options
 * (sleepacc__env_read: its refusal in out->fault), applied by the core's
 * environment control (sleepacc_env_apply) and held until env_release; a
 * setting the OS refuses names its option and, for privileges, what it
 * needs (out->context).  At most CALLS_ENV_DEPTH held: -EBUSY. */
static int call_env_hold(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  env_answer *ans = (env_answer *)buf;
  sleepacc_env_saved *saved;
  char field[32];
  int rc;
  if (!a->options)
    return -EFAULT;
  sleepacc_config_default(&ans->config);
  if ((rc = sleepacc__env_read(&ans->config.env, a->options, &out->fault)) < 0)
    return rc;
  if (env_depth >= CALLS_ENV_DEPTH)
    return -EBUSY;
  saved = &env_held[env_depth];
  out->fields = env_row();
  if ((rc = sleepacc_env_apply(&ans->config.env, saved)) == 0)
    return env_depth++, 0;
  snprintf(field, sizeof field, "env.%s", saved->bad_field ? saved->bad_field : "");
  if (saved->why) /* refused up front: nothing was changed */
    snprintf(ans->words, sizeof ans->words, "%s: %s", sleepacc_option_of_field(field), saved->why);
  else if (!sleepacc_privilege_explain(&ans->config, rc, ans->words, sizeof ans->words))
    snprintf(ans->words, sizeof ans->words, "%s", saved->bad_field ? sleepacc_option_of_field(field)
                                                                   : "sleepacc_env_apply");
  out->context = ans->words;
  return rc;
}

/* The thread's settings as env_hold found them (sleepacc_env_restore of
 * the last one held): true, or false when none is held (nothing to do). */
static int call_env_release(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  (void)a, (void)out;
  if (env_depth == 0)
    return 0;
  *(int *)buf = 1;
  return sleepacc_env_restore(&env_held[--env_depth]);
}

static const sleepacc_field released_fields[] = {
    {"released", 0, SLEEPACC_FIELD_BOOL, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* ------------------------------------------------------------ records */

/* Whether the value results is one record rather than a list of them (a
 * table with a method; a Lua array has none), by the getter g. */
static int one_record(const sleepacc_getter *g) {
  sleepacc_value v;
  int rc;
  if ((rc = g->enter(g->ctx, "results", -1)) != 1)
    return rc;
  rc = g->get(g->ctx, "method", -1, &v);
  g->enter(g->ctx, NULL, 0);
  return rc;
}

static const sleepacc_field table_fields[] = {
    {"text", 0, SLEEPACC_FIELD_STRING, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* How many records the value results holds (*one: it is one record, read
 * as results itself, index -1), or its refusal in out->fault. */
static int records_count(const sleepacc_getter *g, size_t *n, int *one, sleepacc_answer *out) {
  sleepacc_value v;
  int rc;
  if (!g || !g->enter)
    return -EFAULT;
  if ((rc = g->get(g->ctx, "results", -1, &v)) < 0 || (*one = one_record(g)) < 0)
    return rc < 0 ? rc : *one;
  if (rc == 0 || (!*one && (v.kind != SLEEPACC_VALUE_LIST || v.i < 0)))
    return sleepacc__fault_set(&out->fault, -EINVAL, SLEEPACC_FAULT_TYPE, "results", -1,
                               SLEEPACC_OPT_RECORDS, 0, NULL);
  *n = *one ? 1 : (size_t)v.i;
  return 0;
}

/* The text table (style a->i, sleepacc_table_style_name) of the records
 * of a->options' results: one record, or a list of them, each read by
 * sleepacc_row_fields (a record of a run has those keys), in memory the
 * call asks for (rows, then the text), its refusal in out->fault. */
static int call_table(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  const sleepacc_getter *g = a->options;
  sleepacc_row *rows;
  size_t n = 0;
  int rc, one = 0;
  if (!a->room)
    return -EFAULT;
  if ((rc = records_count(g, &n, &one, out)) < 0)
    return rc;
  if ((rows = (sleepacc_row *)a->room(a->ctx, (n ? n : 1) * sizeof *rows)) == NULL)
    return -ENOMEM;
  memset(rows, 0, (n ? n : 1) * sizeof *rows); /* a statistic left out is 0, never the room's bytes */
  for (size_t i = 0; i < n; i++)
    if ((rc = sleepacc_fields_read(sleepacc_row_fields, g, "results", one ? -1 : (int64_t)i, &rows[i],
                                   &out->fault)) < 0)
      return rc;
  rc = sleepacc_table_text(sleepacc_table_style_name(a->i), rows, n, a->room, a->ctx, (char **)buf, NULL);
  return rc < 0 ? rc : 0;
}

/* A record read back with its kept samples (lent by the binding). */
typedef struct saved {
  sleepacc_result res;
  sleepacc_samples kept;
} saved;

/* The samples of a record: the run's (a SAMPLES value), or none (absent:
 * streamed, written null). */
static const sleepacc_field kept_fields[] = {
    {"samples", offsetof(saved, kept), SLEEPACC_FIELD_SAMPLES, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* Record i (-1: the one record) of results, then its samples. */
static int read_saved(const sleepacc_getter *g, int64_t i, saved *s, sleepacc_answer *out) {
  int rc = sleepacc_fields_read(sleepacc_result_fields, g, "results", i, &s->res, &out->fault);
  return rc < 0 ? rc : sleepacc_fields_read(kept_fields, g, "results", i, s, &out->fault);
}

typedef struct {
  int saved;          /* the answer: true */
  sleepacc_writer w;  /* the file being written (about 80 KB: here, not on the stack) */
} save_answer;

static const sleepacc_field save_fields[] = {
    {"saved", offsetof(save_answer, saved), SLEEPACC_FIELD_BOOL, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

/* How a whole file at a->name is written (sleepacc_atomic_target): by a
 * rename over `path`, or to the name itself (rename false, path ""). */
typedef struct atomic_answer {
  int rename;
  char path[4096];
} atomic_answer;

static const sleepacc_field atomic_fields[] = {
    {"rename", offsetof(atomic_answer, rename), SLEEPACC_FIELD_BOOL, NULL, 0},
    {"path", offsetof(atomic_answer, path), SLEEPACC_FIELD_TEXT, NULL, 0},
    {NULL, 0, 0, NULL, 0}};

static int call_atomic_target(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  atomic_answer *ans = (atomic_answer *)buf;
  int rc = sleepacc_atomic_target(a->name, ans->path, sizeof ans->path);
  out->context = a->name;
  if (rc < 0) return rc;
  ans->rename = rc;
  return 0;
}

/* The sleepacc/1 results file at a->name (the core's writer, whole or
 * absent: SLEEPACC_WRITE_ATOMIC; a->writer its header's binding) of the
 * records of a->options' results (one, or a list), each read by
 * sleepacc_result_fields with its kept samples, all of them before the
 * file is opened; its refusal in out->fault, an OS failure naming the path
 * (out->context). */
static int call_save(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  save_answer *ans = (save_answer *)buf;
  sleepacc_writer *w = &ans->w;
  saved *recs;
  size_t n = 0;
  int rc, one = 0;
  if (!a->room || !a->name || !a->writer || !a->writer_version)
    return -EFAULT;
  if ((rc = records_count(a->options, &n, &one, out)) < 0)
    return rc;
  if ((recs = (saved *)a->room(a->ctx, (n ? n : 1) * sizeof *recs)) == NULL)
    return -ENOMEM;
  memset(recs, 0, (n ? n : 1) * sizeof *recs);
  for (size_t i = 0; i < n; i++)
    if ((rc = read_saved(a->options, one ? -1 : (int64_t)i, &recs[i], out)) < 0)
      return rc;
  out->context = a->name;
  if ((rc = sleepacc_writer_open(w, a->name, SLEEPACC_WRITE_ATOMIC, a->writer, a->writer_version)) < 0)
    return rc; /* an OS failure, ENAMETOOLONG too (as a sweep's output=) */
  for (size_t i = 0; i < n && rc == 0; i++) /* one sync, at the end */
    rc = sleepacc_writer_point(w, &recs[i].res, recs[i].kept.at, recs[i].kept.n);
  if (rc == 0)
    rc = sleepacc_writer_close(w);
  if (rc < 0)
    sleepacc_writer_abort(w);
  ans->saved = rc == 0;
  return rc;
}

/* ------------------------------------------------------------ constants */

/* The rows of a field table as a list of their names. */
static sleepacc_list field_names(const sleepacc_field *table) {
  size_t n = 0;
  while (table[n].name)
    n++;
  return (sleepacc_list){table, n, sizeof *table};
}

/* name(0), name(1), ... up to the first NULL (an enum's names by value),
 * into names (room for 16), as a list. */
static sleepacc_list enum_names(const char *(*name)(int), const char **names) {
  size_t n = 0;
  while (n < 16 && (names[n] = name((int)n)) != NULL)
    n++;
  return (sleepacc_list){names, n, sizeof *names};
}

static int call_constants(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  sleepacc_constants *k = (sleepacc_constants *)buf;
  (void)a, (void)out;
  k->version = SLEEPACC_VERSION;
  k->max_duration_ns = SLEEPACC_MAX_DURATION_NS;
  k->max_samples = SLEEPACC_MAX_SAMPLES;
  k->sweep_budget_ns = SLEEPACC_SWEEP_BUDGET_NS;
  k->hist_precision = SLEEPACC_HIST_PRECISION;
  k->stats_fields = field_names(sleepacc_stats_fields);
  k->result_fields = field_names(sleepacc_result_fields);
  k->policy_names = enum_names(sleepacc_policy_name, k->names[0]);
  k->mode_names = enum_names(sleepacc_mode_name, k->names[1]);
  k->durations_ns = (sleepacc_list){sleepacc_default_durations_ns, SLEEPACC_DEFAULT_DURATION_COUNT,
                                    sizeof sleepacc_default_durations_ns[0]};
  return 0;
}

#define K(m) offsetof(sleepacc_constants, m)
/* sleepacc._core's constants (a list there is a tuple: module constants are immutable). */
static const sleepacc_field python_constants[] = {
    {"VERSION", K(version), SLEEPACC_FIELD_STRING, NULL, 0},
    {"MAX_DURATION_NS", K(max_duration_ns), SLEEPACC_FIELD_INT64, NULL, 0},
    {"MAX_SAMPLES", K(max_samples), SLEEPACC_FIELD_INT64, NULL, 0},
    {"SWEEP_BUDGET_NS", K(sweep_budget_ns), SLEEPACC_FIELD_INT64, NULL, 0},
    {"HIST_PRECISION", K(hist_precision), SLEEPACC_FIELD_DOUBLE, NULL, 0},
    {"stats_fields", K(stats_fields), SLEEPACC_FIELD_LIST, row_name, 0},
    {"result_fields", K(result_fields), SLEEPACC_FIELD_LIST, row_name, 0},
    {"policy_names", K(policy_names), SLEEPACC_FIELD_LIST, a_name, 0},
    {"mode_names", K(mode_names), SLEEPACC_FIELD_LIST, a_name, 0},
    {"default_durations_ns", K(durations_ns), SLEEPACC_FIELD_LIST, an_int64, 0},
    {NULL, 0, 0, NULL, 0}};
/* The Lua module's (lua-cjson's convention). */
static const sleepacc_field lua_constants[] = {
    {"_VERSION", K(version), SLEEPACC_FIELD_STRING, NULL, 0},
    {NULL, 0, 0, NULL, 0}};
#undef K

/* ------------------------------------------------------------ the table */

const sleepacc_call sleepacc_calls[] = {
    {"methods", "methods", "methods() -> list of the registry's rows (dicts)",
     "sleepacc_method_info_get", SLEEPACC_CALL_VALUE, 0, NULL, 0,
     sizeof(methods_answer), call_methods, methods_fields},
    {"config_default", "defaults", "config_default() -> dict of config fields",
     "sleepacc_config_default", SLEEPACC_CALL_OBJECT, 0, NULL, 0,
     sizeof(sleepacc_config), call_config_default, sleepacc_config_fields},
    {"sleeper_default", NULL, "sleeper_default() -> dict: Sleeper/Pacer's",
     "sleepacc_sleeper_config_default", SLEEPACC_CALL_OBJECT, 0, NULL, 0,
     sizeof(sleepacc_sleeper_config), call_sleeper_default, sleepacc_sleeper_config_fields},
    {"host_facts", "system_info", "host_facts() -> dict of sleepacc_host_facts()",
     "sleepacc_host_facts", SLEEPACC_CALL_OBJECT, SLEEPACC_CALL_BLOCKS, NULL, 0,
     sizeof(facts_answer), call_host_facts, NULL},
    {"clock_info", "clock_info",
     "clock_info(reads=0) -> {clock: {resolution_ns, read_cost_ns}} (None: unknown)",
     "sleepacc_clocks_get", SLEEPACC_CALL_OBJECT, SLEEPACC_CALL_BLOCKS, reads_arg, 0,
     sizeof(sleepacc_clocks), call_clock_info, sleepacc_clocks_fields},
    {NULL, "now_ns", "now_ns() -> CLOCK_MONOTONIC now, in ns", "sleepacc_now_ns",
     SLEEPACC_CALL_VALUE, 0, NULL, 0, sizeof(int64_t), call_now_ns, now_fields},
    {"format_duration", NULL, "format_duration(ns) -> str, as Go prints it",
     "sleepacc_format_duration", SLEEPACC_CALL_VALUE, 0, ns_arg, 1, CALLS_DURATION_TEXT,
     call_format_duration, duration_fields},
    {"stats_level", NULL, "stats_level(name) -> quantile level, -1 for none", "sleepacc_stats_level",
     SLEEPACC_CALL_VALUE, 0, name_arg, 1, sizeof(double), call_stats_level, level_fields},
    {"seconds_ns", NULL, "seconds_ns(seconds) -> int ns, by the core's duration rule",
     "sleepacc_seconds_check", SLEEPACC_CALL_VALUE, 0, sleepacc_seconds_option, 1, sizeof(int64_t),
     call_seconds_ns, an_int64},
    {"stats", NULL, "stats(values, threshold) -> dict of the core's stats", "sleepacc_stats_compute",
     SLEEPACC_CALL_OBJECT, 0, stats_args, 2, sizeof(sleepacc_stats), call_stats,
     sleepacc_stats_fields},
    {"plan", NULL, "plan(options, sweep_point=False) -> the checked config of {option: value}",
     "sleepacc_config_read", SLEEPACC_CALL_OBJECT, 0, plan_args, 1, sizeof(sleepacc_config),
     call_plan, sleepacc_config_fields},
    {"sweep_plan", NULL,
     "sweep_plan({methods=, durations=, mode=}) -> [{method, duration_ns}] by sleepacc_sweep_plan()",
     "sleepacc_sweep_read", SLEEPACC_CALL_VALUE, 0, table_arg, 1, sizeof(sweep_answer),
     call_sweep_plan, sweep_fields},
    {"sweep_skips", NULL,
     "sweep_skips() -> [str]: why the default sweep leaves out a method the system has, one line each",
     "sleepacc_method_ready", SLEEPACC_CALL_VALUE, SLEEPACC_CALL_BLOCKS, NULL, 0, sizeof(skips_answer),
     call_sweep_skips, skips_fields},
    {"env_hold", NULL,
     "env_hold({slack=, policy=, priority=, cpu=}) -> the env applied to the calling thread, "
     "held until env_release()",
     "sleepacc_env_apply", SLEEPACC_CALL_VALUE, 0, table_arg, 1, sizeof(env_answer), call_env_hold,
     NULL},
    {"env_release", NULL,
     "env_release() -> True: the thread's settings as the last env_hold found them (False: none held)",
     "sleepacc_env_restore", SLEEPACC_CALL_VALUE, 0, NULL, 0, sizeof(int), call_env_release,
     released_fields},
    {"table", "table", "table(results, style='irtt') -> str: the text table of records",
     "sleepacc_table_text", SLEEPACC_CALL_VALUE, 0, table_args, 1, sizeof(char *), call_table,
     table_fields},
    {NULL, "save", "save(results, path) -> true: the sleepacc/1 results file of records",
     "sleepacc_writer_open", SLEEPACC_CALL_VALUE, 0, save_args, 2, sizeof(save_answer), call_save,
     save_fields},
    {"atomic_target", NULL, "atomic_target(path) -> {rename, path}: how a whole file is written",
     "sleepacc_atomic_target", SLEEPACC_CALL_OBJECT, SLEEPACC_CALL_BLOCKS, path_arg, 1,
     sizeof(atomic_answer), call_atomic_target, atomic_fields},
    {"constants", NULL, "the core's version, limits and name lists", "sleepacc_constants",
     SLEEPACC_CALL_MODULE, 0, NULL, 0, sizeof(sleepacc_constants), call_constants,
     python_constants},
    {NULL, "constants", "the core's version", "sleepacc_constants", SLEEPACC_CALL_MODULE, 0, NULL, 0,
     sizeof(sleepacc_constants), call_constants, lua_constants},
    {NULL, NULL, NULL, NULL, 0, 0, NULL, 0, 0, NULL, NULL}};

int sleepacc_call_run(const sleepacc_call *c, const sleepacc_call_args *a, void *buf,
                      sleepacc_answer *out) {
  static const sleepacc_call_args none;
  if (!c || !c->fn || !buf || !out)
    return -EFAULT;
  memset(buf, 0, c->size);
  memset(&out->fault, 0, sizeof out->fault);
  out->context = NULL;
  out->fields = c->fields;
  out->base = buf;
  return c->fn(a ? a : &none, buf, out);
}
