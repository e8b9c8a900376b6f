/*
 * sleepacc.h -- the one public header of the sleepacc core.
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
 *   - This header never includes Python.h or lua.h; bindings include only it.
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
  /* run-time probe: 1 available, 0 not (cached by sleepacc_method_available) */
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

/* Field tables: a struct described as data (CPython's PyMemberDef), so a
 * binding converts any of the core's result structs with one loop and the
 * Python dict and the Lua table cannot disagree.  A table is an array of
 * rows terminated by a NULL name. */
typedef enum sleepacc_field_type {
  SLEEPACC_FIELD_INT64 = 0,  /* int64_t */
  SLEEPACC_FIELD_DOUBLE = 1, /* double */
  SLEEPACC_FIELD_STRING = 2, /* const char *; NULL is null (None / nil) */
  SLEEPACC_FIELD_BOOL = 3,   /* int, 0 or 1 */
  SLEEPACC_FIELD_NESTED = 4, /* a sub-object: the rows of .sub, their offsets
                                relative to this row's offset */
  SLEEPACC_FIELD_OPT_INT64 = 5, /* int64_t; a negative value is null */
  SLEEPACC_FIELD_INT = 6,       /* int */
  SLEEPACC_FIELD_METHOD = 7,    /* const sleepacc_method *, by its name; NULL is null */
  SLEEPACC_FIELD_PAIRS = 11     /* sleepacc_pairs (below) */
} sleepacc_field_type;
/* Row flag: a null value leaves the key out (instead of None / nil). */
#define SLEEPACC_FIELD_OMIT_NULL 1

typedef struct sleepacc_field {
  const char *name;                 /* key in the binding's object */
  size_t offset;                    /* offsetof in the struct */
  int is_double;                    /* 1 for SLEEPACC_FIELD_DOUBLE (older bindings) */
  int type;                         /* sleepacc_field_type */
  const struct sleepacc_field *sub; /* NESTED: the sub-object's rows */
  int flags;                        /* SLEEPACC_FIELD_OMIT_NULL */
} sleepacc_field;
extern const sleepacc_field sleepacc_stats_fields[];

/* The PAIRS field kind (handle12): an ordered map of int64 keys to int64
 * values, e.g. auto's learned margin by duration band.  Python converts it
 * to a dict {key: value}; Lua to an array, in order, of one table per pair
 * by the row's .sub (two INT64 rows over sleepacc_pair naming key and value). */
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

/* --- The quantile level of a statistic (rules12: issue 12, csrc/stats.c). --- */
/* The share of samples at or below the statistic `name` of
 * sleepacc_stats_fields by the nearest-rank rule: "min" 0, "p1" 0.01, ...,
 * "median" 0.5, ..., "p999" 0.999, "max" 1; -1 for a field that is no order
 * statistic (n, mean, std, undersleeps), an unknown name or NULL.  So a
 * binding or a plot reads the levels here, not from a copy of them. */
double sleepacc_stats_level(const char *name);

/* Field kinds and values (py12: issue 12, csrc/fields.c).  More field
 * types, beside sleepacc_field_type's: */
#define SLEEPACC_FIELD_MODE 8  /* int sleepacc_mode, by its name (sleepacc_mode_name) */
#define SLEEPACC_FIELD_TEXT 9  /* an inline NUL-terminated char array (a fact's s) */
#define SLEEPACC_FIELD_NULL 10 /* always null (an unknown fact) */
/* Row flag: a binding filling the struct from an object refuses one that
 * lacks the key (KeyError / an error naming it). */
#define SLEEPACC_FIELD_REQUIRED 2
/* Row flags of a record read back (sleepacc_fields_read): a NESTED row
 * COMPLETE requires every row of its sub-object but those flagged LATER,
 * added within the schema's version (an older record lacks them), so a
 * value left out is refused rather than written as 0. */
#define SLEEPACC_FIELD_COMPLETE 8
#define SLEEPACC_FIELD_LATER 16
/* Row flags of the point rules a reader of a results file holds a record
 * to (docs/schema.md; Python's records.check_point), so sleepacc_field_set
 * refuses (-ERANGE) what would make the file unreadable: NONNEG an integer
 * >= 0 ("must be >= 0"), NAME non-empty text without control characters
 * ("must be a method name (printable text)"), MODE_NAME a mode's name
 * (sleepacc_mode_from_name: "must be 'relative' or 'periodic'"). */
#define SLEEPACC_FIELD_NONNEG 32
#define SLEEPACC_FIELD_NAME 64
#define SLEEPACC_FIELD_MODE_NAME 128
/* A field's value in the few kinds a binding has: the core reads and sets
 * every field type, so a binding's converter has one case per kind, none
 * per type (a new type needs no binding edit). */
typedef enum sleepacc_value_kind {
  SLEEPACC_VALUE_NULL = 0, /* None / nil (OMIT_NULL: the key is left out) */
  SLEEPACC_VALUE_INT,      /* .i */
  SLEEPACC_VALUE_REAL,     /* .d */
  SLEEPACC_VALUE_BOOL,     /* .i, 0 or 1 */
  SLEEPACC_VALUE_TEXT,     /* .s, NUL-terminated (host facts may hold bytes that are not UTF-8) */
  SLEEPACC_VALUE_NESTED,   /* the rows .sub of the sub-object at .base */
  SLEEPACC_VALUE_PAIRS     /* the sleepacc_pairs at .base (.sub: a pair's two rows) */
} sleepacc_value_kind;
typedef struct sleepacc_value {
  int kind;                  /* sleepacc_value_kind */
  int64_t i;                 /* INT, BOOL */
  double d;                  /* REAL */
  const char *s;             /* TEXT (.i: its length in bytes when the binding knows it, else 0) */
  const sleepacc_field *sub; /* NESTED: its rows */
  const void *base;          /* NESTED: its struct */
  int overflow;              /* INT: 1 or -1 when the integer given was beyond int64 that way (.i
                                saturated: words (issue 12) -- the core refuses it, no binding) */
} sleepacc_value;
/* Row f of the struct at base as a value: INT64, INT and OPT_INT64 (a
 * negative is NULL) as INT, DOUBLE as REAL, BOOL as BOOL, STRING and TEXT as
 * TEXT (a NULL string is NULL), METHOD and MODE by name, NESTED as NESTED,
 * PAIRS as PAIRS,
 * NULL and an unknown type as NULL. */
void sleepacc_field_get(const sleepacc_field *f, const void *base, sleepacc_value *out);
/* A language number that is a double (every Lua 5.1/LuaJIT number, a Lua
 * 5.3+ float) as a value: an integral one INT (beyond int64: .i saturated,
 * .overflow its sign, which the core refuses), any other REAL. */
void sleepacc_value_number(sleepacc_value *out, double d);
/* Set row f of the struct at base from v: INT (or BOOL) into INT64,
 * OPT_INT64, INT and BOOL (-ERANGE beyond int) and DOUBLE; REAL into DOUBLE;
 * TEXT into STRING (the pointer itself: returns 1, the caller keeps the text
 * alive), METHOD and MODE by name (-ENOENT unknown); NULL into STRING and
 * METHOD, and into OPT_INT64 as -1 (field_get's null).  -EINVAL for a kind the row cannot take (NESTED: set its rows).
 * *message (if not NULL) gets the failure's words ("unknown method", "out
 * of range", "cannot be set from"), to follow the row's name. */
int sleepacc_field_set(const sleepacc_field *f, void *base, const sleepacc_value *v,
                       const char **message);

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

/* sleepacc_config as a field table (method by name, mode and policy as
 * ints, env nested), so a binding fills a config from its own object and
 * shows the defaults with one loop each. */
extern const sleepacc_field sleepacc_config_fields[];

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
/* A name argument given with its length (method, strategy, missed policy):
 * 0, or -EINVAL when it is NULL or holds a NUL byte (it would be cut short
 * there).  A TEXT value's NUL byte is refused by sleepacc_option_set and
 * sleepacc_field_set, in sleepacc_text_words' words ("must not contain a NUL
 * byte"), by the length the binding gave. */
int sleepacc_name_check(const char *name, size_t len);

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
  int64_t missed;          /* periodic: wake-ups after the next deadline */
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
 * binding returns, converted by sleepacc_result_fields. */
typedef struct sleepacc_result {
  const char *method;      /* method name */
  const char *mode;        /* "relative" or "periodic" */
  int64_t requested_ns;    /* requested duration / period */
  int64_t n;               /* samples recorded (after warm-up) */
  sleepacc_stats stats;    /* exact from the buffer, else from the histogram */
  int64_t missed;          /* periodic: deadlines woken past the next one */
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
/* Rows of the record in schema order: method, mode, requested_ns, n, stats
 * (nested), missed, cpu_ns_per_call, cpu_percent, ctx_switches (nested:
 * voluntary, involuntary), wall_ns, env (nested: slack_ns, policy, priority,
 * cpu, lock_memory, dma_latency_us, margin_ns when hybrid). */
extern const sleepacc_field sleepacc_result_fields[];

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

/* --- runs (issue 12): one run as a binding measures it, its memory,
 * lifecycle and failure words owned by the core (measure.c), so a
 * binding's measure converts the config, allocates the one block the core
 * states, runs the chunks between its Ctrl-C checks, converts the record by
 * its field table and maps the error:
 *     size = sleepacc_run_memory(&cfg, flags);       block = alloc(size)
 *     sleepacc_run_open(&r, &cfg, block, size, flags);
 *     sleepacc_chunks(sleepacc_run_chunk, &r, check signals, ...);
 *     if (sleepacc_run_close(&r, &res, &used) < 0) sleepacc_run_words(&r, ...);
 *     give back the block past `used`.
 * A run fails at most once: open, a chunk or close keep the first failure
 * in the run, and close returns it. --- */
/* Flags of a run's memory and words. */
#define SLEEPACC_RUN_STARTS 1 /* keep each sample's start time too */
#define SLEEPACC_RUN_POINT 2  /* words: name the point ("method X, duration N ns") */
/* The bytes of the one block a run of cfg needs (its layout is the core's:
 * the samples, with SLEEPACC_RUN_STARTS their start times, and the scratch
 * the exact statistics sort in, each sleepacc_config_capacity(cfg) int64
 * values); 0 when the run keeps no samples or cfg breaks a rule (open then
 * says which). */
size_t sleepacc_run_memory(const sleepacc_config *cfg, int flags);
/* Start the run r of cfg in mem (size bytes, sleepacc_run_memory's; NULL
 * with 0): the config checked, the environment applied, the method opened,
 * the start times' buffer set with SLEEPACC_RUN_STARTS.  mem NULL where a
 * block is needed is the binding's failed allocation: -ENOMEM.  0, or the
 * negative errno of a failure, with nothing left changed (r closed). */
int sleepacc_run_open(sleepacc_run *r, const sleepacc_config *cfg, void *mem, size_t size, int flags);
/* One chunk of an open run (a sleepacc_run *, the shape of a binding's
 * chunked runner, like sleepacc_precise_step): 1 done, the run complete or
 * failed (the failure kept for sleepacc_run_close), 0 call again (a signal
 * interrupted a sleep: it resumes toward the same deadline).  Never an
 * errno. */
int sleepacc_run_chunk(void *run);
/* A binding's chunked runner, its protocol stated once (issue 12): call
 * step(arg) (sleepacc_run_chunk, sleepacc_precise_step) until it returns 1
 * (done: 0) or SLEEPACC_NEAR (handed off: SLEEPACC_NEAR, the caller
 * finishes by polling); 0 and -EINTR call again, after checkpoint(ctx)
 * (NULL: none) where the binding sees Ctrl-C: a nonzero one stops it,
 * -ECANCELED (the binding's exception is pending).  Another negative is the
 * step's error, returned; another positive -EINVAL. */
int sleepacc_chunks(int (*step)(void *), void *arg, int (*checkpoint)(void *), void *ctx);
/* Finish r, a run of sleepacc_run_open (never one of sleepacc_run_start:
 * its buffers have no scratch), on every path (the thread restored; safe
 * twice) and fill *out with its record, the exact statistics sorted in the
 * block's scratch.
 * Then the block holds the record's n samples at its front and, with
 * SLEEPACC_RUN_STARTS, their n start times right after them: *used (may be
 * NULL) gets those bytes, the rest may be given back (then call it no
 * more).  0, or the run's first failure (open's, a chunk's, restoring the
 * thread's): then explain it with sleepacc_run_words. */
int sleepacc_run_close(sleepacc_run *r, sleepacc_result *out, size_t *used);
/* Room for sleepacc_run_words. */
#define SLEEPACC_RUN_WORDS_MAX (SLEEPACC_PRIVILEGE_MESSAGE_MAX + 512)
/* The words of r's failure, the one wording both bindings give, into buf
 * (cap bytes, cut to fit, always terminated):
 *   "<ENAME>: <message> (<what failed>[, method <m>, duration <d> ns])"
 * what failed: a refusal up front "<option>: <why>; asked: policy='p',
 * priority n"; a refusal for privileges sleepacc_privilege_explain's words;
 * another failure of the environment its option ("cpu"); a broken rule
 * "<option>: <rule>"; else "opening the method", "measuring", "restoring
 * the thread", "computing the record" or the block's allocation.  The point with
 * SLEEPACC_RUN_POINT.  Returns 1 when r was refused for privileges (up
 * front, or EPERM/EACCES, or ENOMEM from lock_memory: Python's
 * PermissionError), 0 for another failure or none (buf "" then). */
int sleepacc_run_words(const sleepacc_run *r, int flags, char *buf, size_t cap);

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

/* Table rows by field table, renderers by style name (py12: issue 12).
 * sleepacc_row as a field table (every key required): method, requested_ns,
 * mode (by name), stats (nested sleepacc_stats_fields), cpu_percent. */
extern const sleepacc_field sleepacc_row_fields[];
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

/* Clock and host facts by field table (py12: issue 12), so a binding
 * converts them with its one field loop.  All the clocks at once: */
typedef struct sleepacc_clocks {
  sleepacc_clock_info clock[SLEEPACC_CLOCK_COUNT]; /* by sleepacc_clock_id */
} sleepacc_clocks;
/* {resolution_ns, read_cost_ns}, each null when unknown (-1). */
extern const sleepacc_field sleepacc_clock_info_fields[];
/* One nested row per clock, by its name: {"monotonic": {...}, ...}. */
extern const sleepacc_field sleepacc_clocks_fields[];
/* sleepacc_clock_info_get(id, reads, ...) for every id into out->clock[id]:
 * 0 or its first error. */
int sleepacc_clocks_get(int reads, sleepacc_clocks *out);
/* Host facts: sleepacc_fact_fields() writes a field table of facts[0..count)
 * into rows (room for count + 1; the last row ends it): each fact by its key,
 * INT as INT64, REAL as DOUBLE, STR as TEXT, UNKNOWN as NULL, the offsets
 * relative to facts.  Convert it with the facts as the base. */
void sleepacc_fact_fields(const sleepacc_fact *facts, size_t count, sleepacc_field *rows);

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
  sleepacc_waiter waiter;     /* open waiter for `kernel` */
  double quantile;            /* auto: margin quantile, in (0,1) */
  int64_t fixed_margin_ns;    /* hybrid: the margin; auto: initial margin */
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
  int cur_preempted;          /* its spin saw a gap (lost the CPU) */
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
} sleepacc_sleeper;

/* What a binding may know of a sleeper (sleepacc_sleeper_stats_fields). */
typedef struct sleepacc_sleeper_stats {
  int64_t count;              /* sleeps completed */
  int64_t misses;             /* kernel woke after the deadline */
  int64_t spin_ns;            /* total time spent spinning */
  sleepacc_stats lateness;    /* lateness statistics (ns) */
  const char *strategy;       /* "auto", "spin", "hybrid", "comp", "kernel" */
  const char *kernel;         /* the kernel wait's method name */
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
} sleepacc_sleeper_stats;
extern const sleepacc_field sleepacc_sleeper_stats_fields[];
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
} sleepacc_sleeper_config;
extern const sleepacc_field sleepacc_sleeper_config_fields[];
void sleepacc_sleeper_config_default(sleepacc_sleeper_config *c);
/* Every rule of c (pacer != 0: also the period and missed policy): 0, or a
 * negative errno with *field ("method", "quantile", "margin_ns",
 * "handoff_ns", "dma_latency_us", "period_ns", "missed") and *message. */
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
 * kernel wait is over and at most h ns are left; the caller then calls
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
typedef struct sleepacc_pacer {
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
} sleepacc_pacer;

typedef struct sleepacc_pacer_stats {
  int64_t count;             /* ticks delivered */
  int64_t misses;            /* ticks missed (deadline passed before wait()) */
  sleepacc_stats lateness;   /* lateness statistics (ns) */
  int64_t timer_misses;      /* irtt: timer_misses (ticks never delivered) */
  double timer_err_percent;  /* irtt: timer_err_percent = 100 * mean / period */
  double timer_err_mean, timer_err_min, timer_err_max, timer_err_stddev; /* ns, of
                                 |actual - requested| per sleep, sample stddev
                                 ("timer_err": {mean, min, max, stddev}) */
  int64_t period_ns;         /* tick period */
  const char *missed;        /* missed-tick policy name */
  int64_t start_ns;          /* schedule origin (CLOCK_MONOTONIC) */
  int64_t last_deadline_ns;  /* deadline of the last tick delivered (0 none) */
  sleepacc_sleeper_stats sleeper; /* its sleeper's */
} sleepacc_pacer_stats;
extern const sleepacc_field sleepacc_pacer_stats_fields[];

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

/* The precise handle (handle12, csrc/precise.c): a sleeper or a pacer with
 * the one lifecycle both bindings share, embedded in their objects.
 *   open   from a sleepacc_sleeper_config (the dma latency held until close);
 *   calls  one sleeping thread at a time: a call claims the handle for the
 *          caller's thread identity (any uint64_t the binding picks: its
 *          thread id, its Lua state); another identity gets -EBUSY.  A claim
 *          made before fork() is void in the child.  A call re-entered on
 *          the claiming identity (a signal handler) gets a sleeper of its own
 *          (caller-provided memory, opened like the handle's, no hand-off)
 *          and runs to the end; for a pacer it takes the pending tick.
 *   ticks  a pacer call carries the caller's token (0: none): a tick an
 *          exception kept from its caller is offered again (unwait).
 *   close  twice is fine; stats by one call that also names its field table.
 * The claim is not atomic: calls on one handle are serialized by the caller
 * (the GIL, a Lua state).  Every field is private. */
typedef enum sleepacc_precise_kind {
  SLEEPACC_PRECISE_SLEEPER = 0, /* a sleepacc_sleeper: sleeps toward deadlines */
  SLEEPACC_PRECISE_PACER = 1    /* a sleepacc_pacer: waits for its ticks */
} sleepacc_precise_kind;

typedef struct sleepacc_precise {
  /* private */
  int kind;                /* sleepacc_precise_kind */
  int open;                /* 1 between a successful open and close */
  int busy;                /* 1 while a call holds the claim */
  uint64_t busy_gen;       /* sleepacc_fork_generation() at the claim */
  uint64_t busy_thread;    /* the identity holding it (re-entry: the same one) */
  int64_t delivered_tok;   /* token of the call that got the last tick, 0 none */
  int64_t delivered_dl;    /* that tick's deadline */
  union {
    sleepacc_sleeper s;
    sleepacc_pacer p;
  } u;                     /* the core object of `kind` */
} sleepacc_precise;

/* One sleep or wait on a handle, from begin to end (caller's memory, e.g.
 * the stack). */
typedef struct sleepacc_precise_call {
  int64_t deadline_ns;     /* the sleep's deadline; a pacer's: its tick's, once known */
  /* private */
  sleepacc_precise *h;     /* NULL once ended */
  sleepacc_sleeper *own;   /* a re-entered call's own sleeper, else NULL */
  int64_t token;           /* the caller's token of a pacer wait */
  int delivered;           /* pacer: the core delivered the tick */
  int last;                /* the last step's result */
} sleepacc_precise_call;

/* The statistics of either kind, described by the table stats_get names. */
typedef union sleepacc_precise_stats {
  sleepacc_sleeper_stats sleeper; /* SLEEPACC_PRECISE_SLEEPER: sleepacc_sleeper_stats_fields */
  sleepacc_pacer_stats pacer;     /* SLEEPACC_PRECISE_PACER: sleepacc_pacer_stats_fields */
} sleepacc_precise_stats;

/* A sleeper's absolute deadline (sleep_until): 0, or -EINVAL with *message
 * when it is negative or more than one day ahead (config.c's rules). */
int sleepacc_deadline_check(int64_t deadline_ns, const char **message);

/* poll: no tick is pending for this handed-off wait: another wait in
 * between (a signal handler's) took it; the caller goes on to the next. */
#define SLEEPACC_PRECISE_TAKEN 3

/* Open h (zeroed memory, or a handle opened before: closed first) as kind
 * from c (the sleeper or pacer open_config: checked, hand-off, dma latency).
 * 0; -EBUSY while a call holds it; else the open_config errors with *field
 * (if not NULL) naming the config field to blame (h is left closed). */
int sleepacc_precise_open(sleepacc_precise *h, int kind, const sleepacc_sleeper_config *c,
                          const char **field);
/* 1 when open, else 0. */
int sleepacc_precise_is_open(const sleepacc_precise *h);
/* Release what open acquired: 0 (twice is fine), or -EBUSY while a call
 * holds it (nothing done). */
int sleepacc_precise_close(sleepacc_precise *h);
/* 1 when a call of identity `thread` holds h (a call now would be
 * re-entered: give sleepacc_precise_begin memory for its own sleeper). */
int sleepacc_precise_reentered(const sleepacc_precise *h, uint64_t thread);
/* Begin a call of `thread` on h: a sleep toward deadline_ns (sleeper) or a
 * wait for the next tick with the caller's token (pacer; deadline_ns
 * ignored).  own: memory for a sleeper, used (opened, then closed by end)
 * only when the call is re-entered.  0, then step it (sleepacc_precise_step)
 * and end it; -EBADF closed, -EBUSY held by another identity, -ENOMEM
 * re-entered with no own, the errors of sleepacc_sleeper_open_like.  After
 * a failure c needs no end (end is a no-op). */
int sleepacc_precise_begin(sleepacc_precise_call *c, sleepacc_precise *h, uint64_t thread,
                           int64_t deadline_ns, int64_t token, sleepacc_sleeper *own);
/* One chunk (SLEEPACC_CHUNK_NS) of the call (a sleepacc_precise_call *, the
 * shape of a binding's chunked runner): 1 done (a pacer's tick in
 * c->deadline_ns), 0 or -EINTR call again, SLEEPACC_NEAR handed off (then
 * end and finish with sleepacc_precise_poll), or -errno. */
int sleepacc_precise_step(void *call);
/* End the call: failed != 0 when its caller gives it up (an exception,
 * Ctrl-C, a step's error); a pacer tick it delivered is then offered again.
 * Releases the claim (or closes the own sleeper).  1 when the call was
 * handed off, else 0.  Twice is fine. */
int sleepacc_precise_end(sleepacc_precise_call *c, int failed);
/* One clock read of a handed-off call: 1 done (a pacer's tick delivered to
 * the call with `token`), 0 not yet, SLEEPACC_PRECISE_TAKEN (pacer: see
 * above), 1 at once for a re-entered call (its own sleep ran to the end);
 * deadline_ns: a sleeper's deadline (ignored for a pacer).  -EBADF, -EBUSY
 * as begin, or the core's poll errors. */
int sleepacc_precise_poll(sleepacc_precise *h, uint64_t thread, int64_t deadline_ns,
                          int64_t token);
/* The caller's wait with `token` could not return the tick the core gave
 * it (an exception landed after): the next wait returns it.  0, or -EINVAL
 * when there is none to offer (not a pacer, another token, closed, held). */
int sleepacc_precise_unwait(sleepacc_precise *h, int64_t token);
/* Statistics of h (open or closed) into *out, *fields (if not NULL) the
 * table describing *out for h's kind.  0, or -EBUSY while a call of
 * another identity holds h (it is changing them). */
int sleepacc_precise_stats_get(const sleepacc_precise *h, uint64_t thread,
                               sleepacc_precise_stats *out, const sleepacc_field **fields);

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
 * time; a point, the record (sleepacc_result_fields) and its n samples
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

/* The options of a run as a binding takes them (csrc/options.c), in
 * measure()'s order (method and duration first, then the options every
 * run shares, n to dma_latency): the public name, how its value converts, the config
 * field it fills (by name and offset) and the least integer allowed.
 *   METHOD: a method name; SECONDS: seconds -> int64 ns; BUDGET: seconds
 *   > 0 -> int64 ns, or none (0: only n stops); INT64/INT: an integer >= lo;
 *   BOOL: int 0/1; MODE/POLICY: a name (sleepacc_mode/policy_from_name);
 *   NAME: a string; NUMBER: a double. */
typedef enum sleepacc_option_kind {
  SLEEPACC_OPT_METHOD, SLEEPACC_OPT_SECONDS, SLEEPACC_OPT_BUDGET, SLEEPACC_OPT_INT64,
  SLEEPACC_OPT_INT, SLEEPACC_OPT_BOOL, SLEEPACC_OPT_MODE, SLEEPACC_OPT_POLICY,
  SLEEPACC_OPT_NAME, SLEEPACC_OPT_NUMBER
} sleepacc_option_kind;
typedef struct sleepacc_option {
  const char *name;  /* "duration", "slack", ... */
  int kind;          /* sleepacc_option_kind */
  const char *field; /* "duration_ns", "env.slack_ns", ... */
  size_t offset;     /* in sleepacc_config */
  int64_t lo;        /* INT64/INT: the least value; SECONDS: 1 for > 0; NAME: 1 not empty */
} sleepacc_option;
#define SLEEPACC_OPTION_COUNT 14
extern const sleepacc_option sleepacc_options[]; /* and a NULL name row */
/* The same for a sleeper or pacer (sleepacc_sleeper_config). */
extern const sleepacc_option sleepacc_sleeper_options[];
/* The options of that list a sleeper [0] and a pacer [1] take, NULL-ended,
 * the first an argument (method, period), the rest by name. */
extern const char *const sleepacc_precise_takes[2][6];
/* The option that fills a field of either list ("env.dma_latency_us" ->
 * "dma_latency", "period_ns" -> "period"); another field is returned as is. */
const char *sleepacc_option_of_field(const char *field);
/* Seconds -> ns, the nearest (beyond int64 saturates, a negative stays
 * negative): 0, or -EDOM for NaN/inf. */
int sleepacc_seconds_to_ns(double s, int64_t *ns);
/* Whole seconds -> ns (py12: issue 12), exact, saturating as
 * sleepacc_seconds_to_ns does (INT64_MAX, or -1 for a negative): s, or, when
 * the caller's integer did not fit int64 itself, overflow its sign (1 or
 * -1; 0 when it fit, as PyLong_AsLongLongAndOverflow reports it). */
int64_t sleepacc_whole_seconds_to_ns(int64_t s, int overflow);
/* --- Option rules a binding applies while converting (options.c). --- */
/* The defaults that depend on another option, applied once the options
 * given are set (given: bit i set when sleepacc_options[i] was given): a
 * fifo or rr policy without a priority runs at priority 1, the API's default
 * real-time priority.  sweep != 0: c is a sweep's point, whose budget is per
 * point; a point whose one sample outruns it still takes that sample (a
 * 500 ms row under a 0.2 s budget), so with a budget and no n given, n is
 * SLEEPACC_MAX_SAMPLES (the core refuses one sample over the budget only
 * when n is not given). */
void sleepacc_options_complete(sleepacc_config *c, uint32_t given, int sweep);
/* A MODE or POLICY option's value by name (sleepacc_mode_from_name,
 * sleepacc_policy_from_name): -EINVAL when unknown or o is of another kind
 * (the words of that error, built from the same names, are
 * sleepacc_option_set's). */
int sleepacc_option_choice(const sleepacc_option *o, const char *name);
/* --- A seconds argument (py12b: issue 12), the whole conversion a binding
 * makes of one: a real s (real != 0: sleepacc_seconds_to_ns) or whole
 * seconds (real 0: sleepacc_whole_seconds_to_ns(whole, overflow)), then the
 * duration rule (sleepacc_duration_check).  0 with *ns set, or -EINVAL with
 * *message (if not NULL) "must be finite" (NaN/inf), "must be non-negative"
 * or "must be at most 86400 s (one day)"; *ns is left as it was. --- */
int sleepacc_seconds_check(int real, double s, int64_t whole, int overflow, int64_t *ns,
                           const char **message);
/* --- lua12b (issue 12): lookups a binding's option reader and its error
 * messages need (options.c). --- */
/* The row of list (sleepacc_options, sleepacc_sleeper_options or a tail of
 * one) named name, or NULL. */
const sleepacc_option *sleepacc_option_find(const sleepacc_option *list, const char *name);
/* The available methods' names in registry order, joined by ", ", into buf
 * (cap bytes, cut to fit, always terminated): what "unknown method" lists. */
void sleepacc_method_names(char *buf, size_t cap);
/* The options of c that need privileges (policy, lock_memory,
 * dma_latency), space-separated in that order, into buf (cap bytes, cut to
 * fit): what an EPERM/EACCES names.  Returns buf, or NULL when c asks for
 * none of them. */
const char *sleepacc_config_privileged(const sleepacc_config *c, char *buf, size_t cap);
/* --- perm12 (issue 12): the explanation of a run refused for privileges,
 * one for both bindings (options.c). --- */
/* Room for sleepacc_privilege_explain's words (all three options asked). */
#define SLEEPACC_PRIVILEGE_MESSAGE_MAX 320
/* When err (negative or positive errno) is a refusal for privileges --
 * EPERM or EACCES, or ENOMEM (mlockall past RLIMIT_MEMLOCK) when c asks for
 * lock_memory -- what each privileged option c asks for needs, joined by
 * "; " into buf (cap bytes, cut to fit):
 *   "policy='fifo' (priority 1) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE allowance",
 *   "lock_memory=True needs CAP_IPC_LOCK or a large enough RLIMIT_MEMLOCK",
 *   "dma_latency=0 needs write access to /dev/cpu_dma_latency (root)",
 * or "the requested environment needs privileges" when c asks for none.
 * Returns buf, or NULL (buf untouched) for any other err. */
const char *sleepacc_privilege_explain(const sleepacc_config *c, int err, char *buf, size_t cap);
/* --- One option from a script's value (issue 12, this round): the
 * conversion of every option kind, so no binding and no Python code writes
 * an option's rule (options.c). --- */
/* Room for sleepacc_option_set's words (the longest lists the methods). */
#define SLEEPACC_OPTION_MESSAGE_MAX 512
/* The config check's first broken rule in words, into buf (cap bytes, cut
 * to fit, always terminated): sleepacc_config_explain's message, and for a
 * method not available here (-ENOSYS) "; available methods: <those that
 * are>", so both bindings name them.  Returns explain's result (0: buf
 * untouched); *field as explain sets it. */
int sleepacc_config_words(const sleepacc_config *c, const char **field, char *buf, size_t cap);
/* Set option o (a row of sleepacc_options into a sleepacc_config, or of
 * sleepacc_sleeper_options into a sleepacc_sleeper_config) of the struct
 * at base from the script's value v, by o's kind:
 *   SECONDS  INT (whole seconds) or REAL -> ns, by sleepacc_seconds_check
 *            (finite, non-negative, at most one day; o->lo 1: positive);
 *   SLEEP    INT or REAL seconds -> the deadline now + ns, by
 *            sleepacc_sleep_check (finite, non-negative, no day cap);
 *   BUDGET   as SECONDS and > 0; NULL or BOOL false: 0, no budget (only n
 *            stops the run);
 *   INT64    INT >= o->lo;  INT: the same and <= INT_MAX;
 *   BOOL     BOOL, stored 0 or 1;
 *   MODE, POLICY  TEXT, one of the names of the option's values;
 *   METHOD   TEXT, a registered method (whether it is available here is
 *            the config check's rule);
 *   NAME     TEXT (the pointer is stored: the caller keeps the text alive;
 *            a NUL byte within the length given in .i is refused first;
 *            o->lo 1: not empty, a path);
 *   NUMBER   INT or REAL, as a double.
 * 0 when set.  -EINVAL when v's kind is not one o takes (NULL included):
 * the binding words "must be <what o->kind takes>, got <v's type>".
 * -ERANGE when the value breaks o's rule: its words into msg (cap bytes),
 * "must be >= 1", "must be 'relative' or 'periodic'", to which the binding
 * adds ", got <v>".  Nothing is set on an error; -EFAULT for NULL o, base
 * or v. */
int sleepacc_option_set(const sleepacc_option *o, void *base, const sleepacc_value *v, char *msg,
                        size_t cap);

/* --- args (issue 12): a whole options table read by the core through one
 * getter the binding supplies, and one fault the binding words in one
 * place (options.c, sweep.c).  The binding converts values; the core walks
 * the options (which it takes, required ones, defaults, lists and their
 * element rules, the config check, a sweep's plan). --- */
/* A value that is a list (a sweep's methods, durations): .i its length,
 * its elements asked for by index. */
#define SLEEPACC_VALUE_LIST 7
/* Option kinds beside sleepacc_option_kind's: */
#define SLEEPACC_OPT_METHODS 10   /* a list of METHOD values (sleepacc_sweep_lists) */
#define SLEEPACC_OPT_DURATIONS 11 /* a list of SECONDS values */
#define SLEEPACC_OPT_DEADLINE 12  /* INT: a CLOCK_MONOTONIC deadline in ns (sleepacc_deadline_check) */
/* How a binding gives the core its call's options. */
typedef struct sleepacc_getter {
  /* The value of option name into *out (index -1), or of element index
   * (0-based) of the list option name: 1 given, 0 absent (None/nil/not a
   * key), or a negative number, the binding's own failure (its exception
   * set), which the core returns at once.  name NULL: the key number index
   * of the options table (asked for 0, 1, ... until 0 is returned, before
   * any value; a string key is TEXT, its length in .i: a NUL byte in it
   * makes it no option's name).  A TEXT value stays valid while the
   * call lasts.  (A Lua getter may raise instead: the core holds nothing
   * across a call.) */
  int (*get)(void *ctx, const char *name, int64_t index, sleepacc_value *out);
  /* bytes of memory for what the core reads (a sweep's lists and plan),
   * owned by the binding and kept until it is done with them; asked for at
   * most twice per read (a call's room may be the getter's: a table's rows,
   * then its text); NULL: -ENOMEM. */
  void *(*room)(void *ctx, size_t bytes);
  void *ctx;
  /* The options the call takes, in the order they are read (NULL: every
   * option of the read); the first args of them are the call's own
   * arguments, not keys of its table. */
  const char *const *take;
  int args;
  /* Keys the binding reads itself (known, never read by the core), or NULL. */
  const char *const *own;
  /* Enter the table (a Python dict, a Lua table) that option name holds
   * (element index >= 0 of it; -1 the value itself), so that gets read its
   * keys until the matching leave, enter(ctx, NULL, 0); at most
   * SLEEPACC_GETTER_DEPTH deep.  1 entered, 0 absent or no table, or the
   * binding's failure (negative).  NULL: the getter reads flat tables only.
   * After a fault the core leaves the getter where the fault is, so the
   * binding finds the value it names (sleepacc_fault.at: the way there). */
  int (*enter)(void *ctx, const char *name, int64_t index);
} sleepacc_getter;
/* How deep a getter enters (results -> a record -> its stats). */
#define SLEEPACC_GETTER_DEPTH 4
typedef enum sleepacc_fault_kind {
  SLEEPACC_FAULT_NONE = 0, /* no fault (or the getter's own failure) */
  SLEEPACC_FAULT_TYPE,     /* the value's kind is not one the option takes */
  SLEEPACC_FAULT_RULE,     /* the value (or the config it made) breaks a rule */
  SLEEPACC_FAULT_KEY       /* a key of the table names no option */
} sleepacc_fault_kind;
#define SLEEPACC_FAULT_WORDS_MAX (2 * SLEEPACC_OPTION_MESSAGE_MAX)
/* What a read refused, for the binding's one error. */
typedef struct sleepacc_fault {
  int kind;       /* sleepacc_fault_kind */
  char option[64];/* the option named ("duration", "methods"); KEY: the key (when show) */
  int64_t index;  /* the element of a list option (0-based), -1 the option itself */
  int takes;      /* TYPE: the kind of value it takes (a sleepacc_option_kind) */
  int show;       /* RULE: 1 when the binding adds ", got <the value>" (got again by option,
                     index); KEY: 1 when the key is a string (0: the binding names its type) */
  char words[SLEEPACC_FAULT_WORDS_MAX]; /* RULE: the core's words; KEY: the known keys, ", "-joined */
  int depth;      /* the tables entered on the way to the option (sleepacc_fields_read), ... */
  struct {
    char name[32];  /* ... each the option or key that holds it, */
    int64_t index;  /* and its element (0-based; -1 the value itself) */
  } at[SLEEPACC_GETTER_DEPTH];
} sleepacc_fault;
/* --- fault words (issue 12, faults): the one sentence of a read's fault,
 * composed by the core for both bindings (options.c).  A binding gives
 * only what its language knows: the type name of the value and the value
 * as the language shows it (Python's repr()); the core's table of words
 * has a column per binding of what each option kind takes ("a number of
 * seconds (int or float)" / "a number of seconds") and of the index an
 * element is named by (Python 0-based, Lua 1-based). --- */
typedef enum sleepacc_binding {
  SLEEPACC_BINDING_PYTHON = 0,
  SLEEPACC_BINDING_LUA = 1
} sleepacc_binding;
/* Room for sleepacc_fault_text's sentence (a longer one is cut to fit). */
#define SLEEPACC_FAULT_TEXT_MAX (2 * SLEEPACC_FAULT_WORDS_MAX)
/* The sentence of fault f (kind TYPE, RULE or KEY) for binding into buf
 * (cap bytes, always terminated), <name> the option, or "<option>[i]" for
 * a list's element (i by the binding's first index), after the way to it
 * through the tables entered (f->at: "results[2].stats.median"):
 *   TYPE  "<name>: must be <what the option's kind takes>, got <type>";
 *   RULE  "<name>: <the core's words>, got <shown>" (show 0: without
 *         ", got ...");
 *   KEY   "<key>: unknown option; known: <the known keys>", or for a key
 *         that is no string "options: option names must be strings, got a
 *         key of type <type>".
 * type: the language's name of the value's type (of the key's, for KEY);
 * for TYPE, a REAL value (v, may be NULL) where a whole number is taken is
 * named by the binding's word for it where it has one (Lua: "a fraction",
 * a number that is no integer).  shown: the value as the binding shows it
 * (NULL: type; for Lua, whose strings and booleans have one form, a TEXT
 * value v is shown by the core: quoted, its first 60 bytes, a NUL byte as
 * \0; a BOOL true or false; a NaN nan).
 * Returns the whole sentence's length (as snprintf, also when it was
 * cut), or -EINVAL for kind NONE or an unknown binding (buf
 * ""), -EFAULT for a NULL f or buf. */
int sleepacc_fault_text(const sleepacc_fault *f, int binding, const sleepacc_value *v, const char *type,
                        const char *shown, char *buf, size_t cap);
/* --- argument words (issue 12, luawords): the template of a wrong type
 * (sleepacc_fault_text's TYPE sentence is composed by it) for an argument
 * that is no option as well (Lua: a path, sa.sweep's progress, the
 * results; Python: _core.table's rows and style), so each binding words
 * only what the argument takes, in its language ("a table", "a str"). --- */
/* "<name>: must be <takes>, got <type>" into buf (cap bytes, always
 * terminated, cut to fit; a NULL name or type "?", a NULL takes "another
 * value"): the whole sentence's length, as snprintf, or -EFAULT for a NULL
 * buf or cap 0. */
int sleepacc_type_text(const char *name, const char *takes, const char *type, char *buf, size_t cap);
/* The row of a string argument that is no option (a path, a style, an
 * output), read by sleepacc_value_read under the argument's name into a
 * const char * (the binding's string, borrowed): a wrong type is a TYPE
 * fault of kind NAME ("path: must be a string, got number"), a NUL byte
 * the core's rule ("must not contain a NUL byte"), as a string option's. */
extern const sleepacc_option sleepacc_text_option[];
/* The walk of a field table (fields.c): the core reads every row and
 * drives the shape of the binding's object, so a binding converts one
 * value at a time and builds on a stack.  The rules, per binding:
 *   - a null value: Python None; Lua none (the key absent, an array's
 *     element a hole); OMIT_NULL leaves the key out in both;
 *   - a NULL_KEYS row (the keys of the null values): Lua's only;
 *   - PAIRS: Python a dict {key: value}; Lua an array of one object per
 *     pair by the row's .sub (its two rows name key and value);
 *   - NESTED an object, LIST an array (each element by its row). */
typedef struct sleepacc_field_sink {
  /* Push v: a plain value (INT, REAL, BOOL, TEXT, NULL), or a new empty
   * container, an object (NESTED) or an array (SLEEPACC_VALUE_ITEMS, .i
   * its length).  0, or a negative number (the binding's failure) that
   * ends the walk. */
  int (*push)(void *ctx, const sleepacc_value *v);
  /* Pop the top and put it in the container below it: under key, or (key
   * NULL) at index, 0-based (an array's element; a Python PAIRS dict's int
   * key).  0 or negative as push. */
  int (*put)(void *ctx, const char *key, int64_t index);
  void *ctx;
  int binding; /* sleepacc_binding */
} sleepacc_field_sink;
/* The deepest nesting a walk pushes (containers, plus one value); deeper
 * tables are refused with -E2BIG. */
#define SLEEPACC_FIELDS_DEPTH 8
/* Push the object of the struct at base described by table: 0, or a
 * negative number (the sink's, -E2BIG, -EFAULT for NULLs).  On failure the
 * stack holds what was pushed and not put (the binding frees it). */
int sleepacc_fields_walk(const sleepacc_field *table, const void *base, const sleepacc_field_sink *s);
/* Push row f's value alone: 1 pushed, 0 nothing (a null left out: by
 * OMIT_NULL, or one the binding's objects cannot hold), or a negative
 * number as sleepacc_fields_walk. */
int sleepacc_field_walk(const sleepacc_field *f, const void *base, const sleepacc_field_sink *s);
/* A sweep's lists (rows of kind METHODS and DURATIONS, read into
 * sleepacc_sweep_args), one deadline (DEADLINE, into an int64_t: both
 * bindings' sleep_until) and seconds under the duration rule (SECONDS, in
 * ns into an int64_t, at most one day: the seconds_ns call's argument). */
extern const sleepacc_option sleepacc_sweep_lists[];
extern const sleepacc_option sleepacc_deadline_option[];
extern const sleepacc_option sleepacc_seconds_option[];
/* --- daysleep: the one rule of a sleep of seconds, both bindings'
 * sleep(seconds) (options.c, config.c).  Like time.sleep: any finite
 * seconds >= 0, no day cap (the step runs in chunks, each kernel wait at
 * most a day); a value whose ns, or now + ns, overflow int64 is refused.
 * The 1-day guard of an absolute deadline (sleepacc_deadline_check) stays
 * sleep_until's. --- */
/* An option kind: INT (whole seconds) or REAL seconds of a sleep -> the
 * CLOCK_MONOTONIC deadline they end at, now + ns (sleepacc_sleep_check,
 * now read by the conversion), into an int64_t. */
#define SLEEPACC_OPT_SLEEP 15
/* Its one row, "seconds": what a binding's sleep(seconds) reads, then
 * hands the deadline to sleepacc_precise_begin. */
extern const sleepacc_option sleepacc_sleep_option[];
/* A sleep's seconds as its deadline from now_ns: a real s (real != 0,
 * sleepacc_seconds_to_ns) or whole seconds (real 0,
 * sleepacc_whole_seconds_to_ns(whole, overflow)).  0 with *deadline_ns =
 * now_ns + ns, or -EINVAL with *message (if not NULL) "must be finite"
 * (NaN/inf), "must be non-negative", or, when ns or now_ns + ns overflow
 * int64, "must end before the int64 ns clock does (292 years from boot)";
 * *deadline_ns is left as it was. */
int sleepacc_sleep_check(int real, double s, int64_t whole, int overflow, int64_t now_ns,
                         int64_t *deadline_ns, const char **message);
/* One value v (NULL: absent) of option o under the name name (NULL:
 * o->name) into base, by sleepacc_option_set (DEADLINE: an INT by
 * sleepacc_deadline_check); 0, or -EINVAL/-ERANGE with *f. */
int sleepacc_value_read(const sleepacc_option *o, const char *name, void *base, const sleepacc_value *v,
                        sleepacc_fault *f);
/* A run's config from g: the defaults, every option (method and duration
 * required: an absent one is a TYPE fault), the defaults that depend on
 * another (sleepacc_options_complete; point: a sweep's point), then every
 * rule (sleepacc_config_words: a RULE fault naming the option), and a
 * margin given for a method that is not hybrid (no other family has one)
 * is a RULE fault too, unless point.  0 or a negative errno with *f (kind
 * NONE: the getter's failure). */
int sleepacc_config_read(sleepacc_config *c, const sleepacc_getter *g, int point, sleepacc_fault *f);
/* A sweep as read: its options, lists and plan (in the getter's room). */
typedef struct sleepacc_sweep_args {
  sleepacc_config config;          /* what every point shares */
  const sleepacc_method **methods; /* the methods given, or NULL: every available one */
  size_t nm;
  int64_t *durations;              /* the durations given, or NULL: the default ladder */
  size_t nd;
  sleepacc_point *points;          /* the plan */
  size_t count;
} sleepacc_sweep_args;
/* A sweep from g: methods, durations (each element by its rule, named
 * "methods" index i), then the options every point shares (budget
 * SLEEPACC_SWEEP_BUDGET_NS unless given; sleepacc_options_complete as a
 * point), the plan (sleepacc_sweep_plan: a RULE fault, show 0) and, when
 * check, every point's run (sleepacc_sweep_check: a RULE fault, show 1).
 * check 0: only the plan (its options: mode, margin).  A margin given
 * where no point's method is hybrid is a RULE fault.  Returns the points'
 * count, or a negative errno with *f (NONE: the getter's or an errno no rule
 * explains). */
int sleepacc_sweep_read(sleepacc_sweep_args *s, const sleepacc_getter *g, int check, sleepacc_fault *f);
/* A sleeper's (pacer != 0: a pacer's, its period required) config from g:
 * the defaults, the options of sleepacc_sleeper_options, then every rule
 * (sleepacc_sleeper_config_explain: a RULE fault).  0 or -errno with *f. */
int sleepacc_sleeper_read(sleepacc_sleeper_config *c, int pacer, const sleepacc_getter *g,
                          sleepacc_fault *f);

/* One registry row as a binding shows it (sa.methods(), sleepacc.methods()):
 * family and honours_slack by name, the probe's answer. */
typedef struct sleepacc_method_info {
  const char *name, *family, *description;
  int64_t granularity_ns;
  const char *honours_slack; /* "yes", "no", "unknown" */
  int absolute, available;
} sleepacc_method_info;
extern const sleepacc_field sleepacc_method_info_fields[]; /* in that order */
int sleepacc_method_info_get(const sleepacc_method *m, sleepacc_method_info *out);

/* -------------------------------------------------------------------------
 * calls (issue 12): the bindings' queries as rows of one table
 * (csrc/calls.c), so a binding has one generic dispatcher and adding a
 * query is one row and one core function, no binding code.  A row names
 * the query in each binding, its arguments (option rows, converted by the
 * binding's option converter), the size of the caller's answer buffer, the
 * function that fills it and the field table the answer is converted by.
 * ---------------------------------------------------------------------- */
/* A field type beside sleepacc_field_type's: a sequence (sleepacc_list),
 * each element the row .sub[0] (its offset relative to the element);
 * Python a list, Lua an array.  Its value: SLEEPACC_VALUE_ITEMS. */
#define SLEEPACC_FIELD_LIST 12
/* Row flag: the keys of the object's null values, for a binding whose
 * objects cannot hold a null (Lua: such a key is absent); a binding whose
 * objects can (Python's None) leaves this row out. */
#define SLEEPACC_FIELD_NULL_KEYS 4
#define SLEEPACC_VALUE_ITEMS 8 /* .base: the sleepacc_list, .sub: its row */
typedef struct sleepacc_list {
  const void *at; /* the first element */
  size_t n;       /* elements */
  size_t stride;  /* bytes from one element to the next */
} sleepacc_list;

/* The arguments of a query, one slot per option kind a row's args use
 * (INT64 and SECONDS, INT, BOOL and STYLE, NAME, TABLE and RECORDS,
 * VALUES); an argument not given is 0 or NULL. */
typedef struct sleepacc_call_args {
  int64_t i64;      /* an INT64 argument (format_duration's ns), SECONDS in ns (seconds_ns's) */
  int i;            /* an INT argument (clock_info's reads), a BOOL (plan's sweep_point) */
  const char *name; /* a NAME argument (stats_level's name) */
  const sleepacc_getter *options; /* a TABLE argument (plan's options): the core reads it */
  const int64_t *values; /* a VALUES argument (stats' samples), lent for the call ... */
  size_t count;          /* ... and how many */
  /* Memory the call asks for (stats' scratch; at most twice: a table's rows, then its text), the binding's,
   * freed after the answer; NULL (or none given): -ENOMEM.  It may be the
   * interpreter's memory: a row that asks for it is never BLOCKS. */
  void *(*room)(void *ctx, size_t bytes);
  void *ctx;
  const char *writer, *writer_version; /* the binding and its version (a results file's header) */
} sleepacc_call_args;

/* How a binding shows an answer: */
typedef enum sleepacc_call_shape {
  SLEEPACC_CALL_OBJECT = 0, /* a dict / table of the answer's fields */
  SLEEPACC_CALL_VALUE,      /* the value of its first field alone */
  SLEEPACC_CALL_MODULE      /* no function: its fields are set on the module once, at load */
} sleepacc_call_shape;
/* Row flag: the call may take a while (reads files, measures): a binding
 * releases its interpreter lock around it. */
#define SLEEPACC_CALL_BLOCKS 1

/* Where an answer is: its field table and the struct it describes (by
 * default the row's fields over the whole buffer; a function may point
 * them elsewhere in the buffer, e.g. host facts' rows built at run time). */
typedef struct sleepacc_answer {
  const sleepacc_field *fields;
  const void *base;
  sleepacc_fault fault; /* what the read of a TABLE argument refused (kind NONE: nothing) */
  const char *context;  /* what an OS failure names (save's path; NULL: the row's what) */
} sleepacc_answer;

typedef struct sleepacc_call {
  const char *python;          /* the function's (or MODULE row's) name in sleepacc._core; NULL: none */
  const char *lua;             /* the name in the Lua module; NULL: none */
  const char *doc;             /* one line (Python's __doc__) */
  const char *what;            /* the core function an error names */
  int shape;                   /* sleepacc_call_shape */
  int flags;                   /* SLEEPACC_CALL_BLOCKS */
  const sleepacc_option *args; /* the arguments in order, over a sleepacc_call_args; NULL: none */
  int required;                /* the first `required` args must be given (Lua: not nil) */
  size_t size;                 /* bytes of the answer buffer (aligned as malloc's) */
  int (*fn)(const sleepacc_call_args *a, void *buf, sleepacc_answer *out);
  const sleepacc_field *fields; /* the answer's rows (sleepacc_answer's default) */
} sleepacc_call;
/* The queries, ending with a row whose fn is NULL: at most SLEEPACC_CALL_MAX
 * rows, each with at most SLEEPACC_CALL_MAX_ARGS arguments. */
#define SLEEPACC_CALL_MAX 32
#define SLEEPACC_CALL_MAX_ARGS 4
extern const sleepacc_call sleepacc_calls[];
/* Answer call c with the arguments a (NULL: none given) into buf (c->size
 * bytes, zeroed here first): 0 with *out set, or the negative errno of the
 * core function (-EFAULT for a NULL c, buf or out). */
int sleepacc_call_run(const sleepacc_call *c, const sleepacc_call_args *a, void *buf,
                      sleepacc_answer *out);
/* --- calls with options (issue 12, pycalls): a query whose argument is a
 * whole options table, read by the core through the binding's getter
 * (sleepacc_getter), its refusal in the answer's fault, which the binding
 * words in its one fault mapper; so a binding's plan of a run or of a sweep
 * is a row too (plan, sweep_plan, seconds_ns; Python's rows), and so are
 * the statistics of values a binding lends (stats). --- */
/* An argument's kind beside sleepacc_option_kind's: a whole options table.
 * The binding passes a getter over it in sleepacc_call_args.options (a
 * Python dict: its keys, each value by its option's rule) and, when the
 * call fails with the answer's fault set (or its getter failed: kind
 * NONE), words that fault as it words a read's.  A row with a TABLE
 * argument is never SLEEPACC_CALL_BLOCKS (the getter runs in the
 * binding's interpreter). */
#define SLEEPACC_OPT_TABLE 13
/* And: int64 values a binding lends for the call (a Python buffer of
 * int64, stats' samples), in sleepacc_call_args.values and .count. */
#define SLEEPACC_OPT_VALUES 14
/* sweep_plan's answer: the points of sleepacc_sweep_read (check 0: the
 * plan only) as a list of sleepacc_point_fields (in the getter's room). */
extern const sleepacc_field sleepacc_point_fields[]; /* method, duration_ns */
/* The module constants (the MODULE rows' struct): the version, limits and
 * name lists a binding exposes. */
typedef struct sleepacc_constants {
  const char *version;            /* SLEEPACC_VERSION */
  int64_t max_duration_ns;        /* SLEEPACC_MAX_DURATION_NS */
  int64_t max_samples;            /* SLEEPACC_MAX_SAMPLES */
  int64_t sweep_budget_ns;        /* SLEEPACC_SWEEP_BUDGET_NS */
  double hist_precision;          /* SLEEPACC_HIST_PRECISION */
  sleepacc_list stats_fields;     /* the names of sleepacc_stats_fields' rows */
  sleepacc_list result_fields;    /* the names of sleepacc_result_fields' rows */
  sleepacc_list policy_names;     /* sleepacc_policy_name(0), (1), ...: index = value */
  sleepacc_list mode_names;       /* sleepacc_mode_name(0), (1), ... */
  sleepacc_list durations_ns;     /* sleepacc_default_durations_ns */
  const char *names[2][16];       /* the policy and mode names policy_names/mode_names point at */
} sleepacc_constants;

/* --- words (issue 12): where the two bindings worded one rule each their
 * own way, the core's one rule and words (options.c, fields.c). --- */
/* The rule of every text a script gives (an option's or a field's value, a
 * path, a style): NULL when s (len bytes; 0: not known) holds no NUL byte,
 * else the words "must not contain a NUL byte" (it would be cut short
 * there).  sleepacc_option_set and sleepacc_field_set apply it to a TEXT
 * value whose .i is its length, before any other rule (-ERANGE). */
const char *sleepacc_text_words(const char *s, size_t len);
/* An integer beyond int64 (a value's .overflow): sleepacc_value_read
 * refuses it for an INT64 option, "must be <= 9223372036854775807" (or ">=
 * the option's least"); the whole-table readers (config, sleeper, sweep)
 * take it saturated so a rule with a range words it first ("slack: must be
 * 1 ns .. 1 s"), then refuse it that way; an INT option, seconds and a
 * deadline by their own bounds; sleepacc_field_set: "out of range". */
/* A handle's refusal in words, to follow its kind's name in
 * sleepacc_precise_message (its one caller, the bindings' wording): -EBADF
 * (closed) "is closed", -EBUSY (another identity's call holds it) "is
 * sleeping in another thread"; NULL for another err (precise.c). */
const char *sleepacc_precise_words(int err);
/* --- precise and writer words (issue 12, luathin): what both bindings
 * used to compose around the core's words, each its own way. --- */
/* Where a handle failed, for sleepacc_precise_message. */
#define SLEEPACC_PRECISE_AT_HANDLE 0 /* open, close, stats */
#define SLEEPACC_PRECISE_AT_CALL 1   /* its sleep (a sleeper) or wait (a pacer) */
/* Room enough for sleepacc_precise_message's words. */
#define SLEEPACC_PRECISE_WORDS_MAX 64
/* The one wording of a failure err of handle h (its kind's name "Sleeper"
 * or "Pacer"; NULL h: a sleeper's) into buf (cap bytes, cut to fit):
 *   -EBADF, -EBUSY, the refusal: the whole message, "<name> is closed" or
 *     "<name> is sleeping in another thread" (sleepacc_precise_words); 1;
 *   another err (0 too): what failed, for the binding to set beside the
 *     errno's name and message: the option an open blamed (field, from
 *     sleepacc_precise_open, by sleepacc_option_of_field: "method"; the
 *     device named for dma_latency: "dma_latency (/dev/cpu_dma_latency)"),
 *     else at SLEEPACC_PRECISE_AT_CALL the call, "Sleeper.sleep" or
 *     "Pacer.wait", else "<name>"; 0. */
int sleepacc_precise_message(const sleepacc_precise *h, int err, const char *field, int at, char *buf,
                             size_t cap);
/* --- records (issue 12, this round): a struct read back from a script's
 * table by its field table, through the getter (sleepacc_getter.enter),
 * so a table of records is a call row like the others (table; Python's
 * _core.table read its rows by a converter of its own, Lua's sa.table by
 * the run's kept C record) (fields.c, calls.c). --- */
/* Option kinds beside those above: */
#define SLEEPACC_OPT_RECORDS 16 /* a list of records (Lua: or one record), read by the core through
                                 * a getter over the one value (sleepacc_call_args.options) */
#define SLEEPACC_OPT_RECORD 17  /* a table of a struct's fields (what a NESTED row takes) */
#define SLEEPACC_OPT_STYLE 18   /* TEXT, a table style's name (sleepacc_table_style_name), as INT */
/* A value kind beside those above: int64 values the binding lends (a
 * record's kept samples, Lua's Samples userdata): .base, .i their count. */
#define SLEEPACC_VALUE_SAMPLES 9
/* A field type beside those above: values a binding lent, set from a
 * SAMPLES value (sleepacc_field_set; never walked out): a sleepacc_samples. */
#define SLEEPACC_FIELD_SAMPLES 13
typedef struct sleepacc_samples {
  const int64_t *at; /* the first value (NULL: none) */
  size_t n;          /* how many */
} sleepacc_samples;
/* The name of table style i (0 "irtt", 1 "wide"), NULL past the last. */
const char *sleepacc_table_style_name(int i);
/* Set the struct at base from the table g stands in (name not NULL: from
 * the table name[index] holds there, index -1 the value itself), by field table t:
 * each row's key read (g->get) and set by its type (sleepacc_field_set);
 * a NESTED row's table entered (g->enter) and read by its rows.  A key that
 * is absent keeps the struct's value (an OPT_INT64 row's is null, -1: Lua's
 * objects leave a null out), unless its row is REQUIRED; keys of no row are
 * not read.  A TEXT the struct keeps is the getter's (valid
 * while the call lasts).  0, or -EINVAL / -ERANGE / -ENOENT with *f: TYPE
 * (the value's kind is not the row's, an absent required key included),
 * RULE (field_set's words: "unknown mode"), f->at the way to it from g's
 * table (g left there); the getter's own failure (kind NONE); -ENOTSUP for
 * a getter that cannot enter; -E2BIG past SLEEPACC_GETTER_DEPTH. */
int sleepacc_fields_read(const sleepacc_field *t, const sleepacc_getter *g, const char *name,
                         int64_t index, void *base, sleepacc_fault *f);

/* The table of n rows in style (NULL: "irtt"; sleepacc_table_style) as
 * text in memory the binding gives, alloc(ctx, bytes) asked for once (the
 * NUL included), into *text: the text's length; or -EINVAL with *words the
 * style's rule, "must be 'irtt' or 'wide'" (the binding adds ", got
 * <style>"); -ENOMEM when alloc returns NULL; the renderer's negative errno
 * (table.c). */
int sleepacc_table_text(const char *style, const sleepacc_row *rows, size_t n,
                        void *(*alloc)(void *ctx, size_t bytes), void *ctx, char **text,
                        const char **words);

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
/* The trace call's answer (the "trace" row of sleepacc_calls), by
 * sleepacc_trace_fields: schema, method, mode, requested_ns, slack_ns, cpu,
 * n, lateness, terms {rounding, ...}, complete, idle, idle_state, untraced,
 * gaps, lost, missed_pages, events, interrupted, mounted, tracefs. */
typedef struct sleepacc_trace_answer {
  sleepacc_trace trace;
  const char *schema, *method, *mode;
  int64_t requested_ns, slack_ns, cpu, n, gaps, lost, missed_pages, events;
  int mounted, interrupted;
  char tracefs[256];
  sleepacc_list lateness, terms[SLEEPACC_TRACE_TERMS], complete, idle, idle_state, untraced;
  char why[512];
} sleepacc_trace_answer;
extern const sleepacc_field sleepacc_trace_fields[];

#ifdef __cplusplus
}
#endif
#endif /* SLEEPACC_H */
