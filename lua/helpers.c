/*
 * helpers.c -- the Lua module's shared helpers (binding.h): errors,
 * conversions, the options reader (by a core option list), the field-table
 * converter, the Ctrl-C checkpoint and the chunked run, aligned userdata,
 * the 5.1 main thread.  Used by lsleepacc.c, lsleeper.c and lsave.c;
 * depends on none of them.
 */
#include "binding.h"

#include <limits.h>
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

int sleepacc_lua_field(lua_State *L, int t, const char *name) {
  lua_getfield(L, t, name);
  if (!lua_isnil(L, -1)) return 1;
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
  if (m) return m;
  sleepacc_method_names(list, sizeof list);
  return (const sleepacc_method *)(intptr_t)sleepacc_lua_error(
      L, name, "unknown method \"%.60s\"; available: %s", s, list);
}

/* The options table at idx: a table whose keys are all in known (NULL-
 * terminated); a misspelt key is an error naming it. */
static void sleepacc__checkoptions(lua_State *L, int idx, const char *const *known) {
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

/* The value on top of the stack into base by row o's kind (the Lua API's
 * options: every kind but METHOD and NUMBER). */
static void sleepacc__option(lua_State *L, const sleepacc_option *o, void *base) {
  char *p = (char *)base + o->offset;
  lua_Integer v;
  int x;
  switch (o->kind) {
  case SLEEPACC_OPT_BUDGET: /* budget=false: only n stops the run */
    if (lua_type(L, -1) == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
      *(int64_t *)(void *)p = 0;
      break;
    }
    if ((*(int64_t *)(void *)p = sleepacc_lua_ns(L, -1, o->name)) <= 0) /* 0 is the core's "none" */
      sleepacc_lua_error(L, o->name, "must be > 0 seconds (false: no budget, only n stops)");
    break;
  case SLEEPACC_OPT_SECONDS: *(int64_t *)(void *)p = sleepacc_lua_ns(L, -1, o->name); break;
  case SLEEPACC_OPT_INT64: *(int64_t *)(void *)p = (int64_t)sleepacc_lua_int(L, -1, o->name, o->lo); break;
  case SLEEPACC_OPT_INT:
    v = sleepacc_lua_int(L, -1, o->name, o->lo);
    *(int *)(void *)p = v > INT_MAX ? INT_MAX : (int)v;
    break;
  case SLEEPACC_OPT_BOOL:
    if (lua_type(L, -1) != LUA_TBOOLEAN)
      sleepacc_lua_error(L, o->name, "boolean expected, got %s", luaL_typename(L, -1));
    *(int *)(void *)p = lua_toboolean(L, -1);
    break;
  case SLEEPACC_OPT_MODE:
  case SLEEPACC_OPT_POLICY:
    if ((x = sleepacc_option_choice(o, sleepacc_lua_str(L, -1, o->name))) < 0)
      sleepacc_lua_error(L, o->name, "unknown %s \"%.40s\"; known: %s", o->name, lua_tostring(L, -1),
                         sleepacc_option_choices(o));
    *(int *)(void *)p = x;
    break;
  case SLEEPACC_OPT_NAME: *(const char **)(void *)p = sleepacc_lua_str(L, -1, o->name); break;
  }
}

uint32_t sleepacc_lua_options(lua_State *L, int idx, const sleepacc_option *list,
                              const char *const *only, const char *const *extra, void *base) {
  const char *known[SLEEPACC_OPTION_COUNT + 8]; /* extra: at most 7 keys; only's names are list's */
  const sleepacc_option *rows[SLEEPACC_OPTION_COUNT];
  size_t k = 0, n = 0;
  uint32_t given = 0;
  for (; extra && *extra && k < 7; extra++) known[k++] = *extra;
  for (; n < SLEEPACC_OPTION_COUNT && (only ? only[n] != NULL : list[n].name != NULL); n++)
    known[k++] = (rows[n] = only ? sleepacc_option_find(list, only[n]) : &list[n])->name;
  known[k] = NULL;
  sleepacc__checkoptions(L, idx, known);
  for (size_t i = 0; i < n; i++) {
    if (!sleepacc_lua_field(L, idx, rows[i]->name)) continue;
    given |= 1u << (rows[i] - list);
    sleepacc__option(L, rows[i], base);
    lua_pop(L, 1); /* the table keeps NAME strings */
  }
  return given;
}

void sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base) {
  luaL_checkstack(L, 3, NULL);
  lua_newtable(L);
  for (; f->name; f++) {
    sleepacc_value v;
    sleepacc_field_get(f, base, &v); /* the core reads every field type: one case per kind */
    switch (v.kind) {
    case SLEEPACC_VALUE_INT: lua_pushinteger(L, (lua_Integer)v.i); break;
    case SLEEPACC_VALUE_REAL: lua_pushnumber(L, (lua_Number)v.d); break;
    case SLEEPACC_VALUE_BOOL: lua_pushboolean(L, (int)v.i); break;
    case SLEEPACC_VALUE_TEXT: lua_pushstring(L, v.s); break;
    case SLEEPACC_VALUE_NESTED: sleepacc_lua_push_fields(L, v.sub, v.base); break;
    case SLEEPACC_VALUE_PAIRS: { /* an array of {<sub key name>=, <sub value name>=} */
      const sleepacc_pairs *pairs = (const sleepacc_pairs *)v.base;
      lua_createtable(L, (int)pairs->n, 0);
      for (int i = 0; i < pairs->n && i < SLEEPACC_PAIRS_MAX; i++) {
        sleepacc_lua_push_fields(L, v.sub, &pairs->at[i]);
        lua_rawseti(L, -2, i + 1);
      }
      break;
    }
    default: continue; /* null: the key is absent */
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

void *sleepacc_lua_aligned(void *ud) {
  const uintptr_t a = SLEEPACC_LUA_ALIGN;
  return (void *)(((uintptr_t)ud + a - 1) & ~(a - 1));
}

void *sleepacc_lua_newaligned(lua_State *L, size_t size) {
  return sleepacc_lua_aligned(lua_newuserdatauv(L, size + SLEEPACC_LUA_ALIGN - 1, 0));
}
