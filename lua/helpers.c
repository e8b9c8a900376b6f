/*
 * helpers.c -- the Lua module's shared helpers (declared in binding.h):
 * argument checks that name the argument, the luv-style error return, the
 * Ctrl-C checkpoint and the chunked core loop, aligned userdata, and the
 * 5.1 main-thread lookup of compat.h.  Used by lsleepacc.c and lsleeper.c;
 * it depends on neither (no cycle between the binding's files).
 */
#include "binding.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A short text for the value at idx: numbers and strings as values,
 * everything else as its type name. */
static const char *sleepacc__repr(lua_State *L, int idx, char *buf, size_t n) {
  switch (lua_type(L, idx)) {
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx))
      snprintf(buf, n, "%lld", (long long)lua_tointeger(L, idx));
    else if (isnan((double)lua_tonumber(L, idx)))
      snprintf(buf, n, "nan");
    else
      snprintf(buf, n, "%.17g", (double)lua_tonumber(L, idx));
    return buf;
  case LUA_TSTRING:
    snprintf(buf, n, "string \"%.40s\"", lua_tostring(L, idx));
    return buf;
  default:
    snprintf(buf, n, "%s", luaL_typename(L, idx));
    return buf;
  }
}

int sleepacc_lua_argerror(lua_State *L, const char *fn, const char *name, const char *fmt, ...) {
  char why[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  return luaL_error(L, "bad argument '%s' to '%s' (%s)", name, fn, why);
}

int sleepacc_lua_pusherror(lua_State *L, int err, const char *context) {
  if (err > 0) err = -err;
  lua_pushnil(L);
  if (context)
    lua_pushfstring(L, "%s: %s (%s)", sleepacc_errname(err), sleepacc_strerror(err), context);
  else
    lua_pushfstring(L, "%s: %s", sleepacc_errname(err), sleepacc_strerror(err));
  lua_pushstring(L, sleepacc_errname(err));
  return 3;
}

void sleepacc_lua_checkoptions(lua_State *L, int idx, const char *fn, const char *argname,
                               const char *const *known) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE)
    sleepacc_lua_argerror(L, fn, argname, "table of options expected, got %s",
                          luaL_typename(L, idx));
  luaL_checkstack(L, 3, NULL);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k;
    size_t i;
    lua_pop(L, 1); /* the value; keep the key */
    if (lua_type(L, -1) != LUA_TSTRING) {
      char r[64];
      sleepacc_lua_argerror(L, fn, argname, "option names must be strings, got key %s",
                            sleepacc__repr(L, -1, r, sizeof r));
    }
    k = lua_tostring(L, -1);
    for (i = 0; known[i]; i++)
      if (strcmp(known[i], k) == 0) break;
    if (!known[i]) {
      char list[512];
      size_t len = 0;
      list[0] = '\0';
      for (i = 0; known[i] && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", known[i]);
      sleepacc_lua_argerror(L, fn, k, "unknown option; known: %s", list);
    }
  }
}

int sleepacc_lua_field(lua_State *L, int t, const char *name) {
  luaL_checkstack(L, 1, NULL);
  if (lua_getfield(L, t, name) == LUA_TNIL) {
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}

int64_t sleepacc_lua_seconds_ns(lua_State *L, int idx, const char *fn, const char *name,
                                int flags) {
  const lua_Integer max_s = SLEEPACC_MAX_DURATION_NS / 1000000000LL;
  char r[64];
  int64_t ns;
  if (lua_type(L, idx) != LUA_TNUMBER)
    sleepacc_lua_argerror(L, fn, name, "number of seconds expected, got %s",
                          luaL_typename(L, idx));
  if (lua_isinteger(L, idx)) {
    lua_Integer s = lua_tointeger(L, idx);
    if (s < 0)
      sleepacc_lua_argerror(L, fn, name, "must be >= 0 seconds, got %lld", (long long)s);
    if (s > max_s)
      sleepacc_lua_argerror(L, fn, name, "must be at most %lld seconds (one day), got %lld",
                            (long long)max_s, (long long)s);
    ns = (int64_t)s * 1000000000LL;
  } else {
    double s = (double)lua_tonumber(L, idx);
    if (!isfinite(s))
      sleepacc_lua_argerror(L, fn, name, "must be finite, got %s",
                            sleepacc__repr(L, idx, r, sizeof r));
    if (s < 0)
      sleepacc_lua_argerror(L, fn, name, "must be >= 0 seconds, got %s",
                            sleepacc__repr(L, idx, r, sizeof r));
    if (s > (double)max_s)
      sleepacc_lua_argerror(L, fn, name, "must be at most %lld seconds (one day), got %s",
                            (long long)max_s, sleepacc__repr(L, idx, r, sizeof r));
    ns = (int64_t)llround(s * 1e9);
  }
  if ((flags & SLEEPACC_LUA_NONZERO) && ns <= 0)
    sleepacc_lua_argerror(L, fn, name, "must be > 0 (at least 1 ns), got %s",
                          sleepacc__repr(L, idx, r, sizeof r));
  return ns;
}

lua_Integer sleepacc_lua_integer(lua_State *L, int idx, const char *fn, const char *name,
                                 lua_Integer lo, lua_Integer hi) {
  char r[64];
  int ok = 0;
  lua_Integer v;
  if (lua_type(L, idx) != LUA_TNUMBER)
    sleepacc_lua_argerror(L, fn, name, "integer expected, got %s", luaL_typename(L, idx));
  v = lua_tointegerx(L, idx, &ok);
  if (!ok)
    sleepacc_lua_argerror(L, fn, name, "integer expected, got %s",
                          sleepacc__repr(L, idx, r, sizeof r));
  if (v < lo || v > hi) {
    if (hi == LUA_MAXINTEGER)
      sleepacc_lua_argerror(L, fn, name, "must be >= %lld, got %lld", (long long)lo,
                            (long long)v);
    sleepacc_lua_argerror(L, fn, name, "must be between %lld and %lld, got %lld",
                          (long long)lo, (long long)hi, (long long)v);
  }
  return v;
}

int sleepacc_lua_boolean(lua_State *L, int idx, const char *fn, const char *name) {
  if (lua_type(L, idx) != LUA_TBOOLEAN)
    sleepacc_lua_argerror(L, fn, name, "boolean expected, got %s", luaL_typename(L, idx));
  return lua_toboolean(L, idx);
}

const char *sleepacc_lua_string(lua_State *L, int idx, const char *fn, const char *name) {
  if (lua_type(L, idx) != LUA_TSTRING)
    sleepacc_lua_argerror(L, fn, name, "string expected, got %s", luaL_typename(L, idx));
  return lua_tostring(L, idx);
}

void sleepacc_lua_function(lua_State *L, int idx, const char *fn, const char *name) {
  if (lua_type(L, idx) != LUA_TFUNCTION)
    sleepacc_lua_argerror(L, fn, name, "function expected, got %s", luaL_typename(L, idx));
}

const sleepacc_method *sleepacc_lua_method(lua_State *L, int idx, const char *fn,
                                           const char *name, int need_available) {
  const sleepacc_method *m;
  const char *s;
  if (lua_type(L, idx) != LUA_TSTRING)
    sleepacc_lua_argerror(L, fn, name, "method name (string) expected, got %s",
                          luaL_typename(L, idx));
  s = lua_tostring(L, idx);
  m = sleepacc_method_find(s);
  if (!m) {
    char list[768];
    size_t len = 0, i, count = sleepacc_method_count();
    list[0] = '\0';
    for (i = 0; i < count && len < sizeof list; i++) {
      const sleepacc_method *k = sleepacc_method_at(i);
      if (!k || !sleepacc_method_available(k)) continue;
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", k->name);
    }
    sleepacc_lua_argerror(L, fn, name, "unknown method \"%.60s\"; available: %s", s, list);
  }
  if (need_available && !sleepacc_method_available(m))
    sleepacc_lua_argerror(L, fn, name, "method \"%s\" is not available on this system", m->name);
  return m;
}

/* ------------------------------------------------------------- Ctrl-C */

/* The function called at a checkpoint: its call and return are hook events. */
static int sleepacc__nop(lua_State *L) {
  (void)L;
  return 0;
}

void sleepacc_lua_guard_init(sleepacc_lua_guard *g, lua_State *L, void (*cleanup)(void *),
                             void *ud) {
  luaL_checkstack(L, 4, NULL); /* the checkpoint never needs to grow the stack */
  g->L = L;
  g->cleanup = cleanup;
  g->ud = ud;
  g->main = sleepacc_lua_mainthread(L);
  g->main_hook = g->main ? lua_gethook(g->main) : NULL;
  g->main_mask = g->main ? lua_gethookmask(g->main) : 0;
}

void sleepacc_lua_checkpoint(sleepacc_lua_guard *g) {
  lua_State *L = g->L;
  /* A hook on this thread (the interpreter's Ctrl-C sets one on the main
   * thread) fires on the no-op's call; its error is caught here so the
   * cleanup runs before the error travels on. */
  if (lua_gethook(L) != NULL) {
    lua_pushcfunction(L, sleepacc__nop);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
      if (g->cleanup) g->cleanup(g->ud);
      lua_error(L);
    }
  }
  /* Running in a coroutine: the interpreter set its hook on the main
   * thread, which cannot run now.  A hook that appeared there during this
   * call can only come from a signal handler: stop, as Ctrl-C asks.  (The
   * main thread's own hook then fires again when it resumes.) */
  if (g->main && g->main != L &&
      (lua_gethook(g->main) != g->main_hook || lua_gethookmask(g->main) != g->main_mask)) {
    if (g->cleanup) g->cleanup(g->ud);
    luaL_error(L, "interrupted!");
  }
}

/* Cleanup of a run interrupted between chunks. */
static void sleepacc__finish_cb(void *ud) {
  sleepacc_run_finish((sleepacc_run *)ud);
}

int sleepacc_lua_run(lua_State *L, sleepacc_run *r) {
  sleepacc_lua_guard g;
  sleepacc_lua_guard_init(&g, L, sleepacc__finish_cb, r);
  for (;;) {
    int rc = sleepacc_run_step(r);
    if (rc == 1) return 0;
    if (rc < 0 && rc != -EINTR) return rc;
    sleepacc_lua_checkpoint(&g); /* raises (after finishing r) on Ctrl-C */
  }
}

const char *sleepacc_lua_name(const char *core_field, char *buf, size_t n) {
  size_t len;
  if (!core_field) return NULL;
  if (strncmp(core_field, "env.", 4) == 0) core_field += 4;
  len = strlen(core_field);
  if (len > 3 && (strcmp(core_field + len - 3, "_ns") == 0 || strcmp(core_field + len - 3, "_us") == 0))
    len -= 3;
  snprintf(buf, n, "%.*s", (int)len, core_field);
  return buf;
}

#define SLEEPACC_LUA_MAIN_KEY "sleepacc.mainthread"

void sleepacc_lua_remember_main(lua_State *L) {
#if LUA_VERSION_NUM < 502
  if (lua_pushthread(L)) /* 1: L is the main thread */
    lua_setfield(L, LUA_REGISTRYINDEX, SLEEPACC_LUA_MAIN_KEY);
  else
    lua_pop(L, 1);
#else
  (void)L;
#endif
}

lua_State *sleepacc_lua_mainthread(lua_State *L) {
  lua_State *m;
#if LUA_VERSION_NUM < 502
  lua_getfield(L, LUA_REGISTRYINDEX, SLEEPACC_LUA_MAIN_KEY);
#else
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
#endif
  m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

void *sleepacc_lua_newaligned(lua_State *L, size_t size) {
  const uintptr_t a = SLEEPACC_LUA_ALIGN;
  char *p = (char *)lua_newuserdatauv(L, size + a - 1, 0);
  return (void *)(((uintptr_t)p + a - 1) & ~(a - 1));
}

