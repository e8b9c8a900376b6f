/*
 * binding.h -- helpers shared by every C file of the Lua module (Lua 5.1,
 * 5.3, 5.4, LuaJIT: compat.h), defined in lua/helpers.c: argument checks that name the argument, the luv-style error
 * return, and the chunked core loop that lets the interpreter's Ctrl-C hook
 * fire between chunks.
 *
 * Conventions of the Lua module (stated once):
 *   - Bad arguments RAISE: "bad argument '<name>' to '<function>' (<why>)".
 *     Functions take one options table, so <name> is the field name
 *     ("duration", "n", "durations[3]", ...).
 *   - Run-time OS failures RETURN nil, "ENAME: message", "ENAME" (the luv
 *     convention); names and messages come from the core's
 *     SLEEPACC_ERRNO_MAP through sleepacc_errname()/sleepacc_strerror().
 *   - Times given by the script are seconds (Lua numbers), except timer
 *     slack (integer ns, the kernel's unit, as in the Python API); times
 *     returned are integer nanoseconds in fields ending in _ns.
 *   - Ctrl-C: the lua5.4 interpreter's SIGINT handler only installs a hook
 *     (lua_sethook with LUA_MASKCALL|RET|LINE|COUNT) that raises
 *     "interrupted!" at the next hook event; it is installed without
 *     SA_RESTART, so a kernel sleep also returns EINTR.  A C function that
 *     loops never produces a hook event, so every long loop here runs the
 *     core in chunks (about SLEEPACC_CHUNK_NS each) and calls
 *     sleepacc_lua_checkpoint() between chunks: that calls a no-op function
 *     under lua_pcall, which fires a pending call hook; when the hook raises,
 *     the caller's cleanup runs (environment restored, waiter closed) and
 *     then the error is re-raised.  Nothing is left changed when a Lua error
 *     leaves a binding function.
 */
#ifndef SLEEPACC_LUA_BINDING_H
#define SLEEPACC_LUA_BINDING_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#include "compat.h"

#include "sleepacc.h"

#if defined(__GNUC__)
#define SLEEPACC_LUA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SLEEPACC_LUA_PRINTF(f, a)
#endif

/* The module's one exported symbol (every object is compiled with
 * -fvisibility=hidden and linked with lua/sleepacc.map). */
#if defined(__GNUC__)
#define SLEEPACC_LUA_EXPORT __attribute__((visibility("default")))
#else
#define SLEEPACC_LUA_EXPORT
#endif
SLEEPACC_LUA_EXPORT int luaopen_sleepacc(lua_State *L);

/* ------------------------------------------------------------- errors */

/* Raise "bad argument '<name>' to '<fn>' (<formatted why>)".  Never
 * returns (declared int so callers can `return sleepacc_lua_argerror(...)`). */
int sleepacc_lua_argerror(lua_State *L, const char *fn, const char *name, const char *fmt, ...)
    SLEEPACC_LUA_PRINTF(4, 5);

/* Push nil, "ENAME: message", "ENAME" for the (negative) errno err and
 * return 3.  context, when not NULL, is appended to the message as
 * " (context)" -- e.g. the method and duration a sweep was running. */
int sleepacc_lua_pusherror(lua_State *L, int err, const char *context);

/* The Lua option name of a core field name: "env." and a unit suffix
 * ("_ns", "_us") dropped ("duration_ns" -> "duration", "env.dma_latency_us"
 * -> "dma_latency"), written into buf.  NULL for NULL. */
const char *sleepacc_lua_name(const char *core_field, char *buf, size_t n);

/* ------------------------------------------------------ options tables */

/* The value at idx must be a table ("table expected, got <type>" naming
 * argname otherwise), and every key must be a string listed in known
 * (NULL-terminated): a misspelt field is an error naming it, never ignored. */
void sleepacc_lua_checkoptions(lua_State *L, int idx, const char *fn, const char *argname,
                               const char *const *known);

/* Push t[name] (t at absolute index t).  Returns 1 with the value on top
 * when it is not nil; 0 with nothing pushed when it is nil. */
int sleepacc_lua_field(lua_State *L, int t, const char *name);

/* ------------------------------------------------------ value checks
 * Each checks the value at idx and raises naming `name` (and fn). */

/* Flags of sleepacc_lua_seconds_ns. */
#define SLEEPACC_LUA_NONZERO 1 /* 0 is refused ("must be > 0") */

/* A duration in seconds: a Lua number (not a string, not a boolean),
 * finite, >= 0 (> 0 with SLEEPACC_LUA_NONZERO), at most one day
 * (SLEEPACC_MAX_DURATION_NS).  Returns it in ns, rounded to nearest. */
int64_t sleepacc_lua_seconds_ns(lua_State *L, int idx, const char *fn, const char *name,
                                int flags);
/* An integer (a Lua integer, or a float with an exact integer value)
 * within [lo, hi]. */
lua_Integer sleepacc_lua_integer(lua_State *L, int idx, const char *fn, const char *name,
                                 lua_Integer lo, lua_Integer hi);
/* A boolean (true/false; not nil, not a number). */
int sleepacc_lua_boolean(lua_State *L, int idx, const char *fn, const char *name);
/* A string (not a number). */
const char *sleepacc_lua_string(lua_State *L, int idx, const char *fn, const char *name);
/* A registered method name.  An unknown name lists the known ones; when
 * need_available, a method that does not work on this system is refused
 * with a message that says so. */
const sleepacc_method *sleepacc_lua_method(lua_State *L, int idx, const char *fn,
                                           const char *name, int need_available);
/* A function (for callbacks such as progress=). */
void sleepacc_lua_function(lua_State *L, int idx, const char *fn, const char *name);

/* ------------------------------------------------------ Ctrl-C */

/* What a checkpoint needs: the running thread, the main thread's hook at
 * entry (a hook installed there later, while a coroutine runs this code,
 * is the interpreter's Ctrl-C), and the cleanup that must run before an
 * error leaves the binding. */
typedef struct sleepacc_lua_guard {
  lua_State *L;              /* the thread running the binding */
  lua_State *main;           /* the state's main thread */
  lua_Hook main_hook;        /* main thread's hook at entry */
  int main_mask;             /* main thread's hook mask at entry */
  void (*cleanup)(void *ud); /* run before re-raising (may be NULL) */
  void *ud;                  /* its argument */
} sleepacc_lua_guard;

/* Record the entry state.  cleanup(ud) runs before a checkpoint raises. */
void sleepacc_lua_guard_init(sleepacc_lua_guard *g, lua_State *L, void (*cleanup)(void *),
                             void *ud);
/* Give pending hooks a chance.  Returns normally when nothing is pending;
 * otherwise runs the cleanup and raises the hook's error ("interrupted!"
 * for the interpreter's Ctrl-C).  Call it between core chunks and after
 * every -EINTR. */
void sleepacc_lua_checkpoint(sleepacc_lua_guard *g);

/* Run r (already started) chunk by chunk until complete, with a checkpoint
 * after every chunk and every -EINTR (an EINTR that is not a Ctrl-C resumes
 * the run).  Returns 0 when complete, or the negative errno of a failed
 * chunk (r is still open: the caller finishes it).  On Ctrl-C the run is
 * finished (environment restored) before the error propagates. */
int sleepacc_lua_run(lua_State *L, sleepacc_run *r);

/* Core structs embed sleepacc_waiter (aligned(16)), but Lua only promises
 * LUAI_MAXALIGN for userdata: push a new userdata of size bytes (plus
 * slack) and return a pointer into it aligned to SLEEPACC_LUA_ALIGN.  The
 * memory lives as long as the userdata (keep it on the stack). */
#define SLEEPACC_LUA_ALIGN 64
void *sleepacc_lua_newaligned(lua_State *L, size_t size);

/* ------------------------------------------------------ module parts */

/* Add the precise-sleep functions (sa.sleep, sa.pacer) to the module table
 * on top of the stack; returns 0.  Defined by lua/lsleeper.c. */
int sleepacc_lua_open_precise(lua_State *L);
/* Add sa.save (lua/lsave.c) to the module table on top of the stack. */
int sleepacc_lua_open_save(lua_State *L);

#endif /* SLEEPACC_LUA_BINDING_H */
