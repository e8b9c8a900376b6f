/*
 * compat.h -- one source for Lua 5.1, 5.3, 5.4 and LuaJIT 2.1 (the way
 * luaposix and lua-cjson do it): the 5.3/5.4 names this module uses, mapped
 * onto the 5.1 API where they are missing.  Included by binding.h after
 * lua.h and lauxlib.h; nothing else in lua/ tests LUA_VERSION_NUM.
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

#ifndef LUA_OK
#define LUA_OK 0
#endif

#if LUA_VERSION_NUM < 504
/* no user values on userdata before 5.4 */
#define lua_newuserdatauv(L, size, nuv) lua_newuserdata((L), (size))
#endif

#if LUA_VERSION_NUM < 503
#define LUA_MAXINTEGER PTRDIFF_MAX
#define LUA_MININTEGER PTRDIFF_MIN

/* lua_getfield/lua_rawgeti return the pushed value's type since 5.3. */
static inline int sleepacc__getfield(lua_State *L, int idx, const char *k) {
  lua_getfield(L, idx, k);
  return lua_type(L, -1);
}
#define lua_getfield sleepacc__getfield

/* An integral number that fits lua_Integer (the 5.3 integer subtype). */
static inline int sleepacc__isinteger(lua_State *L, int idx) {
  lua_Number n;
  if (lua_type(L, idx) != LUA_TNUMBER) return 0;
  n = lua_tonumber(L, idx);
  return n == floor(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0;
}
#define lua_isinteger sleepacc__isinteger

/* 5.3 semantics (LuaJIT's own truncates): *ok = 0 unless integral. */
static inline lua_Integer sleepacc__tointegerx(lua_State *L, int idx, int *ok) {
  int isint = sleepacc__isinteger(L, idx);
  if (ok) *ok = isint;
  return isint ? (lua_Integer)lua_tonumber(L, idx) : 0;
}
#define lua_tointegerx sleepacc__tointegerx
#endif

#if LUA_VERSION_NUM < 502
#define lua_rawlen(L, idx) lua_objlen((L), (idx))
#define lua_absindex(L, idx) \
  ((idx) > 0 || (idx) <= LUA_REGISTRYINDEX ? (idx) : lua_gettop(L) + (idx) + 1)

/* luaL_setfuncs/luaL_newlib/luaL_setmetatable (LuaJIT 2.1 has its own;
 * these replace them the same way for both). */
static inline void sleepacc__setfuncs(lua_State *L, const luaL_Reg *l, int nup) {
  luaL_checkstack(L, nup + 1, "too many upvalues");
  for (; l->name; l++) {
    for (int i = 0; i < nup; i++) lua_pushvalue(L, -nup);
    lua_pushcclosure(L, l->func, nup);
    lua_setfield(L, -(nup + 2), l->name);
  }
  lua_pop(L, nup);
}
#undef luaL_setfuncs
#define luaL_setfuncs sleepacc__setfuncs
#undef luaL_newlib
#define luaL_newlib(L, l) (lua_newtable(L), sleepacc__setfuncs((L), (l), 0))
static inline void sleepacc__setmetatable(lua_State *L, const char *tname) {
  luaL_getmetatable(L, tname);
  lua_setmetatable(L, -2);
}
#undef luaL_setmetatable
#define luaL_setmetatable sleepacc__setmetatable
static inline void *sleepacc__testudata(lua_State *L, int idx, const char *tname) {
  void *p = lua_touserdata(L, idx);
  int same;
  if (!p || !lua_getmetatable(L, idx)) return NULL;
  luaL_getmetatable(L, tname);
  same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same ? p : NULL;
}
#undef luaL_testudata
#define luaL_testudata sleepacc__testudata
#endif

/* The state's main thread (LUA_RIDX_MAINTHREAD since 5.2; on 5.1 the
 * thread that opened the module, when that was the main one, kept in the
 * registry by sleepacc_lua_remember_main). */
lua_State *sleepacc_lua_mainthread(lua_State *L);
void sleepacc_lua_remember_main(lua_State *L);

#endif /* SLEEPACC_LUA_COMPAT_H */
