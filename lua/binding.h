/*
 * binding.h -- what the Lua module's files share, defined in helpers.c.
 * Its API and conventions (errors, units, Ctrl-C) are lua/README.md's.
 * One source for Lua 5.1, 5.3, 5.4 and LuaJIT 2.1: the few 5.2+ names it
 * uses are mapped onto 5.1 here.  On 5.1 and LuaJIT every number is a
 * double: an "integer" is an integral one (sleepacc_value_number).
 */
#ifndef SLEEPACC_LUA_BINDING_H
#define SLEEPACC_LUA_BINDING_H

#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#include "sleepacc_binding.h"

#if LUA_VERSION_NUM < 504
#define lua_newuserdatauv(L, size, nuv) lua_newuserdata((L), (size))
#endif
#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, idx) lua_objlen((L), (idx))
#undef luaL_setfuncs /* LuaJIT's own too: the module never passes upvalues */
#define luaL_setfuncs(L, l, nup) luaL_register((L), NULL, (l))
#endif

/* The one exported symbol (-fvisibility=hidden, lua/sleepacc.map). */
__attribute__((visibility("default"))) int luaopen_sleepacc(lua_State *L);

/* Push nil, "ENAME: message[ (context)]", "ENAME" for errno err; return 3. */
int sleepacc_lua_pusherror(lua_State *L, int err, const char *context);

/* Where the core's reader takes a call's options from (sleepacc_getter):
 * the options table, the call's own argument, the tables entered. */
typedef struct sleepacc_lua_source {
  lua_State *L;
  int table;               /* the table read (0 none): the options, or the last entered */
  const char *const *take; /* the getter's take: take[0] is */
  int arg;                 /* the argument at this stack index (0: none) */
  const char *keytype;     /* the type of the last key read */
  int depth, up[SLEEPACC_GETTER_DEPTH][2]; /* each entered table's table and arg before it */
} sleepacc_lua_source;
/* The getter over the options table at `table` (0: none; not a table:
 * raises) and the argument at arg (0: none), named take[0]. */
sleepacc_getter sleepacc_lua_getter(lua_State *L, sleepacc_lua_source *src, int table,
                                    const char *const *take, int arg);
/* Raise a read's fault in the core's words (sleepacc_fault_text); kind
 * NONE (an errno no rule explains): nil, err, ename pushed (3). */
int sleepacc_lua_fault(sleepacc_lua_source *src, int rc, const sleepacc_fault *f, const char *what);
/* Option o of the struct at base from the value at idx, named name (NULL:
 * o->name), by sleepacc_value_read; a fault raises. */
void sleepacc_lua_value(lua_State *L, int idx, const sleepacc_option *o, const char *name, void *base);
/* Unless ok, raise "<name>: must be <takes>, got <type at idx>". */
void sleepacc_lua_must(lua_State *L, int ok, int idx, const char *name, const char *takes);
/* The userdata at idx whose metatable is tname's, else NULL, or with a
 * name, raise "<name>: must be a <tname>, got <type>". */
void *sleepacc_lua_udata(lua_State *L, int idx, const char *tname, const char *name);

/* Push the struct at base as the core's walk of its field table f says, or
 * with one, row f's value alone: 1, or 0 and nothing pushed for a null.
 * The walk never fails here: the sink cannot, no table is too deep. */
int sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base, int one);

/* Run step(arg) by the core's chunk protocol (sleepacc_chunks); a Ctrl-C
 * between chunks runs cleanup(arg) (NULL: none) and raises. */
int sleepacc_lua_chunks(lua_State *L, int (*step)(void *), void *arg, void (*cleanup)(void *));
/* The state's main thread (on 5.1 learnt at any call made on it). */
lua_State *sleepacc_lua_mainthread(lua_State *L);

/* A new userdata of size bytes aligned for a core struct (aligned(16)),
 * pushed; sleepacc_lua_aligned: that address from the userdata's own. */
#define SLEEPACC_LUA_ALIGN 64
void *sleepacc_lua_newaligned(lua_State *L, size_t size);
void *sleepacc_lua_aligned(void *ud);

/* A run's kept samples, a record's `samples` (its values lent to the core
 * as a SAMPLES value). */
#define SLEEPACC_LUA_SAMPLES_MT "sleepacc.Samples"
typedef struct sleepacc_lua_samples {
  int64_t *data; /* malloc'd (NULL when streaming) */
  size_t len;    /* <= SLEEPACC_MAX_SAMPLES: an int */
} sleepacc_lua_samples;

/* lsleeper.c: the precise handles' functions into the table on top. */
int sleepacc_lua_open_precise(lua_State *L);

#endif /* SLEEPACC_LUA_BINDING_H */
