/*
 * sleepacc_int.h -- what several core files share and no binding may use:
 * _GNU_SOURCE, the timespec helpers, the /proc and /sys readers, the
 * thread's CPU cost and the environment rules config.c owns.  Included first
 * by every core source file (before any system header, for _GNU_SOURCE).
 */
#ifndef SLEEPACC_INT_H
#define SLEEPACC_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <sys/types.h>
#include <time.h>

#include "sleepacc.h"

/* timespec -> ns. */
static inline int64_t sleepacc__ts_ns(const struct timespec *ts) {
  return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* ns -> timespec (a negative ns is 0). */
static inline struct timespec sleepacc__ts(int64_t ns) {
  struct timespec ts;
  if (ns < 0) ns = 0;
  ts.tv_sec = (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

/* Read up to size-1 bytes of path into buf, NUL-terminated, trailing
 * whitespace removed: the length, or -1 when unreadable (host.c). */
ssize_t sleepacc__read_text(const char *path, char *buf, size_t size);
/* A decimal integer file: 0, or -1 (host.c). */
int sleepacc__read_int(const char *path, int64_t *out);

/* Thread CPU time (ns) and voluntary/involuntary context switches of the
 * calling thread; -1 where unknown (engine.c). */
void sleepacc__thread_cost(int64_t *cpu_ns, int64_t *vol, int64_t *invol);

/* The environment rules (config.c): 0, or -errno with the field
 * ("env.slack_ns", ...) and message.  sleepacc_env_check is this. */
int sleepacc__env_explain(const sleepacc_env *env, const char **field, const char **message);

/* Hand-off and dma latency of an open sleeper from its configuration
 * (sleeper.c; the pacer's open_config uses it too). */
int sleepacc__sleeper_configure(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                const char **field);

/* Set the fault *f (if not NULL; not on its way, depth 0) and return rc
 * (options.c; the readers of fields.c and calls.c fault the same way). */
int sleepacc__fault_set(sleepacc_fault *f, int rc, int kind, const char *option, int64_t index, int takes,
                        int show, const char *words);

/* The trace call row's function (trace.c): the options read by the core,
 * then sleepacc_trace_run; a failure names what it needs (out->context). */
int sleepacc__trace_call(const sleepacc_call_args *a, void *buf, sleepacc_answer *out);
/* The events of one ring-buffer page by header_page's and the events'
 * format texts (trace.c; tests): each {ts, type, a, b, c, idle}. */
int sleepacc__trace_parse(const char *header_page, const char *const formats[5], const unsigned char *page,
                          size_t size, int64_t (*ev)[6], size_t cap, int64_t *lost);

#endif /* SLEEPACC_INT_H */
