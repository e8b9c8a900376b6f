/*
 * lsleeper.c -- the precise sleep in the Lua module, over the core's
 * sleepacc_sleeper / sleepacc_pacer (csrc/sleeper.c, csrc/pacer.c):
 *
 *   sa.sleep(seconds [, method])        --> true | nil, "ENAME: msg", "ENAME"
 *   sa.sleep_stats([method])            --> stats of this state's sleeper
 *   p = sa.pacer(period [, {method=, missed=}])
 *   p:wait()                            --> deadline_ns | nil, err, ename
 *   p:stats()                           --> {count=, misses=, lateness={...},
 *                                            timer_misses=, timer_err_percent=,
 *                                            timer_err={mean=,min=,max=,stddev=}, ...}
 *   p:close()  (also __gc and __close)
 *
 * sa.sleep keeps one sleeper per method and Lua state (in the registry), so
 * the margins `auto` learns carry over from call to call.  Every wait runs
 * in SLEEPACC_CHUNK_NS chunks with sleepacc_lua_checkpoint() between them,
 * so the interpreter's Ctrl-C ends even a 60 s sleep within one chunk.
 * Nothing here touches the thread's slack, policy or affinity.
 */
#include "binding.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PRECISE_PACER_MT "sleepacc.Pacer"
#define PRECISE_SLEEPER_MT "sleepacc.Sleeper"
#define PRECISE_CACHE_KEY "sleepacc.precise.sleepers"

/* Core structs want 16-byte alignment; userdata promise less.  Each
 * userdata is allocated with slack and used from its aligned address. */
static void *precise_align(void *p) {
  const uintptr_t a = SLEEPACC_LUA_ALIGN;
  return (void *)(((uintptr_t)p + a - 1) & ~(a - 1));
}

/* The userdata header: open flag, then the aligned core object. */
typedef struct {
  int open;
} precise_ud;

static void *precise_newud(lua_State *L, size_t size, const char *mt) {
  precise_ud *u = (precise_ud *)lua_newuserdatauv(L, sizeof(precise_ud) + size + SLEEPACC_LUA_ALIGN, 0);
  u->open = 0;
  luaL_setmetatable(L, mt);
  return precise_align(u + 1);
}

static precise_ud *precise_hdr(lua_State *L, int idx, const char *mt) {
  return (precise_ud *)luaL_checkudata(L, idx, mt);
}

/* Check a method name: a strategy or an available kernel method. */
static const char *precise_method(lua_State *L, int idx, const char *fn) {
  const sleepacc_method *k = NULL;
  const char *name = sleepacc_lua_string(L, idx, fn, "method");
  int rc = sleepacc_strategy_from_name(name, &k);
  if (rc >= 0 && (!k || sleepacc_method_available(k))) return name;
  {
    char list[768];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < sleepacc_method_count() && len < sizeof list; i++) {
      const sleepacc_method *m = sleepacc_method_at(i);
      if (m->family != SLEEPACC_FAMILY_KERNEL || !sleepacc_method_available(m)) continue;
      len += (size_t)snprintf(list + len, sizeof list - len, ", %s", m->name);
    }
    sleepacc_lua_argerror(L, fn, "method", "%s '%s'; expected auto, spin, hybrid, comp%s",
                          rc == -ENOTSUP ? "not a kernel sleep:"
                          : rc >= 0      ? "not available on this system:"
                                         : "unknown method",
                          name, list);
  }
  return NULL;
}

/* t[key] = stats (a sleepacc_stats as a table, via the core's field table). */
static void precise_push_stats(lua_State *L, const sleepacc_stats *st) {
  lua_createtable(L, 0, 10);
  for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++) {
    const char *p = (const char *)st + f->offset;
    if (f->is_double)
      lua_pushnumber(L, (lua_Number) * (const double *)p);
    else
      lua_pushinteger(L, (lua_Integer) * (const int64_t *)p);
    lua_setfield(L, -2, f->name);
  }
}

static void precise_seti(lua_State *L, const char *k, int64_t v) {
  lua_pushinteger(L, (lua_Integer)v);
  lua_setfield(L, -2, k);
}

static void precise_setn(lua_State *L, const char *k, double v) {
  lua_pushnumber(L, (lua_Number)v);
  lua_setfield(L, -2, k);
}

/* Push the stats table of a sleeper. */
static void precise_push_sleeper_stats(lua_State *L, const sleepacc_sleeper *s) {
  static const char *const strat[] = {"auto", "spin", "hybrid", "comp", "kernel"};
  sleepacc_sleeper_stats st;
  int64_t lo[SLEEPACC_SLEEPER_BANDS], m[SLEEPACC_SLEEPER_BANDS];
  int n;
  sleepacc_sleeper_stats_get(s, &st);
  lua_createtable(L, 0, 12);
  precise_seti(L, "count", st.count);
  precise_seti(L, "misses", st.misses);
  precise_seti(L, "spin_ns", st.spin_ns);
  precise_push_stats(L, &st.lateness);
  lua_setfield(L, -2, "lateness");
  lua_pushstring(L, (unsigned)s->strategy < 5u ? strat[s->strategy] : "unknown");
  lua_setfield(L, -2, "strategy");
  lua_pushstring(L, s->kernel ? s->kernel->name : "");
  lua_setfield(L, -2, "kernel");
  precise_setn(L, "quantile", s->quantile);
  precise_seti(L, "clock_cost_ns", s->clock_cost_ns);
  precise_seti(L, "preempted_spins", s->preempted_spins);
  lua_pushboolean(L, s->contended);
  lua_setfield(L, -2, "contended");
  /* margins: array of {band_lo_ns=, margin_ns=} in band order */
  n = sleepacc_sleeper_margins(s, lo, m, SLEEPACC_SLEEPER_BANDS);
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 2);
    precise_seti(L, "band_lo_ns", lo[i]);
    precise_seti(L, "margin_ns", m[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "margins");
}

/* ------------------------------------------------------------ sa.sleep */

static int precise_sleeper_gc(lua_State *L) {
  precise_ud *u = precise_hdr(L, 1, PRECISE_SLEEPER_MT);
  if (u->open) sleepacc_sleeper_close((sleepacc_sleeper *)precise_align(u + 1));
  u->open = 0;
  return 0;
}

/* The cached sleeper of `method` for this state (opened on first use).
 * Returns it, or NULL with *err set. */
static sleepacc_sleeper *precise_cached(lua_State *L, const char *method, int *err) {
  sleepacc_sleeper *s;
  precise_ud *u;
  int rc;
  *err = 0;
  if (lua_getfield(L, LUA_REGISTRYINDEX, PRECISE_CACHE_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, PRECISE_CACHE_KEY);
  }
  if (lua_getfield(L, -1, method) == LUA_TUSERDATA) {
    u = (precise_ud *)lua_touserdata(L, -1);
    lua_pop(L, 2);
    return (sleepacc_sleeper *)precise_align(u + 1);
  }
  lua_pop(L, 1);
  s = (sleepacc_sleeper *)precise_newud(L, sizeof *s, PRECISE_SLEEPER_MT);
  u = (precise_ud *)lua_touserdata(L, -1);
  rc = sleepacc_sleeper_open(s, method, 0.99, -1);
  if (rc < 0) {
    lua_pop(L, 2);
    *err = rc;
    return NULL;
  }
  u->open = 1;
  lua_setfield(L, -2, method);
  lua_pop(L, 1);
  return s;
}

/* sa.sleep(seconds [, method]) */
static int precise_sleep(lua_State *L) {
  sleepacc_lua_guard g;
  sleepacc_sleeper *s;
  const char *method = "auto";
  int64_t d, deadline;
  int rc;
  d = sleepacc_lua_seconds_ns(L, 1, "sleep", "seconds", 0);
  if (!lua_isnoneornil(L, 2)) method = precise_method(L, 2, "sleep");
  s = precise_cached(L, method, &rc);
  if (!s) return sleepacc_lua_pusherror(L, rc, method);
  deadline = sleepacc_now_ns() + d;
  sleepacc_lua_guard_init(&g, L, NULL, NULL);
  for (;;) {
    rc = sleepacc_sleeper_until(s, deadline, SLEEPACC_CHUNK_NS);
    if (rc == 1) break;
    if (rc < 0 && rc != -EINTR) return sleepacc_lua_pusherror(L, rc, "sleep");
    sleepacc_lua_checkpoint(&g); /* raises "interrupted!" on Ctrl-C */
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* sa.sleep_stats([method]) -> stats of the state's cached sleeper, or nil
 * when sa.sleep has not used that method yet. */
static int precise_sleep_stats(lua_State *L) {
  const char *method = lua_isnoneornil(L, 1) ? "auto" : precise_method(L, 1, "sleep_stats");
  if (lua_getfield(L, LUA_REGISTRYINDEX, PRECISE_CACHE_KEY) != LUA_TTABLE ||
      lua_getfield(L, -1, method) != LUA_TUSERDATA) {
    lua_pushnil(L);
    return 1;
  }
  precise_push_sleeper_stats(L, (sleepacc_sleeper *)precise_align((precise_ud *)lua_touserdata(L, -1) + 1));
  return 1;
}

/* ------------------------------------------------------------ sa.pacer */

static sleepacc_pacer *precise_checkpacer(lua_State *L, int idx, const char *fn) {
  precise_ud *u = precise_hdr(L, idx, PRECISE_PACER_MT);
  if (!u->open) luaL_error(L, "bad argument 'pacer' to '%s' (pacer is closed)", fn);
  return (sleepacc_pacer *)precise_align(u + 1);
}

/* sa.pacer(period [, {method=, missed=}]) */
static int precise_pacer_new(lua_State *L) {
  static const char *const known[] = {"method", "missed", NULL};
  const char *method = "auto";
  int policy = SLEEPACC_MISSED_SKIP, rc;
  int64_t period = sleepacc_lua_seconds_ns(L, 1, "pacer", "period", SLEEPACC_LUA_NONZERO);
  sleepacc_pacer *p;
  if (!lua_isnoneornil(L, 2)) {
    sleepacc_lua_checkoptions(L, 2, "pacer", "options", known);
    if (sleepacc_lua_field(L, 2, "method")) {
      method = precise_method(L, -1, "pacer");
      lua_pop(L, 1); /* the string stays alive in the options table */
    }
    if (sleepacc_lua_field(L, 2, "missed")) {
      const char *m = sleepacc_lua_string(L, -1, "pacer", "missed");
      policy = sleepacc_missed_from_name(m);
      if (policy < 0)
        sleepacc_lua_argerror(L, "pacer", "missed", "expected skip, burst or delay, got '%s'", m);
      lua_pop(L, 1);
    }
  }
  if (period <= 0) sleepacc_lua_argerror(L, "pacer", "period", "must be > 0 seconds");
  p = (sleepacc_pacer *)precise_newud(L, sizeof *p, PRECISE_PACER_MT);
  rc = sleepacc_pacer_open(p, period, method, policy);
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, "pacer");
  ((precise_ud *)lua_touserdata(L, -1))->open = 1;
  return 1;
}

/* p:wait() -> the tick's deadline (CLOCK_MONOTONIC ns, as sa.now_ns()) */
static int precise_pacer_wait(lua_State *L) {
  sleepacc_pacer *p = precise_checkpacer(L, 1, "wait");
  sleepacc_lua_guard g;
  int64_t dl = 0;
  int rc;
  sleepacc_lua_guard_init(&g, L, NULL, NULL);
  for (;;) {
    rc = sleepacc_pacer_wait(p, SLEEPACC_CHUNK_NS, &dl);
    if (rc == 1) break;
    if (rc < 0 && rc != -EINTR) return sleepacc_lua_pusherror(L, rc, "wait");
    sleepacc_lua_checkpoint(&g);
  }
  lua_pushinteger(L, (lua_Integer)dl);
  return 1;
}

/* p:stats() */
static int precise_pacer_stats(lua_State *L) {
  precise_ud *u = precise_hdr(L, 1, PRECISE_PACER_MT);
  sleepacc_pacer *p = (sleepacc_pacer *)precise_align(u + 1);
  sleepacc_pacer_stats st;
  const char *missed = sleepacc_missed_name(p->missed_policy);
  sleepacc_pacer_stats_get(p, &st);
  lua_createtable(L, 0, 12);
  precise_seti(L, "count", st.count);
  precise_seti(L, "misses", st.misses);
  precise_push_stats(L, &st.lateness);
  lua_setfield(L, -2, "lateness");
  precise_seti(L, "timer_misses", st.timer_misses);
  precise_setn(L, "timer_err_percent", st.timer_err_percent);
  lua_createtable(L, 0, 4);
  precise_setn(L, "mean", st.timer_err_mean);
  precise_setn(L, "min", st.timer_err_min);
  precise_setn(L, "max", st.timer_err_max);
  precise_setn(L, "stddev", st.timer_err_stddev);
  lua_setfield(L, -2, "timer_err");
  precise_seti(L, "period_ns", p->period_ns);
  precise_seti(L, "start_ns", p->start_ns);
  precise_seti(L, "last_deadline_ns", p->last_deadline_ns);
  lua_pushstring(L, missed ? missed : "");
  lua_setfield(L, -2, "missed");
  precise_push_sleeper_stats(L, &p->sleeper);
  lua_setfield(L, -2, "sleeper");
  return 1;
}

/* p:close(), __gc, __close: release the kernel wait.  Safe twice. */
static int precise_pacer_close(lua_State *L) {
  precise_ud *u = precise_hdr(L, 1, PRECISE_PACER_MT);
  if (u->open) sleepacc_pacer_close((sleepacc_pacer *)precise_align(u + 1));
  u->open = 0;
  return 0;
}

static int precise_pacer_tostring(lua_State *L) {
  precise_ud *u = precise_hdr(L, 1, PRECISE_PACER_MT);
  sleepacc_pacer *p = (sleepacc_pacer *)precise_align(u + 1);
  const char *missed = sleepacc_missed_name(p->missed_policy);
  char buf[128];
  snprintf(buf, sizeof buf, "sleepacc.Pacer(period_ns=%lld, missed=%s, count=%lld%s)",
           (long long)p->period_ns, missed ? missed : "?", (long long)p->count,
           u->open ? "" : ", closed");
  lua_pushstring(L, buf);
  return 1;
}

static const luaL_Reg precise_pacer_methods[] = {
    {"wait", precise_pacer_wait},
    {"stats", precise_pacer_stats},
    {"close", precise_pacer_close},
    {NULL, NULL}};

static const luaL_Reg precise_funcs[] = {
    {"sleep", precise_sleep},
    {"sleep_stats", precise_sleep_stats},
    {"pacer", precise_pacer_new},
    {NULL, NULL}};

int sleepacc_lua_open_precise(lua_State *L) {
  if (luaL_newmetatable(L, PRECISE_PACER_MT)) {
    luaL_newlib(L, precise_pacer_methods);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, precise_pacer_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, precise_pacer_close);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, precise_pacer_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_pop(L, 1);
  if (luaL_newmetatable(L, PRECISE_SLEEPER_MT)) {
    lua_pushcfunction(L, precise_sleeper_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, precise_funcs, 0);
  return 0;
}
