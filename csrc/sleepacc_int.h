/*
 * sleepacc_int.h -- what several core files share and no binding may use:
 * _GNU_SOURCE, the timespec helpers, the /proc and /sys readers, the
 * thread's CPU cost, the environment rules env.c owns and the fault helpers
 * of words.c.  Included first by every core source file (before any system
 * header, for _GNU_SOURCE); it includes sleepacc_binding.h (and so
 * sleepacc.h).
 */
#ifndef SLEEPACC_INT_H
#define SLEEPACC_INT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <sys/types.h>
#include <locale.h>
#include <time.h>

#include "sleepacc_binding.h"

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

/* sleepacc_run_start of a cfg its caller has just checked
 * (sleepacc_config_check: 0), so the run's rules are walked once
 * (engine.c; sleepacc_run_open checks, then begins). */
int sleepacc__run_begin(sleepacc_run *r, const sleepacc_config *cfg, int64_t *samples,
                        size_t capacity);

/* The environment rules (env.c): 0, or -EINVAL with the field
 * ("env.slack_ns", ...) and message.  sleepacc_env_check is this, and
 * sleepacc_config_explain applies it to a run's env. */
int sleepacc__env_explain(const sleepacc_env *env, const char **field, const char **message);

/* The settings of the calling thread a binding holds around its own code
 * (calls.c's env_hold) from g: slack, policy, priority and cpu, each by
 * its option's rule, the dependent default (fifo/rr: priority 1) and the
 * environment's rules, a fault naming the option (options.c).  0 or
 * -errno with *f; the other fields of *env leave the thread as it is. */
int sleepacc__env_read(sleepacc_env *env, const sleepacc_getter *g, sleepacc_fault *f);

/* Hand-off, RT opt-in, dma latency and slice of an open sleeper from its configuration
 * (sleeper.c; the pacer's open_config uses it too). */
int sleepacc__sleeper_configure(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                const char **field);

/* Set the fault *f (if not NULL; not on its way, depth 0) and return rc
 * (words.c; the readers of options.c, fields.c and calls.c fault this way). */
int sleepacc__fault_set(sleepacc_fault *f, int rc, int kind, const char *option, int64_t index, int takes,
                        int show, const char *words);

/* The len bytes of s (len < 0: strlen), at most max of them, as one line
 * of a message into out (cap bytes), escaped, in quotes when quote
 * (words.c). */
void sleepacc__escaped(const char *s, int64_t len, int64_t max, int quote, char *out, size_t cap);

/* 1 when err (either sign) is a want of a resource that may pass: EMFILE,
 * ENFILE, EAGAIN, ENOMEM, ENOBUFS, EINTR (methods.c). */
int sleepacc__transient(int err);
/* A probe's answer after a failure with errno err: -err when transient (not
 * cached), else 0 (not available) (methods.c). */
int sleepacc__probe_failed(int err);

/* The sentence of a refused SCHED_FIFO/RR whose cause is the thread's cpu
 * cgroup (cgroup_file: /proc/thread-self/cgroup; root: where the
 * hierarchies are mounted, /sys/fs/cgroup): its cpu.rt_runtime_us is 0.
 * 1 with the sentence (naming the group's directory) in buf; else 0
 * (env.c). */
int sleepacc__rt_group_words(const char *cgroup_file, const char *root, char *buf, size_t cap);

/* The calling thread's numbers in the C locale from enter to leave (cnum.c):
 * enter returns the locale to give leave, (locale_t)0 when it could not
 * switch (leave then does nothing). */
locale_t sleepacc__c_numbers_enter(void);
void sleepacc__c_numbers_leave(locale_t prev);

/* The trace call row's function (trace.c): the options read by the core,
 * then sleepacc_trace_run; a failure names what it needs (out->context). */
int sleepacc__trace_call(const sleepacc_call_args *a, void *buf, sleepacc_answer *out);
/* The events of one ring-buffer page by header_page's and the events'
 * format texts (trace.c; tests): each {ts, type, a, b, c, idle}. */
int sleepacc__trace_parse(const char *header_page, const char *const formats[5], const unsigned char *page,
                          size_t size, int64_t (*ev)[6], size_t cap, int64_t *lost);

#endif /* SLEEPACC_INT_H */
