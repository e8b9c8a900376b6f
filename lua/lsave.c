/*
 * lsave.c -- sa.save(results, path): the sleepacc/1 JSON Lines file that
 * `sleepacc sweep -o` writes and sleepacc.load reads (docs/schema.md): a
 * header (host facts + hostname and os, settings, start time), one point
 * line per record (the core's record through sleepacc_result_fields, the
 * kept samples or null), a footer.  Written to path.tmp<pid>, then renamed:
 * the file is whole or absent.  Returns true, or nil, "ENAME: msg", "ENAME".
 * The same writer serves sa.sweep{output=}: there each point is on disk
 * (fsync'd) as soon as it is measured, so a killed sweep keeps them.
 */
#include "binding.h"

#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>

#define WRITER_MT "sleepacc.Writer"

/* A results file open for writing, and the buffer the core renders each
 * line into (csrc/json.c); __gc closes it (after an error or a Ctrl-C the
 * lines written so far stay, without a footer: "interrupted"). */
struct sleepacc_lua_writer {
  FILE *f;
  char *buf;
  size_t cap;
};

static int writer_gc(lua_State *L) {
  sleepacc_lua_writer *w = (sleepacc_lua_writer *)luaL_checkudata(L, 1, WRITER_MT);
  if (w->f) fclose(w->f);
  free(w->buf);
  w->f = NULL, w->buf = NULL, w->cap = 0;
  return 0;
}

/* Room for a line of needed bytes (after the core's -ENOSPC): 0 or -ENOMEM. */
static int writer_grow(sleepacc_lua_writer *w, size_t needed) {
  char *p = (char *)realloc(w->buf, needed);
  if (!p) return -ENOMEM;
  w->buf = p, w->cap = needed;
  return 0;
}

/* Write the line of length len (or an errno) in w->buf; sync: on disk
 * (flushed, fsync'd) before returning.  0 or -errno. */
static int writer_put(sleepacc_lua_writer *w, int len, int sync) {
  if (len < 0) return len;
  if (fwrite(w->buf, 1, (size_t)len, w->f) != (size_t)len) return errno ? -errno : -EIO;
  if (!sync) return ferror(w->f) ? -EIO : 0;
  return fflush(w->f) != 0 || ferror(w->f) || fsync(fileno(w->f)) != 0 ? (errno ? -errno : -EIO) : 0;
}

sleepacc_lua_writer *sleepacc_lua_writer_open(lua_State *L, const char *path, int *err) {
  sleepacc_fact *facts = (sleepacc_fact *)lua_newuserdatauv(L, SLEEPACC_MAX_FACTS * sizeof *facts, 0);
  sleepacc_lua_writer *w = (sleepacc_lua_writer *)lua_newuserdatauv(L, sizeof *w, 0);
  size_t count = 0, need = 0;
  int rc;
  w->f = NULL, w->buf = NULL, w->cap = 0;
  luaL_setmetatable(L, WRITER_MT);
  lua_remove(L, -2); /* facts: used below only */
  if ((*err = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count)) < 0) return NULL;
  if (!(w->f = fopen(path, "w"))) {
    *err = -errno;
    return NULL;
  }
  rc = sleepacc_json_header(facts, count, "lua", LUA_VERSION, -1, NULL, 0, &need);
  if (rc == -ENOSPC && (rc = writer_grow(w, need)) == 0)
    rc = sleepacc_json_header(facts, count, "lua", LUA_VERSION, -1, w->buf, w->cap, NULL);
  return (*err = writer_put(w, rc, 1)) < 0 ? NULL : w;
}

int sleepacc_lua_writer_point(sleepacc_lua_writer *w, const sleepacc_result *res, const int64_t *data,
                              size_t len, int sync) {
  size_t need = 0;
  int rc = sleepacc_json_point(res, data, len, w->buf, w->cap, &need);
  if (rc == -ENOSPC && (rc = writer_grow(w, need)) == 0)
    rc = sleepacc_json_point(res, data, len, w->buf, w->cap, NULL);
  return writer_put(w, rc, sync);
}

int sleepacc_lua_writer_close(sleepacc_lua_writer *w) {
  size_t need = 0;
  int rc = sleepacc_json_footer(-1, w->buf, w->cap, &need);
  if (rc == -ENOSPC && (rc = writer_grow(w, need)) == 0) rc = sleepacc_json_footer(-1, w->buf, w->cap, NULL);
  rc = writer_put(w, rc, 1);
  if (fclose(w->f) != 0 && !rc) rc = -errno;
  w->f = NULL;
  return rc;
}

/* ------------------------------------------------------------ sa.save */

static int save_lua(lua_State *L) {
  const char *path = sleepacc_lua_str(L, 2, "path");
  size_t n;
  sleepacc_lua_rec *recs = sleepacc_lua_records(L, 1, &n); /* all checked first */
  char tmp[4096];
  sleepacc_lua_writer *w;
  int err = 0;
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp)
    sleepacc_lua_error(L, "path", "too long");
  if (!(w = sleepacc_lua_writer_open(L, tmp, &err))) {
    unlink(tmp);
    return sleepacc_lua_pusherror(L, err, path);
  }
  for (size_t i = 0; i < n && !err; i++) /* one sync, at the end */
    err = sleepacc_lua_writer_point(w, recs[i].res, recs[i].samples, recs[i].n, 0);
  if (!err) err = sleepacc_lua_writer_close(w);
  if (!err && rename(tmp, path) != 0) err = -errno;
  if (err) {
    unlink(tmp);
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
