/*
 * binding.h -- what the Lua module's files share (Lua 5.1, 5.3, 5.4 and
 * LuaJIT through compat.h); defined in lua/helpers.c.
 *
 * Conventions, stated once:
 *   - Bad arguments raise "<field>: <message>" (the option's name:
 *     "duration", "methods[2]", ...).  The rules are the core's: it reads
 *     a call's options through the binding's getter (sleepacc_lua_getter)
 *     and reports one fault (sleepacc_lua_fault words it); the binding only
 *     converts Lua values.
 *   - Run-time OS failures return nil, "ENAME: message", "ENAME" (luv).
 *   - Times in are seconds (Lua numbers), except slack (integer ns) and
 *     dma_latency (integer us); times out are integer ns in *_ns fields.
 *   - Ctrl-C: the interpreters' SIGINT handler sets a hook that raises at
 *     the next hook event; a C loop makes none, so long loops run the core
 *     in chunks (sleepacc_lua_chunks) with a checkpoint between them, which runs
 *     the cleanup (environment restored) before the hook's error travels on.
 */
#ifndef SLEEPACC_LUA_BINDING_H
#define SLEEPACC_LUA_BINDING_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#include "compat.h"
#include "sleepacc.h"

/* The module's one exported symbol (objects are built with
 * -fvisibility=hidden and linked with lua/sleepacc.map). */
#if defined(__GNUC__)
#define SLEEPACC_LUA_EXPORT __attribute__((visibility("default")))
#else
#define SLEEPACC_LUA_EXPORT
#endif
SLEEPACC_LUA_EXPORT int luaopen_sleepacc(lua_State *L);

/* Push nil, "ENAME: message[ (context)]", "ENAME" for errno err; return 3. */
int sleepacc_lua_pusherror(lua_State *L, int err, const char *context);
/* Where the core's reader (sleepacc_getter) takes a Lua call's options
 * from: its options table and its own arguments; and the tables it
 * entered (sleepacc_getter.enter: each pushed on the stack, read from
 * until left). */
typedef struct sleepacc_lua_source {
  lua_State *L;
  int table;               /* the options table's stack index, 0 none (entered: the last entered) */
  const char *const *take; /* the options the call takes (the getter's) */
  int args;                /* the first args of them are arguments, */
  int arg[4];              /* at these stack indexes */
  const char *keytype;     /* the type of the last key read */
  int depth;               /* the tables entered, */
  int up[SLEEPACC_GETTER_DEPTH][2]; /* each with the table and args it was entered from */
} sleepacc_lua_source;
/* The getter over the table at `table` (0: none; another value than a
 * table raises "options: must be a table, got <type>") and the call's
 * arguments (the first args names of take are at the stack indexes arg[],
 * at most 4); own: keys the caller reads itself.  Values convert by their
 * Lua type (helpers.c); the core's room is a userdata pushed on the stack. */
sleepacc_getter sleepacc_lua_getter(lua_State *L, sleepacc_lua_source *src, int table,
                                    const char *const *take, const int *arg, int args,
                                    const char *const *own);
/* Raise a read's fault: the core's one sentence of it (sleepacc_fault_text,
 * given the value's type name, and a number or boolean as Lua shows it; a
 * string the core shows).  NONE (an errno no rule
 * explains): returns nil, err, ename pushed (3; `what` its context). */
int sleepacc_lua_fault(sleepacc_lua_source *src, int rc, const sleepacc_fault *f, const char *what);
/* Push t[name] and return 1, or push nothing and return 0 when nil. */
int sleepacc_lua_field(lua_State *L, int t, const char *name);

/* Set option o of the struct at base from the one Lua value at idx under
 * name (NULL: o->name), by the core (sleepacc_value_read); a fault raises.
 * A string argument that is no option (a path, a style) is read by the
 * core's text row (sleepacc_text_option) into a const char *. */
void sleepacc_lua_value(lua_State *L, int idx, const sleepacc_option *o, const char *name, void *base);
/* Unless ok, raise the core's sentence of a wrong type (sleepacc_type_text)
 * for the value at idx: "<name>: must be <takes>, got <its type>". */
void sleepacc_lua_must(lua_State *L, int ok, int idx, const char *name, const char *takes);

/* Push the struct at base as a table, built as the core's walk of its
 * field table says (sleepacc_fields_walk: nested rows sub-tables, a null
 * value an absent key, PAIRS an array of tables). */
void sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base);
/* Push row f of the struct at base the same way and return 1, or push
 * nothing and return 0 for a null value. */
int sleepacc_lua_push_value(lua_State *L, const sleepacc_field *f, const void *base);

/* Ctrl-C between core chunks (see above), by the core's chunk protocol
 * (sleepacc_chunks): at each checkpoint a Ctrl-C runs cleanup(arg) (may be
 * NULL) and raises.  0 done, SLEEPACC_NEAR handed off, else the step's errno. */
int sleepacc_lua_chunks(lua_State *L, int (*step)(void *), void *arg, void (*cleanup)(void *));

/* The userdata at idx when its metatable is the registry's tname, else
 * NULL; checked: else raise "<name>: must be a <tname>, got <its type>". */
void *sleepacc_lua_udata(lua_State *L, int idx, const char *tname);
void *sleepacc_lua_checkudata(lua_State *L, int idx, const char *tname, const char *name);

/* Core structs are aligned(16), more than userdata promise: push a
 * userdata of size bytes (plus slack) and return its aligned address. */
#define SLEEPACC_LUA_ALIGN 64
void *sleepacc_lua_newaligned(lua_State *L, size_t size);
/* That address again, from the userdata's own (luaL_checkudata's). */
void *sleepacc_lua_aligned(void *ud);

/* A run's kept samples: the userdata behind a record table's `samples`
 * (lsleepacc.c makes it; the getter lends its values to the core, as a
 * SAMPLES value: sa.save writes them). */
#define SLEEPACC_LUA_SAMPLES_MT "sleepacc.Samples"
typedef struct sleepacc_lua_samples {
  int64_t *data; /* malloc'd (NULL when streaming) */
  size_t len;    /* samples recorded */
} sleepacc_lua_samples;

/* The precise handles' part of the module (lua/lsleeper.c): adds its
 * functions to the table on top of the stack. */
int sleepacc_lua_open_precise(lua_State *L);

#endif /* SLEEPACC_LUA_BINDING_H */
