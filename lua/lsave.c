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

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

/* The members of the struct at base through a core field table (a null
 * value is null, or absent with SLEEPACC_FIELD_OMIT_NULL; NaN/inf null). */
static void json_members(FILE *f, const sleepacc_field *t, const void *base, int first) {
  for (; t->name; t++) {
    const char *p = (const char *)base + t->offset;
    int64_t i = *(const int64_t *)(const void *)p;
    double d = *(const double *)(const void *)p;
    const char *s = *(const char *const *)(const void *)p;
    if ((t->flags & SLEEPACC_FIELD_OMIT_NULL) && ((t->type == SLEEPACC_FIELD_OPT_INT64 && i < 0) ||
                                                  (t->type == SLEEPACC_FIELD_STRING && !s)))
      continue;
    fprintf(f, "%s\"%s\":", first ? "" : ",", t->name);
    first = 0;
    switch (t->type) {
    case SLEEPACC_FIELD_OPT_INT64: if (i < 0) { fputs("null", f); break; } /* fall through */
    case SLEEPACC_FIELD_INT64: fprintf(f, "%lld", (long long)i); break;
    case SLEEPACC_FIELD_INT: fprintf(f, "%d", *(const int *)(const void *)p); break;
    case SLEEPACC_FIELD_BOOL: fputs(*(const int *)(const void *)p ? "true" : "false", f); break;
    case SLEEPACC_FIELD_DOUBLE:
      if (isfinite(d)) fprintf(f, "%.17g%s", d, fabs(d) < 1e17 && d == (double)(int64_t)d ? ".0" : "");
      else fputs("null", f);
      break;
    case SLEEPACC_FIELD_STRING: if (s) json_str(f, s); else fputs("null", f); break;
    case SLEEPACC_FIELD_NESTED:
      fputc('{', f);
      json_members(f, t->sub, p, 1);
      fputc('}', f);
      break;
    default: fputs("null", f);
    }
  }
}

/* "2026-12-01T06:21:38.017Z" (UTC, ms), as the Python writer. */
static void json_now(FILE *f) {
  struct timespec ts;
  struct tm tm;
  char buf[40];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  fprintf(f, "\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000L);
}

/* The header: host facts (an unreadable one null), hostname, os, settings. */
static void json_header(FILE *f, const sleepacc_fact *facts, size_t count) {
  struct utsname u;
  int ok = uname(&u) == 0;
  fputs("{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{", f);
  for (size_t i = 0; i < count; i++) {
    if (!facts[i].key) continue;
    json_str(f, facts[i].key);
    fputc(':', f);
    if (facts[i].type == SLEEPACC_FACT_INT) fprintf(f, "%lld", (long long)facts[i].i);
    else if (facts[i].type == SLEEPACC_FACT_REAL && isfinite(facts[i].d)) fprintf(f, "%.17g", facts[i].d);
    else if (facts[i].type == SLEEPACC_FACT_STR) json_str(f, facts[i].s);
    else fputs("null", f);
    fputc(',', f);
  }
  fputs("\"hostname\":", f);
  ok ? json_str(f, u.nodename) : (void)fputs("null", f);
  fputs(",\"os\":", f);
  ok ? json_str(f, u.sysname) : (void)fputs("null", f);
  fputs("},\"settings\":{\"version\":\"" SLEEPACC_VERSION "\",\"writer\":\"lua\",\"lua\":\"" LUA_VERSION
        "\"},\"started\":", f);
  json_now(f);
  fputs("}\n", f);
}

/* ------------------------------------------------------------ writer */

#define WRITER_MT "sleepacc.Writer"

/* A results file open for writing; __gc closes it (after an error or a
 * Ctrl-C the lines written so far stay, without a footer: "interrupted"). */
typedef struct {
  FILE *f;
} writer_ud;

static int writer_gc(lua_State *L) {
  writer_ud *w = (writer_ud *)luaL_checkudata(L, 1, WRITER_MT);
  if (w->f) fclose(w->f);
  w->f = NULL;
  return 0;
}

/* Everything written so far on disk: 0 or -errno. */
static int writer_sync(FILE *f) {
  return fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0 ? (errno ? -errno : -EIO) : 0;
}

FILE *sleepacc_lua_writer_open(lua_State *L, const char *path, int *err) {
  sleepacc_fact *facts = (sleepacc_fact *)lua_newuserdatauv(L, SLEEPACC_MAX_FACTS * sizeof *facts, 0);
  writer_ud *w = (writer_ud *)lua_newuserdatauv(L, sizeof *w, 0);
  size_t count = 0;
  w->f = NULL;
  luaL_setmetatable(L, WRITER_MT);
  lua_remove(L, -2); /* facts: used below only */
  if ((*err = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count)) < 0) return NULL;
  if (!(w->f = fopen(path, "w"))) {
    *err = -errno;
    return NULL;
  }
  json_header(w->f, facts, count);
  return (*err = writer_sync(w->f)) < 0 ? NULL : w->f;
}

int sleepacc_lua_writer_point(FILE *f, const sleepacc_result *res, const int64_t *data, size_t len,
                              int sync) {
  fputs("{\"type\":\"point\"", f);
  json_members(f, sleepacc_result_fields, res, 0);
  fputs(",\"samples\":", f);
  for (size_t k = 0; k < len; k++) fprintf(f, "%c%lld", k ? ',' : '[', (long long)data[k]);
  fputs(len ? "]}\n" : "null}\n", f);
  return sync ? writer_sync(f) : ferror(f) ? -EIO : 0;
}

int sleepacc_lua_writer_close(lua_State *L, int idx) {
  writer_ud *w = (writer_ud *)luaL_checkudata(L, idx, WRITER_MT);
  int err;
  fputs("{\"type\":\"footer\",\"finished\":", w->f);
  json_now(w->f);
  fputs("}\n", w->f);
  err = writer_sync(w->f);
  if (fclose(w->f) != 0 && !err) err = -errno;
  w->f = NULL;
  return err;
}

/* ------------------------------------------------------------ sa.save */

static int save_lua(lua_State *L) {
  const char *path = sleepacc_lua_str(L, 2, "path");
  size_t n;
  char tmp[4096];
  FILE *f;
  int single, err = 0;
  if (lua_type(L, 1) != LUA_TTABLE)
    sleepacc_lua_error(L, "results", "array of records expected, got %s", luaL_typename(L, 1));
  lua_settop(L, 2);
  single = lua_getfield(L, 1, "method") != LUA_TNIL;
  n = single ? 1 : (size_t)lua_rawlen(L, 1);
  lua_createtable(L, (int)n, 0); /* 4: the records, checked before anything is written */
  for (size_t i = 1; i <= n; i++) {
    char what[32];
    snprintf(what, sizeof what, single ? "results" : "results[%zu]", i);
    if (single) lua_pushvalue(L, 1);
    else lua_rawgeti(L, 1, (int)i);
    sleepacc_lua_record(L, lua_gettop(L), what, NULL, NULL);
    lua_rawseti(L, 4, (int)i);
  }
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp)
    sleepacc_lua_error(L, "path", "too long");
  if (!(f = sleepacc_lua_writer_open(L, tmp, &err))) { /* 5: the writer */
    unlink(tmp);
    return sleepacc_lua_pusherror(L, err, path);
  }
  for (size_t i = 1; i <= n && !err; i++) { /* one sync, at the end */
    const int64_t *data;
    size_t len;
    const sleepacc_result *res;
    lua_rawgeti(L, 4, (int)i);
    res = sleepacc_lua_record(L, lua_gettop(L), "results", &data, &len);
    lua_pop(L, 1);
    err = sleepacc_lua_writer_point(f, res, data, len, 0);
  }
  if (!err) err = sleepacc_lua_writer_close(L, 5);
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
