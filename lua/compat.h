/*
 * compat.h -- one source for Lua 5.1, 5.3, 5.4 and LuaJIT 2.1 (the way
 * luaposix and lua-cjson do it): the few 5.3/5.4 names this module uses,
 * mapped onto the 5.1 API where they are missing.  Included by binding.h after
 * lua.h and lauxlib.h; elsewhere only the main-thread lookup (helpers.c)
 * tests LUA_VERSION_NUM.
 *
 * The module keeps to what the versions share where a plain equivalent
 * reads as well (lua_newtable + luaL_setfuncs, positive stack indices, the
 * metatable compared by hand and set by luaL_getmetatable + lua_setmetatable,
 * lua_getfield's value tested by lua_isnil), so only these remain.
 *
 * Numbers: 5.1 and LuaJIT have one number type (a double).  There an
 * "integer" is a number with an integral value that fits lua_Integer, and
 * lua_pushinteger pushes a double (exact below 2^53 ns, about 104 days).
 */
#ifndef SLEEPACC_LUA_COMPAT_H
#define SLEEPACC_LUA_COMPAT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <lua.h>
#include <lauxlib.h>

#if LUA_VERSION_NUM < 504
/* no user values on userdata before 5.4 */
#define lua_newuserdatauv(L, size, nuv) lua_newuserdata((L), (size))
#endif

/* *v = the value at idx when it is a number with an integral value that
 * fits lua_Integer (on 5.3/5.4 also a float such as 2.0): 1, else 0. */
static inline int sleepacc_lua_tointeger(lua_State *L, int idx, lua_Integer *v) {
  int ok = 0;
  *v = 0;
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
#if LUA_VERSION_NUM >= 503
  *v = lua_tointegerx(L, idx, &ok);
#else
  {
    lua_Number n = lua_tonumber(L, idx);
    ok = n == floor(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0;
    if (ok) *v = (lua_Integer)n;
  }
#endif
  return ok;
}

#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, idx) lua_objlen((L), (idx))

/* luaL_setfuncs without upvalues, the module's only use (nup is 0: a
 * closure with upvalues is made by lua_pushcclosure, lsleeper.c's kind and
 * lsleepacc.c's call rows).  LuaJIT 2.1 has its own; this replaces it the
 * same way for both. */
#undef luaL_setfuncs
#define luaL_setfuncs(L, l, nup) luaL_register((L), NULL, (l))
#endif

/* The state's main thread (LUA_RIDX_MAINTHREAD since 5.2; on 5.1 the
 * thread that opened the module, when that was the main one, kept in the
 * registry by sleepacc_lua_remember_main). */
lua_State *sleepacc_lua_mainthread(lua_State *L);
void sleepacc_lua_remember_main(lua_State *L);

#endif /* SLEEPACC_LUA_COMPAT_H */
