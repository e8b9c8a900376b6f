/*
 * lsave.c -- sa.save(results, path): the sleepacc/1 JSON Lines file that
 * `sleepacc sweep -o` writes and sleepacc.load reads (docs/schema.md): a
 * header (host facts + hostname and os, settings, start time), one point
 * line per record (the core's record through sleepacc_result_fields, the
 * kept samples or null), a footer.  Written to path.tmp<pid>, then renamed:
 * the file is whole or absent.  Returns true, or nil, "ENAME: msg", "ENAME".
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

static int save_lua(lua_State *L) {
  const char *path = sleepacc_lua_str(L, 2, "path");
  sleepacc_fact *facts;
  size_t n, count = 0;
  char tmp[4096];
  FILE *f;
  int single, err;
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
  facts = (sleepacc_fact *)lua_newuserdatauv(L, SLEEPACC_MAX_FACTS * sizeof *facts, 0);
  if ((err = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count)) < 0)
    return sleepacc_lua_pusherror(L, err, "host facts");
  if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp)
    sleepacc_lua_error(L, "path", "too long");
  if (!(f = fopen(tmp, "w"))) return sleepacc_lua_pusherror(L, -errno, path);
  json_header(f, facts, count);
  for (size_t i = 1; i <= n; i++) {
    const int64_t *data;
    size_t len;
    const sleepacc_result *res;
    lua_rawgeti(L, 4, (int)i);
    res = sleepacc_lua_record(L, lua_gettop(L), "results", &data, &len);
    lua_pop(L, 1);
    fputs("{\"type\":\"point\"", f);
    json_members(f, sleepacc_result_fields, res, 0);
    fputs(",\"samples\":", f);
    for (size_t k = 0; k < len; k++) fprintf(f, "%c%lld", k ? ',' : '[', (long long)data[k]);
    fputs(len ? "]}\n" : "null}\n", f);
  }
  fputs("{\"type\":\"footer\",\"finished\":", f);
  json_now(f);
  fputs("}\n", f);
  err = (fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0) ? -errno : 0;
  if (fclose(f) != 0 && !err) err = -errno;
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
  luaL_setfuncs(L, save_funcs, 0);
  return 0;
}
