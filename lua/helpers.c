/*
 * helpers.c -- the Lua module's shared helpers (binding.h): errors,
 * conversions, the options reader (by a core option list), the field-table
 * converter, the Ctrl-C checkpoint and the chunked run, aligned userdata,
 * the 5.1 main thread.  Used by lsleepacc.c, lsleeper.c and lsave.c;
 * depends on none of them.
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

int sleepacc_lua_field(lua_State *L, int t, const char *name) {
  lua_getfield(L, t, name);
  if (!lua_isnil(L, -1)) return 1;
  lua_pop(L, 1);
  return 0;
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

/* What an option of each kind takes, in sleepacc_option_set's -EINVAL
 * error: "<option>: <takes> expected, got <type>". */
static const char *const sleepacc__takes[] = {
    [SLEEPACC_OPT_METHOD] = "string",  [SLEEPACC_OPT_SECONDS] = "number of seconds",
    [SLEEPACC_OPT_BUDGET] = "number of seconds", [SLEEPACC_OPT_INT64] = "integer",
    [SLEEPACC_OPT_INT] = "integer",    [SLEEPACC_OPT_BOOL] = "boolean",
    [SLEEPACC_OPT_MODE] = "string",    [SLEEPACC_OPT_POLICY] = "string",
    [SLEEPACC_OPT_NAME] = "string",    [SLEEPACC_OPT_NUMBER] = "number",
};

void sleepacc_lua_option(lua_State *L, int idx, const sleepacc_option *o, const char *name, void *base) {
  /* nil, a table, a function...: a kind no option takes (an absent key is
   * the option's default, never "none") */
  sleepacc_value v = {SLEEPACC_VALUE_NESTED, 0, 0.0, NULL, NULL, NULL};
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  int type = lua_type(L, idx), rc, whole = o->kind == SLEEPACC_OPT_INT || o->kind == SLEEPACC_OPT_INT64;
  lua_Integer i;
  if (!name) name = o->name;
  if (type == LUA_TBOOLEAN) v.kind = SLEEPACC_VALUE_BOOL, v.i = lua_toboolean(L, idx);
  else if (sleepacc_lua_tointeger(L, idx, &i)) v.kind = SLEEPACC_VALUE_INT, v.i = (int64_t)i;
  else if (type == LUA_TNUMBER) v.kind = SLEEPACC_VALUE_REAL, v.d = (double)lua_tonumber(L, idx);
  else if (type == LUA_TSTRING) v.kind = SLEEPACC_VALUE_TEXT, v.s = sleepacc_lua_str(L, idx, name);
  if ((rc = sleepacc_option_set(o, base, &v, msg, sizeof msg)) == -EINVAL) /* the value's kind */
    sleepacc_lua_error(L, name, "%s expected, got %s",
                       (size_t)o->kind < sizeof sleepacc__takes / sizeof *sleepacc__takes
                           ? sleepacc__takes[o->kind] : "another value",
                       whole && type == LUA_TNUMBER ? "a fraction" /* not an integer that fits */
                                                    : luaL_typename(L, idx));
  if (rc < 0) /* -ERANGE: the core's rule, in its words (a number or a string broke it) */
    sleepacc_lua_error(L, name, type == LUA_TSTRING ? "%s, got \"%.60s\"" : "%s, got %s", msg,
                       lua_tostring(L, idx));
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
    sleepacc_lua_option(L, -1, rows[i], NULL, base);
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

static void sleepacc__finish_cb(void *ud) { sleepacc_run_finish((sleepacc_run *)ud); }

void sleepacc_lua_run(lua_State *L, sleepacc_run *r) {
  sleepacc_lua_chunks(L, sleepacc_run_chunk, r, sleepacc__finish_cb); /* a chunk never fails */
}

void *sleepacc_lua_aligned(void *ud) {
  const uintptr_t a = SLEEPACC_LUA_ALIGN;
  return (void *)(((uintptr_t)ud + a - 1) & ~(a - 1));
}

void *sleepacc_lua_newaligned(lua_State *L, size_t size) {
  return sleepacc_lua_aligned(lua_newuserdatauv(L, size + SLEEPACC_LUA_ALIGN - 1, 0));
}
