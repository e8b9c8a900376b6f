/*
 * json.c -- the lines of a sleepacc/1 JSON Lines results file
 * (docs/schema.md), rendered by the core so every binding and C user writes
 * the same bytes: a header (host facts, hostname, os, settings, start time),
 * one point per record (sleepacc_result_fields, then the kept samples or
 * null), a footer.  Python's sleepacc.load reads them.
 *
 * Owns: sleepacc_json_header, sleepacc_json_point, sleepacc_json_footer.
 * Buffer contract: table.c's (length returned, NUL-terminated; -ENOSPC and
 * *needed, the size including the NUL, when cap is too small).
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

/* A bounded writer that keeps counting past the end of its buffer. */
typedef struct {
  char *buf;
  size_t cap, len;
} jw;

static void jw_printf(jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jw_printf(jw *w, const char *fmt, ...) {
  va_list ap;
  size_t room = w->len < w->cap ? w->cap - w->len : 0;
  int k;
  va_start(ap, fmt);
  k = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
  va_end(ap);
  if (k > 0) w->len += (size_t)k;
}

static int jw_done(jw *w, size_t *needed) {
  if (w->len < w->cap) return (int)w->len;
  if (needed) *needed = w->len + 1;
  if (w->cap) w->buf[w->cap - 1] = '\0';
  return -ENOSPC;
}

static void jw_str(jw *w, const char *s) {
  jw_printf(w, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') jw_printf(w, "\\%c", c);
    else if (c < 0x20) jw_printf(w, "\\u%04x", c);
    else jw_printf(w, "%c", c);
  }
  jw_printf(w, "\"");
}

/* "2026-12-01T06:21:38.017Z" (UTC, ms) of CLOCK_REALTIME ns (< 0: now). */
static void jw_time(jw *w, int64_t when_ns) {
  struct timespec ts;
  struct tm tm;
  char buf[40];
  if (when_ns < 0) clock_gettime(CLOCK_REALTIME, &ts);
  else ts = sleepacc__ts(when_ns);
  gmtime_r(&ts.tv_sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  jw_printf(w, "\"%s.%03ldZ\"", buf, ts.tv_nsec / 1000000L);
}

/* The members of the struct at base through a field table (a null value
 * is null, or absent with SLEEPACC_FIELD_OMIT_NULL; NaN/inf is null; a
 * double keeps a decimal point, as Python's json writes it). */
static void jw_members(jw *w, const sleepacc_field *t, const void *base, int first) {
  for (; t->name; t++) {
    const char *p = (const char *)base + t->offset;
    int64_t i = *(const int64_t *)(const void *)p;
    double d = *(const double *)(const void *)p;
    const char *s = *(const char *const *)(const void *)p;
    if (t->type == SLEEPACC_FIELD_METHOD && s) s = (*(const sleepacc_method *const *)(const void *)p)->name;
    if ((t->flags & SLEEPACC_FIELD_OMIT_NULL) && ((t->type == SLEEPACC_FIELD_OPT_INT64 && i < 0) ||
                                                  (t->type == SLEEPACC_FIELD_STRING && !s)))
      continue;
    jw_printf(w, "%s\"%s\":", first ? "" : ",", t->name);
    first = 0;
    switch (t->type) {
    case SLEEPACC_FIELD_OPT_INT64:
      if (i < 0) {
        jw_printf(w, "null");
        break;
      }
      /* fall through */
    case SLEEPACC_FIELD_INT64: jw_printf(w, "%lld", (long long)i); break;
    case SLEEPACC_FIELD_INT: jw_printf(w, "%d", *(const int *)(const void *)p); break;
    case SLEEPACC_FIELD_BOOL: jw_printf(w, "%s", *(const int *)(const void *)p ? "true" : "false"); break;
    case SLEEPACC_FIELD_DOUBLE:
      if (isfinite(d)) jw_printf(w, "%.17g%s", d, fabs(d) < 1e17 && d == (double)(int64_t)d ? ".0" : "");
      else jw_printf(w, "null");
      break;
    case SLEEPACC_FIELD_STRING:
    case SLEEPACC_FIELD_METHOD:
      if (s) jw_str(w, s);
      else jw_printf(w, "null");
      break;
    case SLEEPACC_FIELD_NESTED:
      jw_printf(w, "{");
      jw_members(w, t->sub, p, 1);
      jw_printf(w, "}");
      break;
    default: jw_printf(w, "null");
    }
  }
}

int sleepacc_json_header(const sleepacc_fact *facts, size_t count, const char *writer,
                         const char *writer_version, int64_t when_ns, char *buf, size_t cap,
                         size_t *needed) {
  jw w = {buf, cap, 0};
  struct utsname u;
  int ok = uname(&u) == 0;
  if ((!facts && count) || !writer || !writer_version || (!buf && cap)) return -EINVAL;
  jw_printf(&w, "{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{");
  for (size_t i = 0; i < count; i++) {
    if (!facts[i].key) continue;
    jw_str(&w, facts[i].key);
    jw_printf(&w, ":");
    if (facts[i].type == SLEEPACC_FACT_INT) jw_printf(&w, "%lld", (long long)facts[i].i);
    else if (facts[i].type == SLEEPACC_FACT_REAL && isfinite(facts[i].d)) jw_printf(&w, "%.17g", facts[i].d);
    else if (facts[i].type == SLEEPACC_FACT_STR) jw_str(&w, facts[i].s);
    else jw_printf(&w, "null");
    jw_printf(&w, ",");
  }
  jw_printf(&w, "\"hostname\":");
  ok ? jw_str(&w, u.nodename) : jw_printf(&w, "null");
  jw_printf(&w, ",\"os\":");
  ok ? jw_str(&w, u.sysname) : jw_printf(&w, "null");
  jw_printf(&w, "},\"settings\":{\"version\":\"" SLEEPACC_VERSION "\",\"writer\":");
  jw_str(&w, writer);
  jw_printf(&w, ",");
  jw_str(&w, writer);
  jw_printf(&w, ":");
  jw_str(&w, writer_version);
  jw_printf(&w, "},\"started\":");
  jw_time(&w, when_ns);
  jw_printf(&w, "}\n");
  return jw_done(&w, needed);
}

int sleepacc_json_point(const sleepacc_result *res, const int64_t *samples, size_t n, char *buf,
                        size_t cap, size_t *needed) {
  jw w = {buf, cap, 0};
  if (!res || (!samples && n) || (!buf && cap)) return -EINVAL;
  jw_printf(&w, "{\"type\":\"point\"");
  jw_members(&w, sleepacc_result_fields, res, 0);
  jw_printf(&w, ",\"samples\":");
  for (size_t k = 0; k < n; k++) jw_printf(&w, "%c%lld", k ? ',' : '[', (long long)samples[k]);
  jw_printf(&w, n ? "]}\n" : "null}\n");
  return jw_done(&w, needed);
}

int sleepacc_json_footer(int64_t when_ns, char *buf, size_t cap, size_t *needed) {
  jw w = {buf, cap, 0};
  if (!buf && cap) return -EINVAL;
  jw_printf(&w, "{\"type\":\"footer\",\"finished\":");
  jw_time(&w, when_ns);
  jw_printf(&w, "}\n");
  return jw_done(&w, needed);
}
