/*
 * json.c -- the lines of a sleepacc/1 JSON Lines results file
 * (docs/schema.md), rendered by the core so every binding and C user writes
 * the same bytes: a header (host facts, hostname, os, settings, start time),
 * one point per record (sleepacc_result_fields, then the kept samples or
 * null), a footer.  Python's sleepacc.load reads them.  And the file that
 * holds them: sleepacc_writer writes the lines through its own fixed buffer
 * to a file it opens (so a point of millions of samples needs no allocation).
 *
 * Owns: sleepacc_json_header, sleepacc_json_point, sleepacc_json_footer,
 * sleepacc_writer_open/_point/_close/_abort.
 * Buffer contract: table.c's (length returned, NUL-terminated; -ENOSPC and
 * *needed, the size including the NUL, when cap is too small).
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* A bounded writer: without a file (fd < 0) it keeps counting past the end
 * of its buffer; with one it writes the buffer out whenever the next piece
 * would not fit (err: the first write error; written: bytes written). */
typedef struct {
  char *buf;
  size_t cap, len;
  int fd, err;
  int64_t written;
} jw;

/* Write the buffered bytes to the file (EINTR and short writes resumed). */
static void jw_flush(jw *w) {
  for (size_t off = 0; off < w->len && !w->err;) {
    ssize_t k = write(w->fd, w->buf + off, w->len - off);
    if (k >= 0) off += (size_t)k, w->written += k;
    else if (errno != EINTR) w->err = -errno;
  }
  w->len = 0;
}

static void jw_printf(jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jw_printf(jw *w, const char *fmt, ...) {
  for (int pass = 0; pass < 2; pass++) {
    va_list ap;
    size_t room = w->len < w->cap ? w->cap - w->len : 0;
    int k;
    va_start(ap, fmt);
    k = vsnprintf(room ? w->buf + w->len : NULL, room, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if (w->fd < 0 || (size_t)k < room || pass == 1) { /* a piece larger than the buffer is an error */
      if (w->fd >= 0 && (size_t)k >= room) w->err = w->err ? w->err : -ENOSPC;
      else w->len += (size_t)k;
      return;
    }
    jw_flush(w); /* then the piece again, into the empty buffer */
  }
}
static int jw_done(jw *w, size_t *needed) {
  if (w->len < w->cap) return (int)w->len;
  if (needed) *needed = w->len + 1;
  if (w->cap) w->buf[w->cap - 1] = '\0';
  return -ENOSPC;
}

/* The length of the UTF-8 sequence at s (1..4), 0 when it is none a
 * decoder takes (a stray or cut continuation, an overlong form, a
 * surrogate, beyond U+10FFFF); the NUL that ends s ends a cut one. */
static int utf8_len(const unsigned char *s) {
  int n = s[0] < 0x80 ? 1 : s[0] < 0xc2 ? 0 : s[0] < 0xe0 ? 2 : s[0] < 0xf0 ? 3 : s[0] < 0xf5 ? 4 : 0;
  for (int i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
      (s[0] == 0xf4 && s[1] >= 0x90))
    return 0;
  return n;
}

/* A JSON string of s; a byte that is no UTF-8 (a host fact's, a record's
 * name) is written as U+FFFD, so every line stays text a reader decodes. */
static void jw_str(jw *w, const char *s) {
  jw_printf(w, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c;) {
    int n = utf8_len(c);
    if (*c == '"' || *c == '\\') jw_printf(w, "\\%c", *c);
    else if (*c < 0x20) jw_printf(w, "\\u%04x", *c);
    else if (n == 0) jw_printf(w, "\\ufffd");
    else jw_printf(w, "%.*s", n, (const char *)c);
    c += n ? n : 1;
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
      if (isfinite(d)) { /* a point, not the locale's comma */
        locale_t prev = sleepacc__c_numbers_enter();
        jw_printf(w, "%.17g%s", d, fabs(d) < 1e17 && d == (double)(int64_t)d ? ".0" : "");
        sleepacc__c_numbers_leave(prev);
      } else jw_printf(w, "null");
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

/* The header's members after "host":{ (facts, hostname, os), settings, start. */
static void jw_header(jw *w, const sleepacc_fact *facts, size_t count, const char *writer,
                      const char *writer_version, int64_t when_ns) {
  struct utsname u;
  int ok = uname(&u) == 0;
  jw_printf(w, "{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{");
  for (size_t i = 0; i < count; i++) {
    if (!facts[i].key) continue;
    jw_str(w, facts[i].key);
    jw_printf(w, ":");
    if (facts[i].type == SLEEPACC_FACT_INT) jw_printf(w, "%lld", (long long)facts[i].i);
    else if (facts[i].type == SLEEPACC_FACT_REAL && isfinite(facts[i].d)) {
      locale_t prev = sleepacc__c_numbers_enter(); /* a point, not the locale's comma */
      jw_printf(w, "%.17g", facts[i].d);
      sleepacc__c_numbers_leave(prev);
    }
    else if (facts[i].type == SLEEPACC_FACT_STR) jw_str(w, facts[i].s);
    else jw_printf(w, "null");
    jw_printf(w, ",");
  }
  jw_printf(w, "\"hostname\":");
  ok ? jw_str(w, u.nodename) : jw_printf(w, "null");
  jw_printf(w, ",\"os\":");
  ok ? jw_str(w, u.sysname) : jw_printf(w, "null");
  jw_printf(w, "},\"settings\":{\"version\":\"" SLEEPACC_VERSION "\",\"writer\":");
  jw_str(w, writer);
  jw_printf(w, ",");
  jw_str(w, writer);
  jw_printf(w, ":");
  jw_str(w, writer_version);
  jw_printf(w, "},\"started\":");
  jw_time(w, when_ns);
  jw_printf(w, "}\n");
}

static void jw_point(jw *w, const sleepacc_result *res, const int64_t *samples, size_t n) {
  jw_printf(w, "{\"type\":\"point\"");
  jw_members(w, sleepacc_result_fields, res, 0);
  jw_printf(w, ",\"samples\":");
  for (size_t k = 0; k < n; k++) jw_printf(w, "%c%lld", k ? ',' : '[', (long long)samples[k]);
  jw_printf(w, n ? "]}\n" : "null}\n");
}

static void jw_footer(jw *w, int64_t when_ns) {
  jw_printf(w, "{\"type\":\"footer\",\"finished\":");
  jw_time(w, when_ns);
  jw_printf(w, "}\n");
}

int sleepacc_json_header(const sleepacc_fact *facts, size_t count, const char *writer,
                         const char *writer_version, int64_t when_ns, char *buf, size_t cap,
                         size_t *needed) {
  jw w = {buf, cap, 0, -1, 0, 0};
  if ((!facts && count) || !writer || !writer_version || (!buf && cap)) return -EINVAL;
  jw_header(&w, facts, count, writer, writer_version, when_ns);
  return jw_done(&w, needed);
}

int sleepacc_json_point(const sleepacc_result *res, const int64_t *samples, size_t n, char *buf,
                        size_t cap, size_t *needed) {
  jw w = {buf, cap, 0, -1, 0, 0};
  if (!res || (!samples && n) || (!buf && cap)) return -EINVAL;
  jw_point(&w, res, samples, n);
  return jw_done(&w, needed);
}

int sleepacc_json_footer(int64_t when_ns, char *buf, size_t cap, size_t *needed) {
  jw w = {buf, cap, 0, -1, 0, 0};
  if (!buf && cap) return -EINVAL;
  jw_footer(&w, when_ns);
  return jw_done(&w, needed);
}

/* ------------------------------------------------------------ the file */

/* The writer's buffer as a jw over its file. */
static jw jw_of(sleepacc_writer *w) {
  jw j = {w->buf, sizeof w->buf, w->len, w->fd, w->err, w->written};
  return j;
}

/* Back from a jw that rendered whole lines: flush (and fsync) when asked;
 * the first error stays, and cuts the file back to its last whole line. */
static int jw_end(sleepacc_writer *w, jw *j, int flush, int sync) {
  int was = w->err;
  if (flush) jw_flush(j);
  if (sync && !j->err && fsync(w->fd) != 0 && errno != EINVAL && errno != EROFS) j->err = -errno;
  w->len = j->len, w->err = j->err, w->written = j->written;
  if (!w->err && flush) w->whole = w->written; /* every line so far is on disk */
  if (w->err && !was && !w->tmp[0] && ftruncate(w->fd, (off_t)w->whole) == 0) /* not a pipe */
    w->written = w->whole, w->len = 0;
  return w->err;
}

int sleepacc_atomic_target(const char *path, char *out, size_t cap) {
  struct stat st;
  char real[PATH_MAX];
  if (!path || !out || cap == 0) return -EINVAL;
  out[0] = '\0';
  if (stat(path, &st) == 0 ? !S_ISREG(st.st_mode) : lstat(path, &st) == 0)
    return 0; /* a device, a FIFO, a directory, a link to nothing: written to */
  if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) { /* a link's file, not the link */
    if (!realpath(path, real)) return -errno;
    path = real;
  }
  if ((size_t)snprintf(out, cap, "%s", path) >= cap) return out[0] = '\0', -ENAMETOOLONG;
  return 1;
}

/* The names an atomic file's temporary tries (.tmp<pid>, then .tmp<pid>.1, ...). */
#define SLEEPACC__TMP_TRIES 64

int sleepacc_writer_open(sleepacc_writer *w, const char *path, int flags, const char *writer,
                         const char *writer_version) {
  const char *file = path;
  size_t count = 0;
  struct stat st;
  int keep;
  jw j;
  if (!w) return -EINVAL;
  w->fd = -1, w->flags = flags, w->err = 0, w->len = 0, w->written = w->whole = 0;
  w->tmp[0] = w->path[0] = '\0';
  if (!path || !writer || !writer_version || (flags & ~(SLEEPACC_WRITE_SYNC | SLEEPACC_WRITE_ATOMIC |
                                                         SLEEPACC_WRITE_KEEP)))
    return -EINVAL;
  if ((flags & SLEEPACC_WRITE_ATOMIC) && (keep = sleepacc_atomic_target(path, w->path, sizeof w->path)) != 0) {
    /* KEEP: path itself, now (the rename replaces what is there) */
    if (keep < 0) return keep;
    if ((flags & SLEEPACC_WRITE_KEEP) && stat(path, &st) == 0 && st.st_size > 0) return -EEXIST;
    if ((size_t)snprintf(w->tmp, sizeof w->tmp, "%s.tmp%ld", w->path, (long)getpid()) >= sizeof w->tmp)
      return w->tmp[0] = '\0', -ENAMETOOLONG;
    file = w->tmp;
  }
  if ((w->err = sleepacc_host_facts(w->facts, SLEEPACC_MAX_FACTS, &count)) < 0) return w->err;
  keep = (flags & SLEEPACC_WRITE_KEEP) && file == path; /* checked on the open file: no race */
  w->fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC | (file == w->tmp ? O_EXCL : keep ? 0 : O_TRUNC), 0666);
  /* the temporary is a new file of ours, never what is at its name (a link
   * made there, a stale one, another thread's): the next name, .tmp<pid>.k */
  for (int k = 1; w->fd < 0 && errno == EEXIST && file == w->tmp && k < SLEEPACC__TMP_TRIES; k++) {
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp%ld.%d", w->path, (long)getpid(), k); /* room: tmp's 32 */
    w->fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC | O_EXCL, 0666);
  }
  if (w->fd < 0) return w->tmp[0] = '\0', -errno;
  if (keep && fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    close(w->fd), w->fd = -1; /* the file is left as it was */
    return -EEXIST;
  }
  j = jw_of(w);
  jw_header(&j, w->facts, count, writer, writer_version, -1);
  if (jw_end(w, &j, 1, 1) < 0) sleepacc_writer_abort(w); /* the header is on disk, or no file */
  return w->err;
}

int sleepacc_writer_point(sleepacc_writer *w, const sleepacc_result *res, const int64_t *samples,
                          size_t n) {
  jw j;
  if (!w || w->fd < 0 || !res || (!samples && n)) return -EINVAL;
  j = jw_of(w);
  jw_point(&j, res, samples, n);
  return jw_end(w, &j, w->flags & SLEEPACC_WRITE_SYNC, w->flags & SLEEPACC_WRITE_SYNC);
}

int sleepacc_writer_close(sleepacc_writer *w) {
  jw j;
  if (!w || w->fd < 0) return -EINVAL;
  j = jw_of(w);
  jw_footer(&j, -1);
  jw_end(w, &j, 1, 1);
  if (close(w->fd) != 0 && !w->err) w->err = -errno;
  w->fd = -1;
  if (!w->err && w->tmp[0] && rename(w->tmp, w->path) != 0) w->err = -errno;
  if (w->err && w->tmp[0]) unlink(w->tmp);
  w->tmp[0] = '\0';
  return w->err;
}

void sleepacc_writer_abort(sleepacc_writer *w) {
  jw j;
  if (!w || w->fd < 0) return;
  j = jw_of(w);
  if (!w->tmp[0]) jw_end(w, &j, 1, 0); /* the lines so far stay */
  close(w->fd);
  w->fd = -1;
  if (w->tmp[0]) unlink(w->tmp);
  w->tmp[0] = '\0';
}
