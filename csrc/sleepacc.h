/*
 * sleepacc.h -- the C API of the sleepacc core: what a C program calls.
 *
 * sleepacc measures how well a machine sleeps (every sleep primitive of the
 * platform, a measurement engine, statistics, environment control and host
 * facts) and offers a sleep as exact as the machine allows.
 *
 * Conventions (stated once, true for every function below):
 *   - Times are int64_t nanoseconds.  Absolute times are CLOCK_MONOTONIC.
 *   - Functions return 0 (or a documented non-negative value) on success and
 *     a negative errno on failure (-EINVAL, -EPERM, -ENOSYS, -EINTR, ...).
 *     sleepacc_strerror()/sleepacc_errname() turn one into text; messages
 *     come from SLEEPACC_ERRNO_MAP, one table.
 *   - The core never allocates behind the caller's back: every object is a
 *     caller-owned struct (stack, userdata, PyObject) and buffers are passed
 *     in.  Nothing here keeps global mutable state apart from cached probes.
 *   - Public names start with sleepacc_, internal ones with sleepacc__.
 *   - This header never includes Python.h or lua.h.  What only the Python
 *     and Lua bindings use (field tables, option tables, call rows, the
 *     words of their errors) is sleepacc_binding.h, which includes this one;
 *     `make install` installs this header alone.
 */
#ifndef SLEEPACC_H
#define SLEEPACC_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SLEEPACC_VERSION "0.1.0"

/* -------------------------------------------------------------------------
 * Errors: one X-macro table of (errno name, message).
 * ---------------------------------------------------------------------- */
#define SLEEPACC_ERRNO_MAP(XX)                                               \
  XX(EINVAL, "invalid argument")                                             \
  XX(EPERM, "operation not permitted (needs CAP_SYS_NICE or root)")          \
  XX(EACCES, "permission denied")                                            \
  XX(ENOSYS, "not available on this system")                                 \
  XX(ENOTSUP, "not supported by this method")                                \
  XX(ENOENT, "no such file, directory or method")                            \
  XX(EINTR, "interrupted by a signal")                                       \
  XX(ENOMEM, "out of memory")                                                \
  XX(ENOSPC, "no space left (in the buffer, or on the device)")              \
  XX(ERANGE, "value out of range")                                           \
  XX(EOVERFLOW, "time arithmetic would overflow")                            \
  XX(EBUSY, "resource busy")                                                 \
  XX(EAGAIN, "resource temporarily unavailable")                             \
  XX(EMFILE, "too many open files")                                          \
  XX(EBADF, "bad file descriptor")                                           \
  XX(EFAULT, "bad address")                                                  \
  XX(ESRCH, "no such thread")                                               \
  XX(ECANCELED, "cancelled at the caller's checkpoint (Ctrl-C)")            \
  XX(EEXIST, "exists and is not empty (results are never overwritten)")    \
  XX(EISDIR, "is a directory")                                               \
  XX(ENAMETOOLONG, "file name too long")

/* Message for a negative (or positive) errno; never NULL. */
const char *sleepacc_strerror(int err);
/* Symbolic name ("EINVAL") for a negative (or positive) errno; never NULL
 * ("EUNKNOWN" when not in the table). */
const char *sleepacc_errname(int err);

/* Largest duration the core accepts anywhere: one day. */
#define SLEEPACC_MAX_DURATION_NS (86400LL * 1000000000LL)
/* Largest /dev/cpu_dma_latency request (us): the kernel's "no constraint"
 * value (PM_QOS_CPU_LATENCY_DEFAULT_VALUE). */
#define SLEEPACC_MAX_DMA_LATENCY_US 2000000000
/* The scheduler slice a sleeper may hold for its thread (sched_setattr's
 * runtime of a normal thread, Linux 6.12+): the kernel's own bounds. */
#define SLEEPACC_MIN_SLICE_NS 100000LL
#define SLEEPACC_MAX_SLICE_NS 100000000LL
/* Largest timer slack the core sets: one second.  Slack lengthens every
 * kernel sleep by up to its value, so a larger one could hold a run far past
 * its budget. */
#define SLEEPACC_MAX_SLACK_NS 1000000000LL
/* Default chunk length: a chunk of work returns within about this long. */
#define SLEEPACC_CHUNK_NS (50LL * 1000000LL)

/* -------------------------------------------------------------------------
 * Clocks.
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_clock_id {
  SLEEPACC_CLOCK_MONOTONIC = 0,
  SLEEPACC_CLOCK_MONOTONIC_RAW,
  SLEEPACC_CLOCK_REALTIME,
  SLEEPACC_CLOCK_BOOTTIME,
  SLEEPACC_CLOCK_COUNT
} sleepacc_clock_id;

typedef struct sleepacc_clock_info {
  const char *name;       /* "monotonic", "monotonic_raw", "realtime", "boottime" */
  int64_t resolution_ns;  /* clock_getres(); -1 when unknown */
  int64_t read_cost_ns;   /* median of back-to-back reads; -1 when unknown */
} sleepacc_clock_info;

/* CLOCK_MONOTONIC now, in ns.  Cannot fail. */
int64_t sleepacc_now_ns(void);
/* Read clock `id` into *out. */
int sleepacc_clock_read(int id, int64_t *out);
/* Fill *info for clock `id`, measuring the read cost over `reads` back-to-back
 * pairs (0 = a sensible default, about 1000). */
int sleepacc_clock_info_get(int id, int reads, sleepacc_clock_info *info);
/* Busy-wait hint for spin loops (PAUSE / YIELD instruction). */
void sleepacc_cpu_relax(void);

/* -------------------------------------------------------------------------
 * Method registry: one table, one row per method.
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_family {
  SLEEPACC_FAMILY_KERNEL = 0, /* the thread blocks in the kernel */
  SLEEPACC_FAMILY_SPIN,       /* burns CPU until the deadline */
  SLEEPACC_FAMILY_HYBRID,     /* kernel sleep, then spin */
  SLEEPACC_FAMILY_BASELINE    /* measures a floor (null syscall, no call) */
} sleepacc_family;

typedef enum sleepacc_tristate {
  SLEEPACC_NO = 0,
  SLEEPACC_YES = 1,
  SLEEPACC_UNKNOWN = 2
} sleepacc_tristate;

/* Per-use state of a method (an epoll fd, a timerfd, a POSIX timer, ...).
 * Caller-owned; opened by sleepacc_waiter_open, closed by _close. */
typedef struct sleepacc_waiter sleepacc_waiter;

typedef struct sleepacc_method {
  const char *name;          /* public name, e.g. "clock_nanosleep_abs" */
  sleepacc_family family;    /* kernel, spin, hybrid, baseline */
  int64_t granularity_ns;    /* unit of the requested duration (1000 for select) */
  sleepacc_tristate honours_slack; /* does timer slack delay its wake-up? */
  int absolute;              /* 1 if it waits on an absolute deadline */
  const char *description;   /* one line */
  /* run-time probe: 1 available, 0 not (cached by sleepacc_method_available),
   * a negative errno when a missing resource kept it from telling (not cached) */
  int (*available)(void);
  /* optional per-use setup/teardown (NULL when the method needs none) */
  int (*open)(sleepacc_waiter *w);
  void (*close)(sleepacc_waiter *w);
  /* Wait.  `duration_ns` is the relative request (>= 0) and `deadline_ns`
   * the same moment on CLOCK_MONOTONIC; relative methods use the first,
   * absolute ones the second.  Returns 0, or -EINTR when a signal
   * interrupted the wait (the caller decides whether to resume). */
  int (*wait)(sleepacc_waiter *w, int64_t duration_ns, int64_t deadline_ns);
} sleepacc_method;

struct sleepacc_waiter {
  const sleepacc_method *method; /* the row this waiter uses */
  int64_t margin_ns;   /* hybrid: kernel-sleep until deadline - margin, then spin */
  int64_t rt_bound_ns; /* longest stretch of a wait no signal can interrupt
                          (spins, cond_timedwait); 0 = none.  Past it, wait
                          returns -EAGAIN before the deadline: call again */
  int fd;              /* epoll / timerfd / kqueue descriptor, -1 when unused */
  int aux_fd;          /* second descriptor where a method needs one, else -1 */
  void *timer;         /* POSIX timer_t storage (timer_signal) */
  uint32_t futex_word; /* futex: the word waited on */
  int signo;           /* timer_signal / sigtimedwait: the signal used */
  unsigned char priv[128]; /* pthread mutex+cond storage, aligned below */
} __attribute__((aligned(16)));

/* Hybrid margin used when none is given: a waiter opened with margin_ns 0,
 * a run's default (sleepacc_config_default) and the sleeper's hybrid
 * strategy.  125 us: spin_sleep's margin, above this kind of host's usual
 * kernel lateness (55-80 us with the default slack). */
#define SLEEPACC_DEFAULT_MARGIN_NS (125LL * 1000LL)

/* 1 when m can open on this thread now: available, and for timer_signal
 * and sigtimedwait a real-time signal free for it (the default sweep
 * leaves out one that cannot).  0 otherwise, with a one-line reason into
 * why (cap bytes; may be NULL): "<name>: <why>". */
int sleepacc_method_ready(const sleepacc_method *m, char *why, size_t cap);
/* Why no real-time signal is free for timer_signal and sigtimedwait on the
 * calling thread (the blocked ones named, as ranges of numbers), into buf:
 * 1; 0 with buf "" when one is free. */
int sleepacc_signal_words(char *buf, size_t cap);
/* Number of rows compiled in (available or not). */
size_t sleepacc_method_count(void);
/* Row i (0 <= i < count), or NULL. */
const sleepacc_method *sleepacc_method_at(size_t i);
/* Row by name, or NULL when the name is unknown (name may be NULL). */
const sleepacc_method *sleepacc_method_find(const char *name);
/* 1 if the method works on the running system, 0 if not (probe, cached). */
int sleepacc_method_available(const sleepacc_method *m);
/* Family name: "kernel", "spin", "hybrid", "baseline". */
const char *sleepacc_family_name(sleepacc_family f);
/* "yes", "no", "unknown". */
const char *sleepacc_tristate_name(sleepacc_tristate t);

/* Open a waiter for method m (margin_ns used by hybrid, >= 0).
 * -ENOSYS when the method is unavailable.  On failure nothing is left open. */
int sleepacc_waiter_open(sleepacc_waiter *w, const sleepacc_method *m, int64_t margin_ns);
/* Wait until deadline_ns (CLOCK_MONOTONIC); duration_ns is the same request
 * relative to the caller's reading of now.  0 or -EINTR / -errno. */
int sleepacc_waiter_wait(sleepacc_waiter *w, int64_t duration_ns, int64_t deadline_ns);
/* Release what open acquired.  Safe to call twice. */
void sleepacc_waiter_close(sleepacc_waiter *w);
/* In a forked child: let go of the waiter inherited from the parent without
 * touching the parent's (its descriptors are closed in this process only,
 * and only while they still are what open made; POSIX timers and condvar
 * waiters were not inherited) and open a fresh one for the same method.
 * 0 or the error of sleepacc_waiter_open. */
int sleepacc_waiter_reopen(sleepacc_waiter *w);
/* A counter bumped in every child of fork() (pthread_atfork, registered by
 * the first call): a sleeper or pacer that sees it change reopens its
 * waiter, and a binding can tell that a "busy" mark was set before a fork. */
uint64_t sleepacc_fork_generation(void);

/* -------------------------------------------------------------------------
 * Statistics: a log-scale streaming histogram and summary statistics.
 * ---------------------------------------------------------------------- */

/* Histogram: signed values, log2 octaves split into 2^SLEEPACC_HIST_SUB
 * linear sub-buckets.  A percentile read from it is within
 * SLEEPACC_HIST_PRECISION (relative) of the exact order statistic.
 * |values| below 2^SLEEPACC_HIST_SUB are exact; beyond 2^SLEEPACC_HIST_OCTAVES
 * they are clamped into the top bucket (but min/max stay exact). */
#define SLEEPACC_HIST_SUB 7
#define SLEEPACC_HIST_OCTAVES 48
#define SLEEPACC_HIST_BUCKETS ((SLEEPACC_HIST_OCTAVES - SLEEPACC_HIST_SUB + 1) << SLEEPACC_HIST_SUB)
#define SLEEPACC_HIST_PRECISION 0.01

typedef struct sleepacc_hist {
  int64_t count;          /* values added */
  int64_t min, max;       /* exact extremes (valid when count > 0) */
  double mean;            /* running mean (Welford) */
  double m2;              /* running sum of squared deviations (Welford) */
  int64_t below;          /* values < threshold (undersleeps) */
  int64_t threshold;      /* undersleep threshold set at init */
  uint32_t neg[SLEEPACC_HIST_BUCKETS]; /* counts of negative values by |v| */
  uint32_t pos[SLEEPACC_HIST_BUCKETS]; /* counts of values >= 0 */
} sleepacc_hist;

/* Summary statistics, all in ns.  Quantiles are nearest-rank (stats.c). */
typedef struct sleepacc_stats {
  int64_t n;           /* samples summarised */
  int64_t min, max;
  double mean, std;    /* std: sample standard deviation (n-1), 0 when n < 2 */
  int64_t median, p90, p99, p999;
  int64_t undersleeps; /* samples < threshold (actual < requested, or lateness < 0) */
  int64_t p1, p10, p25, p75; /* lower quantiles (for the model) */
} sleepacc_stats;

/* An ordered map of int64 keys to int64 values, e.g. auto's learned margin
 * by duration band (sleepacc_sleeper_stats.margins). */
#define SLEEPACC_PAIRS_MAX 40
typedef struct sleepacc_pair {
  int64_t key, value;
} sleepacc_pair;
typedef struct sleepacc_pairs {
  int64_t n;                            /* pairs used, 0..SLEEPACC_PAIRS_MAX */
  sleepacc_pair at[SLEEPACC_PAIRS_MAX]; /* the pairs, in order */
} sleepacc_pairs;

void sleepacc_hist_init(sleepacc_hist *h, int64_t threshold);
void sleepacc_hist_add(sleepacc_hist *h, int64_t value);
/* Value at quantile q in [0,1] (nearest-rank), within the stated precision. */
int64_t sleepacc_hist_quantile(const sleepacc_hist *h, double q);
/* Summary from the histogram. */
void sleepacc_hist_stats(const sleepacc_hist *h, sleepacc_stats *out);

/* Summary of n samples; values < threshold count as undersleeps.
 * `scratch` must hold n int64_t (the samples are copied and selected in it;
 * it may equal `samples` when the caller allows reordering).
 * Percentiles are exact nearest-rank order statistics. -EINVAL on NULLs. */
int sleepacc_stats_compute(const int64_t *samples, size_t n, int64_t threshold,
                           int64_t *scratch, sleepacc_stats *out);

/* The quantile level of a statistic (stats.c): the share of samples at or
 * below the statistic `name` of sleepacc_stats by the nearest-rank rule:
 * "min" 0, "p1" 0.01, ..., "median" 0.5, ..., "p999" 0.999, "max" 1; -1 for
 * a field that is no order statistic (n, mean, std, undersleeps), an unknown
 * name or NULL.  So a binding or a plot reads the levels here, not from a
 * copy of them. */
double sleepacc_stats_level(const char *name);

/* -------------------------------------------------------------------------
 * Environment control: apply before a run, restore after, on every path.
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_policy {
  SLEEPACC_POLICY_KEEP = -1,
  SLEEPACC_POLICY_OTHER = 0,
  SLEEPACC_POLICY_BATCH,
  SLEEPACC_POLICY_IDLE,
  SLEEPACC_POLICY_FIFO,
  SLEEPACC_POLICY_RR
} sleepacc_policy;

typedef struct sleepacc_env {
  int64_t slack_ns;     /* timer slack to set (1..SLEEPACC_MAX_SLACK_NS), or -1 to leave it */
  int policy;           /* sleepacc_policy, or SLEEPACC_POLICY_KEEP */
  int priority;         /* 1..99 for FIFO/RR, 0 otherwise */
  int cpu;              /* pin to this CPU, or -1 to leave affinity */
  int lock_memory;      /* 1: mlockall(MCL_CURRENT|MCL_FUTURE) for the run */
  int dma_latency_us;   /* hold /dev/cpu_dma_latency at this, or -1 */
} sleepacc_env;

/* What apply changed, so restore can undo exactly that. */
typedef struct sleepacc_env_saved {
  int applied;          /* bit set of what was changed */
  int64_t slack_ns;     /* previous timer slack */
  int policy;           /* previous SCHED_* policy (OS value) */
  int priority;         /* previous sched_priority */
  int reset_on_fork;    /* previous SCHED_RESET_ON_FORK flag */
  unsigned char cpuset[128]; /* previous affinity mask (cpu_set_t) */
  int dma_fd;           /* open /dev/cpu_dma_latency, or -1 */
  /* the whole sched_attr of the thread before the run (sched_getattr), so
   * SCHED_DEADLINE parameters and SCHED_FLAG_RESET_ON_FORK survive */
  int nice;             /* previous nice value */
  uint64_t sched_flags; /* previous sched_attr.sched_flags */
  uint64_t dl_runtime_ns, dl_deadline_ns, dl_period_ns; /* previous DEADLINE params */
  /* on failure of apply: the sleepacc_env field at fault ("slack_ns",
   * "policy", "priority", "cpu", "lock_memory", "dma_latency_us") and why,
   * one static line; NULL when apply succeeded or no field is to blame */
  const char *bad_field;
  const char *why;
} sleepacc_env_saved;

/* An env that changes nothing. */
void sleepacc_env_default(sleepacc_env *env);
/* Validate without applying (-EINVAL for bad values, -EINVAL for a cpu
 * outside the allowed set). */
int sleepacc_env_check(const sleepacc_env *env);
/* The same check, and *bad_field (when not NULL) gets the name of the
 * first sleepacc_env field rejected ("slack_ns", "policy", "priority",
 * "cpu", "lock_memory", "dma_latency_us"), or NULL when env is valid. */
int sleepacc_env_check_field(const sleepacc_env *env, const char **bad_field);
/* Apply env to the calling thread.  Before changing anything, apply proves
 * that every change can be undone with the thread's own rights (CAP_SYS_NICE,
 * RLIMIT_RTPRIO, RLIMIT_NICE, the current policy: an unprivileged
 * SCHED_DEADLINE or higher-priority FIFO/RR thread could not get back);
 * otherwise it returns -EPERM with nothing changed and saved->bad_field /
 * saved->why set.  On any other failure everything already applied is
 * restored, the error (-EPERM stays -EPERM) returned and saved->bad_field
 * names the field whose step failed. */
int sleepacc_env_apply(const sleepacc_env *env, sleepacc_env_saved *saved);
/* Undo what apply did: the whole sched_attr (policy, priority, nice,
 * DEADLINE parameters, flags) and always the timer slack that was there
 * (the kernel resets slack when a thread leaves FIFO/RR).  Safe to call
 * twice. Returns the first error. */
int sleepacc_env_restore(sleepacc_env_saved *saved);
/* Policy by name ("other", "batch", "idle", "fifo", "rr"), -EINVAL if unknown;
 * and back (NULL if out of range). */
int sleepacc_policy_from_name(const char *name);
const char *sleepacc_policy_name(int policy);
/* The calling thread's current timer slack in ns (prctl), or -errno. */
int64_t sleepacc_current_slack(void);

/* -------------------------------------------------------------------------
 * Measurement engine.
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_mode {
  SLEEPACC_MODE_RELATIVE = 0, /* sample = t1 - t0 around sleep(d) */
  SLEEPACC_MODE_PERIODIC = 1  /* deadlines start + k*d; sample = wake - deadline */
} sleepacc_mode;

/* The configuration of one run.  sleepacc_config_default() fills every
 * field (a caller then sets method and duration_ns); sleepacc_config_check()
 * holds every rule and names the bad field.  Fields appended at the end keep
 * older initialisers valid. */
typedef struct sleepacc_config {
  const sleepacc_method *method; /* required */
  int mode;               /* sleepacc_mode */
  int64_t duration_ns;    /* requested duration / period, 0..SLEEPACC_MAX_DURATION_NS
                             (periodic needs > 0) */
  int64_t n;              /* stop after n samples (0 = only the budget stops) */
  int64_t budget_ns;      /* stop after this much wall time, counted from run_start,
                             warm-up included, once one sample is measured (a
                             budget shorter than that cuts the warm-up short;
                             0 = only n stops) */
  int64_t warmup;         /* samples discarded first (>= 0) */
  int64_t margin_ns;      /* hybrid margin (>= 0; 0 = SLEEPACC_DEFAULT_MARGIN_NS) */
  int64_t chunk_ns;       /* chunk length, 0 = SLEEPACC_CHUNK_NS */
  sleepacc_env env;       /* environment for the run */
  int keep_samples;       /* 1: the caller keeps every sample (a buffer of
                             sleepacc_config_capacity() values); 0: streaming */
} sleepacc_config;

/* Defaults of a run, the one place they are written:
 *   mode relative, n 0 (the budget stops), budget 1 s, warm-up 2 samples,
 *   hybrid margin SLEEPACC_DEFAULT_MARGIN_NS (125 us), chunk
 *   SLEEPACC_CHUNK_NS, keep_samples 1, an env that changes nothing;
 *   method NULL and duration 0 (the caller's). */
#define SLEEPACC_DEFAULT_BUDGET_NS 1000000000LL
#define SLEEPACC_DEFAULT_WARMUP 2
/* Largest sample buffer sleepacc_config_capacity() asks for (8 bytes each),
 * and the shortest time per sample it assumes when sizing from a budget. */
#define SLEEPACC_MAX_SAMPLES 4000000LL
#define SLEEPACC_SAMPLE_FLOOR_NS 1000LL
void sleepacc_config_default(sleepacc_config *cfg);

/* Check every rule of a run's configuration, the one place they live:
 * ranges (durations 0..one day, n, warm-up, margin, chunk), a periodic run
 * needs a duration > 0, n or a budget must stop the run, a single sample
 * longer than the budget is refused unless n is given, a kept buffer of n
 * samples without a budget is at most SLEEPACC_MAX_SAMPLES, deadline
 * arithmetic must fit int64, the environment (slack 1 ns..1 s, policy,
 * priority 1..99 with fifo/rr and 0 otherwise, a cpu in the thread's
 * allowed set, lock_memory 0/1, dma latency -1 or
 * 0..SLEEPACC_MAX_DMA_LATENCY_US), a spinning method under fifo/rr needs a
 * budget, and the method must exist and be available.
 * Returns 0, or a negative errno (-EINVAL; -ENOSYS for an unavailable
 * method) with *bad_field (if not NULL) set to the field's name:
 * "method", "mode", "duration_ns", "n", "budget_ns", "warmup", "margin_ns",
 * "chunk_ns", "keep_samples", "env.slack_ns", "env.policy", "env.priority",
 * "env.cpu", "env.lock_memory", "env.dma_latency_us"; and *message (if not
 * NULL) to the rule's text ("must be at most 86400 s (one day)"), from one
 * table. */
int sleepacc_config_check(const sleepacc_config *cfg, const char **bad_field);
int sleepacc_config_explain(const sleepacc_config *cfg, const char **bad_field,
                            const char **message);
/* The sample buffer a run of cfg needs (in samples): 0 when keep_samples is
 * 0; n when only n stops it; otherwise what the budget can fill
 * (ceil(budget / max(duration, SLEEPACC_SAMPLE_FLOOR_NS)) + 1), at most n
 * and at most SLEEPACC_MAX_SAMPLES.  Call on a checked cfg. */
int64_t sleepacc_config_capacity(const sleepacc_config *cfg);
/* A duration argument: 0, or -EINVAL with *message "must be non-negative"
 * or "must be at most 86400 s (one day)" (the rule config_check applies to
 * every duration field; bindings use it for the sleeper's arguments). */
int sleepacc_duration_check(int64_t ns, const char **message);

/* irtt sleep's duration ladder, the default of a sweep: 1, 10, 100 ns,
 * 1, 10, 100 us, 1, 10, 100, 200, 500 ms. */
#define SLEEPACC_DEFAULT_DURATION_COUNT 11
extern const int64_t sleepacc_default_durations_ns[SLEEPACC_DEFAULT_DURATION_COUNT];

/* Mode name "relative"/"periodic"; mode by name (-EINVAL if unknown). */
const char *sleepacc_mode_name(int mode);
int sleepacc_mode_from_name(const char *name);

/* The state of one run.  Caller-owned; large (it embeds a histogram).
 * Every field is private (engine.c): read a run through sleepacc_run_result. */
typedef struct sleepacc_run {
  /* private */
  sleepacc_config cfg;     /* validated copy of the configuration */
  sleepacc_waiter waiter;  /* the open method */
  sleepacc_env_saved saved;/* environment to restore */
  int64_t *samples;        /* caller buffer, or NULL for streaming mode */
  size_t capacity;         /* its length in samples */
  int64_t done;            /* samples recorded (after warm-up) */
  int64_t warm_done;       /* warm-up samples taken */
  int64_t missed;          /* periodic: deadlines passed over, never served (irtt: expected - sent) */
  int64_t start_ns;        /* when the run started (after warm-up) */
  int64_t budget_end_ns;   /* start + budget, or INT64_MAX */
  int64_t next_deadline_ns;/* periodic: the next deadline */
  int64_t k;               /* periodic: index of the next deadline */
  int64_t threshold;       /* undersleep threshold for this mode */
  int64_t cpu_ns;          /* thread CPU time consumed (set by finish) */
  int64_t ctx_voluntary;   /* voluntary context switches (set by finish) */
  int64_t ctx_involuntary; /* involuntary context switches (set by finish) */
  int64_t wall_ns;         /* wall time of the measured part (set by finish) */
  int64_t cpu0_ns, vol0, invol0; /* rusage at start */
  int state;               /* 0 new, 1 running, 2 finished, 3 closed */
  sleepacc_hist hist;      /* every recorded sample, also in buffer mode */
  /* (engine.c internals, appended) */
  int64_t origin_ns;       /* periodic: schedule origin (deadline k = origin + k*d) */
  int pending;             /* 1: a bounded spin stopped early; resume this sample */
  int64_t pending_t0_ns;   /* its start (relative mode) */
  int64_t pending_deadline_ns; /* its deadline */
  int64_t *starts;         /* caller buffer of sample start times, or NULL */
  int err;                 /* runs (measure.c): the first failure, 0 none */
  int err_at;              /* runs (measure.c): where it happened */
  int64_t *wakes;          /* trace.c: each sample's wake time (CLOCK_MONOTONIC), or NULL */
} sleepacc_run;

/* The environment a run applied, as the record shows it (sleepacc/1 env). */
typedef struct sleepacc_run_env {
  int64_t slack_ns;        /* timer slack set, or -1 (null: left as it was) */
  const char *policy;      /* policy name set, or NULL (left) */
  int64_t priority;        /* priority set with the policy, or -1 */
  int64_t cpu;             /* CPU pinned to, or -1 */
  int lock_memory;         /* mlockall asked */
  int64_t dma_latency_us;  /* /dev/cpu_dma_latency value held, or -1 */
  int64_t margin_ns;       /* hybrid methods: the margin used; else -1 (left out) */
} sleepacc_run_env;

/* The result record of one run (schema sleepacc/1, docs/schema.md): what a
 * binding returns, converted by its field table (sleepacc_result_fields,
 * sleepacc_binding.h). */
typedef struct sleepacc_result {
  const char *method;      /* method name */
  const char *mode;        /* "relative" or "periodic" */
  int64_t requested_ns;    /* requested duration / period */
  int64_t n;               /* samples recorded (after warm-up) */
  sleepacc_stats stats;    /* exact from the buffer, else from the histogram */
  int64_t missed;          /* periodic: deadlines passed over, never served (irtt: expected - sent) */
  double cpu_ns_per_call;  /* thread CPU time per sample (0 when n = 0) */
  double cpu_percent;      /* thread CPU time / wall time * 100, or -1 unknown */
  int64_t ctx_voluntary;   /* context switches, -1 unknown ("ctx_switches") */
  int64_t ctx_involuntary;
  int64_t wall_ns;         /* wall time of the measured part */
  sleepacc_run_env env;    /* the environment applied */
  int64_t cpu_ns;          /* thread CPU time of the measured part, -1 unknown
                              (not in the record: cpu_ns_per_call is) */
  sleepacc_stats stream_stats; /* the histogram's statistics of the same
                              samples (not in the record) */
} sleepacc_result;

/* Validate cfg (every bad argument is -EINVAL; a spin/hybrid run under
 * FIFO/RR without a budget is -EINVAL; an unavailable method -ENOSYS),
 * apply the environment and open the waiter.  samples may be NULL with
 * capacity 0 (streaming); otherwise samples stop at capacity too (NULL with
 * capacity > 0, or a buffer with capacity 0, is -EINVAL; so is deadline
 * arithmetic that would overflow int64).
 * On failure nothing is left changed. */
int sleepacc_run_start(sleepacc_run *r, const sleepacc_config *cfg,
                       int64_t *samples, size_t capacity);
/* Run one chunk (returns within about cfg.chunk_ns, plus one sleep).
 * Returns 1 when the run is complete, 0 when more chunks remain,
 * -EINTR when a signal interrupted a sleep (call again: the interrupted
 * sleep resumes toward the same deadline, so signals never lose, shorten or
 * livelock a sample), or another negative errno. */
int sleepacc_run_step(sleepacc_run *r);
/* Stop: close the waiter, restore the environment, fill cpu/ctx/wall.
 * Safe on every path and safe to call twice.  Returns the restore error. */
int sleepacc_run_finish(sleepacc_run *r);
/* Statistics of what was recorded: exact from the buffer when there is one
 * (scratch must hold sleepacc_run_count(r) values), else from the histogram. */
int sleepacc_run_stats(const sleepacc_run *r, int64_t *scratch, sleepacc_stats *out);
/* Samples recorded so far (after warm-up). */
int64_t sleepacc_run_count(const sleepacc_run *r);
/* Give a run started with a sample buffer a second buffer of the same
 * capacity for each sample's start time (ns since the run's measured part
 * began; the start of its sleep).  Call after sleepacc_run_start, before
 * the first step.  -EINVAL when the run has no sample buffer. */
int sleepacc_run_set_starts(sleepacc_run *r, int64_t *starts);
/* After a failed sleepacc_run_start: the sleepacc_env field the
 * environment step blamed ("policy", ...) and, when the core refused it up
 * front (nothing was changed), why; NULLs otherwise. */
void sleepacc_run_refusal(const sleepacc_run *r, const char **field, const char **why);
/* The record of a finished run (scratch as for sleepacc_run_stats). */
int sleepacc_run_result(const sleepacc_run *r, int64_t *scratch, sleepacc_result *out);
/* Convenience: start, step until done (resuming on EINTR), finish. */
int sleepacc_measure(const sleepacc_config *cfg, int64_t *samples, size_t capacity,
                     sleepacc_run *r);

/* -------------------------------------------------------------------------
 * Text tables rendered by the core, so every binding prints the same bytes.
 * ---------------------------------------------------------------------- */
typedef struct sleepacc_row {
  const char *method;      /* method name */
  int64_t requested_ns;    /* requested duration */
  int mode;                /* sleepacc_mode */
  sleepacc_stats stats;    /* relative: actual durations; periodic: lateness */
  double cpu_percent;      /* thread CPU time / wall time * 100, or < 0 unknown */
} sleepacc_row;
/* The row of a run's record (its mode by name back to sleepacc_mode). */
void sleepacc_row_from_result(const sleepacc_result *res, sleepacc_row *row);

/* Render into buf (NUL-terminated, cap bytes).  Returns the length written,
 * or -ENOSPC when cap is too small (then *needed, if not NULL, gets the size
 * required including the NUL).  irtt: the `irtt sleep` table (mean error =
 * mean - requested for relative rows, mean lateness for periodic rows); rows
 * of several methods give one such table per method, each under a line
 * "== <method>", separated by blank lines.
 * wide: method, requested, n, median, p99, max error, CPU %. */
int sleepacc_table_irtt(const sleepacc_row *rows, size_t n, char *buf, size_t cap, size_t *needed);
int sleepacc_table_wide(const sleepacc_row *rows, size_t n, char *buf, size_t cap, size_t *needed);
/* A duration the way Go's time.Duration.String() prints it ("1µs",
 * "309.477µs", "1.011542ms", "0s").  Returns length or -ENOSPC. */
int sleepacc_format_duration(int64_t ns, char *buf, size_t cap);

typedef int (*sleepacc_table_fn)(const sleepacc_row *rows, size_t n, char *buf, size_t cap,
                                 size_t *needed);
/* The renderer of a style: "irtt" sleepacc_table_irtt, "wide"
 * sleepacc_table_wide; NULL for another name (or NULL). */
sleepacc_table_fn sleepacc_table_style(const char *style);

/* -------------------------------------------------------------------------
 * Host facts: a key/value list, so bindings convert it generically.
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_fact_type {
  SLEEPACC_FACT_UNKNOWN = 0, /* could not be read */
  SLEEPACC_FACT_INT = 1,
  SLEEPACC_FACT_STR = 2,
  SLEEPACC_FACT_REAL = 3     /* a number that is not whole, e.g. the load average */
} sleepacc_fact_type;

typedef struct sleepacc_fact {
  const char *key;      /* e.g. "clocksource", "hz", "timer_slack_ns" */
  int type;             /* sleepacc_fact_type */
  int64_t i;            /* value when INT */
  double d;             /* value when REAL */
  char s[4096];         /* value when STR (NUL-terminated; room for a whole
                           /proc/cmdline: COMMAND_LINE_SIZE is at most 4096) */
} sleepacc_fact;

#define SLEEPACC_MAX_FACTS 48
/* Fill up to cap facts; *count gets how many.  A missing file makes a fact
 * UNKNOWN, never an error.  Reads only /proc, /sys and uname(). */
int sleepacc_host_facts(sleepacc_fact *facts, size_t cap, size_t *count);

/* -------------------------------------------------------------------------
 * Precise sleep: a sleeper that learns this host, and a pacer.
 * (Struct internals belong to csrc/sleeper.c; bindings use only the
 * functions and the *_stats structs.)
 * ---------------------------------------------------------------------- */
typedef enum sleepacc_strategy {
  SLEEPACC_STRATEGY_AUTO = 0, /* hybrid whose margin is learned online */
  SLEEPACC_STRATEGY_SPIN,     /* poll the clock until the deadline */
  SLEEPACC_STRATEGY_HYBRID,   /* kernel sleep to deadline - fixed margin, spin */
  SLEEPACC_STRATEGY_COMP,     /* irtt-style ratio compensation */
  SLEEPACC_STRATEGY_KERNEL    /* a plain registered kernel method */
} sleepacc_strategy;

#define SLEEPACC_SLEEPER_BANDS 40 /* log2 duration bands: [2^b, 2^(b+1)) ns */
/* auto: buckets of the per-band decayed lateness histogram: [0, 128) ns,
 * then 8 linear sub-buckets per octave from 2^7 to 2^27 ns (the top one
 * also takes everything larger). */
#define SLEEPACC_SLEEPER_LBUCKETS 161

/* Every field is private (sleeper.c); read one through
 * sleepacc_sleeper_stats_get. */
typedef struct sleepacc_sleeper {
  /* private */
  int strategy;               /* sleepacc_strategy */
  int magic;                  /* set by open, cleared by close */
  const sleepacc_method *kernel; /* the kernel wait used */
  const sleepacc_method *kernel_skipped; /* a preferred wait that could not open, or NULL */
  int kernel_skipped_err;     /* why (a negative errno: EMFILE, ...) */
  sleepacc_waiter waiter;     /* open waiter for `kernel` */
  double quantile;            /* auto: margin quantile, in (0,1) */
  int64_t fixed_margin_ns;    /* hybrid: the margin; auto: initial margin */
  int margin_default;         /* auto: no margin given, the initial one grows with the request */
  int64_t clock_cost_ns;      /* one clock read, measured at open */
  double comp_ratio;          /* comp: EWMA of actual/requested */
  int64_t band_margin_ns[SLEEPACC_SLEEPER_BANDS]; /* auto: margin last used/learned */
  double band_q[SLEEPACC_SLEEPER_BANDS];          /* auto: lateness quantile estimate */
  int64_t band_count[SLEEPACC_SLEEPER_BANDS];     /* auto: sleeps seen */
  int64_t band_samples[SLEEPACC_SLEEPER_BANDS];   /* auto: kernel lateness samples */
  int64_t band_boost_ns[SLEEPACC_SLEEPER_BANDS];  /* auto: extra margin after misses */
  int64_t band_saturated[SLEEPACC_SLEEPER_BANDS]; /* auto: sleeps whose margin was the whole sleep */
  float band_inc[SLEEPACC_SLEEPER_BANDS];         /* auto: current weight of one sample */
  float band_total[SLEEPACC_SLEEPER_BANDS];       /* auto: decayed weight of the band */
  float band_w[SLEEPACC_SLEEPER_BANDS][SLEEPACC_SLEEPER_LBUCKETS]; /* auto: decayed histogram */
  int64_t count;              /* sleeps completed */
  int64_t misses;             /* kernel wake-ups after the deadline (auto/hybrid/comp) */
  int64_t spin_ns;            /* total time spent spinning */
  int64_t kernel_waits;       /* kernel waits that ran to their target */
  int64_t rt_fallbacks;       /* spins cut short under SCHED_FIFO/RR */
  double contention;          /* auto: EWMA of "this spin was preempted" */
  int contended;              /* auto: 1 while contended (margin capped) */
  int64_t contended_since;    /* auto: count when it last became contended */
  int64_t spins;              /* sleeps that spun */
  int64_t preempted_spins;    /* spins with a gap (the thread lost the CPU) */
  /* the sleep in progress (so a chunked or interrupted sleep resumes) */
  int cur_active;             /* 1 while a deadline is being slept toward */
  int cur_band;               /* its duration band */
  int cur_rt;                 /* -1 unknown, 0 no, 1 the thread is FIFO/RR */
  int cur_preempted;          /* its spin lost the CPU: 1, for a slice or more: 2; else 0 */
  int64_t cur_deadline_ns;    /* its deadline */
  int64_t cur_start_ns;       /* when it started */
  int64_t cur_margin_ns;      /* margin used (auto/hybrid), in [0, duration] */
  int64_t cur_spin_ns;        /* time spun so far for it */
  int cur_handed;             /* its last handoff_ns were handed to the caller */
  int64_t cur_handed_ns;      /* when they were */
  int64_t cur_handoff_ns;     /* hand-off of this sleep (capped under FIFO/RR) */
  int64_t handoff_ns;         /* hand the last this-many ns of a spin to the caller (0: off) */
  int64_t last_wake_ns;       /* when the last completed sleep returned */
  sleepacc_hist lateness;     /* wake - deadline of completed sleeps */
  int dma_latency_us;         /* value held on /dev/cpu_dma_latency, -1 none */
  sleepacc_env_saved held;    /* the environment held for the sleeper's life */
  uint64_t fork_gen;          /* sleepacc_fork_generation() when the waiter was opened */
  /* auto under CPU contention (sleeper.c, "Contention") */
  int decision;               /* how the last sleep was made (sleepacc_sleeper_decision_name) */
  int reason;                 /* why contended, or why not (sleepacc_sleeper_reason_name) */
  int64_t cur_nivcsw;         /* the thread's involuntary switches at the window start, -1 unknown */
  int64_t win_start_ns;       /* the signal window: when it began */
  int64_t win_sleeps;         /*   sleeps in it */
  int64_t win_preempted;      /*   of which lost the CPU */
  int64_t win_cost_ns;        /*   what closing one takes (its recent low), -1 unknown */
  int64_t win_klate_ns;       /*   how late its kernel waits woke, in all (this thread waiting) */
  int win_excess;             /* windows in a row that ended with more runnable tasks than CPUs */
  int win_wake;               /*   with a long run-queue wait per time on a CPU */
  int signal_fd[3];           /* auto: the signal files, kept open (-1: not open) */
  int signal_tid;             /*   the thread whose schedstat signal_fd[1] reads */
  int64_t psi_some_us;        /* /proc/pressure/cpu "some" total at the window start, -1 none */
  int64_t run_delay_ns;       /* this thread's run-queue wait at the window start, -1 none */
  int64_t run_count;          /*   and times it was put on a CPU, -1 none */
  double cpu_pressure;        /* the last window's share of time another task waited for a CPU, -1 unknown */
  int64_t wake_delay_ns;      /* the last window's run-queue wait per time on a CPU, -1 unknown */
  int64_t calm_since_ns;      /* contended: since when every signal is quiet (0: not) */
  int64_t contended_episodes; /* times the contended state was entered */
  int64_t left_ns;            /* when the contended state was last left (0 never) */
  int calm_shift;             /* the calm before leaving is CALM_NS << this (0..3) */
  double short_preempted;     /* contended: EWMA of "the spin ended later than its kernel wait" */
  int64_t cur_klate_ns;       /* how late the sleep in progress's kernel wait woke, -1 none */
  int64_t kernel_only_until_ns; /* contended: no spin until then */
  int64_t slice_ns;           /* the scheduler's slice for this thread (0 unknown) */
  int rt_priority;            /* opt-in: spin the end under SCHED_FIFO at this priority (0: off) */
  int rt_held;                /* 1 while the thread runs under that policy, set by us */
  int rt_denied;              /* the policy could not be set (no privilege) */
  int64_t rt_spins;           /* sleeps whose end ran under that policy */
  int cur_rt_raised;          /* the sleep in progress raised it already */
  int64_t cur_rt_from_ns;     /* when its spin under that policy began */
  unsigned char rt_saved[64]; /* the thread's scheduling attributes before */
  int64_t slice_held_ns;      /* opt-in: the slice set for slice_tid until close (0: none) */
  int slice_tid;              /*   the thread (the one that opened the sleeper) */
  int slice_denied;           /*   it could not be set (see sleeper.c) */
} sleepacc_sleeper;

/* What a binding may know of a sleeper (sleepacc_sleeper_stats_fields). */
typedef struct sleepacc_sleeper_stats {
  int64_t count;              /* sleeps completed */
  int64_t misses;             /* kernel woke after the deadline */
  int64_t spin_ns;            /* total time spent spinning */
  sleepacc_stats lateness;    /* lateness statistics (ns) */
  const char *strategy;       /* "auto", "spin", "hybrid", "comp", "kernel" */
  const char *kernel;         /* the kernel wait's method name */
  const char *kernel_skipped; /* a preferred kernel wait that could not open for want of a
                               * resource (timerfd at EMFILE), so `kernel` is the next; or NULL */
  const char *kernel_skipped_err; /* its error's name ("EMFILE"), or NULL */
  double quantile;            /* auto: margin quantile */
  int64_t margin_ns;          /* hybrid: the margin; auto: the initial one */
  int64_t handoff_ns;         /* hand-off (0: off) */
  int64_t clock_cost_ns;      /* one clock read, measured at open */
  double comp_ratio;          /* comp: EWMA of actual/requested */
  int64_t kernel_waits;       /* kernel waits that ran to their target */
  int64_t rt_fallbacks;       /* spins cut short under SCHED_FIFO/RR */
  int64_t preempted_spins;    /* spins that lost the CPU */
  int contended;              /* auto: the margin is capped (CPU contended) */
  int64_t last_wake_ns;       /* when the last completed sleep returned (0 none) */
  int64_t dma_latency_us;     /* /dev/cpu_dma_latency value held, -1 none */
  sleepacc_pairs margins;     /* auto: {band lower bound ns: margin ns} (sleepacc_sleeper_margins) */
  const char *decision;       /* how the last sleep was made: "learned", "startup", "probe",
                                 "short spin", "kernel only", "fixed", "spin", "kernel", "comp" */
  const char *reason;         /* why: "idle", "spins lost the CPU", "CPU pressure",
                                 "wake-ups waited for a CPU", "more runnable tasks than CPUs",
                                 "short spins lost to the kernel wait" */
  double contention;          /* auto: EWMA of "this sleep's thread lost the CPU" */
  double cpu_pressure;        /* auto: share of the last window some other task waited for a CPU, -1 unknown */
  int64_t wake_delay_ns;      /* auto: the last window's run-queue wait per time the thread got a CPU, -1 unknown */
  int64_t contended_episodes; /* auto: times the contended state was entered */
  int64_t slice_ns;           /* the scheduler's slice of the thread (0 unknown) */
  int64_t rt_priority;        /* the opt-in SCHED_FIFO priority of the spin (0: off) */
  int64_t rt_spins;           /* sleeps whose end ran under it */
  int rt_denied;              /* the policy could not be set (no privilege) */
  int64_t slice_held_ns;      /* opt-in: the slice held for the opening thread (0: none) */
  int slice_denied;           /* it could not be held (not a normal thread, or a kernel
                                 before 6.12, which has no per-thread slice) */
} sleepacc_sleeper_stats;
/* Strategy name ("auto", ...), or NULL out of range. */
const char *sleepacc_strategy_name(int strategy);

/* A sleeper's (or pacer's) configuration, the one place its defaults and
 * rules live (config.c), like sleepacc_config for a run. */
typedef struct sleepacc_sleeper_config {
  const char *method;      /* strategy or kernel method name ("auto") */
  double quantile;         /* auto: the margin's lateness quantile, in (0,1) (0.99) */
  int64_t margin_ns;       /* hybrid's margin, auto's initial one; -1 the default */
  int64_t handoff_ns;      /* hand-off, 0..SLEEPACC_MAX_HANDOFF_NS (0: off) */
  int64_t dma_latency_us;  /* hold /dev/cpu_dma_latency at this for the life, or -1 */
  int64_t period_ns;       /* pacer: the period, (0, one day] */
  const char *missed;      /* pacer: "skip", "burst" or "delay" ("skip") */
  int64_t rt_priority;     /* opt-in: spin the end under SCHED_FIFO at this, 1..99 (0: off) */
  int64_t slice_ns;        /* opt-in: hold the opening thread's scheduler slice at this,
                            * SLEEPACC_MIN_SLICE_NS..SLEEPACC_MAX_SLICE_NS, until close (0: off) */
} sleepacc_sleeper_config;
void sleepacc_sleeper_config_default(sleepacc_sleeper_config *c);
/* Every rule of c (pacer != 0: also the period and missed policy): 0, or a
 * negative errno with *field ("method", "quantile", "margin_ns",
 * "handoff_ns", "dma_latency_us", "period_ns", "missed", "rt_priority",
 * "slice_ns") and *message. */
int sleepacc_sleeper_config_explain(const sleepacc_sleeper_config *c, int pacer,
                                    const char **field, const char **message);
/* Check c, open, set the hand-off, hold the dma latency; on failure nothing
 * is left open and *field (if not NULL) names the field to blame. */
int sleepacc_sleeper_open_config(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                 const char **field);
typedef struct sleepacc_pacer sleepacc_pacer;
int sleepacc_pacer_open_config(sleepacc_pacer *p, const sleepacc_sleeper_config *c,
                               const char **field);

/* Strategy by name: "auto", "spin", "hybrid", "comp", or any registered
 * kernel-family method name (then SLEEPACC_STRATEGY_KERNEL, *kernel set). */
int sleepacc_strategy_from_name(const char *name, const sleepacc_method **kernel);
/* Open a sleeper.  method as above; quantile in (0,1) (auto); margin_ns >= 0
 * (hybrid's margin; for auto an initial margin, -1 = default: 125 us for
 * hybrid, 300 us for auto).  Strategies other than kernel wait with the
 * first available of timerfd, clock_nanosleep_abs, clock_nanosleep.
 * -ENOENT unknown name, -ENOTSUP a non-kernel registry row, -ENOSYS
 * unavailable, -EINVAL bad quantile/margin.  The thread is never changed. */
int sleepacc_sleeper_open(sleepacc_sleeper *s, const char *method, double quantile,
                          int64_t margin_ns);
/* Sleep toward deadline_ns (CLOCK_MONOTONIC; any, however far: the guard
 * of a script's deadline is sleepacc_deadline_check) for at most chunk_ns
 * (0 = SLEEPACC_CHUNK_NS; more than SLEEPACC_MAX_DURATION_NS is a day).
 * Returns 1 when the deadline is reached (never before it), 0 when the
 * chunk ended first (call again with the same deadline), -EINTR when a
 * signal interrupted it (call again), or -errno. */
int sleepacc_sleeper_until(sleepacc_sleeper *s, int64_t deadline_ns, int64_t chunk_ns);
/* The hand-off.  With sleepacc_sleeper_set_handoff(s, h), h in
 * [0, SLEEPACC_MAX_HANDOFF_NS] (0, the default, turns it off), a sleep whose
 * strategy spins returns SLEEPACC_NEAR from sleepacc_sleeper_until once its
 * kernel wait is over and at most h ns are left (at least 1/1000 of a
 * sleep longer than 1000 h, up to the maximum: the way back after a long
 * wait is colder); the caller then calls
 * sleepacc_sleeper_poll(s, deadline_ns), which reads the clock once and
 * returns 1 when the deadline is reached (recorded like any other sleep), 0
 * if not yet.  It lets an interpreter spin those last h ns in its own loop,
 * so its code is warm in the cache when the sleep returns (see sleeper.c).
 * Pure kernel strategies never hand off; under SCHED_FIFO/RR a hand-off is
 * at most 50 us (an RT thread must not spin unbounded: sleeper.c).  poll
 * with another deadline than
 * the sleep in progress starts a new sleep, like sleepacc_sleeper_until
 * with a 1 ns chunk.  -EINVAL for a bad s or h. */
#define SLEEPACC_NEAR 2
#define SLEEPACC_MAX_HANDOFF_NS (1000LL * 1000LL)
int sleepacc_sleeper_set_handoff(sleepacc_sleeper *s, int64_t handoff_ns);
/* Hold /dev/cpu_dma_latency at us (0..SLEEPACC_MAX_DMA_LATENCY_US) for the
 * sleeper's life: the request is released by sleepacc_sleeper_close (or by
 * another call; -1 releases now).  Process-wide, like any PM QoS request.
 * -EINVAL for a bad s or us, -EACCES/-EPERM/-ENOENT when the file cannot be
 * written (then nothing is held). */
int sleepacc_sleeper_hold_dma_latency(sleepacc_sleeper *s, int us);
int sleepacc_sleeper_poll(sleepacc_sleeper *s, int64_t deadline_ns);
void sleepacc_sleeper_close(sleepacc_sleeper *s);
/* Open s like the open sleeper `like` (its strategy or kernel method,
 * quantile and margin; no hand-off, no dma latency, nothing learned): the
 * own sleeper of a call re-entered from a signal handler while `like` is
 * mid-sleep on the same thread.  The errors of sleepacc_sleeper_open;
 * -EINVAL when like is not open. */
int sleepacc_sleeper_open_like(sleepacc_sleeper *s, const sleepacc_sleeper *like);
void sleepacc_sleeper_stats_get(const sleepacc_sleeper *s, sleepacc_sleeper_stats *out);
/* Learned margins: for each band with data, its lower bound and margin.
 * Returns the number written (at most cap). */
int sleepacc_sleeper_margins(const sleepacc_sleeper *s, int64_t *band_lo_ns,
                             int64_t *margin_ns, size_t cap);

typedef enum sleepacc_missed {
  SLEEPACC_MISSED_SKIP = 0,  /* jump to the next future tick */
  SLEEPACC_MISSED_BURST,     /* run every missed tick now */
  SLEEPACC_MISSED_DELAY      /* restart the schedule from now */
} sleepacc_missed;

/* Every field is private (pacer.c); read one through
 * sleepacc_pacer_stats_get. */
struct sleepacc_pacer { /* typedef above, at sleepacc_pacer_open_config */
  /* private */
  sleepacc_sleeper sleeper;  /* does the waiting */
  int64_t period_ns;         /* tick period */
  int64_t start_ns;          /* schedule origin (open, or the last delay restart) */
  int64_t k;                 /* index of the next tick from start_ns (first is 1) */
  int missed_policy;         /* sleepacc_missed */
  int pending;               /* 1 while a tick's deadline is being waited for */
  int64_t pending_deadline_ns; /* that deadline */
  int64_t count;             /* ticks delivered */
  int64_t misses;            /* ticks whose deadline passed before wait() was called */
  int64_t timer_misses;      /* ticks never delivered (irtt: expected - sent) */
  int64_t last_deadline_ns;  /* deadline of the last tick delivered */
  int64_t err_n;             /* irtt timer error over |actual - requested| of */
  double err_mean, err_m2;   /*   each sleep (Welford, as irtt's DurationStats) */
  int64_t err_min, err_max;
  sleepacc_hist lateness;    /* wake - deadline per tick */
  int redeliver;             /* 1: the next wait returns redeliver_deadline_ns at once */
  int64_t redeliver_deadline_ns; /* a delivered tick the caller could not take */
};

typedef struct sleepacc_pacer_stats {
  int64_t count;             /* ticks delivered */
  int64_t misses;            /* ticks missed (deadline passed before wait()) */
  sleepacc_stats lateness;   /* lateness statistics (ns) */
  int64_t timer_misses;      /* irtt: timer_misses (ticks never delivered) */
  int64_t missed;            /* the same count under the records' name (a point's missed) */
  double timer_err_percent;  /* irtt: timer_err_percent = 100 * mean / period */
  double timer_err_mean, timer_err_min, timer_err_max, timer_err_stddev; /* ns, of
                                 |actual - requested| per sleep, sample stddev
                                 ("timer_err": {mean, min, max, stddev}) */
  int64_t period_ns;         /* tick period */
  const char *missed_policy; /* missed-tick policy name (the config's "missed") */
  int64_t start_ns;          /* schedule origin (CLOCK_MONOTONIC) */
  int64_t last_deadline_ns;  /* deadline of the last tick delivered (0 none) */
  sleepacc_sleeper_stats sleeper; /* its sleeper's */
} sleepacc_pacer_stats;

int sleepacc_missed_from_name(const char *name); /* -EINVAL if unknown */
const char *sleepacc_missed_name(int policy);
/* Open a pacer: tick k (k = 1, 2, ...) is due at start_ns + k * period_ns,
 * start_ns = now (so the first tick is one period away).  A tick whose
 * deadline passed before wait() was called is missed: skip drops every
 * passed tick and waits for the next future one, burst delivers each at
 * once, delay restarts the schedule (start_ns = now, k = 1).  method as for
 * sleepacc_sleeper_open (auto's quantile 0.99).  -EINVAL for a period
 * outside (0, SLEEPACC_MAX_DURATION_NS] or an unknown policy. */
int sleepacc_pacer_open(sleepacc_pacer *p, int64_t period_ns, const char *method,
                        int missed_policy);
/* Wait for the next tick for at most chunk_ns.  Returns 1 when a tick is
 * due (its deadline in *deadline_ns), 0 when the chunk ended first (call
 * again), -EINTR (call again), or -errno. */
int sleepacc_pacer_wait(sleepacc_pacer *p, int64_t chunk_ns, int64_t *deadline_ns);
/* With a hand-off set on p->sleeper (sleepacc_sleeper_set_handoff), wait
 * may return SLEEPACC_NEAR (the tick's deadline in *deadline_ns): then call
 * sleepacc_pacer_poll until it returns 1 (the tick is delivered) instead of
 * 0 (not yet).  -EINVAL when no tick is pending. */
int sleepacc_pacer_poll(sleepacc_pacer *p, int64_t *deadline_ns);
/* Lost ticks: when the caller could not take the tick a wait (or poll) just
 * delivered, say a KeyboardInterrupt or a signal handler's exception landed
 * after it, sleepacc_pacer_unwait(p, that deadline) makes the next wait
 * return it at once (counted once).  -EINVAL unless deadline_ns is the tick
 * last delivered and no other is pending or offered again. */
int sleepacc_pacer_unwait(sleepacc_pacer *p, int64_t deadline_ns);
/* Re-entry: sleepacc_pacer_wait with the caller's sleeper s instead of
 * p->sleeper, for a wait on p called from a signal handler while p->sleeper
 * is mid-wait on the same thread.  The re-entrant wait takes the tick
 * pending (each tick is delivered once); the interrupted wait, resumed,
 * goes on to the next one. */
int sleepacc_pacer_wait_with(sleepacc_pacer *p, sleepacc_sleeper *s, int64_t chunk_ns,
                             int64_t *deadline_ns);
void sleepacc_pacer_close(sleepacc_pacer *p);
/* The pacer's sleeper, for sleepacc_sleeper_set_handoff and
 * sleepacc_sleeper_hold_dma_latency (NULL for a NULL p). */
sleepacc_sleeper *sleepacc_pacer_sleeper(sleepacc_pacer *p);
void sleepacc_pacer_stats_get(const sleepacc_pacer *p, sleepacc_pacer_stats *out);

/* A sleeper's absolute deadline (sleep_until): 0, or -EINVAL with *message
 * when it is negative or more than one day ahead (config.c's rules). */
int sleepacc_deadline_check(int64_t deadline_ns, const char **message);
/* -------------------------------------------------------------------------
 * Sweeps and results files (csrc/sweep.c, csrc/json.c).
 * ---------------------------------------------------------------------- */
typedef struct sleepacc_point {
  const sleepacc_method *method;
  int64_t duration_ns;
} sleepacc_point;
/* What broke which rule of a sweep (sleepacc_sweep_plan, sleepacc_sweep_check). */
typedef struct sleepacc_sweep_fault {
  const char *field;               /* "methods", "durations" or a config field */
  size_t index;                    /* the entry blamed, (size_t)-1 none */
  const sleepacc_method *subject;  /* the message follows this method's name, or NULL */
  const char *message;             /* the rule, or NULL */
} sleepacc_sweep_fault;
/* The points of a sweep, in order: each of the nm methods (NULL: every
 * available one) over the nd durations (NULL: the default ladder), each
 * method and each duration once; a floor method (family baseline) at 0
 * only; periodic mode skips 0 and leaves floors out.  A list given (not
 * NULL) must not be empty (nm or nd 0).  Up to cap points go to out; returns how many there are
 * (more than cap: call again with room), or -EINVAL with *fault (if not
 * NULL) naming the rule broken: "methods"/"durations" index (size_t)-1 for
 * a given list that is empty; "methods" index i, subject the method, when
 * periodic mode meets an explicit floor; "durations" index (size_t)-1 when
 * periodic mode leaves nothing to measure.  Other bad arguments (a NULL
 * method, out NULL with cap > 0): -EINVAL, message NULL. */
int sleepacc_sweep_plan(const sleepacc_method *const *methods, size_t nm, const int64_t *durations,
                        size_t nd, int mode, sleepacc_point *out, size_t cap, sleepacc_sweep_fault *fault);

/* Lines of a sleepacc/1 JSON Lines file (docs/schema.md), each ending in a
 * newline, rendered into buf by the buffer contract of sleepacc_table_irtt.
 * The header holds the count facts (an unknown one is null), hostname and
 * os, settings {version, writer, <writer>: writer_version} and the start
 * time; a point, the record (every row of sleepacc_result) and its n samples
 * (null when n is 0); the footer, the finish time.  when_ns: CLOCK_REALTIME
 * ns, or -1 for now.  A string's bytes that are no UTF-8 (a host fact may
 * hold such) are written as U+FFFD: every line is text a reader decodes. */
int sleepacc_json_header(const sleepacc_fact *facts, size_t count, const char *writer,
                         const char *writer_version, int64_t when_ns, char *buf, size_t cap,
                         size_t *needed);
int sleepacc_json_point(const sleepacc_result *res, const int64_t *samples, size_t n, char *buf,
                        size_t cap, size_t *needed);
int sleepacc_json_footer(int64_t when_ns, char *buf, size_t cap, size_t *needed);

/* --- Checked sweeps and results files: what a binding's sweep checks before
 * it runs, and the file it writes (sweep.c, json.c). --- */
/* A sweep's budget per point when none is given (0.5 s), the one place
 * both bindings' sweep default is written. */
#define SLEEPACC_SWEEP_BUDGET_NS (SLEEPACC_DEFAULT_BUDGET_NS / 2)
/* A sweep checked as a whole before anything runs (csrc/sweep.c): every
 * duration (sleepacc_duration_check), the plan (sleepacc_sweep_plan in
 * base->mode) and, when out has room for the plan, every point's run
 * (sleepacc_config_explain of base with the point's method and duration).
 * Returns the number of points (more than cap: call again with room, then
 * the points are checked too), or a negative errno with *fault (if not
 * NULL) naming what broke which rule:
 *   field "methods" or "durations" and index: that entry of the list given
 *     (index (size_t)-1: the list as a whole); a point's "method" or
 *     "duration_ns" is blamed on the first entry equal to it;
 *   otherwise a sleepacc_config field of base ("budget_ns", "env.priority",
 *     and "method"/"duration_ns" of a default list), index (size_t)-1;
 *   subject: the method whose name the message follows (a floor in
 *     periodic mode), else NULL; message: the rule's text, NULL for an
 *     errno no rule explains (-E2BIG). */
int sleepacc_sweep_check(const sleepacc_config *base, const sleepacc_method *const *methods, size_t nm,
                         const int64_t *durations, size_t nd, sleepacc_point *out, size_t cap,
                         sleepacc_sweep_fault *fault);

/* Results files (csrc/json.c): a sleepacc/1 file written through the
 * writer's own buffer (no allocation, whatever the number of samples).
 * Caller-owned and large (host facts for the header, a 64 KiB buffer).
 * open: the file at path (created 0666 less the umask, else truncated),
 * then the header (writer, writer_version as for sleepacc_json_header), on
 * disk (flushed and fsync'd) when it returns.  Flags:
 *   SLEEPACC_WRITE_SYNC    each point flushed and fsync'd before it returns
 *                          (a killed run keeps the points written);
 *   SLEEPACC_WRITE_ATOMIC  written to "<path>.tmp<pid>" and renamed to path
 *                          by close: the file is whole or absent (the
 *                          temporary a new file, O_EXCL: when that name is
 *                          taken, "<path>.tmp<pid>.1", ... .63); when path
 *                          is a symbolic link, beside the file it names
 *                          (the link stays); when it is no regular file
 *                          (a device such as /dev/null, a FIFO, a link to
 *                          nothing yet), written to (a rename would
 *                          replace the node);
 *   SLEEPACC_WRITE_KEEP    a regular file that is not empty is left as it is
 *                          and refused with -EEXIST (results are never
 *                          overwritten; the CLI's -o rule); with ATOMIC,
 *                          path as it is at open.
 * An fsync the file does not support (a pipe, a FIFO: EINVAL) is not an error.
 * -ENAMETOOLONG when the temporary name does not fit PATH_MAX; other errors
 * are open's or write's.  After a failed open nothing is left open.
 * point: a point line (sleepacc_json_point).  close: the footer, fsync,
 * close (and the rename).  abort: close without a footer (the lines so far
 * stay, as after an interruption; an ATOMIC file is removed); safe after
 * close, after a failed open and twice.  0 or -errno; a write error is kept
 * and returned by every later call, and cuts the file back to the end of
 * its last line flushed whole (so what is on disk always parses; with SYNC
 * that is the last point written). */
/* The rule of SLEEPACC_WRITE_ATOMIC, for every writer of a whole file (the
 * Python side's plots and reports too): 1 when a temporary file renamed
 * over out (cap bytes: path, or the file its symbolic link names) is how
 * path is written; 0 when path is written to directly, since it is no
 * regular file (a device, a FIFO, a directory's open refuses, a link to
 * nothing yet) and a rename would replace the node; or -errno (realpath's;
 * -ENAMETOOLONG when out cannot hold it). */
int sleepacc_atomic_target(const char *path, char *out, size_t cap);
#define SLEEPACC_WRITE_SYNC 1
#define SLEEPACC_WRITE_ATOMIC 2
#define SLEEPACC_WRITE_KEEP 4
typedef struct sleepacc_writer {
  /* private */
  int fd;                 /* the open file, -1 when closed */
  int flags;              /* SLEEPACC_WRITE_* */
  int err;                /* the first write error, 0 none */
  size_t len;             /* bytes in buf not yet written */
  int64_t written;        /* bytes written to the file */
  int64_t whole;          /* of them, up to the end of the last line flushed whole */
  char path[4096];        /* ATOMIC: the final name */
  char tmp[4096 + 32];    /* ATOMIC: the file written ("" none) */
  sleepacc_fact facts[SLEEPACC_MAX_FACTS]; /* the header's host facts */
  char buf[65536];        /* lines are written through it */
} sleepacc_writer;
int sleepacc_writer_open(sleepacc_writer *w, const char *path, int flags, const char *writer,
                         const char *writer_version);
int sleepacc_writer_point(sleepacc_writer *w, const sleepacc_result *res, const int64_t *samples,
                          size_t n);
int sleepacc_writer_close(sleepacc_writer *w);
void sleepacc_writer_abort(sleepacc_writer *w);

/* -------------------------------------------------------------------------
 * trace: each sample's lateness in its parts, measured from the kernel's
 * events (Linux tracefs; root or CAP_DAC_OVERRIDE), csrc/trace.c.
 * ---------------------------------------------------------------------- */
/* The terms, in this order; per complete sample they sum exactly to its
 * lateness (actual - requested; wake - deadline in periodic mode):
 *   rounding    the programmed soft expiry - the requested deadline (a
 *               relative call's syscall entry included: the kernel arms
 *               from its own clock read)
 *   slack       the programmed hard expiry - the soft expiry
 *   timer_irq   the expiry interrupt's clock read - the hard expiry
 *   wake_to_run the thread's switch-in - its wake-up
 *   to_user     the user's clock read after the call - the switch-in
 *   other       the wake-up - the interrupt (the expiry callback, the
 *               tracer's own event writes) */
#define SLEEPACC_TRACE_TERMS 6
extern const char *const sleepacc_trace_term_names[SLEEPACC_TRACE_TERMS];
/* Most samples one trace keeps (each run: traced and untraced). */
#define SLEEPACC_TRACE_MAX_SAMPLES 20000
/* The versioned key of a trace in a record and in results files. */
#define SLEEPACC_TRACE_SCHEMA "sleepacc-trace/1"
/* A trace's arrays are in memory the caller's room gave (sleepacc_trace_run). */
typedef struct sleepacc_trace {
  int64_t n;               /* traced samples */
  int64_t *lateness;       /* n: each traced sample's lateness */
  double *terms[SLEEPACC_TRACE_TERMS]; /* n each: ns; NaN where the sample is incomplete */
  int *complete;           /* n: 1 every link of the chain was seen */
  int *idle;               /* n: the CPU the timer expired on, at the interrupt: 1 idle (the idle
                              task ran there), 0 busy, -1 unknown (incomplete, or nothing seen) */
  int *idle_state;         /* n: the cpu_idle state it idled in, -1 none known (busy, or the
                              idle driver traces none) */
  int64_t untraced_n;      /* the same run untraced, right before the traced one */
  int64_t *untraced;       /* untraced_n lateness values */
  int64_t gaps;            /* samples whose chain lacks a link */
  int64_t lost;            /* events the kernel dropped (overrun, dropped, missed) or not kept */
  int64_t missed_pages;    /* buffer pages flagged with missed events */
  int64_t events;          /* events read */
  int mounted;             /* tracefs was not mounted: this run mounted it (left mounted) */
  int interrupted;         /* a signal's handler interrupted a sleep: the runs ended there
                              (Ctrl-C; untraced: no traced run) */
  char tracefs[256];       /* where tracefs is */
} sleepacc_trace;
/* Measure cfg twice by the engine, untraced then traced, on the calling
 * thread, and join each traced sample's events into its terms.  At most
 * SLEEPACC_TRACE_MAX_SAMPLES samples (n, or what the budget fills).  Memory:
 * one room(ctx, bytes) call.  A signal whose handler interrupts a sleep
 * ends the runs there (t->interrupted).  0, or -errno with why (one line naming trace
 * and what it needs: -EACCES "needs root or CAP_DAC_OVERRIDE", tracefs not
 * mounted and not mountable: the mount command).  Nothing global changes;
 * the instance is removed on every path. */
int sleepacc_trace_run(const sleepacc_config *cfg, sleepacc_trace *t, void *(*room)(void *ctx, size_t bytes),
                       void *ctx, char *why, size_t whycap);
#ifdef __cplusplus
}
#endif
#endif /* SLEEPACC_H */
