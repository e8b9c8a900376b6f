/*
 * helpers.c -- the Lua module's shared helpers (binding.h): errors, the
 * getter the core reads options through, the sink of its field walk, the
 * Ctrl-C checkpoint.  Used by lsleepacc.c and lsleeper.c; depends on neither.
 */
#include "binding.h"

#include <stdio.h>
#include <string.h>

int sleepacc_lua_pusherror(lua_State *L, int err, const char *context) {
  if (err > 0) err = -err;
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s%s%s%s", sleepacc_errname(err), sleepacc_strerror(err),
                  context ? " (" : "", context ? context : "", context ? ")" : "");
  lua_pushstring(L, sleepacc_errname(err));
  return 3;
}

void sleepacc_lua_must(lua_State *L, int ok, int idx, const char *name, const char *takes) {
  char text[SLEEPACC_FAULT_TEXT_MAX];
  if (ok) return;
  sleepacc_type_text(name, takes, luaL_typename(L, idx), text, sizeof text);
  luaL_error(L, "%s", text);
}

void *sleepacc_lua_udata(lua_State *L, int idx, const char *tname, const char *name) {
  void *p = lua_touserdata(L, idx);
  char takes[64];
  if (idx < 0) idx = lua_gettop(L) + idx + 1; /* it stays put while the metatables are pushed */
  if (p && lua_getmetatable(L, idx)) {
    luaL_getmetatable(L, tname); /* compared by hand: luaL_testudata is 5.2's */
    if (!lua_rawequal(L, -1, -2)) p = NULL;
    lua_pop(L, 2);
  } else p = NULL;
  if (!p && name) snprintf(takes, sizeof takes, "a %s", tname), sleepacc_lua_must(L, 0, idx, name, takes);
  return p;
}

/* The Lua value at idx as a core value: a boolean BOOL, a 5.3+ integer
 * INT, another number by the core's rule, a string TEXT (and its length), a
 * table LIST (its length), nil NULL, a Samples userdata SAMPLES (its values
 * lent), the rest NESTED, a kind no option takes. */
static void sleepacc__value(lua_State *L, int idx, sleepacc_value *v) {
  int type = lua_type(L, idx);
  size_t len = 0;
  const sleepacc_lua_samples *s = sleepacc_lua_udata(L, idx, SLEEPACC_LUA_SAMPLES_MT, NULL);
  memset(v, 0, sizeof *v);
  v->kind = SLEEPACC_VALUE_NESTED;
  if (s) v->kind = SLEEPACC_VALUE_SAMPLES, v->base = s->data, v->i = (int64_t)s->len;
  else if (type == LUA_TBOOLEAN) v->kind = SLEEPACC_VALUE_BOOL, v->i = lua_toboolean(L, idx);
#if LUA_VERSION_NUM >= 503
  else if (lua_isinteger(L, idx)) v->kind = SLEEPACC_VALUE_INT, v->i = (int64_t)lua_tointeger(L, idx);
#endif
  else if (type == LUA_TNUMBER) sleepacc_value_number(v, (double)lua_tonumber(L, idx));
  else if (type == LUA_TSTRING) v->kind = SLEEPACC_VALUE_TEXT, v->s = lua_tolstring(L, idx, &len), v->i = (int64_t)len;
  else if (type == LUA_TTABLE) v->kind = SLEEPACC_VALUE_LIST, v->i = (int64_t)lua_rawlen(L, idx);
  else if (type == LUA_TNIL || type == LUA_TNONE) v->kind = SLEEPACC_VALUE_NULL;
}

/* Push the value of option name (element index >= 0 of its array) from src,
 * nil when absent; return its type's name (an absent argument's: "no value").
 * Raw, as the keys: no metamethod runs while the core reads, so all it read
 * (a string, lent samples) stays held by the argument until it is done. */
static const char *sleepacc__push(sleepacc_lua_source *src, const char *name, int64_t index) {
  lua_State *L = src->L;
  int arg = src->arg && !strcmp(src->take[0], name);
  const char *type = arg && index < 0 ? luaL_typename(L, src->arg) : NULL;
  if (arg) lua_pushvalue(L, src->arg);
  else if (src->table) lua_pushstring(L, name), lua_rawget(L, src->table);
  else lua_pushnil(L);
  if (index >= 0 && lua_type(L, -1) == LUA_TTABLE) lua_rawgeti(L, -1, (int)(index + 1)), lua_remove(L, -2);
  else if (index >= 0) lua_pop(L, 1), lua_pushnil(L);
  return type ? type : luaL_typename(L, -1);
}

/* The core's getter (sleepacc_getter.get) over src.  The keys: lua_next,
 * the key left on the stack between calls (the core asks for them in order,
 * before any value). */
static int sleepacc__get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  sleepacc_lua_source *src = (sleepacc_lua_source *)ctx;
  lua_State *L = src->L;
  if (!name) { /* the next key (only a string is TEXT: the core's rule) */
    if (!src->table) return 0;
    if (index == 0) lua_pushnil(L);
    if (!lua_next(L, src->table)) return 0;
    lua_pop(L, 1); /* its value */
    src->keytype = luaL_typename(L, -1);
    sleepacc__value(L, -1, out);
    return 1;
  }
  sleepacc__push(src, name, index);
  sleepacc__value(L, -1, out);
  lua_pop(L, 1);
  return out->kind != SLEEPACC_VALUE_NULL;
}

static void *sleepacc__room(void *ctx, size_t bytes) {
  return lua_newuserdatauv(((sleepacc_lua_source *)ctx)->L, bytes, 0); /* on the stack */
}

/* The core's sleepacc_getter.enter: the table of option name (element
 * index) pushed and read from, no argument then, until left (name NULL:
 * removed, the table and arguments it was entered from read again). */
static int sleepacc__enter(void *ctx, const char *name, int64_t index) {
  sleepacc_lua_source *src = (sleepacc_lua_source *)ctx;
  lua_State *L = src->L;
  if (!name && src->depth == 0) return 0;
  if (!name) {
    lua_remove(L, src->table);
    src->depth--;
    src->table = src->up[src->depth][0], src->arg = src->up[src->depth][1];
    return 1;
  }
  if (src->depth >= SLEEPACC_GETTER_DEPTH) return 0;
  luaL_checkstack(L, 2, NULL);
  sleepacc__push(src, name, index);
  if (lua_type(L, -1) != LUA_TTABLE) return lua_pop(L, 1), 0;
  src->up[src->depth][0] = src->table, src->up[src->depth][1] = src->arg;
  src->depth++;
  src->table = lua_gettop(L), src->arg = 0;
  return 1;
}

sleepacc_getter sleepacc_lua_getter(lua_State *L, sleepacc_lua_source *src, int table,
                                    const char *const *take, int arg) {
  sleepacc_getter g = {sleepacc__get, sleepacc__room, src, take, arg != 0, NULL, sleepacc__enter};
  memset(src, 0, sizeof *src);
  src->L = L, src->table = table, src->take = take, src->arg = arg;
  if (table) sleepacc_lua_must(L, lua_type(L, table) == LUA_TTABLE, table, "options", "a table");
  return g;
}

int sleepacc_lua_fault(sleepacc_lua_source *src, int rc, const sleepacc_fault *f, const char *what) {
  lua_State *L = src->L;
  char text[SLEEPACC_FAULT_TEXT_MAX];
  const char *type = src->keytype, *shown = NULL;
  sleepacc_value v;
  if (f->kind == SLEEPACC_FAULT_NONE) return sleepacc_lua_pusherror(L, rc, what);
  memset(&v, 0, sizeof v);
  if (f->kind != SLEEPACC_FAULT_KEY) { /* its kind, type name, a number as Lua shows it (the rest: the core) */
    type = sleepacc__push(src, f->option, f->index);
    sleepacc__value(L, -1, &v);
    if (lua_type(L, -1) == LUA_TNUMBER) shown = lua_tostring(L, -1); /* a copy: converted in place */
  }
  sleepacc_fault_text(f, SLEEPACC_BINDING_LUA, &v, type, shown, text, sizeof text);
  return luaL_error(L, "%s", text);
}

void sleepacc_lua_value(lua_State *L, int idx, const sleepacc_option *o, const char *name, void *base) {
  const char *take[] = {name ? name : o->name, NULL};
  sleepacc_lua_source src;
  sleepacc_value v;
  sleepacc_fault f;
  int rc;
  sleepacc_lua_getter(L, &src, 0, take, idx); /* the value: the one argument */
  sleepacc__value(L, idx, &v);
  if ((rc = sleepacc_value_read(o, take[0], base, v.kind == SLEEPACC_VALUE_NULL ? NULL : &v, &f)) < 0)
    sleepacc_lua_fault(&src, rc, &f, take[0]);
}

/* sleepacc_field_sink.push: the value, or an empty table (an object, an array
 * of .i elements), on the stack (never a null: the core leaves it out). */
static int sleepacc__pushv(void *ctx, const sleepacc_value *v) {
  lua_State *L = (lua_State *)ctx;
  luaL_checkstack(L, 2, NULL);
  switch (v->kind) {
  case SLEEPACC_VALUE_INT: lua_pushinteger(L, (lua_Integer)v->i); break;
  case SLEEPACC_VALUE_REAL: lua_pushnumber(L, (lua_Number)v->d); break;
  case SLEEPACC_VALUE_BOOL: lua_pushboolean(L, (int)v->i); break;
  case SLEEPACC_VALUE_TEXT: lua_pushstring(L, v->s); break;
  default: lua_createtable(L, v->kind == SLEEPACC_VALUE_ITEMS ? (int)v->i : 0, 0);
  }
  return 0;
}

/* sleepacc_field_sink.put: the top into the table below, t[key] or t[index + 1]. */
static int sleepacc__put(void *ctx, const char *key, int64_t index) {
  if (key) lua_setfield((lua_State *)ctx, -2, key);
  else lua_rawseti((lua_State *)ctx, -2, (int)index + 1);
  return 0;
}

int sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base, int one) {
  sleepacc_field_sink sink = {sleepacc__pushv, sleepacc__put, L, SLEEPACC_BINDING_LUA};
  return one ? sleepacc_field_walk(f, base, &sink) == 1 : sleepacc_fields_walk(f, base, &sink) == 0;
}

/* ------------------------------------------------------------- Ctrl-C */

lua_State *sleepacc_lua_mainthread(lua_State *L) {
  lua_State *m;
#if LUA_VERSION_NUM < 502 /* no LUA_RIDX_MAINTHREAD: remembered whenever a call is made on it */
  if (lua_pushthread(L)) lua_setfield(L, LUA_REGISTRYINDEX, "sleepacc.mainthread");
  else lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "sleepacc.mainthread");
#else
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
#endif
  m = lua_tothread(L, -1);
  lua_pop(L, 1);
  return m;
}

/* Called at a checkpoint: its call and return are hook events. */
static int sleepacc__nop(lua_State *L) { return (void)L, 0; }

typedef struct sleepacc__chunk {
  lua_State *L, *main;
  lua_Hook main_hook; /* the main thread's hook, mask and count at entry */
  int main_mask, main_count, raised;
} sleepacc__chunk;

/* sleepacc_chunks' checkpoint: a hook on this thread fires on the no-op's
 * call (its error caught, left on the stack); in a coroutine, a hook set on
 * the main thread meanwhile is Ctrl-C, and is put back: this error is the
 * one it raises (else it would fire again past the pcall that caught this
 * one).  Either stops the chunks. */
static int sleepacc__checkpoint(void *ctx) {
  sleepacc__chunk *k = (sleepacc__chunk *)ctx;
  if (lua_gethook(k->L) != NULL) {
    lua_pushcfunction(k->L, sleepacc__nop);
    if (lua_pcall(k->L, 0, 0, 0) != 0) return k->raised = 1;
  }
  if (!k->main || k->main == k->L ||
      (lua_gethook(k->main) == k->main_hook && lua_gethookmask(k->main) == k->main_mask))
    return 0;
  lua_sethook(k->main, k->main_hook, k->main_mask, k->main_count);
  return 1;
}

int sleepacc_lua_chunks(lua_State *L, int (*step)(void *), void *arg, void (*cleanup)(void *)) {
  sleepacc__chunk k = {L, sleepacc_lua_mainthread(L), NULL, 0, 0, 0};
  int rc;
  if (k.main) {
    k.main_hook = lua_gethook(k.main), k.main_mask = lua_gethookmask(k.main);
    k.main_count = lua_gethookcount(k.main);
  }
  luaL_checkstack(L, 4, NULL); /* the checkpoint never needs to grow the stack */
  if ((rc = sleepacc_chunks(step, arg, sleepacc__checkpoint, &k)) != -ECANCELED) return rc;
  if (cleanup) cleanup(arg); /* then the hook's error travels on */
  if (k.raised) lua_error(L);
  return luaL_error(L, "interrupted!");
}

void *sleepacc_lua_aligned(void *ud) {
  return (void *)(((uintptr_t)ud + SLEEPACC_LUA_ALIGN - 1) & ~(uintptr_t)(SLEEPACC_LUA_ALIGN - 1));
}

void *sleepacc_lua_newaligned(lua_State *L, size_t size) {
  return sleepacc_lua_aligned(lua_newuserdatauv(L, size + SLEEPACC_LUA_ALIGN - 1, 0));
}
