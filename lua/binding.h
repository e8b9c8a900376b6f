/*
 * binding.h -- what the Lua module's files share (Lua 5.1, 5.3, 5.4 and
 * LuaJIT through compat.h); defined in lua/helpers.c.
 *
 * Conventions, stated once:
 *   - Bad arguments raise "<field>: <message>" (the option's name:
 *     "duration", "methods[2]", ...).  The rules are the core's (one
 *     option's value: sleepacc_option_set; the whole config:
 *     sleepacc_config_explain names the field, sleepacc_option_of_field
 *     its option); the binding only converts Lua values, by the core's
 *     option list.
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
#define SLEEPACC_LUA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SLEEPACC_LUA_EXPORT
#define SLEEPACC_LUA_PRINTF(f, a)
#endif
SLEEPACC_LUA_EXPORT int luaopen_sleepacc(lua_State *L);

/* Raise "<field>: <formatted message>".  Never returns. */
int sleepacc_lua_error(lua_State *L, const char *field, const char *fmt, ...)
    SLEEPACC_LUA_PRINTF(3, 4);
/* Push nil, "ENAME: message[ (context)]", "ENAME" for errno err; return 3. */
int sleepacc_lua_pusherror(lua_State *L, int err, const char *context);
/* The options table at idx (> 0), by the core's option list (rows of list;
 * only: those named, in that order, NULL: every row): its keys are extra's
 * (NULL-terminated or NULL, at most 7; the caller reads them) or those
 * rows' names, else an error names the misspelt key and lists the known
 * ones; then each row given converts into base (sleepacc_lua_option: a bad value
 * raises "<option>: ...").  Returns the rows given (bit i: list[i]). */
uint32_t sleepacc_lua_options(lua_State *L, int idx, const sleepacc_option *list,
                              const char *const *only, const char *const *extra, void *base);
/* Push t[name] and return 1, or push nothing and return 0 when nil. */
int sleepacc_lua_field(lua_State *L, int t, const char *name);

/* Set option o (a row of sleepacc_options or sleepacc_sleeper_options) of
 * the struct at base from the Lua value at idx (a boolean: BOOL, an integer
 * that fits: INT, another number: REAL, a string without NUL: TEXT, whose
 * pointer is kept) by the core's rule (sleepacc_option_set).  A bad value
 * raises "<name>: <what o takes> expected, got <type>" ("a fraction" where
 * an integer is expected) or "<name>: <the core's rule>, got <value>";
 * name NULL: o->name. */
void sleepacc_lua_option(lua_State *L, int idx, const sleepacc_option *o, const char *name, void *base);
/* The string at idx, raising "<name>: string expected, got ..." or
 * "<name>: holds a NUL byte". */
const char *sleepacc_lua_str(lua_State *L, int idx, const char *name);

/* Push the struct at base as a table through a core field table (nested
 * rows become sub-tables; a null value is an absent key). */
void sleepacc_lua_push_fields(lua_State *L, const sleepacc_field *f, const void *base);

/* A run's kept samples and its core record: the userdata behind a record
 * table's `samples` (lua/lsleepacc.c; sa.table and sa.save read it). */
typedef struct {
  int64_t *data;       /* malloc'd (NULL when streaming) */
  size_t len;          /* samples recorded */
  sleepacc_result res; /* the record (valid once the run finished) */
} sleepacc_lua_samples;
/* The records of the results argument at idx (> 0; one record, or an array
 * of them; the table keeps them alive): an array of *n, in a userdata
 * pushed on the stack.  A bad entry raises "results[i]: ...". */
const sleepacc_lua_samples **sleepacc_lua_records(lua_State *L, int idx, size_t *n);

/* Ctrl-C between core chunks (see above): call step(arg) until it returns
 * 1 (done); EINTR resumes; at each checkpoint a Ctrl-C runs cleanup(arg)
 * (may be NULL) and raises.  0 when done, else the failed step's errno. */
int sleepacc_lua_chunks(lua_State *L, int (*step)(void *), void *arg, void (*cleanup)(void *));
/* A run opened by sleepacc_run_open chunked to its end so (sleepacc_run_chunk:
 * a failure ends it, kept for sleepacc_run_close; Ctrl-C finishes r, then raises). */
void sleepacc_lua_run(lua_State *L, sleepacc_run *r);

/* Core structs are aligned(16), more than userdata promise: push a
 * userdata of size bytes (plus slack) and return its aligned address. */
#define SLEEPACC_LUA_ALIGN 64
void *sleepacc_lua_newaligned(lua_State *L, size_t size);
/* That address again, from the userdata's own (luaL_checkudata's). */
void *sleepacc_lua_aligned(void *ud);

/* The core's results file writer (csrc/json.c) opened on path with flags
 * (SLEEPACC_WRITE_*), in a userdata pushed on the stack whose __gc aborts
 * it; *err: sleepacc_writer_open's 0 or -errno (lua/lsave.c). */
sleepacc_writer *sleepacc_lua_writer(lua_State *L, const char *path, int flags, int *err);

/* Module parts: add their functions to the table on top of the stack. */
int sleepacc_lua_open_precise(lua_State *L); /* lua/lsleeper.c */
int sleepacc_lua_open_save(lua_State *L);    /* lua/lsave.c */

#endif /* SLEEPACC_LUA_BINDING_H */
