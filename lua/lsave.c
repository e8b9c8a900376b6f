/*
 * lsave.c -- sa.save(results, path): the sleepacc/1 JSON Lines file that
 * `sleepacc sweep -o` writes and sleepacc.load reads (docs/schema.md): a
 * header (host facts + hostname and os, settings, start time), one point
 * line per record (the core's record through sleepacc_result_fields, the
 * kept samples or null), a footer.  The file is the core's writer's
 * (csrc/json.c; SLEEPACC_WRITE_ATOMIC: whole or absent).  Returns true, or
 * nil, "ENAME: msg", "ENAME".  The same writer serves sa.sweep{output=}.
 */
#include "binding.h"

#define WRITER_MT "sleepacc.Writer"

/* __gc: after an error or a Ctrl-C the lines written so far stay, without
 * a footer ("interrupted"). */
static int writer_gc(lua_State *L) {
  sleepacc_writer_abort((sleepacc_writer *)luaL_checkudata(L, 1, WRITER_MT));
  return 0;
}

sleepacc_writer *sleepacc_lua_writer(lua_State *L, const char *path, int flags, int *err) {
  sleepacc_writer *w = (sleepacc_writer *)lua_newuserdatauv(L, sizeof *w, 0);
  *err = sleepacc_writer_open(w, path, flags, "lua", LUA_VERSION); /* no Lua error before it */
  luaL_getmetatable(L, WRITER_MT);
  lua_setmetatable(L, -2);
  return w;
}

static int save_lua(lua_State *L) {
  const char *path = sleepacc_lua_str(L, 2, "path");
  size_t n;
  const sleepacc_lua_samples **recs = sleepacc_lua_records(L, 1, &n); /* all checked first */
  int err;
  sleepacc_writer *w = sleepacc_lua_writer(L, path, SLEEPACC_WRITE_ATOMIC, &err);
  if (err == -ENAMETOOLONG) sleepacc_lua_error(L, "path", "too long");
  for (size_t i = 0; i < n && !err; i++) /* one sync, at the end */
    err = sleepacc_writer_point(w, &recs[i]->res, recs[i]->data, recs[i]->len);
  if (!err) err = sleepacc_writer_close(w);
  if (err) {
    sleepacc_writer_abort(w);
    return sleepacc_lua_pusherror(L, err, path);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg save_funcs[] = {{"save", save_lua}, {NULL, NULL}};

int sleepacc_lua_open_save(lua_State *L) {
  if (luaL_newmetatable(L, WRITER_MT)) {
    lua_pushcfunction(L, writer_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_pop(L, 1);
  luaL_setfuncs(L, save_funcs, 0);
  return 0;
}
