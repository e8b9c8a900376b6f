/*
 * lsleeper.c -- the precise sleep (API: lua/README.md): the core's handle
 * (sleepacc_precise: a sleeper or a pacer, one lifecycle) as Lua userdata.
 * sa.sleep's sleepers are kept in the registry, one per method, so what
 * `auto` learns carries over.  A claim's identity is the Lua state's main
 * thread: a call re-entered from a hook gets a sleeper of its own.
 */
#include "binding.h"

#include <string.h>

#define CACHE_KEY "sleepacc.sleepers"

/* Metatable names by sleepacc_precise_kind. */
static const char *const MT[] = {"sleepacc.Sleeper", "sleepacc.Pacer"};

/* The handle of kind at idx (open or closed), at its aligned address. */
static sleepacc_precise *handle_check(lua_State *L, int idx, int kind) {
  return (sleepacc_precise *)sleepacc_lua_aligned(sleepacc_lua_udata(L, idx, MT[kind], "self"));
}

#define ME(L) ((uint64_t)(uintptr_t)sleepacc_lua_mainthread(L))

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
  int rc = sleepacc_precise_stats_get(h, ME(L), &st, &fields);
  if (rc < 0) return handle_fail(L, h, rc, NULL, SLEEPACC_PRECISE_AT_HANDLE);
  sleepacc_lua_push_fields(L, fields, &st, 0);
  return 1;
}

static int handle_stats(lua_State *L) { return push_stats(L, handle_check(L, 1, KIND())); }

static int handle_tostring(lua_State *L) {
  sleepacc_precise *h = handle_check(L, 1, KIND());
  lua_pushfstring(L, "%s(%s)", MT[KIND()], sleepacc_precise_is_open(h) ? "open" : "closed");
  return 1;
}

/* The config of a handle of kind, read by the core from the argument at arg
 * (a sleeper's method, a pacer's period) and the options table at opts (0
 * or nil: none); its fault raises. */
static void handle_config(lua_State *L, sleepacc_sleeper_config *c, int kind, int arg, int opts) {
  sleepacc_lua_source src;
  sleepacc_fault f;
  sleepacc_getter g = sleepacc_lua_getter(L, &src, opts && !lua_isnoneornil(L, opts) ? opts : 0,
                                          sleepacc_precise_takes[kind], arg);
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

/* sa.sleeper([method [, options]]), sa.pacer(period [, options]) */
static int handle_make(lua_State *L) {
  sleepacc_sleeper_config c;
  handle_config(L, &c, KIND(), 1, 2);
  return handle_open(L, KIND(), &c);
}

static void call_abandon(void *c) { sleepacc_precise_end((sleepacc_precise_call *)c, 1); }

/* One wait on the handle of kind at idx toward deadline (a pacer's: its next
 * tick), in chunks, a hand-off finished by the core's poll: true (a pacer:
 * the tick's deadline), or nil, err, ename. */
static int handle_run(lua_State *L, int idx, int kind, int64_t deadline) {
  sleepacc_precise *h = handle_check(L, idx, kind);
  sleepacc_precise_call c;
  sleepacc_sleeper *own = NULL;
  uint64_t id = ME(L);
  int rc;
  if (sleepacc_precise_reentered(h, id)) /* from a hook: a sleeper of its own */
    own = (sleepacc_sleeper *)sleepacc_lua_newaligned(L, sizeof *own);
  if ((rc = sleepacc_precise_begin(&c, h, id, deadline, 0, own)) == 0) {
    rc = sleepacc_lua_chunks(L, sleepacc_precise_step, &c, call_abandon); /* raises on Ctrl-C */
    if (sleepacc_precise_end(&c, rc < 0)) /* handed off: a pacer's tick is c.deadline_ns */
      while ((rc = sleepacc_precise_poll(h, id, c.deadline_ns, 0)) == 0) {}
  }
  if (rc < 0) return handle_fail(L, h, rc, NULL, SLEEPACC_PRECISE_AT_CALL);
  if (kind == SLEEPACC_PRECISE_PACER) lua_pushinteger(L, (lua_Integer)c.deadline_ns);
  else lua_pushboolean(L, 1);
  return 1;
}

/* A wait on the handle at 1: its argument by the core's row, as Python's. */
static int handle_wait(lua_State *L, int kind, const sleepacc_option *arg) {
  int64_t deadline = 0;
  handle_check(L, 1, kind);
  if (arg) sleepacc_lua_value(L, 2, arg, NULL, &deadline);
  return handle_run(L, 1, kind, deadline);
}

static int sleeper_sleep(lua_State *L) { return handle_wait(L, SLEEPACC_PRECISE_SLEEPER, sleepacc_sleep_option); }
static int sleeper_until(lua_State *L) { return handle_wait(L, SLEEPACC_PRECISE_SLEEPER, sleepacc_deadline_option); }
static int pacer_wait(lua_State *L) { return handle_wait(L, SLEEPACC_PRECISE_PACER, NULL); }

/* Push sa.sleep's sleeper of config c (with open: opened when absent) and
 * return 1; else return 0 having pushed nil, or open's nil, err, ename. */
static int cached(lua_State *L, const sleepacc_sleeper_config *c, int open) {
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY); /* a table (sleepacc_lua_open_precise) */
  lua_getfield(L, -1, c->method);                 /* its values are sleepers */
  if (!lua_isnil(L, -1) || !open) return !lua_isnil(L, -1);
  lua_pop(L, 1);
  if (handle_open(L, SLEEPACC_PRECISE_SLEEPER, c) != 1) return 0;
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, c->method);
  return 1;
}

static int sleep_once(lua_State *L) {
  int64_t deadline = 0;
  sleepacc_sleeper_config c;
  sleepacc_lua_value(L, 1, sleepacc_sleep_option, NULL, &deadline);
  handle_config(L, &c, SLEEPACC_PRECISE_SLEEPER, 2, 0);
  return cached(L, &c, 1) ? handle_run(L, lua_gettop(L), SLEEPACC_PRECISE_SLEEPER, deadline) : 3;
}

static int sleep_stats(lua_State *L) {
  sleepacc_sleeper_config c;
  handle_config(L, &c, SLEEPACC_PRECISE_SLEEPER, 1, 0);
  return cached(L, &c, 0) ? push_stats(L, handle_check(L, -1, SLEEPACC_PRECISE_SLEEPER)) : 1;
}

/* ------------------------------------------------------------ open */

static const luaL_Reg handle_meta[] = {{"__gc", handle_close}, {"__close", handle_close},
                                       {"__tostring", handle_tostring}, {NULL, NULL}};
static const luaL_Reg handle_methods[] = {{"stats", handle_stats}, {"close", handle_close}, {NULL, NULL}};
static const luaL_Reg waits[][3] = {{{"sleep", sleeper_sleep}, {"sleep_until", sleeper_until}, {NULL, NULL}},
                                    {{"wait", pacer_wait}, {NULL, NULL}, {NULL, NULL}}}; /* by kind */

/* The functions of l into the table on top, each a closure over kind. */
static void kind_funcs(lua_State *L, const luaL_Reg *l, int kind) {
  for (; l->name; l++) {
    lua_pushinteger(L, kind);
    lua_pushcclosure(L, l->func, 1);
    lua_setfield(L, -2, l->name);
  }
}

/* The metatable of kind, its methods and its constructor, named make, in
 * the module table on top. */
static void handle_type(lua_State *L, int kind, const char *make) {
  const luaL_Reg maker[] = {{make, handle_make}, {NULL, NULL}};
  luaL_newmetatable(L, MT[kind]);
  kind_funcs(L, handle_meta, kind);
  lua_newtable(L);
  kind_funcs(L, handle_methods, kind);
  luaL_setfuncs(L, waits[kind], 0);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  kind_funcs(L, maker, kind);
}

static const luaL_Reg precise_funcs[] = {{"sleep", sleep_once}, {"sleep_stats", sleep_stats},
                                         {NULL, NULL}};

int sleepacc_lua_open_precise(lua_State *L) {
  lua_getfield(L, LUA_REGISTRYINDEX, CACHE_KEY); /* sa.sleep's sleepers, kept across reloads */
  if (lua_isnil(L, -1)) {
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, CACHE_KEY);
  }
  lua_pop(L, 1);
  handle_type(L, SLEEPACC_PRECISE_SLEEPER, "sleeper");
  handle_type(L, SLEEPACC_PRECISE_PACER, "pacer");
  luaL_setfuncs(L, precise_funcs, 0);
  return 0;
}
