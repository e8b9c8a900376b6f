/*
 * lsave.c -- sa.save(results, path): the sleepacc/1 JSON Lines file that
 * `sleepacc sweep -o` writes and sleepacc.load reads (docs/schema.md): a
 * header (host facts + hostname/os, settings, start time), one point line
 * per result (the record as measure/sweep return it, samples as an array
 * or null), a footer.  Written to path.tmp<pid> and renamed, so the file
 * is whole or absent.  Returns true, or nil, "ENAME: message", "ENAME".
 */
#include "binding.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define SAVE_MAX_DEPTH 16

/* A record key whose value the core types as a double: written with a
 * decimal point even when integral (so Python reads a float on 5.1 too). */
static int save_is_double(const char *key) {
  for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++)
    if (f->is_double && strcmp(f->name, key) == 0) return 1;
  return strcmp(key, "cpu_ns_per_call") == 0 || strcmp(key, "cpu_percent") == 0;
}

static void save_string(FILE *f, const char *s, size_t n) {
  fputc('"', f);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void save_number(FILE *f, lua_State *L, int idx, int as_double) {
  char buf[40];
  double d = (double)lua_tonumber(L, idx);
  if (!as_double && lua_isinteger(L, idx)) {
    fprintf(f, "%lld", (long long)lua_tointegerx(L, idx, NULL));
    return;
  }
  if (!isfinite(d)) { /* JSON has no NaN/inf: null, as Python's writer */
    fputs("null", f);
    return;
  }
  snprintf(buf, sizeof buf, "%.17g", d);
  fputs(buf, f);
  if (!strpbrk(buf, ".eE")) fputs(".0", f);
}

/* Write the value at idx (absolute).  Returns 0, or -1 for a value JSON
 * cannot hold (function, thread, non-string key, too deep). */
static int save_value(FILE *f, lua_State *L, int idx, const char *key, int depth) {
  size_t n;
  const char *s;
  switch (lua_type(L, idx)) {
  case LUA_TNIL: fputs("null", f); return 0;
  case LUA_TBOOLEAN: fputs(lua_toboolean(L, idx) ? "true" : "false", f); return 0;
  case LUA_TNUMBER: save_number(f, L, idx, key && save_is_double(key)); return 0;
  case LUA_TSTRING:
    s = lua_tolstring(L, idx, &n);
    save_string(f, s, n);
    return 0;
  case LUA_TUSERDATA: { /* Samples: an array of ns, or null when streamed */
    lua_Integer len;
    luaL_checkstack(L, 2, NULL);
    if (!luaL_getmetafield(L, idx, "__len")) return -1;
    lua_pushvalue(L, idx);
    lua_call(L, 1, 1);
    len = lua_tointegerx(L, -1, NULL);
    lua_pop(L, 1);
    if (len <= 0) { fputs("null", f); return 0; }
    fputc('[', f);
    for (lua_Integer i = 1; i <= len; i++) {
      lua_pushinteger(L, i);
      lua_gettable(L, idx);
      fprintf(f, i > 1 ? ",%lld" : "%lld", (long long)lua_tointegerx(L, -1, NULL));
      lua_pop(L, 1);
    }
    fputc(']', f);
    return 0;
  }
  case LUA_TTABLE:
    break;
  default:
    return -1;
  }
  if (depth > SAVE_MAX_DEPTH) return -1;
  luaL_checkstack(L, 3, NULL);
  n = (size_t)lua_rawlen(L, idx);
  if (n > 0) { /* an array */
    fputc('[', f);
    for (size_t i = 1; i <= n; i++) {
      if (i > 1) fputc(',', f);
      lua_rawgeti(L, idx, (lua_Integer)i);
      if (save_value(f, L, lua_gettop(L), key, depth + 1) < 0) return -1;
      lua_pop(L, 1);
    }
    fputc(']', f);
    return 0;
  }
  fputc('{', f);
  int first = 1;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) != LUA_TSTRING) return -1;
    if (!first) fputc(',', f);
    first = 0;
    s = lua_tolstring(L, -2, &n);
    save_string(f, s, n);
    fputc(':', f);
    if (save_value(f, L, lua_gettop(L), s, depth + 1) < 0) return -1;
    lua_pop(L, 1);
  }
  fputc('}', f);
  return 0;
}

/* "2026-12-01T06:21:38.017Z" (UTC, ms), as the Python writer. */
static void save_now(FILE *f) {
  struct timespec ts;
  struct tm tm;
  char buf[40];
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  fprintf(f, "\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000L);
}

/* The header line: host facts (an unreadable one is null) plus hostname
 * and os, the writer's settings and the start time. */
static int save_header(FILE *f, lua_State *L) {
  sleepacc_fact *facts;
  struct utsname u;
  size_t count = 0;
  int rc;
  facts = (sleepacc_fact *)lua_newuserdatauv(L, SLEEPACC_MAX_FACTS * sizeof *facts, 0);
  rc = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count);
  lua_pop(L, 1); /* the userdata stays alive until the next collection */
  if (rc < 0) return rc;
  fputs("{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{", f);
  for (size_t i = 0; i < count; i++) {
    if (!facts[i].key) continue;
    save_string(f, facts[i].key, strlen(facts[i].key));
    if (facts[i].type == SLEEPACC_FACT_INT) fprintf(f, ":%lld,", (long long)facts[i].i);
    else if (facts[i].type == SLEEPACC_FACT_STR) {
      fputc(':', f);
      save_string(f, facts[i].s, strlen(facts[i].s));
      fputc(',', f);
    } else fputs(":null,", f);
  }
  if (uname(&u) == 0) {
    fputs("\"hostname\":", f);
    save_string(f, u.nodename, strlen(u.nodename));
    fputs(",\"os\":", f);
    save_string(f, u.sysname, strlen(u.sysname));
  } else fputs("\"hostname\":null,\"os\":null", f);
  fputs("},\"settings\":{\"version\":\"" SLEEPACC_VERSION "\",\"writer\":\"lua\",\"lua\":", f);
  save_string(f, LUA_VERSION, strlen(LUA_VERSION));
  fputs("},\"started\":", f);
  save_now(f);
  fputs("}\n", f);
  return 0;
}

/* sa.save(results, path): results is one result or an array of them. */
static int save_lua(lua_State *L) {
  static const char fn[] = "save";
  const char *path = sleepacc_lua_string(L, 2, fn, "path");
  char tmp[4096];
  FILE *f;
  size_t n;
  int single, rc, err;
  if (lua_type(L, 1) != LUA_TTABLE)
    sleepacc_lua_argerror(L, fn, "results", "array of results (from measure or sweep) expected, got %s",
                          luaL_typename(L, 1));
  lua_settop(L, 2);
  single = lua_getfield(L, 1, "method") != LUA_TNIL;
  lua_pop(L, 1);
  n = single ? 1 : (size_t)lua_rawlen(L, 1);
  for (size_t i = 1; i <= n && !single; i++) { /* check before writing anything */
    if (lua_rawgeti(L, 1, (lua_Integer)i), lua_type(L, -1) != LUA_TTABLE) {
      char what[32];
      snprintf(what, sizeof what, "results[%zu]", i);
      sleepacc_lua_argerror(L, fn, what, "result table expected, got %s", luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp)
    sleepacc_lua_argerror(L, fn, "path", "too long");
  if (!(f = fopen(tmp, "w"))) return sleepacc_lua_pusherror(L, -errno, path);
  rc = save_header(f, L);
  for (size_t i = 1; rc == 0 && i <= n; i++) {
    if (single) lua_pushvalue(L, 1);
    else lua_rawgeti(L, 1, (lua_Integer)i);
    fputs("{\"type\":\"point\",", f);
    lua_pushnil(L); /* the record's keys, then samples (null when streamed) */
    int first = 1;
    while (rc == 0 && lua_next(L, 3)) {
      size_t kl;
      const char *k = lua_type(L, -2) == LUA_TSTRING ? lua_tolstring(L, -2, &kl) : NULL;
      if (!k || strcmp(k, "type") == 0) { lua_pop(L, 1); continue; }
      if (!first) fputc(',', f);
      first = 0;
      save_string(f, k, kl);
      fputc(':', f);
      if (save_value(f, L, lua_gettop(L), k, 0) < 0) rc = -EINVAL;
      lua_pop(L, 1);
    }
    fputs("}\n", f);
    lua_settop(L, 2);
  }
  if (rc == 0) {
    fputs("{\"type\":\"footer\",\"finished\":", f);
    save_now(f);
    fputs("}\n", f);
  }
  err = rc ? rc : (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0) ? -errno : 0;
  if (fclose(f) != 0 && !err) err = -errno;
  if (!err && rename(tmp, path) != 0) err = -errno;
  if (err) {
    unlink(tmp);
    if (err == -EINVAL)
      sleepacc_lua_argerror(L, fn, "results", "a result holds a value JSON cannot write");
    return sleepacc_lua_pusherror(L, err, path);
  }
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg save_funcs[] = {{"save", save_lua}, {NULL, NULL}};

int sleepacc_lua_open_save(lua_State *L) {
  luaL_setfuncs(L, save_funcs, 0);
  return 0;
}
