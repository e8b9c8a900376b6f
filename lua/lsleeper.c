/*
 * lsleeper.c -- the precise sleep: the core's sleeper and pacer as Lua
 * handles with one lifecycle (open, check, stats, close):
 *
 *   sa.sleep(seconds [, method])          -> true | nil, err, ename
 *   sa.sleep_stats([method])              -> stats of sa.sleep's sleeper, or nil
 *   s = sa.sleeper([method [, {dma_latency=}]])   s:sleep(seconds)
 *   p = sa.pacer(period [, {method=, missed=, dma_latency=}])
 *   p:wait()                              -> the tick's deadline (ns, as sa.now_ns())
 *   h:stats(), h:close() (also __gc, __close), tostring(h)
 *
 * Stats come through the core's field tables (sleepacc_sleeper_stats_fields,
 * sleepacc_pacer_stats_fields) plus the sleeper's learned margins.  sa.sleep
 * keeps one sleeper per method and Lua state (in the registry), so what
 * `auto` learns carries over.  Waits run in chunks with checkpoints, so
 * Ctrl-C ends even a 60 s sleep within one chunk.  A dma_latency (us) is held
 * on /dev/cpu_dma_latency for the handle's life.
 */
#include "binding.h"

#include <stdio.h>
#include <string.h>

#define CACHE_KEY "sleepacc.sleepers"

/* What differs between the two handle types. */
typedef struct {
  const char *mt;                  /* metatable name */
  size_t size;                     /* the core object */
  void (*close)(void *obj);
  void (*stats)(const void *obj, void *out);
  const sleepacc_field *fields;    /* of the stats struct */
  sleepacc_sleeper *(*sleeper)(void *obj);
} handle_kind;

static void sleeper_close(void *o) { sleepacc_sleeper_close((sleepacc_sleeper *)o); }
static void sleeper_stats(const void *o, void *out) {
  sleepacc_sleeper_stats_get((const sleepacc_sleeper *)o, (sleepacc_sleeper_stats *)out);
}
static sleepacc_sleeper *sleeper_self(void *o) { return (sleepacc_sleeper *)o; }
static void pacer_close(void *o) { sleepacc_pacer_close((sleepacc_pacer *)o); }
static void pacer_stats(const void *o, void *out) {
  sleepacc_pacer_stats_get((const sleepacc_pacer *)o, (sleepacc_pacer_stats *)out);
}
static sleepacc_sleeper *pacer_sleeper(void *o) { return sleepacc_pacer_sleeper((sleepacc_pacer *)o); }

static const handle_kind SLEEPER = {"sleepacc.Sleeper", sizeof(sleepacc_sleeper), sleeper_close,
                                    sleeper_stats, sleepacc_sleeper_stats_fields, sleeper_self};
static const handle_kind PACER = {"sleepacc.Pacer", sizeof(sleepacc_pacer), pacer_close,
                                  pacer_stats, sleepacc_pacer_stats_fields, pacer_sleeper};

/* The userdata: this header, then the core object at an aligned address. */
typedef struct {
  int open;
} handle_hdr;

static void *handle_obj(handle_hdr *h) {
  return (void *)(((uintptr_t)(h + 1) + SLEEPACC_LUA_ALIGN - 1) & ~(uintptr_t)(SLEEPACC_LUA_ALIGN - 1));
}

static void *handle_new(lua_State *L, const handle_kind *k) {
  handle_hdr *h = (handle_hdr *)lua_newuserdatauv(L, sizeof *h + k->size + SLEEPACC_LUA_ALIGN, 0);
  h->open = 0;
  luaL_setmetatable(L, k->mt);
  return handle_obj(h);
}

/* The handle at idx; raises when it is closed and open is required. */
static void *handle_check(lua_State *L, int idx, const handle_kind *k, int need_open) {
  handle_hdr *h = (handle_hdr *)luaL_checkudata(L, idx, k->mt);
  if (need_open && !h->open) sleepacc_lua_error(L, k->mt, "closed");
  return handle_obj(h);
}

/* The methods every handle has; their upvalue is the kind. */
#define KIND() ((const handle_kind *)lua_touserdata(L, lua_upvalueindex(1)))

static int handle_close(lua_State *L) {
  handle_hdr *h = (handle_hdr *)luaL_checkudata(L, 1, KIND()->mt);
  if (h->open) KIND()->close(handle_obj(h));
  h->open = 0;
  return 0;
}

static void push_stats(lua_State *L, const handle_kind *k, void *obj) {
  union {
    sleepacc_sleeper_stats s;
    sleepacc_pacer_stats p;
  } st;
  int64_t lo[SLEEPACC_SLEEPER_BANDS], m[SLEEPACC_SLEEPER_BANDS];
  int n = sleepacc_sleeper_margins(k->sleeper(obj), lo, m, SLEEPACC_SLEEPER_BANDS);
  k->stats(obj, &st);
  sleepacc_lua_push_fields(L, k->fields, &st);
  lua_createtable(L, n, 0); /* margins: {band_lo_ns=, margin_ns=} in band order */
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)lo[i]), lua_setfield(L, -2, "band_lo_ns");
    lua_pushinteger(L, (lua_Integer)m[i]), lua_setfield(L, -2, "margin_ns");
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "margins");
}

static int handle_stats(lua_State *L) {
  push_stats(L, KIND(), handle_check(L, 1, KIND(), 0));
  return 1;
}

static int handle_tostring(lua_State *L) {
  handle_hdr *h = (handle_hdr *)luaL_checkudata(L, 1, KIND()->mt);
  lua_pushfstring(L, "%s(%s)", KIND()->mt, h->open ? "open" : "closed");
  return 1;
}

/* The core's sleeper config from the method at midx (0 or none: "auto")
 * and the options table at opts (0: none): dma_latency, and for a pacer
 * (period: its period in ns; NULL for a sleeper) method and missed.
 * Every rule is the core's: a bad field raises "<option>: <rule>"
 * (sleepacc_option_of_field names it). */
static void sleeper_config(lua_State *L, sleepacc_sleeper_config *c, int midx, int opts,
                           const int64_t *period) {
  const char *field, *msg;
  int pacer = period != NULL;
  sleepacc_sleeper_config_default(c);
  if (period) c->period_ns = *period;
  if (midx && !lua_isnoneornil(L, midx)) c->method = sleepacc_lua_str(L, midx, "method");
  if (opts && pacer && sleepacc_lua_field(L, opts, "method")) /* the table keeps the strings */
    c->method = sleepacc_lua_str(L, -1, "method"), lua_pop(L, 1);
  if (opts && pacer && sleepacc_lua_field(L, opts, "missed"))
    c->missed = sleepacc_lua_str(L, -1, "missed"), lua_pop(L, 1);
  if (opts && sleepacc_lua_field(L, opts, "dma_latency"))
    c->dma_latency_us = (int64_t)sleepacc_lua_int(L, -1, "dma_latency", 0), lua_pop(L, 1);
  if (sleepacc_sleeper_config_explain(c, pacer, &field, &msg) != 0)
    sleepacc_lua_error(L, sleepacc_option_of_field(field), "%s", msg);
}

/* The handle at the top of the stack after its open_config returned rc
 * (field: the config field blamed): it, or nil, "ENAME: msg (option)". */
static int handle_opened(lua_State *L, const handle_kind *k, int rc, const char *field) {
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, field ? sleepacc_option_of_field(field) : k->mt);
  ((handle_hdr *)lua_touserdata(L, -1))->open = 1;
  return 1;
}

/* One chunk of a wait: the pacer's next tick, or the sleeper toward dl. */
typedef struct {
  sleepacc_sleeper *s;
  sleepacc_pacer *p;
  int64_t dl;
} wait_arg;

static int wait_step(void *ud) {
  wait_arg *w = (wait_arg *)ud;
  return w->p ? sleepacc_pacer_wait(w->p, SLEEPACC_CHUNK_NS, &w->dl)
              : sleepacc_sleeper_until(w->s, w->dl, SLEEPACC_CHUNK_NS);
}

/* Sleep s toward deadline in chunks (Ctrl-C checked between them). */
static int sleep_until(lua_State *L, sleepacc_sleeper *s, int64_t deadline) {
  wait_arg w = {s, NULL, deadline};
  int rc = sleepacc_lua_chunks(L, wait_step, &w, NULL); /* raises "interrupted!" on Ctrl-C */
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, "sleep");
  lua_pushboolean(L, 1);
  return 1;
}

/* A duration argument in ns, checked by the core's rule. */
static int64_t duration_arg(lua_State *L, int idx, const char *name) {
  const char *msg;
  int64_t d = sleepacc_lua_ns(L, idx, name);
  if (sleepacc_duration_check(d, &msg) != 0) sleepacc_lua_error(L, name, "%s", msg);
  return d;
}

/* ------------------------------------------------------------ Sleeper */

static int sleeper_new(lua_State *L) {
  static const char *const known[] = {"dma_latency", NULL};
  sleepacc_sleeper_config c;
  const char *field = NULL;
  sleepacc_sleeper *s;
  if (!lua_isnoneornil(L, 2)) sleepacc_lua_checkoptions(L, 2, known);
  sleeper_config(L, &c, 1, lua_isnoneornil(L, 2) ? 0 : 2, NULL);
  s = (sleepacc_sleeper *)handle_new(L, &SLEEPER);
  return handle_opened(L, &SLEEPER, sleepacc_sleeper_open_config(s, &c, &field), field);
}

static int sleeper_sleep(lua_State *L) {
  sleepacc_sleeper *s = (sleepacc_sleeper *)handle_check(L, 1, &SLEEPER, 1);
  int64_t d = duration_arg(L, 2, "seconds");
  return sleep_until(L, s, sleepacc_now_ns() + d);
}

/* s:sleep_until(deadline_ns): a CLOCK_MONOTONIC deadline, as sa.now_ns(). */
static int sleeper_until(lua_State *L) {
  sleepacc_sleeper *s = (sleepacc_sleeper *)handle_check(L, 1, &SLEEPER, 1);
  return sleep_until(L, s, (int64_t)sleepacc_lua_int(L, 2, "deadline_ns", 0));
}

/* sa.sleep's sleeper of the checked config c (opened on first use, kept
 * by method), or NULL after pushing an error. */
static sleepacc_sleeper *cached(lua_State *L, const sleepacc_sleeper_config *c) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  }
  if (lua_getfield(L, -1, c->method) != LUA_TUSERDATA) {
    const char *field = NULL;
    sleepacc_sleeper *s;
    lua_pop(L, 1);
    s = (sleepacc_sleeper *)handle_new(L, &SLEEPER);
    if (handle_opened(L, &SLEEPER, sleepacc_sleeper_open_config(s, c, &field), field) != 1) return NULL;
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, c->method);
  }
  return (sleepacc_sleeper *)handle_check(L, -1, &SLEEPER, 1);
}

static int sleep_once(lua_State *L) {
  int64_t d = duration_arg(L, 1, "seconds");
  sleepacc_sleeper_config c;
  sleepacc_sleeper *s;
  sleeper_config(L, &c, 2, 0, NULL);
  s = cached(L, &c);
  return s ? sleep_until(L, s, sleepacc_now_ns() + d) : 3;
}

static int sleep_stats(lua_State *L) {
  sleepacc_sleeper_config c;
  sleeper_config(L, &c, 1, 0, NULL);
  if (lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY) != LUA_TTABLE ||
      lua_getfield(L, -1, c.method) != LUA_TUSERDATA) {
    lua_pushnil(L);
    return 1;
  }
  push_stats(L, &SLEEPER, handle_check(L, -1, &SLEEPER, 0));
  return 1;
}

/* ------------------------------------------------------------ Pacer */

static int pacer_new(lua_State *L) {
  static const char *const known[] = {"method", "missed", "dma_latency", NULL};
  int opts = lua_isnoneornil(L, 2) ? 0 : 2;
  sleepacc_sleeper_config c;
  const char *field = NULL;
  int64_t period = sleepacc_lua_ns(L, 1, "period");
  sleepacc_pacer *p;
  if (opts) sleepacc_lua_checkoptions(L, 2, known);
  sleeper_config(L, &c, 0, opts, &period);
  p = (sleepacc_pacer *)handle_new(L, &PACER);
  return handle_opened(L, &PACER, sleepacc_pacer_open_config(p, &c, &field), field);
}

static int pacer_wait(lua_State *L) {
  wait_arg w = {NULL, (sleepacc_pacer *)handle_check(L, 1, &PACER, 1), 0};
  int rc = sleepacc_lua_chunks(L, wait_step, &w, NULL);
  if (rc < 0) return sleepacc_lua_pusherror(L, rc, "wait");
  lua_pushinteger(L, (lua_Integer)w.dl);
  return 1;
}

/* ------------------------------------------------------------ open */

static const luaL_Reg handle_meta[] = {{"__gc", handle_close}, {"__close", handle_close},
                                       {"__tostring", handle_tostring}, {NULL, NULL}};
static const luaL_Reg handle_methods[] = {{"stats", handle_stats}, {"close", handle_close}, {NULL, NULL}};

/* The metatable of kind k, with __index = {stats, close} + its own methods. */
static void handle_type(lua_State *L, const handle_kind *k, const luaL_Reg *own) {
  luaL_newmetatable(L, k->mt);
  lua_pushlightuserdata(L, (void *)(uintptr_t)k);
  luaL_setfuncs(L, handle_meta, 1);
  lua_newtable(L);
  lua_pushlightuserdata(L, (void *)(uintptr_t)k);
  luaL_setfuncs(L, handle_methods, 1);
  luaL_setfuncs(L, own, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

static const luaL_Reg sleeper_own[] = {{"sleep", sleeper_sleep}, {"sleep_until", sleeper_until},
                                       {NULL, NULL}};
static const luaL_Reg pacer_own[] = {{"wait", pacer_wait}, {NULL, NULL}};

static const luaL_Reg precise_funcs[] = {{"sleep", sleep_once}, {"sleep_stats", sleep_stats},
                                         {"sleeper", sleeper_new}, {"pacer", pacer_new},
                                         {NULL, NULL}};

int sleepacc_lua_open_precise(lua_State *L) {
  handle_type(L, &SLEEPER, sleeper_own);
  handle_type(L, &PACER, pacer_own);
  luaL_setfuncs(L, precise_funcs, 0);
  return 0;
}
