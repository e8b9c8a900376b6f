/*
 * lsleepacc.c -- the Lua 5.4 module `sleepacc`: a thin binding over the C
 * core in csrc/.  It converts arguments, runs the core in chunks so Ctrl-C
 * is seen, and maps errors; every timing loop, statistic and table lives in
 * the core once.
 *
 *   local sa = require "sleepacc"
 *   sa._VERSION                 "0.1.0" (SLEEPACC_VERSION)
 *   sa.methods()                array of {name, family, description,
 *                               granularity_ns, honours_slack ("yes"/"no"/
 *                               "unknown"), absolute, available}
 *   sa.measure{method=, duration=, n=, budget=, mode=, warmup=, keep_samples=,
 *              margin=, slack=, policy=, priority=, cpu=, lock_memory=}
 *                               result table (see sleepacc__push_result)
 *   sa.sweep{methods=, durations=, budget=, mode=, progress=, ...}
 *                               array of results
 *   sa.table(results [, "irtt"|"wide"])   string rendered by the core
 *   sa.system_info()            host facts (an unreadable fact is absent and
 *                               its key listed in .unknown)
 *   sa.clock_info()             {monotonic = {resolution_ns=, read_cost_ns=}, ...}
 *   sa.now_ns()                 CLOCK_MONOTONIC in ns (for scripts and tests)
 *
 * Units: every time the script passes is in seconds (duration, budget,
 * margin) except slack, an integer in ns like prctl(PR_SET_TIMERSLACK) and
 * /proc/<pid>/timerslack_ns (as in the Python API); every time returned is
 * integer ns in a field named *_ns, except `requested` (seconds, as given).
 *
 * Errors: bad arguments raise "bad argument '<field>' to '<fn>' (...)";
 * run-time OS failures return nil, "ENAME: message", "ENAME" -- including
 * EPERM when a policy/priority/lock_memory needs a privilege the process
 * lacks, and ENOMEM when the sample buffer cannot be allocated.  See
 * lua/binding.h for the conventions and the Ctrl-C design.
 */
#include "binding.h"

#include <lualib.h>

#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Samples kept when n is not given (8 MiB); stream (keep_samples=false) to
 * run a whole budget in constant memory. */
#define SLEEPACC_LUA_DEFAULT_KEEP ((size_t)1 << 20)
/* Largest warm-up accepted. */
#define SLEEPACC_LUA_MAX_WARMUP 1000000000LL
/* Metatable name of the Samples userdata. */
#define SLEEPACC_LUA_SAMPLES "sleepacc.Samples"

/* =================================================================
 * Samples: a userdata owning the int64 buffer the core writes into.
 * ================================================================= */
typedef struct sleepacc__samples {
  int64_t *data; /* malloc'd buffer (NULL when empty / streaming) */
  size_t len;    /* samples recorded */
  size_t cap;    /* buffer length in samples */
} sleepacc__samples;

static sleepacc__samples *sleepacc__checksamples(lua_State *L, int idx) {
  return (sleepacc__samples *)luaL_checkudata(L, idx, SLEEPACC_LUA_SAMPLES);
}

/* s:totable() -> a plain array of the samples (ns). */
static int sleepacc__samples_totable(lua_State *L) {
  sleepacc__samples *s = sleepacc__checksamples(L, 1);
  lua_createtable(L, s->len > INT_MAX ? INT_MAX : (int)s->len, 0);
  for (size_t i = 0; i < s->len; i++) {
    lua_pushinteger(L, (lua_Integer)s->data[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* s[i] (1-based; nil outside 1..#s), or a method by name. */
static int sleepacc__samples_index(lua_State *L) {
  sleepacc__samples *s = sleepacc__checksamples(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    int ok = 0;
    lua_Integer i = lua_tointegerx(L, 2, &ok);
    if (ok && i >= 1 && (uint64_t)i <= (uint64_t)s->len)
      lua_pushinteger(L, (lua_Integer)s->data[i - 1]);
    else
      lua_pushnil(L);
    return 1;
  }
  if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "totable") == 0) {
    lua_pushcfunction(L, sleepacc__samples_totable);
    return 1;
  }
  lua_pushnil(L);
  return 1;
}

static int sleepacc__samples_len(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)sleepacc__checksamples(L, 1)->len);
  return 1;
}

static int sleepacc__samples_tostring(lua_State *L) {
  sleepacc__samples *s = sleepacc__checksamples(L, 1);
  char buf[64];
  snprintf(buf, sizeof buf, "sleepacc.Samples(%zu ns values)", s->len);
  lua_pushstring(L, buf);
  return 1;
}

static int sleepacc__samples_gc(lua_State *L) {
  sleepacc__samples *s = sleepacc__checksamples(L, 1);
  free(s->data);
  s->data = NULL;
  s->len = s->cap = 0;
  return 0;
}

/* Push an empty Samples userdata. */
static sleepacc__samples *sleepacc__newsamples(lua_State *L) {
  sleepacc__samples *s = (sleepacc__samples *)lua_newuserdatauv(L, sizeof *s, 0);
  s->data = NULL;
  s->len = s->cap = 0;
  luaL_setmetatable(L, SLEEPACC_LUA_SAMPLES);
  return s;
}

/* =================================================================
 * Options shared by measure and sweep.
 * ================================================================= */
typedef struct sleepacc__opts {
  sleepacc_config cfg; /* method/duration set per run; the rest parsed */
  int keep_samples;    /* 1: keep every sample in a Samples buffer */
  int n_given;         /* 1: n was given (the buffer is sized by it) */
} sleepacc__opts;

static const char *const sleepacc__policy_list = "other, batch, idle, fifo, rr";

/* Validate env so far with the core; on -EINVAL blame `field`. */
static void sleepacc__envcheck(lua_State *L, const char *fn, const sleepacc_env *env,
                               const char *field, const char *why) {
  int rc = sleepacc_env_check(env);
  if (rc == -EINVAL) sleepacc_lua_argerror(L, fn, field, "%s", why);
}

/* The CPUs this thread may run on, as "0, 1" (for messages). */
static const char *sleepacc__allowed_cpus(char *buf, size_t n) {
  cpu_set_t set;
  size_t len = 0;
  buf[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  for (int c = 0; c < CPU_SETSIZE && len < n; c++)
    if (CPU_ISSET(c, &set))
      len += (size_t)snprintf(buf + len, n - len, "%s%d", len ? ", " : "", c);
  return buf;
}

/* Parse n, budget, mode, warmup, keep_samples, margin and the environment
 * from the options table at t into o (defaults first; method may be NULL
 * when the caller checks the FIFO/RR budget rule per method itself). */
static void sleepacc__parse_common(lua_State *L, int t, const char *fn, sleepacc__opts *o,
                                   const sleepacc_method *method, int64_t default_budget_ns,
                                   int default_keep) {
  sleepacc_config *c = &o->cfg;
  sleepacc_env *env = &c->env;
  memset(o, 0, sizeof *o);
  c->method = method;
  sleepacc_env_default(env);
  c->mode = SLEEPACC_MODE_RELATIVE;
  c->budget_ns = default_budget_ns;
  c->warmup = 2;
  o->keep_samples = default_keep;

  if (sleepacc_lua_field(L, t, "n")) {
    c->n = sleepacc_lua_integer(L, -1, fn, "n", 1, INT64_MAX / 2);
    o->n_given = 1;
    lua_pop(L, 1);
  }
  if (sleepacc_lua_field(L, t, "budget")) {
    if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1))
      c->budget_ns = 0; /* budget=false: only n stops the run */
    else
      c->budget_ns = sleepacc_lua_seconds_ns(L, -1, fn, "budget", SLEEPACC_LUA_NONZERO);
    lua_pop(L, 1);
  }
  if (c->budget_ns == 0 && !o->n_given)
    sleepacc_lua_argerror(L, fn, "n", "n is required when budget=false");
  if (sleepacc_lua_field(L, t, "mode")) {
    const char *s = sleepacc_lua_string(L, -1, fn, "mode");
    int m = sleepacc_mode_from_name(s);
    if (m < 0)
      sleepacc_lua_argerror(L, fn, "mode", "unknown mode \"%.40s\"; known: relative, periodic", s);
    c->mode = m;
    lua_pop(L, 1);
  }
  if (sleepacc_lua_field(L, t, "warmup")) {
    c->warmup = sleepacc_lua_integer(L, -1, fn, "warmup", 0, SLEEPACC_LUA_MAX_WARMUP);
    lua_pop(L, 1);
  }
  if (sleepacc_lua_field(L, t, "keep_samples")) {
    o->keep_samples = sleepacc_lua_boolean(L, -1, fn, "keep_samples");
    lua_pop(L, 1);
  }
  if (sleepacc_lua_field(L, t, "margin")) {
    c->margin_ns = sleepacc_lua_seconds_ns(L, -1, fn, "margin", 0);
    lua_pop(L, 1);
  }

  /* Environment: each field is checked by the core's own validation
   * (sleepacc_env_check) as soon as it is set, so the error names it. */
  if (sleepacc_lua_field(L, t, "slack")) {
    /* in ns, as prctl and /proc/<pid>/timerslack_ns count it (as in Python) */
    env->slack_ns = sleepacc_lua_integer(L, -1, fn, "slack", 1, SLEEPACC_MAX_SLACK_NS);
    lua_pop(L, 1);
    sleepacc__envcheck(L, fn, env, "slack", "timer slack must be between 1 ns and one day");
  }
  if (sleepacc_lua_field(L, t, "policy")) {
    const char *s = sleepacc_lua_string(L, -1, fn, "policy");
    int p = sleepacc_policy_from_name(s);
    if (p < 0)
      sleepacc_lua_argerror(L, fn, "policy", "unknown policy \"%.40s\"; known: %s", s,
                            sleepacc__policy_list);
    env->policy = p;
    lua_pop(L, 1);
    if (p == SLEEPACC_POLICY_FIFO || p == SLEEPACC_POLICY_RR) env->priority = 1;
  }
  if (sleepacc_lua_field(L, t, "priority")) {
    env->priority = (int)sleepacc_lua_integer(L, -1, fn, "priority", 0, 99);
    lua_pop(L, 1);
    sleepacc__envcheck(L, fn, env, "priority",
                       "priority must be 1..99 with policy fifo or rr, and 0 (or absent) "
                       "otherwise");
  }
  if (sleepacc_lua_field(L, t, "cpu")) {
    char cpus[256];
    env->cpu = (int)sleepacc_lua_integer(L, -1, fn, "cpu", 0, CPU_SETSIZE - 1);
    lua_pop(L, 1);
    if (sleepacc_env_check(env) == -EINVAL)
      sleepacc_lua_argerror(L, fn, "cpu", "cpu %d is not in this thread's allowed set (%s)",
                            env->cpu, sleepacc__allowed_cpus(cpus, sizeof cpus));
  }
  if (sleepacc_lua_field(L, t, "lock_memory")) {
    env->lock_memory = sleepacc_lua_boolean(L, -1, fn, "lock_memory");
    lua_pop(L, 1);
  }
  if (sleepacc_lua_field(L, t, "dma_latency")) { /* us, held on /dev/cpu_dma_latency */
    env->dma_latency_us =
        (int)sleepacc_lua_integer(L, -1, fn, "dma_latency", 0, SLEEPACC_MAX_DMA_LATENCY_US);
    lua_pop(L, 1);
  }
  /* Real-time spinning stalls a CPU: the core refuses it without a budget. */
  if (c->budget_ns == 0 &&
      (env->policy == SLEEPACC_POLICY_FIFO || env->policy == SLEEPACC_POLICY_RR) &&
      c->method && c->method->family != SLEEPACC_FAMILY_KERNEL &&
      c->method->family != SLEEPACC_FAMILY_BASELINE)
    sleepacc_lua_argerror(L, fn, "budget",
                          "a %s method under policy %s needs a time budget (budget=false refused)",
                          sleepacc_family_name(c->method->family),
                          sleepacc_policy_name(env->policy));
}

/* =================================================================
 * One run -> one result table.
 * ================================================================= */

/* Push the stats struct as a table, converted through the core's field table. */
static void sleepacc__push_stats(lua_State *L, const sleepacc_stats *st) {
  const sleepacc_field *f;
  lua_createtable(L, 0, 10);
  for (f = sleepacc_stats_fields; f->name; f++) {
    const char *p = (const char *)st + f->offset;
    if (f->is_double)
      lua_pushnumber(L, (lua_Number) * (const double *)(const void *)p);
    else
      lua_pushinteger(L, (lua_Integer) * (const int64_t *)(const void *)p);
    lua_setfield(L, -2, f->name);
  }
}

static void sleepacc__setint(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

/* Push the result table of finished run r (samples userdata at sidx): the
 * sleepacc/1 point record (docs/schema.md), the keys and types of Python's
 * Measurement.to_dict(); a null there is an absent key here. */
static void sleepacc__push_result(lua_State *L, const sleepacc_run *r, const sleepacc_stats *st,
                                  int sidx) {
  const sleepacc_config *c = &r->cfg;
  const sleepacc_env *env = &c->env;
  lua_createtable(L, 0, 12);
  lua_pushstring(L, c->method->name);
  lua_setfield(L, -2, "method");
  lua_pushstring(L, sleepacc_mode_name(c->mode));
  lua_setfield(L, -2, "mode");
  sleepacc__setint(L, "requested_ns", c->duration_ns);
  sleepacc__setint(L, "n", r->done);
  sleepacc__push_stats(L, st);
  lua_setfield(L, -2, "stats");
  sleepacc__setint(L, "missed", r->missed);
  lua_pushnumber(L, r->cpu_ns >= 0 && r->done > 0 ? (lua_Number)r->cpu_ns / (lua_Number)r->done : 0.0);
  lua_setfield(L, -2, "cpu_ns_per_call");
  lua_pushnumber(L, r->cpu_ns >= 0 && r->wall_ns > 0
                        ? 100.0 * (lua_Number)r->cpu_ns / (lua_Number)r->wall_ns : -1.0);
  lua_setfield(L, -2, "cpu_percent");
  if (r->ctx_voluntary >= 0 && r->ctx_involuntary >= 0) {
    lua_createtable(L, 0, 2);
    sleepacc__setint(L, "voluntary", r->ctx_voluntary);
    sleepacc__setint(L, "involuntary", r->ctx_involuntary);
    lua_setfield(L, -2, "ctx_switches");
  }
  sleepacc__setint(L, "wall_ns", r->wall_ns);
  /* env: what was applied (only the settings that were asked for) */
  lua_createtable(L, 0, 7);
  if (env->slack_ns != -1) sleepacc__setint(L, "slack_ns", env->slack_ns);
  if (env->policy != SLEEPACC_POLICY_KEEP) {
    lua_pushstring(L, sleepacc_policy_name(env->policy));
    lua_setfield(L, -2, "policy");
    sleepacc__setint(L, "priority", env->priority);
  }
  if (env->cpu != -1) sleepacc__setint(L, "cpu", env->cpu);
  lua_pushboolean(L, env->lock_memory);
  lua_setfield(L, -2, "lock_memory");
  if (env->dma_latency_us >= 0) sleepacc__setint(L, "dma_latency_us", env->dma_latency_us);
  if (c->method->family == SLEEPACC_FAMILY_HYBRID)
    sleepacc__setint(L, "margin_ns", r->waiter.margin_ns);
  lua_setfield(L, -2, "env");
  lua_pushvalue(L, sidx);
  lua_setfield(L, -2, "samples");
}

/* Run o->cfg in r (caller-owned, 16-aligned).  On success push the result
 * table and return 0.  A run-time failure returns the negative errno with
 * nothing pushed; bad arguments the core still refuses raise.  On Ctrl-C
 * the run is finished before the error propagates. */
static int sleepacc__run_one(lua_State *L, sleepacc_run *r, const sleepacc__opts *o,
                             const char *fn) {
  sleepacc__samples *s;
  sleepacc_stats st;
  int64_t *scratch = NULL;
  int rc, frc, sidx;

  luaL_checkstack(L, 8, NULL);
  s = sleepacc__newsamples(L);
  sidx = lua_gettop(L);
  if (o->keep_samples) {
    uint64_t cap = o->n_given ? (uint64_t)o->cfg.n : SLEEPACC_LUA_DEFAULT_KEEP;
    if (cap > SIZE_MAX / sizeof(int64_t) || cap > (uint64_t)INT64_MAX) {
      lua_pop(L, 1);
      return -ENOMEM;
    }
    s->data = (int64_t *)malloc((size_t)cap * sizeof(int64_t));
    if (!s->data) {
      lua_pop(L, 1);
      return -ENOMEM;
    }
    s->cap = (size_t)cap;
  }

  rc = sleepacc_run_start(r, &o->cfg, s->data, s->cap);
  if (rc == -EINVAL)
    sleepacc_lua_argerror(L, fn, "options", "the core refused this combination of options "
                                            "(method %s, mode %s, duration %lld ns)",
                          o->cfg.method->name, sleepacc_mode_name(o->cfg.mode),
                          (long long)o->cfg.duration_ns);
  if (rc == -ENOSYS)
    sleepacc_lua_argerror(L, fn, "method", "method \"%s\" is not available on this system",
                          o->cfg.method->name);
  if (rc < 0) { /* EPERM/EACCES from the environment: saved.bad_field says which */
    lua_pop(L, 1);
    return rc;
  }
  rc = sleepacc_lua_run(L, r);      /* raises only after finishing r */
  frc = sleepacc_run_finish(r);     /* restore the environment */
  if (rc < 0 || frc < 0) {
    lua_pop(L, 1);
    return rc < 0 ? rc : frc;
  }

  s->len = s->data ? (size_t)r->done : 0; /* streaming keeps nothing */
  if (s->data && r->done > 0) {
    scratch = (int64_t *)malloc((size_t)r->done * sizeof(int64_t));
    if (!scratch) {
      lua_pop(L, 1);
      return -ENOMEM;
    }
  }
  rc = sleepacc_run_stats(r, scratch, &st);
  free(scratch);
  if (rc < 0) {
    lua_pop(L, 1);
    return rc;
  }
  /* give back the unused tail of the buffer */
  if (s->data && s->len < s->cap) {
    size_t keep = s->len ? s->len : 1;
    int64_t *p = (int64_t *)realloc(s->data, keep * sizeof(int64_t));
    if (p) {
      s->data = p;
      s->cap = keep;
    }
  }
  r->samples = NULL; /* the run no longer owns a view of the buffer */
  sleepacc__push_result(L, r, &st, sidx);
  lua_remove(L, sidx);
  return 0;
}

/* =================================================================
 * sa.measure{...}
 * ================================================================= */
static const char *const sleepacc__measure_fields[] = {
    "method", "duration", "n",        "budget",   "mode",        "warmup", "keep_samples",
    "margin", "slack",    "policy",   "priority", "cpu",         "lock_memory", "dma_latency",
    NULL};

static int sleepacc__measure(lua_State *L) {
  static const char fn[] = "measure";
  sleepacc__opts o;
  const sleepacc_method *m;
  int64_t d;
  sleepacc_run *r;
  int rc;

  sleepacc_lua_checkoptions(L, 1, fn, "options", sleepacc__measure_fields);
  lua_getfield(L, 1, "method");
  m = sleepacc_lua_method(L, -1, fn, "method", 1);
  lua_pop(L, 1);
  lua_getfield(L, 1, "duration");
  d = sleepacc_lua_seconds_ns(L, -1, fn, "duration", 0);
  lua_pop(L, 1);
  /* the rest, with the method known (the FIFO/RR budget rule needs it) */
  sleepacc__parse_common(L, 1, fn, &o, m, 1000000000LL, 1);
  o.cfg.method = m;
  o.cfg.duration_ns = d;
  if (o.cfg.mode == SLEEPACC_MODE_PERIODIC && d == 0)
    sleepacc_lua_argerror(L, fn, "duration", "must be > 0 in periodic mode (it is the period)");

  r = (sleepacc_run *)sleepacc_lua_newaligned(L, sizeof *r);
  r->saved.bad_field = NULL;
  rc = sleepacc__run_one(L, r, &o, fn);
  if (rc < 0) {
    char name[48];
    return sleepacc_lua_pusherror(L, rc, sleepacc_lua_name(r->saved.bad_field, name, sizeof name));
  }
  return 1;
}

/* =================================================================
 * sa.sweep{...}
 * ================================================================= */
static const char *const sleepacc__sweep_fields[] = {
    "methods", "durations", "n",        "budget", "mode", "warmup",      "keep_samples",
    "margin",  "slack",     "policy",   "priority", "cpu", "lock_memory", "dma_latency",
    "progress", NULL};

/* The irtt sleep ladder, in ns. */
static const int64_t sleepacc__ladder_ns[] = {
    0, 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 200000000, 500000000};

static int sleepacc__sweep(lua_State *L) {
  static const char fn[] = "sweep";
  sleepacc__opts o;
  const sleepacc_method **methods;
  int64_t *durs;
  size_t nm = 0, nd = 0, total = 0, done = 0;
  int has_progress, out;
  sleepacc_run *r;
  char name[48];

  if (lua_isnoneornil(L, 1)) { /* sa.sweep() with every default */
    lua_settop(L, 0);
    lua_newtable(L);
  }
  sleepacc_lua_checkoptions(L, 1, fn, "options", sleepacc__sweep_fields);
  lua_settop(L, 1);

  /* methods: array of names, or every available method */
  if (sleepacc_lua_field(L, 1, "methods")) {
    size_t i, len;
    if (lua_type(L, -1) != LUA_TTABLE)
      sleepacc_lua_argerror(L, fn, "methods", "array of method names expected, got %s",
                            luaL_typename(L, -1));
    len = (size_t)lua_rawlen(L, -1);
    if (len == 0) sleepacc_lua_argerror(L, fn, "methods", "must not be empty");
    methods = (const sleepacc_method **)lua_newuserdatauv(L, len * sizeof *methods, 0);
    for (i = 0; i < len; i++) {
      lua_rawgeti(L, -2, (lua_Integer)i + 1);
      snprintf(name, sizeof name, "methods[%zu]", i + 1);
      methods[nm++] = sleepacc_lua_method(L, -1, fn, name, 1);
      lua_pop(L, 1);
    }
  } else {
    size_t i, count = sleepacc_method_count();
    lua_pushnil(L); /* keep the stack layout of the other branch */
    methods = (const sleepacc_method **)lua_newuserdatauv(L, (count ? count : 1) * sizeof *methods, 0);
    for (i = 0; i < count; i++) {
      const sleepacc_method *m = sleepacc_method_at(i);
      if (m && sleepacc_method_available(m)) methods[nm++] = m;
    }
  }
  /* stack: 1 options, 2 methods-or-nil, 3 methods array */

  /* durations: array of seconds, or the irtt ladder */
  if (sleepacc_lua_field(L, 1, "durations")) {
    size_t i, len;
    if (lua_type(L, -1) != LUA_TTABLE)
      sleepacc_lua_argerror(L, fn, "durations", "array of durations (seconds) expected, got %s",
                            luaL_typename(L, -1));
    len = (size_t)lua_rawlen(L, -1);
    if (len == 0) sleepacc_lua_argerror(L, fn, "durations", "must not be empty");
    durs = (int64_t *)lua_newuserdatauv(L, len * sizeof *durs, 0);
    for (i = 0; i < len; i++) {
      lua_rawgeti(L, -2, (lua_Integer)i + 1);
      snprintf(name, sizeof name, "durations[%zu]", i + 1);
      durs[nd++] = sleepacc_lua_seconds_ns(L, -1, fn, name, 0);
      lua_pop(L, 1);
    }
  } else {
    lua_pushnil(L);
    nd = sizeof sleepacc__ladder_ns / sizeof sleepacc__ladder_ns[0];
    durs = (int64_t *)lua_newuserdatauv(L, sizeof sleepacc__ladder_ns, 0);
    memcpy(durs, sleepacc__ladder_ns, sizeof sleepacc__ladder_ns);
  }
  /* stack: 4 durations-or-nil, 5 durations array */

  has_progress = sleepacc_lua_field(L, 1, "progress");
  if (has_progress)
    sleepacc_lua_function(L, -1, fn, "progress");
  else
    lua_pushnil(L);
  /* stack: 6 progress-or-nil */

  sleepacc__parse_common(L, 1, fn, &o, NULL, 500000000LL, 0);
  for (size_t i = 0; i < nm; i++) { /* the FIFO/RR budget rule, per method */
    if (o.cfg.budget_ns == 0 &&
        (o.cfg.env.policy == SLEEPACC_POLICY_FIFO || o.cfg.env.policy == SLEEPACC_POLICY_RR) &&
        methods[i]->family != SLEEPACC_FAMILY_KERNEL &&
        methods[i]->family != SLEEPACC_FAMILY_BASELINE)
      sleepacc_lua_argerror(L, fn, "budget",
                            "method %s under policy %s needs a time budget (budget=false refused)",
                            methods[i]->name, sleepacc_policy_name(o.cfg.env.policy));
  }
  for (size_t j = 0; j < nd; j++)
    if (!(o.cfg.mode == SLEEPACC_MODE_PERIODIC && durs[j] == 0)) total++;
  total *= nm;

  r = (sleepacc_run *)sleepacc_lua_newaligned(L, sizeof *r); /* 7 */
  lua_createtable(L, total > INT_MAX ? INT_MAX : (int)total, 0); /* 8: results */
  out = lua_gettop(L);
  for (size_t i = 0; i < nm; i++) {
    for (size_t j = 0; j < nd; j++) {
      int rc;
      if (o.cfg.mode == SLEEPACC_MODE_PERIODIC && durs[j] == 0) continue; /* no 0 period */
      o.cfg.method = methods[i];
      o.cfg.duration_ns = durs[j];
      r->saved.bad_field = NULL;
      rc = sleepacc__run_one(L, r, &o, fn);
      if (rc < 0) {
        char ctx[128], name[48];
        const char *f = sleepacc_lua_name(r->saved.bad_field, name, sizeof name);
        snprintf(ctx, sizeof ctx, "%s%smethod %s, duration %lld ns", f ? f : "", f ? ", " : "",
                 methods[i]->name, (long long)durs[j]);
        return sleepacc_lua_pusherror(L, rc, ctx);
      }
      lua_rawseti(L, out, (lua_Integer)++done);
      if (has_progress) {
        lua_pushvalue(L, 6);
        lua_pushinteger(L, (lua_Integer)done);
        lua_pushinteger(L, (lua_Integer)total);
        lua_pushstring(L, methods[i]->name);
        lua_pushnumber(L, (lua_Number)durs[j] / 1e9);
        lua_call(L, 4, 0); /* no run is open here: errors simply propagate */
      }
    }
  }
  lua_settop(L, out);
  return 1;
}

/* =================================================================
 * sa.table(results [, style])
 * ================================================================= */

/* Fill *row from the result table on top of the stack (named `what`).
 * Strings the row points to are stored in the table at `anchor` so they
 * live until the table is rendered. */
static void sleepacc__torow(lua_State *L, const char *what, sleepacc_row *row, int anchor) {
  static const char fn[] = "table";
  char name[96];
  const sleepacc_field *f;
  int t = lua_gettop(L);
  if (lua_type(L, t) != LUA_TTABLE)
    sleepacc_lua_argerror(L, fn, what, "result table expected, got %s", luaL_typename(L, t));
  memset(row, 0, sizeof *row);

  lua_getfield(L, t, "method");
  snprintf(name, sizeof name, "%s.method", what);
  row->method = sleepacc_lua_string(L, -1, fn, name);
  lua_rawseti(L, anchor, (lua_Integer)lua_rawlen(L, anchor) + 1); /* keep it alive */

  lua_getfield(L, t, "requested_ns");
  snprintf(name, sizeof name, "%s.requested_ns", what);
  row->requested_ns = sleepacc_lua_integer(L, -1, fn, name, 0, SLEEPACC_MAX_DURATION_NS);
  lua_pop(L, 1);

  row->mode = SLEEPACC_MODE_RELATIVE;
  if (sleepacc_lua_field(L, t, "mode")) {
    const char *s;
    snprintf(name, sizeof name, "%s.mode", what);
    s = sleepacc_lua_string(L, -1, fn, name);
    row->mode = sleepacc_mode_from_name(s);
    if (row->mode < 0)
      sleepacc_lua_argerror(L, fn, name, "unknown mode \"%.40s\"; known: relative, periodic", s);
    lua_pop(L, 1);
  }

  row->cpu_percent = -1.0;
  if (sleepacc_lua_field(L, t, "cpu_percent")) {
    snprintf(name, sizeof name, "%s.cpu_percent", what);
    if (lua_type(L, -1) != LUA_TNUMBER)
      sleepacc_lua_argerror(L, fn, name, "number expected, got %s", luaL_typename(L, -1));
    row->cpu_percent = (double)lua_tonumber(L, -1);
    lua_pop(L, 1);
  }

  lua_getfield(L, t, "stats");
  snprintf(name, sizeof name, "%s.stats", what);
  if (lua_type(L, -1) != LUA_TTABLE)
    sleepacc_lua_argerror(L, fn, name, "table expected, got %s", luaL_typename(L, -1));
  for (f = sleepacc_stats_fields; f->name; f++) {
    char *p = (char *)&row->stats + f->offset;
    lua_getfield(L, -1, f->name);
    snprintf(name, sizeof name, "%s.stats.%s", what, f->name);
    if (f->is_double) {
      if (lua_type(L, -1) != LUA_TNUMBER)
        sleepacc_lua_argerror(L, fn, name, "number expected, got %s", luaL_typename(L, -1));
      *(double *)(void *)p = (double)lua_tonumber(L, -1);
    } else {
      *(int64_t *)(void *)p =
          (int64_t)sleepacc_lua_integer(L, -1, fn, name, LUA_MININTEGER, LUA_MAXINTEGER);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

static int sleepacc__table(lua_State *L) {
  static const char fn[] = "table";
  int (*render)(const sleepacc_row *, size_t, char *, size_t, size_t *) = sleepacc_table_irtt;
  sleepacc_row *rows;
  size_t n, needed = 0;
  char *p;
  int rc, single;

  if (!lua_isnoneornil(L, 2)) {
    const char *s = sleepacc_lua_string(L, 2, fn, "style");
    if (strcmp(s, "wide") == 0)
      render = sleepacc_table_wide;
    else if (strcmp(s, "irtt") != 0)
      sleepacc_lua_argerror(L, fn, "style", "unknown style \"%.40s\"; known: irtt, wide", s);
  }
  if (lua_type(L, 1) != LUA_TTABLE)
    sleepacc_lua_argerror(L, fn, "results",
                          "array of results (from measure or sweep) expected, got %s",
                          luaL_typename(L, 1));
  lua_settop(L, 1);
  /* one result (it has a method field) or an array of them */
  single = lua_getfield(L, 1, "method") != LUA_TNIL;
  lua_pop(L, 1);
  n = single ? 1 : (size_t)lua_rawlen(L, 1);
  rows = (sleepacc_row *)lua_newuserdatauv(L, (n ? n : 1) * sizeof *rows, 0); /* 2 */
  lua_createtable(L, n > INT_MAX ? INT_MAX : (int)n, 0);                     /* 3: anchor */
  for (size_t i = 0; i < n; i++) {
    char what[48];
    if (single) {
      lua_pushvalue(L, 1);
      snprintf(what, sizeof what, "results");
    } else {
      lua_rawgeti(L, 1, (lua_Integer)i + 1);
      snprintf(what, sizeof what, "results[%zu]", i + 1);
    }
    sleepacc__torow(L, what, &rows[i], 3);
    lua_pop(L, 1);
  }
  rc = render(rows, n, NULL, 0, &needed);
  if (rc >= 0) needed = (size_t)rc + 1;
  p = (char *)lua_newuserdatauv(L, needed ? needed : 1, 0);
  rc = render(rows, n, p, needed, NULL);
  if (rc < 0) return luaL_error(L, "sleepacc: table rendering failed: %s", sleepacc_strerror(rc));
  lua_pushlstring(L, p, (size_t)rc);
  return 1;
}

/* =================================================================
 * sa.methods(), sa.system_info(), sa.clock_info(), sa.now_ns()
 * ================================================================= */
static int sleepacc__methods(lua_State *L) {
  size_t count = sleepacc_method_count(), k = 0;
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!m) continue;
    lua_createtable(L, 0, 7);
    lua_pushstring(L, m->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, sleepacc_family_name(m->family));
    lua_setfield(L, -2, "family");
    lua_pushstring(L, m->description);
    lua_setfield(L, -2, "description");
    sleepacc__setint(L, "granularity_ns", m->granularity_ns);
    lua_pushstring(L, sleepacc_tristate_name(m->honours_slack));
    lua_setfield(L, -2, "honours_slack");
    lua_pushboolean(L, m->absolute);
    lua_setfield(L, -2, "absolute");
    lua_pushboolean(L, sleepacc_method_available(m));
    lua_setfield(L, -2, "available");
    lua_rawseti(L, -2, (lua_Integer)++k);
  }
  return 1;
}

static int sleepacc__system_info(lua_State *L) {
  sleepacc_fact *facts;
  size_t count = 0, unknown = 0;
  int rc;
  facts = (sleepacc_fact *)lua_newuserdatauv(L, SLEEPACC_MAX_FACTS * sizeof *facts, 0);
  rc = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count);
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, NULL);
  lua_createtable(L, 0, (int)count + 1);
  lua_newtable(L); /* .unknown: keys that could not be read */
  for (size_t i = 0; i < count; i++) {
    const sleepacc_fact *f = &facts[i];
    if (!f->key) continue;
    switch (f->type) {
    case SLEEPACC_FACT_INT:
      lua_pushinteger(L, (lua_Integer)f->i);
      lua_setfield(L, -3, f->key);
      break;
    case SLEEPACC_FACT_STR:
      lua_pushstring(L, f->s);
      lua_setfield(L, -3, f->key);
      break;
    case SLEEPACC_FACT_REAL:
      lua_pushnumber(L, (lua_Number)f->d);
      lua_setfield(L, -3, f->key);
      break;
    default:
      lua_pushstring(L, f->key);
      lua_rawseti(L, -2, (lua_Integer)++unknown);
      break;
    }
  }
  lua_setfield(L, -2, "unknown");
  return 1;
}

static int sleepacc__clock_info(lua_State *L) {
  lua_createtable(L, 0, SLEEPACC_CLOCK_COUNT);
  for (int id = 0; id < SLEEPACC_CLOCK_COUNT; id++) {
    sleepacc_clock_info info;
    memset(&info, 0, sizeof info);
    if (sleepacc_clock_info_get(id, 0, &info) != 0 || !info.name) continue;
    lua_createtable(L, 0, 2);
    if (info.resolution_ns >= 0) sleepacc__setint(L, "resolution_ns", info.resolution_ns);
    if (info.read_cost_ns >= 0) sleepacc__setint(L, "read_cost_ns", info.read_cost_ns);
    lua_setfield(L, -2, info.name);
  }
  return 1;
}

static int sleepacc__now_ns(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)sleepacc_now_ns());
  return 1;
}

/* =================================================================
 * luaopen_sleepacc
 * ================================================================= */
static const luaL_Reg sleepacc__funcs[] = {
    {"methods", sleepacc__methods},       {"measure", sleepacc__measure},
    {"sweep", sleepacc__sweep},           {"table", sleepacc__table},
    {"system_info", sleepacc__system_info}, {"clock_info", sleepacc__clock_info},
    {"now_ns", sleepacc__now_ns},         {NULL, NULL}};

static const luaL_Reg sleepacc__samples_meta[] = {
    {"__index", sleepacc__samples_index},
    {"__len", sleepacc__samples_len},
    {"__tostring", sleepacc__samples_tostring},
    {"__gc", sleepacc__samples_gc},
    {NULL, NULL}};

SLEEPACC_LUA_EXPORT int luaopen_sleepacc(lua_State *L) {
  sleepacc_lua_remember_main(L);
  if (luaL_newmetatable(L, SLEEPACC_LUA_SAMPLES)) luaL_setfuncs(L, sleepacc__samples_meta, 0);
  lua_pop(L, 1);
  luaL_newlib(L, sleepacc__funcs);
  lua_pushliteral(L, SLEEPACC_VERSION);
  lua_setfield(L, -2, "_VERSION");
  sleepacc_lua_open_precise(L);
  sleepacc_lua_open_save(L);
  return 1;
}
