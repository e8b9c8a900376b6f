/*
 * helpers.c -- the Lua module's shared helpers (binding.h): errors,
 * conversions, the field-table converter, the Ctrl-C checkpoint and the
 * chunked run, aligned userdata, the 5.1 main thread.  Used by lsleepacc.c,
 * lsleeper.c and lsave.c; depends on none of them.
 */
#include "binding.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sleepacc_lua_error(lua_State *L, const char *field, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return luaL_error(L, "%s: %s", field, msg);
}

int sleepacc_lua_pusherror(lua_State *L, int err, const char *context) {
  if (err > 0) err = -err;
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s%s%s%s", sleepacc_errname(err), sleepacc_strerror(err),
                  context ? " (" : "", context ? context : "", context ? ")" : "");
  lua_pushstring(L, sleepacc_errname(err));
  return 3;
}

void sleepacc_lua_checkoptions(lua_State *L, int idx, const char *const *known) {
  if (lua_type(L, idx) != LUA_TTABLE)
    sleepacc_lua_error(L, "options", "table expected, got %s", luaL_typename(L, idx));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    size_t i = 0;
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING)
      for (; known[i] && strcmp(known[i], lua_tostring(L, -1)); i++) continue;
    if (lua_type(L, -1) != LUA_TSTRING || !known[i]) {
      char list[512];
      size_t len = 0;
      list[0] = '\0';
      for (i = 0; known[i] && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", known[i]);
      if (lua_type(L, -1) != LUA_TSTRING)
        sleepacc_lua_error(L, "options", "option names must be strings, got a %s key",
                           luaL_typename(L, -1));
      sleepacc_lua_error(L, lua_tostring(L, -1), "unknown option; known: %s", list);
    }
  }
}

int sleepacc_lua_field(lua_State *L, int t, const char *name) {
  if (lua_getfield(L, t, name) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  return 0;
}

int64_t sleepacc_lua_ns(lua_State *L, int idx, const char *name) {
  int64_t ns;
  if (lua_type(L, idx) != LUA_TNUMBER)
    sleepacc_lua_error(L, name, "number of seconds expected, got %s", luaL_typename(L, idx));
  /* the core's rounding and saturation, for integers too: every seconds
   * value the core accepts (at most one day) is exact as a double */
  if (sleepacc_seconds_to_ns((double)lua_tonumber(L, idx), &ns) < 0)
    sleepacc_lua_error(L, name, "must be finite, got %s", lua_tostring(L, idx));
  return ns;
}

lua_Integer sleepacc_lua_int(lua_State *L, int idx, const char *name, lua_Integer lo) {
  lua_Integer v;
  if (!sleepacc_lua_tointeger(L, idx, &v))
    sleepacc_lua_error(L, name, "integer expected, got %s",
                       lua_type(L, idx) == LUA_TNUMBER ? "a fraction" : luaL_typename(L, idx));
  if (v < lo) sleepacc_lua_error(L, name, "must be >= %lld, got %lld", (long long)lo, (long long)v);
  return v;
}

int sleepacc_lua_bool(lua_State *L, int idx, const char *name) {
  if (lua_type(L, idx) != LUA_TBOOLEAN)
    sleepacc_lua_error(L, name, "boolean expected, got %s", luaL_typename(L, idx));
  return lua_toboolean(L, idx);
}

const char *sleepacc_lua_str(lua_State *L, int idx, const char *name) {
  size_t len;
  const char *s;
  if (lua_type(L, idx) != LUA_TSTRING)
    sleepacc_lua_error(L, name, "string expected, got %s", luaL_typename(L, idx));
  s = lua_tolstring(L, idx, &len);
  if (sleepacc_name_check(s, len) != 0) sleepacc_lua_error(L, name, "holds a NUL byte");
  return s;
}

const sleepacc_method *sleepacc_lua_method(lua_State *L, int idx, const char *name) {
  const char *s = sleepacc_lua_str(L, idx, name);
  const sleepacc_method *m = sleepacc_method_find(s);
  char list[768];
  size_t len = 0;
  if (m) return m;
  list[0] = '\0';
  for (size_t i = 0; i < sleepacc_method_count() && len < sizeof list; i++) {
    const sleepacc_method *k = sleepacc_method_at(i);
    if (sleepacc_method_available(k))
      len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", k->name);
  }
  return (const sleepacc_method *)(intptr_t)sleepacc_lua_error(
      L, name, "unknown method \"%.60s\"; available: %s", s, list);
}

void sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base) {
  luaL_checkstack(L, 3, NULL);
  lua_newtable(L);
  for (; f->name; f++) {
    const char *p = (const char *)base + f->offset;
    switch (f->type) {
    case SLEEPACC_FIELD_INT64: lua_pushinteger(L, (lua_Integer)*(const int64_t *)(const void *)p); break;
    case SLEEPACC_FIELD_INT: lua_pushinteger(L, (lua_Integer)*(const int *)(const void *)p); break;
    case SLEEPACC_FIELD_DOUBLE: lua_pushnumber(L, (lua_Number)*(const double *)(const void *)p); break;
    case SLEEPACC_FIELD_BOOL: lua_pushboolean(L, *(const int *)(const void *)p); break;
    case SLEEPACC_FIELD_NESTED: sleepacc_lua_push_fields(L, f->sub, p); break;
    case SLEEPACC_FIELD_PAIRS: { /* an array of {<sub key name>=, <sub value name>=} */
      const sleepacc_pairs *pairs = (const sleepacc_pairs *)(const void *)p;
      lua_createtable(L, (int)pairs->n, 0);
      for (int i = 0; i < pairs->n && i < SLEEPACC_PAIRS_MAX; i++) {
        sleepacc_lua_push_fields(L, f->sub, &pairs->at[i]);
        lua_rawseti(L, -2, i + 1);
      }
      break;
    }
    case SLEEPACC_FIELD_OPT_INT64:
      if (*(const int64_t *)(const void *)p < 0) continue;
      lua_pushinteger(L, (lua_Integer)*(const int64_t *)(const void *)p);
      break;
    case SLEEPACC_FIELD_STRING:
      if (!*(const char *const *)(const void *)p) continue;
      lua_pushstring(L, *(const char *const *)(const void *)p);
      break;
    case SLEEPACC_FIELD_METHOD:
      if (!*(const sleepacc_method *const *)(const void *)p) continue;
      lua_pushstring(L, (*(const sleepacc_method *const *)(const void *)p)->name);
      break;
    case SLEEPACC_FIELD_TEXT: lua_pushstring(L, p); break;
    case SLEEPACC_FIELD_MODE:
      if (!sleepacc_mode_name(*(const int *)(const void *)p)) continue;
      lua_pushstring(L, sleepacc_mode_name(*(const int *)(const void *)p));
      break;
    default: continue;
    }
    lua_setfield(L, -2, f->name);
  }
}

/* ------------------------------------------------------------- Ctrl-C */

#define SLEEPACC_LUA_MAIN_KEY "sleepacc.mainthread"

void sleepacc_lua_remember_main(lua_State *L) {
#if LUA_VERSION_NUM < 502
  if (lua_pushthread(L)) lua_setfield(L, LUA_REGISTRYINDEX, SLEEPACC_LUA_MAIN_KEY);
  else lua_pop(L, 1);
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

/* Called at a checkpoint: its call and return are hook events. */
static int sleepacc__nop(lua_State *L) {
  (void)L;
  return 0;
}

int sleepacc_lua_chunks(lua_State *L, int (*step)(void *), void *arg, void (*cleanup)(void *)) {
  lua_State *main = sleepacc_lua_mainthread(L);
  lua_Hook main_hook = main ? lua_gethook(main) : NULL; /* at entry, to see one set meanwhile */
  int main_mask = main ? lua_gethookmask(main) : 0;
  luaL_checkstack(L, 4, NULL); /* the checkpoint never needs to grow the stack */
  for (;;) {
    int rc = step(arg);
    if (rc == 1) return 0;
    if (rc < 0 && rc != -EINTR) return rc;
    /* the checkpoint: a hook on this thread fires on the no-op's call; its
     * error is caught so the cleanup runs before it travels on */
    if (lua_gethook(L) != NULL) {
      lua_pushcfunction(L, sleepacc__nop);
      if (lua_pcall(L, 0, 0, 0) != 0) {
        if (cleanup) cleanup(arg);
        lua_error(L);
      }
    }
    /* in a coroutine: a hook set on the main thread meanwhile is Ctrl-C */
    if (main && main != L && (lua_gethook(main) != main_hook || lua_gethookmask(main) != main_mask)) {
      if (cleanup) cleanup(arg);
      luaL_error(L, "interrupted!");
    }
  }
}

static int sleepacc__step_cb(void *ud) { return sleepacc_run_step((sleepacc_run *)ud); }
static void sleepacc__finish_cb(void *ud) { sleepacc_run_finish((sleepacc_run *)ud); }

int sleepacc_lua_run(lua_State *L, sleepacc_run *r) {
  return sleepacc_lua_chunks(L, sleepacc__step_cb, r, sleepacc__finish_cb);
}

void *sleepacc_lua_newaligned(lua_State *L, size_t size) {
  const uintptr_t a = SLEEPACC_LUA_ALIGN;
  char *p = (char *)lua_newuserdatauv(L, size + a - 1, 0);
  return (void *)(((uintptr_t)p + a - 1) & ~(a - 1));
}
