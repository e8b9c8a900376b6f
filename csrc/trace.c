/*
 * trace.c -- a run's lateness measured in its parts, from the kernel's own
 * events (Linux tracefs), for every sample: where the time between the
 * requested deadline and the user's clock read after the call went.
 *
 * How: a private tracefs instance per run (instances/sleepacc-<pid>; one
 * left by a killed process, whose pid is gone, is removed first), trace
 * clock "mono" (CLOCK_MONOTONIC, the clock of the samples and of the
 * hrtimer fields), five events filtered in the kernel where they can be:
 *   timer:hrtimer_start        the measuring thread's (softexpires, expires)
 *   timer:hrtimer_expire_entry the sleep callbacks' (the interrupt's "now")
 *   sched:sched_wakeup         the thread woken
 *   sched:sched_switch         switches into and out of the thread
 *   power:cpu_idle             every CPU's idle entry and exit (optional)
 * The run is measured twice by the engine, back to back with the same
 * config: untraced first (the tracer's own cost is the difference), then
 * traced.  Afterwards each CPU's trace_pipe_raw is read and parsed by the
 * page header (events/header_page) and each event's format file (the field
 * offsets are never assumed), and each sample's chain is joined:
 *   deadline D -> soft expiry S -> hard expiry E -> interrupt N ->
 *   wake-up W -> switch-in R -> the user's clock read T (lateness T - D)
 * giving six terms that sum exactly to the lateness:
 *   rounding S-D, slack E-S, timer_irq N-E, other W-N, wake_to_run R-W,
 *   to_user T-R.
 * A sample whose chain lacks a link is flagged incomplete and has no terms.
 * Nothing global is changed: only the instance is written, and it is
 * removed on every path (a SIGKILL leaves it for the next run to remove).
 * tracefs not mounted is mounted where it belongs (/sys/kernel/tracing)
 * when the process may, and the answer says so (it is left mounted: another
 * run may be using it by then).
 *
 * Owns: sleepacc_trace_run, sleepacc_trace_term_names, the trace call's
 * answer (sleepacc_trace_fields) and its call function (sleepacc__trace_call).
 */
#include "sleepacc_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const sleepacc_trace_term_names[SLEEPACC_TRACE_TERMS] = {
    "rounding", "slack", "timer_irq", "wake_to_run", "to_user", "other"};
enum { T_ROUNDING, T_SLACK, T_IRQ, T_WAKE, T_USER, T_OTHER };

/* ------------------------------------------------------------ tracefs files */

/* Write text to path: 0 or -errno. */
static int put(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC), rc = 0;
  size_t len = strlen(text);
  if (fd < 0) return -errno;
  if (write(fd, text, len) != (ssize_t)len) rc = errno ? -errno : -EIO;
  close(fd);
  return rc;
}

/* The whole file at path into a malloc'd NUL-terminated buffer, or NULL. */
static char *slurp(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  size_t len = 0, cap = 8192;
  char *buf;
  if (fd < 0) return NULL;
  if ((buf = malloc(cap)) == NULL) return close(fd), NULL;
  for (;;) {
    ssize_t got;
    if (len + 1 >= cap) {
      char *more = realloc(buf, cap * 2);
      if (!more) break;
      buf = more, cap *= 2;
    }
    got = read(fd, buf + len, cap - len - 1);
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(fd);
  buf[len] = '\0';
  return buf;
}

/* Where tracefs is mounted (from /proc/self/mounts) into dir: 1, or 0. */
static int tracefs_find(char *dir, size_t cap) {
  FILE *f = fopen("/proc/self/mounts", "re");
  char dev[256], at[PATH_MAX], type[64];
  int found = 0;
  if (!f) return 0;
  while (!found && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, at, type) == 3)
    if (strcmp(type, "tracefs") == 0) found = snprintf(dir, cap, "%s", at) < (int)cap;
  fclose(f);
  return found;
}

/* ------------------------------------------------------------ formats */

/* One field of an event as its format file states it. */
typedef struct field {
  int offset, size, is_signed;
} field;

/* An event this trace reads: where, its id and the fields used. */
enum { EV_START, EV_EXPIRE, EV_WAKEUP, EV_SWITCH, EV_IDLE, EV_COUNT };
static const char *const ev_path[EV_COUNT] = {"timer/hrtimer_start", "timer/hrtimer_expire_entry",
                                              "sched/sched_wakeup", "sched/sched_switch",
                                              "power/cpu_idle"};
/* The fields used, per event (up to three): a, b, c of a stored event. */
static const char *const ev_fields[EV_COUNT][3] = {{"hrtimer", "softexpires", "expires"},
                                                   {"hrtimer", "now", NULL},
                                                   {"pid", NULL, NULL},
                                                   {"prev_pid", "next_pid", NULL},
                                                   {"state", NULL, NULL}};

typedef struct format {
  int id;         /* the event's id, -1 when not enabled */
  field f[3];     /* ev_fields' fields */
} format;

/* The field called name in a format file's text: 0, or -ENOENT. */
static int format_field(const char *text, const char *name, field *out) {
  size_t n = strlen(name);
  for (const char *p = strstr(text, "field:"); p; p = strstr(p + 6, "field:")) {
    const char *semi = strchr(p, ';'), *end = semi, *o, *s, *g;
    if (!semi) break;
    while (end > p && end[-1] == ']') { /* an array: the name before its brackets */
      while (end > p && end[-1] != '[') end--;
      if (end > p) end--;
    }
    if ((size_t)(end - p) < n || strncmp(end - n, name, n) != 0 ||
        (end - n > p && (end[-n - 1] != ' ' && end[-n - 1] != '*')))
      continue;
    o = strstr(semi, "offset:"), s = strstr(semi, "size:"), g = strstr(semi, "signed:");
    if (!o || !s) return -ENOENT;
    out->offset = atoi(o + 7), out->size = atoi(s + 5), out->is_signed = g ? atoi(g + 7) : 1;
    return out->size == 1 || out->size == 2 || out->size == 4 || out->size == 8 ? 0 : -ENOENT;
  }
  return -ENOENT;
}

/* An integer field of a record (little or big endian: the host's). */
static int64_t get_field(const unsigned char *rec, size_t len, const field *f) {
  if (f->offset < 0 || (size_t)f->offset + (size_t)f->size > len) return 0;
  switch (f->size) {
  case 1: return f->is_signed ? (int64_t)(int8_t)rec[f->offset] : (int64_t)rec[f->offset];
  case 2: { uint16_t v; memcpy(&v, rec + f->offset, 2); return f->is_signed ? (int64_t)(int16_t)v : (int64_t)v; }
  case 4: { uint32_t v; memcpy(&v, rec + f->offset, 4); return f->is_signed ? (int64_t)(int32_t)v : (int64_t)v; }
  default: { int64_t v; memcpy(&v, rec + f->offset, 8); return v; }
  }
}

/* The page header's layout (events/header_page). */
typedef struct page_layout {
  field ts, commit, data;
} page_layout;

/* ------------------------------------------------------------ the store */

/* One event kept for the join. */
typedef struct event {
  int64_t ts;    /* trace clock mono: CLOCK_MONOTONIC ns */
  int64_t a, b, c;
  int type;      /* EV_* */
  int idle;      /* EV_EXPIRE: its CPU at the interrupt: 1 idle, 0 busy, -1 unknown */
  int state;     /* EV_EXPIRE: the cpu_idle state it idled in, -1 none known */
} event;

/* What one CPU was doing, as its buffer is read in order. */
typedef struct cpu_now {
  int idle;  /* the last switch on it: 1 into the idle task, 0 into another, -1 none seen */
  int state; /* the last power:cpu_idle on it: >= 0 entered that state, -1 left idle, -2 none seen */
} cpu_now;

typedef struct store {
  event *at;
  size_t n, cap;
  int64_t unstored; /* events that did not fit (counted as lost) */
  int64_t lost;     /* the kernel's overrun and dropped events, and missed events a page stored */
  int64_t missed_pages;
  int64_t events;   /* events read */
} store;

#define RB_MISSED_EVENTS (1UL << 31)
#define RB_MISSED_STORED (1UL << 30)

/* The events of one page of CPU buffer data; *cpu: what that CPU was doing
 * so far (its buffer is read in order). */
static void parse_page(const unsigned char *page, size_t size, const page_layout *pl, const format *fm,
                       const field *type_f, store *st, cpu_now *cpu) {
  uint64_t ts = (uint64_t)get_field(page, size, &pl->ts);
  uint64_t commit = (uint64_t)get_field(page, size, &pl->commit);
  size_t len = (size_t)(commit & ~(RB_MISSED_EVENTS | RB_MISSED_STORED)), off = 0;
  const unsigned char *data = page + pl->data.offset;
  size_t room = size > (size_t)pl->data.offset ? size - (size_t)pl->data.offset : 0;
  if (commit & RB_MISSED_EVENTS) st->missed_pages++;
  if (len > room) len = room;
  if ((commit & RB_MISSED_STORED) && len + sizeof(long) <= room) {
    long missed;
    memcpy(&missed, data + len, sizeof missed);
    if (missed > 0) st->lost += missed;
  }
  while (off + 4 <= len) {
    uint32_t hdr, word = 0, delta;
    unsigned type_len;
    size_t plen, at;
    memcpy(&hdr, data + off, 4);
    /* the header's bit fields: type_len (5 bits) first, then the time delta (27) */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    type_len = hdr >> 27, delta = hdr & ((1u << 27) - 1);
#else
    type_len = hdr & 31u, delta = hdr >> 5;
#endif
    if (off + 8 <= len) memcpy(&word, data + off + 4, 4);
    if (type_len == 29) { /* padding (a discarded event): to the end when its delta is 0 */
      if (delta == 0) break;
      ts += delta;
      off += 4 + (size_t)word;
      continue;
    }
    if (type_len == 30) { /* time extend */
      ts += ((uint64_t)word << 27) + delta;
      off += 8;
      continue;
    }
    if (type_len == 31) { /* absolute time stamp */
      ts = (ts & ~((1ULL << 59) - 1)) | (((uint64_t)word << 27) | delta);
      off += 8;
      continue;
    }
    ts += delta;
    if (type_len == 0) { /* a long event: its length (itself included) in the next word */
      if (word < 4) break;
      plen = word - 4, at = off + 8, off = at + ((plen + 3) & ~(size_t)3);
    } else {
      plen = type_len * 4u, at = off + 4, off += 4 + plen;
    }
    if (at + plen > len) break;
    st->events++;
    {
      const unsigned char *rec = data + at;
      int id = (int)get_field(rec, plen, type_f), t;
      for (t = 0; t < EV_COUNT && fm[t].id != id; t++) {}
      if (t == EV_COUNT) continue;
      if (t == EV_IDLE) { /* state (u32)-1 is the exit from idle */
        int64_t s = get_field(rec, plen, &fm[t].f[0]);
        cpu->state = s == 4294967295LL || s < 0 ? -1 : (int)s;
        continue;
      }
      if (st->n >= st->cap) {
        st->unstored++;
        continue;
      }
      event *e = &st->at[st->n++];
      e->ts = (int64_t)ts, e->type = t;
      e->a = get_field(rec, plen, &fm[t].f[0]);
      e->b = fm[t].f[1].size ? get_field(rec, plen, &fm[t].f[1]) : 0;
      e->c = fm[t].f[2].size ? get_field(rec, plen, &fm[t].f[2]) : 0;
      if (t == EV_SWITCH) cpu->idle = e->b == 0; /* pid 0: the idle task */
      /* idle at the interrupt: by the switches, else by cpu_idle; its state by cpu_idle */
      e->idle = cpu->idle >= 0 ? cpu->idle : cpu->state >= -1 ? cpu->state >= 0 : -1;
      e->state = e->idle == 1 && cpu->state >= 0 ? cpu->state : -1;
    }
  }
}

static int by_ts(const void *x, const void *y) {
  const event *a = x, *b = y;
  return a->ts < b->ts ? -1 : a->ts > b->ts ? 1 : a->type - b->type;
}

/* ------------------------------------------------------------ the instance */

typedef struct tracer {
  char root[256];          /* the tracefs mount */
  char inst[512];          /* the instance */
  int made;                /* the instance exists */
  int mounted;             /* this run mounted tracefs */
  format fm[EV_COUNT];
  field type_f;            /* common_type */
  page_layout pl;
  size_t page;             /* bytes of a page (header + data) */
} tracer;

/* root/rel (or the instance's) into buf. */
static const char *path_of(char *buf, size_t cap, const char *dir, const char *rel) {
  snprintf(buf, cap, "%s/%s", dir, rel);
  return buf;
}

/* Remove instances left by processes that are gone (a SIGKILLed run). */
static void sweep_stale(const tracer *t) {
  char dir[512], p[1024];
  DIR *d = opendir(path_of(dir, sizeof dir, t->root, "instances"));
  struct dirent *e;
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    char *end;
    long pid;
    if (strncmp(e->d_name, "sleepacc-", 9) != 0) continue;
    pid = strtol(e->d_name + 9, &end, 10);
    if (*end || pid <= 0 || pid == (long)getpid()) continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    rmdir(p);
  }
  closedir(d);
}

/* The id and fields of event i from its format file's text; -ENOENT when
 * it lacks one. */
static int parse_format(tracer *t, int i, const char *text) {
  const char *id = strstr(text, "ID:");
  int rc = id ? 0 : -ENOENT;
  t->fm[i].id = id ? atoi(id + 3) : -1;
  for (int k = 0; rc == 0 && k < 3 && ev_fields[i][k]; k++) rc = format_field(text, ev_fields[i][k], &t->fm[i].f[k]);
  if (rc == 0 && t->type_f.size == 0) rc = format_field(text, "common_type", &t->type_f);
  if (rc < 0) t->fm[i].id = -1;
  return rc;
}

/* The id and fields of event i from its format file; -ENOENT when absent. */
static int read_format(tracer *t, int i) {
  char p[1024], *text;
  int rc;
  snprintf(p, sizeof p, "%s/events/%s/format", t->root, ev_path[i]);
  if ((text = slurp(p)) == NULL) return errno == EACCES ? -EACCES : -ENOENT;
  rc = parse_format(t, i, text);
  free(text);
  return rc;
}

/* The page header's layout from header_page's text. */
static int parse_header(tracer *t, const char *text) {
  int rc = format_field(text, "timestamp", &t->pl.ts);
  if (rc == 0) rc = format_field(text, "commit", &t->pl.commit);
  if (rc == 0) { /* "data" is an array: its size is the page's data area */
    const char *d = strstr(text, "char data;");
    const char *o = d ? strstr(d, "offset:") : NULL, *s = d ? strstr(d, "size:") : NULL;
    if (!o || !s) rc = -ENOENT;
    else t->pl.data.offset = atoi(o + 7), t->pl.data.size = atoi(s + 5);
  }
  t->page = rc == 0 ? (size_t)t->pl.data.offset + (size_t)t->pl.data.size : 0;
  return rc == 0 && t->page >= 64 && t->page <= (1u << 20) ? 0 : -ENOENT;
}

/* The page header's layout. */
static int read_header(tracer *t) {
  char p[1024], *text = slurp(path_of(p, sizeof p, t->root, "events/header_page"));
  int rc;
  if (!text) return -ENOENT;
  rc = parse_header(t, text);
  free(text);
  return rc;
}

/* Tests (tests/c/test_trace_parse.c): the events of one buffer page, read
 * by header_page's text and the five events' format texts (hrtimer_start,
 * hrtimer_expire_entry, sched_wakeup, sched_switch, cpu_idle; NULL: not
 * traced), into ev[0..cap) as {ts, type (0..3), a, b, c, idle}; the count,
 * *lost the missed events the page stored, or -ENOENT for a text it cannot
 * read. */
int sleepacc__trace_parse(const char *header_page, const char *const formats[5], const unsigned char *page,
                          size_t size, int64_t (*ev)[6], size_t cap, int64_t *lost) {
  tracer t;
  event *at = calloc(cap ? cap : 1, sizeof *at);
  store st = {at, 0, cap, 0, 0, 0, 0};
  cpu_now cpu = {-1, -2};
  int rc = at ? 0 : -ENOMEM;
  memset(&t, 0, sizeof t);
  if (rc == 0) rc = parse_header(&t, header_page);
  for (int i = 0; rc == 0 && i < EV_COUNT; i++) {
    t.fm[i].id = -1;
    if (formats[i]) rc = parse_format(&t, i, formats[i]);
  }
  if (rc == 0 && size >= t.page) {
    parse_page(page, t.page, &t.pl, t.fm, &t.type_f, &st, &cpu);
    for (size_t k = 0; k < st.n; k++) {
      const event *e = &st.at[k];
      ev[k][0] = e->ts, ev[k][1] = e->type, ev[k][2] = e->a, ev[k][3] = e->b, ev[k][4] = e->c;
      ev[k][5] = e->idle;
    }
    *lost = st.lost;
    rc = (int)st.n;
  } else if (rc == 0) {
    rc = -EINVAL;
  }
  free(at);
  return rc;
}

/* Write rel of the instance. */
static int iput(const tracer *t, const char *rel, const char *text) {
  char p[1024];
  return put(path_of(p, sizeof p, t->inst, rel), text);
}

/* The filter of event i for thread tid (an event that needs none: ""). */
static int set_filter(const tracer *t, int i, long tid) {
  /* the callbacks that wake a sleeper: a sleep's own (hrtimer_sleeper), timerfd's, a POSIX
   * timer's, io_uring's timeout and wait; a kernel without one of them refuses the whole
   * filter: then the next, shorter one */
  static const char *const expire[] = {
      "function.function == hrtimer_wakeup || function.function == timerfd_tmrproc || "
      "function.function == posix_timer_fn || function.function == io_timeout_fn || "
      "function.function == io_cqring_timer_wakeup",
      "function.function == hrtimer_wakeup || function.function == timerfd_tmrproc",
      "function.function == hrtimer_wakeup", NULL};
  char rel[128], text[200];
  snprintf(rel, sizeof rel, "events/%s/filter", ev_path[i]);
  switch (i) {
  case EV_START: snprintf(text, sizeof text, "common_pid == %ld", tid); break;
  case EV_WAKEUP: snprintf(text, sizeof text, "pid == %ld", tid); break;
  case EV_SWITCH: /* the thread's, and every CPU's into and out of idle (the idle flag) */
    snprintf(text, sizeof text, "prev_pid == %ld || next_pid == %ld || prev_pid == 0 || next_pid == 0", tid,
             tid);
    break;
  case EV_EXPIRE: /* to the sleep callbacks where the kernel can (else every expiry: joined by pointer) */
    for (int k = 0; expire[k]; k++)
      if (iput(t, rel, expire[k]) == 0) return 0;
    return 0;
  default: return 0;
  }
  return iput(t, rel, text);
}

/* One trace at a time per process: its instance is named by the pid.  The
 * one piece of process state here (set while an instance of ours exists). */
static int tracing_now;

/* Turn the instance's events off and remove it. */
static void tracer_close(tracer *t) {
  if (t->made) {
    iput(t, "tracing_on", "0");
    for (int i = 0; i < EV_COUNT; i++) {
      char rel[128];
      snprintf(rel, sizeof rel, "events/%s/enable", ev_path[i]);
      iput(t, rel, "0");
    }
    rmdir(t->inst);
    t->made = 0;
    __atomic_store_n(&tracing_now, 0, __ATOMIC_RELEASE);
  }
}

/* Find (or mount) tracefs, remove stale instances, make ours and set its
 * clock, buffers and filters (events off).  0, or -errno with why. */
static int tracer_open(tracer *t, size_t kb, char *why, size_t cap) {
  char p[1024];
  int rc;
  memset(t, 0, sizeof *t);
  for (int i = 0; i < EV_COUNT; i++) t->fm[i].id = -1;
  if (!tracefs_find(t->root, sizeof t->root)) {
    snprintf(t->root, sizeof t->root, "/sys/kernel/tracing");
    if (mount("nodev", t->root, "tracefs", 0, NULL) != 0) {
      rc = -errno;
      snprintf(why, cap, "trace: needs root or CAP_DAC_OVERRIDE and tracefs, which is not mounted and "
                         "this process may not mount (as root: mount -t tracefs nodev /sys/kernel/tracing)");
      return rc == -ENODEV ? -ENOSYS : rc == -EPERM ? -EACCES : rc;
    }
    t->mounted = 1;
  }
  if (faccessat(AT_FDCWD, path_of(p, sizeof p, t->root, "instances"), W_OK | X_OK, AT_EACCESS) != 0) {
    rc = -errno;
    snprintf(why, cap, rc == -EACCES || rc == -EPERM
                           ? "trace: needs root or CAP_DAC_OVERRIDE (%s is not writable)"
                           : "trace: %s is not usable",
             p);
    tracer_close(t);
    return rc;
  }
  sweep_stale(t);
  if ((rc = read_header(t)) < 0) {
    snprintf(why, cap, "trace: cannot read %s/events/header_page", t->root);
    tracer_close(t);
    return rc;
  }
  for (int i = 0; i < EV_COUNT; i++)
    if ((rc = read_format(t, i)) < 0 && i != EV_IDLE) {
      snprintf(why, cap, "trace: the kernel has no usable event %s", ev_path[i]);
      tracer_close(t);
      return rc == -EACCES ? rc : -ENOSYS;
    }
  snprintf(t->inst, sizeof t->inst, "%s/instances/sleepacc-%ld", t->root, (long)getpid());
  if (__atomic_exchange_n(&tracing_now, 1, __ATOMIC_ACQ_REL)) {
    snprintf(why, cap, "trace: another thread of this process is tracing (%s)", t->inst);
    return -EBUSY;
  }
  /* one left by a killed process that had this pid before: removed */
  if (mkdir(t->inst, 0700) != 0 && (errno != EEXIST || rmdir(t->inst) != 0 || mkdir(t->inst, 0700) != 0)) {
    rc = -errno;
    snprintf(why, cap, "trace: cannot make the instance %s", t->inst);
    __atomic_store_n(&tracing_now, 0, __ATOMIC_RELEASE);
    return rc;
  }
  t->made = 1;
  if ((rc = iput(t, "tracing_on", "0")) == 0 && (rc = iput(t, "trace_clock", "mono")) == 0) {
    /* the buffers: at most 128 MiB in all, halved while the kernel refuses (memory) */
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    if (cpus > 0 && kb > (size_t)(131072 / cpus)) kb = (size_t)(131072 / cpus);
    if (kb < 256) kb = 256;
    do {
      snprintf(p, sizeof p, "%zu", kb);
      rc = iput(t, "buffer_size_kb", p);
    } while (rc == -ENOMEM && (kb /= 2) >= 256);
  }
  if (rc == 0) {
    long tid = (long)syscall(SYS_gettid);
    for (int i = 0; rc == 0 && i < EV_COUNT; i++)
      if (t->fm[i].id >= 0) rc = set_filter(t, i, tid);
  }
  if (rc < 0) {
    snprintf(why, cap, "trace: cannot set up the instance %s", t->inst);
    tracer_close(t);
  }
  return rc;
}

/* Turn the events on (1) or off (0).  0 or -errno. */
static int tracer_enable(tracer *t, int on) {
  int rc = 0;
  for (int i = 0; i < EV_COUNT; i++) {
    char rel[128];
    if (t->fm[i].id < 0) continue;
    snprintf(rel, sizeof rel, "events/%s/enable", ev_path[i]);
    int r = iput(t, rel, on ? "1" : "0");
    if (r < 0 && on && i == EV_IDLE) t->fm[i].id = -1; /* no idle flag then */
    else if (r < 0 && on && rc == 0) rc = r;
  }
  if (rc == 0) rc = iput(t, "tracing_on", on ? "1" : "0");
  return rc;
}

/* Read every CPU's buffer of the instance into st (the events of interest),
 * and the kernel's counts of lost events. */
static void tracer_read(tracer *t, store *st) {
  char dir[640], p[1024];
  unsigned char *page = malloc(t->page);
  DIR *d = opendir(path_of(dir, sizeof dir, t->inst, "per_cpu"));
  struct dirent *e;
  if (!d || !page) {
    if (d) closedir(d);
    free(page);
    return;
  }
  while ((e = readdir(d)) != NULL) {
    int fd;
    cpu_now cpu = {-1, -2};
    char *stats;
    if (strncmp(e->d_name, "cpu", 3) != 0) continue;
    snprintf(p, sizeof p, "%s/%s/trace_pipe_raw", dir, e->d_name);
    if ((fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
      for (int k = 0; k < 1 << 20; k++) { /* bounded: the buffer's pages */
        ssize_t got = read(fd, page, t->page);
        if (got <= 0) break;
        if ((size_t)got < t->page) memset(page + got, 0, t->page - (size_t)got);
        parse_page(page, t->page, &t->pl, t->fm, &t->type_f, st, &cpu);
      }
      close(fd);
    }
    snprintf(p, sizeof p, "%s/%s/stats", dir, e->d_name);
    if ((stats = slurp(p)) != NULL) {
      const char *o = strstr(stats, "overrun:"), *x = strstr(stats, "dropped events:");
      if (o) st->lost += atoll(o + 8);
      if (x) st->lost += atoll(x + 15);
      free(stats);
    }
  }
  closedir(d);
  free(page);
}

/* ------------------------------------------------------------ the join */

/* The first event at or after ts (binary search). */
static size_t first_at(const store *st, int64_t ts) {
  size_t lo = 0, hi = st->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (st->at[mid].ts < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Sample i's chain in [lo, t1]: its terms, or 0 when a link is missing. */
static int join(const store *st, long tid, int64_t lo, int64_t t1, int64_t dl, int64_t terms[6], int *idle,
                int *state) {
  size_t a = first_at(st, lo), b = first_at(st, t1 + 1);
  const event *ex = NULL, *wk = NULL, *sw = NULL, *hs = NULL;
  /* the last arming whose timer expired by a sleep callback before t1 */
  for (size_t i = b; i-- > a && !hs;) {
    if (st->at[i].type != EV_START) continue;
    for (size_t j = i + 1; j < b; j++)
      if (st->at[j].type == EV_EXPIRE && st->at[j].a == st->at[i].a) {
        hs = &st->at[i], ex = &st->at[j];
        break;
      }
  }
  if (!hs) return 0;
  for (const event *e = ex + 1; e < st->at + b && !wk; e++)
    if (e->type == EV_WAKEUP && e->a == tid) wk = e;
  for (const event *e = wk ? wk + 1 : NULL; e && e < st->at + b && !sw; e++)
    if (e->type == EV_SWITCH && e->b == tid) sw = e;
  if (!sw) return 0;
  terms[T_ROUNDING] = hs->b - dl;
  terms[T_SLACK] = hs->c - hs->b;
  terms[T_IRQ] = ex->b - hs->c;
  terms[T_OTHER] = wk->ts - ex->b;
  terms[T_WAKE] = sw->ts - wk->ts;
  terms[T_USER] = t1 - sw->ts;
  *idle = ex->idle, *state = ex->state;
  return 1;
}

/* ------------------------------------------------------------ runs */

/* One run of cfg by the engine, cap samples at most, each sample's wake
 * time in wakes (NULL: none).  The samples in mem[0..*n).  A signal that
 * interrupts a sleep (its handler ran: Ctrl-C under an interpreter) ends the
 * run there, *interrupted set, the interrupted sample dropped: a trace is
 * not resumed.  0 or -errno with why (the engine's words). */
static int engine_run(const sleepacc_config *cfg, sleepacc_run *r, int64_t *mem, int64_t cap, int64_t *wakes,
                      int64_t *n, int *interrupted, char *why, size_t whycap) {
  sleepacc_result res;
  int rc, step = 0;
  if (sleepacc_run_open(r, cfg, mem, (size_t)cap * 2 * sizeof(int64_t), 0) == 0) {
    r->wakes = wakes;
    while ((step = sleepacc_run_step(r)) == 0) {}
    if (step == -EINTR) *interrupted = 1, step = 0;
  }
  rc = sleepacc_run_close(r, &res, NULL);
  *n = rc == 0 ? res.n : 0;
  if (rc < 0) {
    char words[SLEEPACC_RUN_WORDS_MAX];
    const char *p;
    sleepacc_run_words(r, 0, words, sizeof words);
    p = strstr(words, " (");
    snprintf(why, whycap, "trace, %.*s", p ? (int)(strlen(p + 2) - 1) : (int)strlen(words), p ? p + 2 : words);
  } else if (step < 0) { /* the method failed while measuring */
    snprintf(why, whycap, "trace, measuring %s", cfg->method->name);
    rc = step;
  }
  return rc;
}

/* ------------------------------------------------------------ the trace */

int sleepacc_trace_run(const sleepacc_config *config, sleepacc_trace *t, void *(*room)(void *, size_t),
                       void *ctx, char *why, size_t whycap) {
  sleepacc_config cfg;
  tracer tr;
  store st;
  sleepacc_run *run;
  int64_t cap, *block, *wakes, d, ntr = 0;
  size_t bytes, nev, kb;
  long tid = (long)syscall(SYS_gettid);
  char *at;
  int rc;
  if (!config || !t || !room || !why || !whycap) return -EFAULT;
  memset(t, 0, sizeof *t);
  why[0] = '\0';
  if ((rc = sleepacc_config_check(config, NULL)) < 0) return rc;
  cfg = *config;
  cfg.keep_samples = 1;
  cap = sleepacc_config_capacity(&cfg);
  if (cap > SLEEPACC_TRACE_MAX_SAMPLES) cap = SLEEPACC_TRACE_MAX_SAMPLES;
  if (cfg.n == 0 || cfg.n > cap) cfg.n = cap;
  d = cfg.duration_ns;
  /* the store: what the samples' own events need, and room for other tasks' expirations */
  nev = (size_t)cap * 12 + 200000;
  bytes = sizeof(sleepacc_run) + 16 + (size_t)cap * sizeof(int64_t) * (2 + 2 + 1 + 1) +
          (size_t)cap * (SLEEPACC_TRACE_TERMS * sizeof(double) + 3 * sizeof(int)) + nev * sizeof(event);
  if ((at = room(ctx, bytes)) == NULL) return -ENOMEM;
  run = (sleepacc_run *)(void *)(((uintptr_t)at + 15) & ~(uintptr_t)15);
  block = (int64_t *)(void *)(run + 1);               /* a run's samples and scratch: 2 cap */
  wakes = block + 2 * cap;                             /* cap */
  t->untraced = wakes + cap;                           /* cap */
  t->lateness = t->untraced + cap;                     /* cap */
  for (int k = 0; k < SLEEPACC_TRACE_TERMS; k++) t->terms[k] = (double *)(void *)(t->lateness + cap) + k * cap;
  t->complete = (int *)(void *)(t->terms[0] + SLEEPACC_TRACE_TERMS * cap);
  t->idle = t->complete + cap;
  t->idle_state = t->idle + cap;
  st = (store){(event *)(void *)(((uintptr_t)(t->idle_state + cap) + 15) & ~(uintptr_t)15), 0, nev, 0, 0, 0, 0};
  if ((char *)(st.at + nev) > at + bytes) st.cap = (size_t)((at + bytes - (char *)st.at) / (ptrdiff_t)sizeof(event));

  /* a buffer per CPU for the traced run: about 2 KiB per sample and 1 MiB per second */
  {
    int64_t secs = cfg.budget_ns > 0 ? cfg.budget_ns / 1000000000LL + 1 : 1 + cap * (d + 100000) / 1000000000LL;
    kb = (size_t)(1024 + secs * 1024 + cap * 2);
    if (kb > 65536) kb = 65536;
  }
  if ((rc = tracer_open(&tr, kb, why, whycap)) < 0) return rc;
  t->mounted = tr.mounted;
  snprintf(t->tracefs, sizeof t->tracefs, "%s", tr.root);

  /* untraced, then traced: the same engine, config and thread */
  if ((rc = engine_run(&cfg, run, block, cap, NULL, &t->untraced_n, &t->interrupted, why, whycap)) < 0 ||
      t->interrupted)
    goto out;
  for (int64_t i = 0; i < t->untraced_n; i++)
    t->untraced[i] = block[i] - (cfg.mode == SLEEPACC_MODE_RELATIVE ? d : 0);
  if ((rc = tracer_enable(&tr, 1)) < 0) {
    snprintf(why, whycap, "trace: cannot enable the events of %s", tr.inst);
    goto out;
  }
  rc = engine_run(&cfg, run, block, cap, wakes, &ntr, &t->interrupted, why, whycap);
  tracer_enable(&tr, 0);
  if (rc < 0) goto out;
  tracer_read(&tr, &st);
  qsort(st.at, st.n, sizeof *st.at, by_ts);

  t->n = ntr;
  for (int64_t i = 0; i < ntr; i++) {
    int64_t late = block[i] - (cfg.mode == SLEEPACC_MODE_RELATIVE ? d : 0), t1 = wakes[i], dl = t1 - late;
    int64_t lo = cfg.mode == SLEEPACC_MODE_RELATIVE ? t1 - block[i] : (i > 0 ? wakes[i - 1] : dl - d);
    int64_t terms[SLEEPACC_TRACE_TERMS] = {0};
    int idle = -1, state = -1;
    t->lateness[i] = late;
    t->complete[i] = join(&st, tid, lo, t1, dl, terms, &idle, &state);
    t->idle[i] = t->complete[i] ? idle : -1;
    t->idle_state[i] = t->complete[i] ? state : -1;
    for (int k = 0; k < SLEEPACC_TRACE_TERMS; k++) t->terms[k][i] = t->complete[i] ? (double)terms[k] : NAN;
    if (!t->complete[i]) t->gaps++;
  }
  t->lost = st.lost + st.unstored;
  t->missed_pages = st.missed_pages;
  t->events = st.events;
out:
  tracer_close(&tr);
  if (rc < 0) t->n = t->untraced_n = 0;
  return rc;
}

/* ------------------------------------------------------------ the call */

static const sleepacc_field an_i64[] = {{"", 0, SLEEPACC_FIELD_INT64, NULL, 0}, {NULL, 0, 0, NULL, 0}};
static const sleepacc_field a_dbl[] = {{"", 0, SLEEPACC_FIELD_DOUBLE, NULL, 0}, {NULL, 0, 0, NULL, 0}};
static const sleepacc_field a_bool[] = {{"", 0, SLEEPACC_FIELD_BOOL, NULL, 0}, {NULL, 0, 0, NULL, 0}};
static const sleepacc_field an_int[] = {{"", 0, SLEEPACC_FIELD_INT, NULL, 0}, {NULL, 0, 0, NULL, 0}};

#define A(m) offsetof(sleepacc_trace_answer, m)
static const sleepacc_field term_rows[] = {
    {"rounding", A(terms[0]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {"slack", A(terms[1]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {"timer_irq", A(terms[2]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {"wake_to_run", A(terms[3]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {"to_user", A(terms[4]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {"other", A(terms[5]), SLEEPACC_FIELD_LIST, a_dbl, 0},
    {NULL, 0, 0, NULL, 0}};
_Static_assert(SLEEPACC_TRACE_TERMS == 6, "term_rows names each term");

const sleepacc_field sleepacc_trace_fields[] = {
    {"schema", A(schema), SLEEPACC_FIELD_STRING, NULL, 0},
    {"method", A(method), SLEEPACC_FIELD_STRING, NULL, 0},
    {"mode", A(mode), SLEEPACC_FIELD_STRING, NULL, 0},
    {"requested_ns", A(requested_ns), SLEEPACC_FIELD_INT64, NULL, 0},
    {"slack_ns", A(slack_ns), SLEEPACC_FIELD_OPT_INT64, NULL, SLEEPACC_FIELD_OMIT_NULL},
    {"cpu", A(cpu), SLEEPACC_FIELD_OPT_INT64, NULL, SLEEPACC_FIELD_OMIT_NULL},
    {"n", A(n), SLEEPACC_FIELD_INT64, NULL, 0},
    {"lateness", A(lateness), SLEEPACC_FIELD_LIST, an_i64, 0},
    {"terms", 0, SLEEPACC_FIELD_NESTED, term_rows, 0},
    {"complete", A(complete), SLEEPACC_FIELD_LIST, a_bool, 0},
    {"idle", A(idle), SLEEPACC_FIELD_LIST, an_int, 0},
    {"idle_state", A(idle_state), SLEEPACC_FIELD_LIST, an_int, 0},
    {"untraced", A(untraced), SLEEPACC_FIELD_LIST, an_i64, 0},
    {"gaps", A(gaps), SLEEPACC_FIELD_INT64, NULL, 0},
    {"lost", A(lost), SLEEPACC_FIELD_INT64, NULL, 0},
    {"missed_pages", A(missed_pages), SLEEPACC_FIELD_INT64, NULL, 0},
    {"events", A(events), SLEEPACC_FIELD_INT64, NULL, 0},
    {"interrupted", A(interrupted), SLEEPACC_FIELD_BOOL, NULL, 0},
    {"mounted", A(mounted), SLEEPACC_FIELD_BOOL, NULL, 0},
    {"tracefs", A(tracefs), SLEEPACC_FIELD_TEXT, NULL, 0},
    {NULL, 0, 0, NULL, 0}};
#undef A

int sleepacc__trace_call(const sleepacc_call_args *a, void *buf, sleepacc_answer *out) {
  sleepacc_trace_answer *ans = (sleepacc_trace_answer *)buf;
  sleepacc_trace *t = &ans->trace;
  sleepacc_config cfg;
  size_t n;
  int rc;
  if (!a->options || !a->room) return -EFAULT;
  if ((rc = sleepacc_config_read(&cfg, a->options, 0, &out->fault)) < 0) return rc;
  if (cfg.n > SLEEPACC_TRACE_MAX_SAMPLES)
    return sleepacc__fault_set(&out->fault, -EINVAL, SLEEPACC_FAULT_RULE, "n", -1, SLEEPACC_OPT_INT64, 1,
                               "must be at most 20000 for a trace");
  if ((rc = sleepacc_trace_run(&cfg, t, a->room, a->ctx, ans->why, sizeof ans->why)) < 0) {
    out->context = ans->why[0] ? ans->why : "trace";
    return rc;
  }
  ans->schema = SLEEPACC_TRACE_SCHEMA;
  ans->method = cfg.method->name;
  ans->mode = sleepacc_mode_name(cfg.mode);
  ans->requested_ns = cfg.duration_ns;
  ans->slack_ns = cfg.env.slack_ns > 0 ? cfg.env.slack_ns : -1;
  ans->cpu = cfg.env.cpu;
  ans->n = t->n, ans->gaps = t->gaps, ans->lost = t->lost, ans->missed_pages = t->missed_pages;
  ans->events = t->events, ans->mounted = t->mounted, ans->interrupted = t->interrupted;
  memcpy(ans->tracefs, t->tracefs, sizeof ans->tracefs);
  n = (size_t)t->n;
  ans->lateness = (sleepacc_list){t->lateness, n, sizeof(int64_t)};
  for (int k = 0; k < SLEEPACC_TRACE_TERMS; k++) ans->terms[k] = (sleepacc_list){t->terms[k], n, sizeof(double)};
  ans->complete = (sleepacc_list){t->complete, n, sizeof(int)};
  ans->idle = (sleepacc_list){t->idle, n, sizeof(int)};
  ans->idle_state = (sleepacc_list){t->idle_state, n, sizeof(int)};
  ans->untraced = (sleepacc_list){t->untraced, (size_t)t->untraced_n, sizeof(int64_t)};
  return 0;
}
