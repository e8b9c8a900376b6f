/*
 * lsleeper.c -- the precise sleep (API: lua/README.md): the core's precise
 * handle (sleepacc_precise, csrc/precise.c: a sleeper or a pacer, one
 * lifecycle) as Lua handles, their stats by the field table the core names
 * for the kind.  sa.sleep keeps one sleeper per method and Lua state (in the
 * registry), so what `auto` learns carries over.  Waits run the core's step
 * in chunks, so Ctrl-C ends even a 60 s sleep within one chunk.  A claim's
 * identity is the Lua state (its main thread): a call re-entered from a hook
 * gets a sleeper of its own.
 */
#include "binding.h"

#include <string.h>

#define CACHE_KEY "sleepacc.sleepers"

/* Metatable names by sleepacc_precise_kind. */
static const char *const MT[] = {"sleepacc.Sleeper", "sleepacc.Pacer"};

/* The handle of kind at idx (open or closed), at its aligned address. */
static sleepacc_precise *handle_check(lua_State *L, int idx, int kind) {
  return (sleepacc_precise *)sleepacc_lua_aligned(sleepacc_lua_checkudata(L, idx, MT[kind], "self"));
}

static uint64_t me(lua_State *L) { return (uint64_t)(uintptr_t)sleepacc_lua_mainthread(L); }

/* Failure rc of h in the core's words (sleepacc_precise_message): a closed
 * handle raises "<Type> is closed", else nil, "ENAME: msg (<words>)", ENAME. */
static int handle_fail(lua_State *L, const sleepacc_precise *h, int rc, const char *field, int at) {
  char words[SLEEPACC_PRECISE_WORDS_MAX];
  sleepacc_precise_message(h, rc, field, at, words, sizeof words);
  if (rc == -EBADF) luaL_error(L, "%s", words);
  return sleepacc_lua_pusherror(L, rc, words);
}

/* The methods every handle has; their upvalue is the kind. */
#define KIND() ((int)lua_tointeger(L, lua_upvalueindex(1)))

static int handle_close(lua_State *L) {
  sleepacc_precise *h = handle_check(L, 1, KIND());
  int rc = sleepacc_precise_close(h);
  return rc < 0 ? handle_fail(L, h, rc, NULL, SLEEPACC_PRECISE_AT_HANDLE) : 0;
}

static int push_stats(lua_State *L, const sleepacc_precise *h) {
  sleepacc_precise_stats st;
  const sleepacc_field *fields;
  int rc = sleepacc_precise_stats_get(h, me(L), &st, &fields);
  if (rc < 0) return handle_fail(L, h, rc, NULL, SLEEPACC_PRECISE_AT_HANDLE);
  sleepacc_lua_push_fields(L, fields, &st);
  return 1;
}

static int handle_stats(lua_State *L) { return push_stats(L, handle_check(L, 1, KIND())); }

static int handle_tostring(lua_State *L) {
  sleepacc_precise *h = handle_check(L, 1, KIND());
  lua_pushfstring(L, "%s(%s)", MT[KIND()], sleepacc_precise_is_open(h) ? "open" : "closed");
  return 1;
}

/* The config of a handle of kind, read by the core (sleepacc_sleeper_read,
 * what each kind takes: sleepacc_precise_takes) from the argument at arg (a
 * sleeper's method, a pacer's period) and the options table at opts (0 or
 * nil: none); its fault raises. */
static void handle_config(lua_State *L, sleepacc_sleeper_config *c, int kind, int arg, int opts) {
  sleepacc_lua_source src;
  sleepacc_fault f;
  sleepacc_getter g = sleepacc_lua_getter(L, &src, opts && !lua_isnoneornil(L, opts) ? opts : 0,
                                          sleepacc_precise_takes[kind], &arg, 1, NULL);
  int rc = sleepacc_sleeper_read(c, kind == SLEEPACC_PRECISE_PACER, &g, &f);
  if (rc < 0) sleepacc_lua_fault(&src, rc, &f, MT[kind]);
}

/* A new handle of kind opened from c, pushed (1), or nil, err, ename (3). */
static int handle_open(lua_State *L, int kind, const sleepacc_sleeper_config *c) {
  const char *field = NULL;
  sleepacc_precise *h = (sleepacc_precise *)sleepacc_lua_newaligned(L, sizeof *h);
  int rc;
  memset(h, 0, sizeof *h);
  luaL_getmetatable(L, MT[kind]);
  lua_setmetatable(L, -2);
  rc = sleepacc_precise_open(h, kind, c, &field);
  return rc < 0 ? handle_fail(L, h, rc, field, SLEEPACC_PRECISE_AT_HANDLE) : 1;
}

/* sa.sleeper([method [, options]]), sa.pacer(period [, options]): a new
 * handle of the closure's kind (KIND()). */
static int handle_make(lua_State *L) {
  sleepacc_sleeper_config c;
  handle_config(L, &c, KIND(), 1, 2);
  return handle_open(L, KIND(), &c);
}

static void call_abandon(void *c) { sleepacc_precise_end((sleepacc_precise_call *)c, 1); }

/* One sleep (toward *deadline) or wait (the tick's deadline into *deadline)
 * on the handle of kind at idx, in chunks, a hand-off finished by the core's
 * poll (sleepacc_precise_poll): 0, or nil, err, ename pushed (handle_fail). */
static int handle_run(lua_State *L, int idx, int kind, int64_t *deadline) {
  sleepacc_precise *h = handle_check(L, idx, kind);
  sleepacc_precise_call c;
  sleepacc_sleeper *own = NULL;
  uint64_t id = me(L);
  int rc;
  if (sleepacc_precise_reentered(h, id)) /* from a hook: a sleeper of its own */
    own = (sleepacc_sleeper *)sleepacc_lua_newaligned(L, sizeof *own);
  if ((rc = sleepacc_precise_begin(&c, h, id, *deadline, 0, own)) == 0) {
    rc = sleepacc_lua_chunks(L, sleepacc_precise_step, &c, call_abandon); /* raises on Ctrl-C */
    if (sleepacc_precise_end(&c, rc < 0)) /* handed off: a pacer's tick is c.deadline_ns */
      while ((rc = sleepacc_precise_poll(h, id, c.deadline_ns, 0)) == 0) {}
  }
  if (rc < 0) return handle_fail(L, h, rc, NULL, SLEEPACC_PRECISE_AT_CALL);
  *deadline = c.deadline_ns;
  return 0;
}

/* Sleep the sleeper at idx toward deadline: true, or nil, err, ename. */
static int sleep_until(lua_State *L, int idx, int64_t deadline) {
  if (handle_run(L, idx, SLEEPACC_PRECISE_SLEEPER, &deadline) != 0) return 3;
  lua_pushboolean(L, 1);
  return 1;
}

/* The deadline of the argument at idx by the core's row o, Python's too: a
 * sleep's seconds (sleepacc_sleep_option) or a deadline (sleepacc_deadline_option). */
static int64_t deadline_arg(lua_State *L, int idx, const sleepacc_option *o) {
  int64_t dl = 0;
  sleepacc_lua_value(L, idx, o, NULL, &dl);
  return dl;
}

static int sleeper_sleep(lua_State *L) {
  handle_check(L, 1, SLEEPACC_PRECISE_SLEEPER);
  return sleep_until(L, 1, deadline_arg(L, 2, sleepacc_sleep_option));
}

/* s:sleep_until(deadline_ns): a CLOCK_MONOTONIC deadline, as sa.now_ns(). */
static int sleeper_until(lua_State *L) {
  handle_check(L, 1, SLEEPACC_PRECISE_SLEEPER);
  return sleep_until(L, 1, deadline_arg(L, 2, sleepacc_deadline_option));
}

/* Push sa.sleep's sleeper of the checked config c (kept by method) and
 * return 1; else return 0 having pushed nil (open: it is opened, or its
 * error pushed). */
static int cached(lua_State *L, const sleepacc_sleeper_config *c, int open) {
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY); /* a table (sleepacc_lua_open_precise) */
  if (sleepacc_lua_field(L, -1, c->method)) return 1; /* its values are sleepers */
  if (!open) return lua_pushnil(L), 0;
  if (handle_open(L, SLEEPACC_PRECISE_SLEEPER, c) != 1) return 0;
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, c->method);
  return 1;
}

static int sleep_once(lua_State *L) {
  int64_t dl = deadline_arg(L, 1, sleepacc_sleep_option);
  sleepacc_sleeper_config c;
  handle_config(L, &c, SLEEPACC_PRECISE_SLEEPER, 2, 0);
  return cached(L, &c, 1) ? sleep_until(L, lua_gettop(L), dl) : 3;
}

static int sleep_stats(lua_State *L) {
  sleepacc_sleeper_config c;
  handle_config(L, &c, SLEEPACC_PRECISE_SLEEPER, 1, 0);
  return cached(L, &c, 0) ? push_stats(L, handle_check(L, -1, SLEEPACC_PRECISE_SLEEPER)) : 1;
}

static int pacer_wait(lua_State *L) {
  int64_t dl = 0;
  if (handle_run(L, 1, SLEEPACC_PRECISE_PACER, &dl) != 0) return 3;
  lua_pushinteger(L, (lua_Integer)dl);
  return 1;
}

/* ------------------------------------------------------------ open */

static const luaL_Reg handle_meta[] = {{"__gc", handle_close}, {"__close", handle_close},
                                       {"__tostring", handle_tostring}, {NULL, NULL}};
static const luaL_Reg handle_methods[] = {{"stats", handle_stats}, {"close", handle_close}, {NULL, NULL}};

/* The functions of l into the table on top, each a closure whose upvalue
 * is kind (KIND()). */
static void kind_funcs(lua_State *L, const luaL_Reg *l, int kind) {
  for (; l->name; l++) {
    lua_pushinteger(L, kind);
    lua_pushcclosure(L, l->func, 1);
    lua_setfield(L, -2, l->name);
  }
}

/* The metatable of kind, with __index = {stats, close} + its own methods,
 * and its constructor, named make, in the module table on top. */
static void handle_type(lua_State *L, int kind, const char *make, const luaL_Reg *own) {
  const luaL_Reg maker[] = {{make, handle_make}, {NULL, NULL}};
  luaL_newmetatable(L, MT[kind]);
  kind_funcs(L, handle_meta, kind);
  lua_newtable(L);
  kind_funcs(L, handle_methods, kind);
  luaL_setfuncs(L, own, 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  kind_funcs(L, maker, kind);
}

static const luaL_Reg sleeper_own[] = {{"sleep", sleeper_sleep}, {"sleep_until", sleeper_until},
                                       {NULL, NULL}};
static const luaL_Reg pacer_own[] = {{"wait", pacer_wait}, {NULL, NULL}};

static const luaL_Reg precise_funcs[] = {{"sleep", sleep_once}, {"sleep_stats", sleep_stats},
                                         {NULL, NULL}};

int sleepacc_lua_open_precise(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY); /* sa.sleep's sleepers, kept across reloads */
  if (lua_isnil(L, -1)) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  }
  lua_pop(L, 1);
  handle_type(L, SLEEPACC_PRECISE_SLEEPER, "sleeper", sleeper_own);
  handle_type(L, SLEEPACC_PRECISE_PACER, "pacer", pacer_own);
  luaL_setfuncs(L, precise_funcs, 0);
  return 0;
}
