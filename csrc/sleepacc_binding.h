/*
 * sleepacc_binding.h -- the protocol between the core and its bindings
 * (python/_ext, lua/), which C programs never call: field tables (a struct
 * described as data, walked into a dict or a table), option tables (how a
 * script's value becomes a config field), the getter a binding reads its
 * options through and the one fault a read reports, the call rows of the
 * bindings' queries, the precise handle both bindings embed, and the words
 * of every error they raise.  The core's sources include it through
 * sleepacc_int.h.  Not installed: the C API is sleepacc.h.
 */
#ifndef SLEEPACC_BINDING_H
#define SLEEPACC_BINDING_H

#include "sleepacc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------------------------
 * Field tables (fields.c, and each struct's owner for its table).
 * ---------------------------------------------------------------------- */
/* Field tables: a struct described as data (CPython's PyMemberDef), so a
 * binding converts any of the core's result structs with one loop and the
 * Python dict and the Lua table cannot disagree.  A table is an array of
 * rows terminated by a NULL name. */
typedef enum sleepacc_field_type {
  SLEEPACC_FIELD_INT64 = 0,     /* int64_t */
  SLEEPACC_FIELD_DOUBLE = 1,    /* double */
  SLEEPACC_FIELD_STRING = 2,    /* const char *; NULL is null (None / nil) */
  SLEEPACC_FIELD_BOOL = 3,      /* int, 0 or 1 */
  SLEEPACC_FIELD_NESTED = 4,    /* a sub-object: the rows of .sub, their offsets
                                   relative to this row's offset */
  SLEEPACC_FIELD_OPT_INT64 = 5, /* int64_t; a negative value is null */
  SLEEPACC_FIELD_INT = 6,       /* int */
  SLEEPACC_FIELD_METHOD = 7,    /* const sleepacc_method *, by its name; NULL is null */
  SLEEPACC_FIELD_MODE = 8,      /* int sleepacc_mode, by its name (sleepacc_mode_name) */
  SLEEPACC_FIELD_TEXT = 9,      /* an inline NUL-terminated char array (a fact's s) */
  SLEEPACC_FIELD_NULL = 10,     /* always null (an unknown fact) */
  SLEEPACC_FIELD_PAIRS = 11,    /* sleepacc_pairs */
  SLEEPACC_FIELD_LIST = 12,     /* a sequence (sleepacc_list), each element the row
                                   .sub[0] (its offset relative to the element);
                                   Python a list, Lua an array */
  SLEEPACC_FIELD_SAMPLES = 13   /* a sleepacc_samples: values a binding lent, set
                                   from a SAMPLES value (never walked out) */
} sleepacc_field_type;

/* Row flags (sleepacc_field.flags, or-ed). */
typedef enum sleepacc_field_flag {
  /* A null value leaves the key out (instead of None / nil). */
  SLEEPACC_FIELD_OMIT_NULL = 1,
  /* A binding filling the struct from an object refuses one that lacks the
   * key (KeyError / an error naming it). */
  SLEEPACC_FIELD_REQUIRED = 2,
  /* The keys of the object's null values, for a binding whose objects
   * cannot hold a null (Lua: such a key is absent); a binding whose objects
   * can (Python's None) leaves this row out. */
  SLEEPACC_FIELD_NULL_KEYS = 4,
  /* A record read back (sleepacc_fields_read): a NESTED row COMPLETE
   * requires every row of its sub-object but those flagged LATER, added
   * within the schema's version (an older record lacks them), so a value
   * left out is refused rather than written as 0. */
  SLEEPACC_FIELD_COMPLETE = 8,
  SLEEPACC_FIELD_LATER = 16,
  /* The point rules a reader of a results file holds a record to
   * (docs/schema.md; Python's records.check_point), so sleepacc_field_set
   * refuses (-ERANGE) what would make the file unreadable: NONNEG an
   * integer >= 0 ("must be >= 0"), NAME non-empty text without control
   * characters ("must be a method name (printable text)"), MODE_NAME a
   * mode's name (sleepacc_mode_from_name: "must be 'relative' or
   * 'periodic'"). */
  SLEEPACC_FIELD_NONNEG = 32,
  SLEEPACC_FIELD_NAME = 64,
  SLEEPACC_FIELD_MODE_NAME = 128
} sleepacc_field_flag;

typedef struct sleepacc_field {
  const char *name;                 /* key in the binding's object */
  size_t offset;                    /* offsetof in the struct */
  int type;                         /* sleepacc_field_type */
  const struct sleepacc_field *sub; /* NESTED, PAIRS, LIST: the sub-object's rows */
  int flags;                        /* sleepacc_field_flag bits */
} sleepacc_field;

/* A field's value in the few kinds a binding has: the core reads and sets
 * every field type, so a binding's converter has one case per kind, none
 * per type (a new type needs no binding edit). */
typedef enum sleepacc_value_kind {
  SLEEPACC_VALUE_NULL = 0,    /* None / nil (OMIT_NULL: the key is left out) */
  SLEEPACC_VALUE_INT = 1,     /* .i */
  SLEEPACC_VALUE_REAL = 2,    /* .d */
  SLEEPACC_VALUE_BOOL = 3,    /* .i, 0 or 1 */
  SLEEPACC_VALUE_TEXT = 4,    /* .s, NUL-terminated (host facts may hold bytes that are not UTF-8) */
  SLEEPACC_VALUE_NESTED = 5,  /* the rows .sub of the sub-object at .base */
  SLEEPACC_VALUE_PAIRS = 6,   /* the sleepacc_pairs at .base (.sub: a pair's two rows) */
  SLEEPACC_VALUE_LIST = 7,    /* a list given (a sweep's methods, durations): .i its
                                 length, its elements asked for by index */
  SLEEPACC_VALUE_ITEMS = 8,   /* a LIST field's value: .base the sleepacc_list, .sub its row */
  SLEEPACC_VALUE_SAMPLES = 9  /* int64 values the binding lends (a record's kept samples,
                                 Lua's Samples userdata): .base, .i their count */
} sleepacc_value_kind;
typedef struct sleepacc_value {
  int kind;                  /* sleepacc_value_kind */
  int64_t i;                 /* INT, BOOL */
  double d;                  /* REAL */
  const char *s;             /* TEXT (.i: its length in bytes when the binding knows it, else 0) */
  const sleepacc_field *sub; /* NESTED: its rows */
  const void *base;          /* NESTED: its struct */
  int overflow;              /* INT: 1 or -1 when the integer given was beyond int64 that way (.i
                                saturated; the core refuses it, so no binding has to) */
} sleepacc_value;
/* Row f of the struct at base as a value: INT64, INT and OPT_INT64 (a
 * negative is NULL) as INT, DOUBLE as REAL, BOOL as BOOL, STRING and TEXT as
 * TEXT (a NULL string is NULL), METHOD and MODE by name, NESTED as NESTED,
 * PAIRS as PAIRS, NULL and an unknown type as NULL. */
void sleepacc_field_get(const sleepacc_field *f, const void *base, sleepacc_value *out);
/* A language number that is a double (every Lua 5.1/LuaJIT number, a Lua
 * 5.3+ float) as a value: an integral one INT (beyond int64: .i saturated,
 * .overflow its sign, which the core refuses), any other REAL. */
void sleepacc_value_number(sleepacc_value *out, double d);
/* Set row f of the struct at base from v: INT (or BOOL) into INT64,
 * OPT_INT64, INT and BOOL (-ERANGE beyond int) and DOUBLE; REAL into DOUBLE;
 * TEXT into STRING (the pointer itself: returns 1, the caller keeps the text
 * alive), METHOD and MODE by name (-ENOENT unknown); NULL into STRING and
 * METHOD, and into OPT_INT64 as -1 (field_get's null).  -EINVAL for a
 * kind the row cannot take (NESTED: set its rows).  *message (if not
 * NULL) gets the failure's words ("unknown method", "out of range",
 * "cannot be set from"), to follow the row's name. */
int sleepacc_field_set(const sleepacc_field *f, void *base, const sleepacc_value *v,
                       const char **message);
/* A LIST field's sequence. */
typedef struct sleepacc_list {
  const void *at; /* the first element */
  size_t n;       /* elements */
  size_t stride;  /* bytes from one element to the next */
} sleepacc_list;
/* A SAMPLES field: int64 values a binding lent. */
typedef struct sleepacc_samples {
  const int64_t *at; /* the first value (NULL: none) */
  size_t n;          /* how many */
} sleepacc_samples;

/* The core's structs as field tables, each owned by the file that owns
 * the struct.  sleepacc_stats (stats.c): */
extern const sleepacc_field sleepacc_stats_fields[];
/* sleepacc_config as a field table (method by name, mode and policy as
 * ints, env nested), so a binding fills a config from its own object and
 * shows the defaults with one loop each. */
extern const sleepacc_field sleepacc_config_fields[];
/* Rows of the record in schema order: method, mode, requested_ns, n, stats
 * (nested), missed, cpu_ns_per_call, cpu_percent, ctx_switches (nested:
 * voluntary, involuntary), wall_ns, env (nested: slack_ns, policy, priority,
 * cpu, lock_memory, dma_latency_us, margin_ns when hybrid). */
extern const sleepacc_field sleepacc_result_fields[];
/* sleepacc_row (table.c), every key required: method, requested_ns, mode
 * (by name), stats (nested sleepacc_stats_fields), cpu_percent. */
extern const sleepacc_field sleepacc_row_fields[];
/* sleepacc_sleeper_stats, sleepacc_sleeper_config and sleepacc_pacer_stats
 * (config.c). */
extern const sleepacc_field sleepacc_sleeper_stats_fields[];
extern const sleepacc_field sleepacc_sleeper_config_fields[];
extern const sleepacc_field sleepacc_pacer_stats_fields[];
/* Clocks (clock.c) and host facts (host.c) as field tables.  All the
 * clocks at once: */
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
 * Runs as a binding measures them (measure.c).
 * ---------------------------------------------------------------------- */
/* One run as a binding measures it, its memory, lifecycle and failure
 * words owned by the core, so a
 * binding's measure converts the config, allocates the one block the core
 * states, runs the chunks between its Ctrl-C checks, converts the record by
 * its field table and maps the error:
 *     size = sleepacc_run_memory(&cfg, flags);       block = alloc(size)
 *     sleepacc_run_open(&r, &cfg, block, size, flags);
 *     sleepacc_chunks(sleepacc_run_chunk, &r, check signals, ...);
 *     if (sleepacc_run_close(&r, &res, &used) < 0) sleepacc_run_words(&r, ...);
 *     give back the block past `used`.
 * A run fails at most once: open, a chunk or close keep the first failure
 * in the run, and close returns it. */
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
/* A binding's chunked runner, its protocol stated once: call
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
 * The precise handle (precise.c): a sleeper or a pacer with
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
 * (the GIL, a Lua state).  Every field is private.
 * ---------------------------------------------------------------------- */
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
 * Seconds: a script's seconds as the core's ns (clock.c).
 * ---------------------------------------------------------------------- */
/* Seconds -> ns, the nearest (beyond int64 saturates, a negative stays
 * negative): 0, or -EDOM for NaN/inf. */
int sleepacc_seconds_to_ns(double s, int64_t *ns);
/* Whole seconds -> ns, exact, saturating as
 * sleepacc_seconds_to_ns does (INT64_MAX, or -1 for a negative): s, or, when
 * the caller's integer did not fit int64 itself, overflow its sign (1 or
 * -1; 0 when it fit, as PyLong_AsLongLongAndOverflow reports it). */
int64_t sleepacc_whole_seconds_to_ns(int64_t s, int overflow);
/* A seconds argument, the whole conversion a binding
 * makes of one: a real s (real != 0: sleepacc_seconds_to_ns) or whole
 * seconds (real 0: sleepacc_whole_seconds_to_ns(whole, overflow)), then the
 * duration rule (sleepacc_duration_check).  0 with *ns set, or -EINVAL with
 * *message (if not NULL) "must be finite" (NaN/inf), "must be non-negative"
 * or "must be at most 86400 s (one day)"; *ns is left as it was. */
int sleepacc_seconds_check(int real, double s, int64_t whole, int overflow, int64_t *ns,
                           const char **message);
/* A sleep of seconds, both bindings' sleep(seconds): like time.sleep, any
 * finite seconds >= 0, no day cap (the step runs in chunks, each kernel
 * wait at most a day); a value whose ns, or now + ns, overflow int64 is
 * refused.  The 1-day guard of an absolute deadline (sleepacc_deadline_check)
 * stays sleep_until's. */
/* A sleep's seconds as its deadline from now_ns: a real s (real != 0,
 * sleepacc_seconds_to_ns) or whole seconds (real 0,
 * sleepacc_whole_seconds_to_ns(whole, overflow)).  0 with *deadline_ns =
 * now_ns + ns, or -EINVAL with *message (if not NULL) "must be finite"
 * (NaN/inf), "must be non-negative", or, when ns or now_ns + ns overflow
 * int64, "must end before the int64 ns clock does (292 years from boot)";
 * *deadline_ns is left as it was. */
int sleepacc_sleep_check(int real, double s, int64_t whole, int overflow, int64_t now_ns,
                         int64_t *deadline_ns, const char **message);

/* -------------------------------------------------------------------------
 * Options: how a script's value becomes a field of a config (options.c).
 * ---------------------------------------------------------------------- */
/* The options of a run as a binding takes them, in
 * measure()'s order (method and duration first, then the options every
 * run shares, n to dma_latency): the public name, how its value converts, the config
 * field it fills (by name and offset) and the least integer allowed.
 * The kinds of option (sleepacc_option_set converts each): */
typedef enum sleepacc_option_kind {
  SLEEPACC_OPT_METHOD = 0,     /* a method name */
  SLEEPACC_OPT_SECONDS = 1,    /* seconds -> int64 ns */
  SLEEPACC_OPT_BUDGET = 2,     /* seconds > 0 -> int64 ns, or none (0: only n stops) */
  SLEEPACC_OPT_INT64 = 3,      /* an integer >= lo, into an int64_t */
  SLEEPACC_OPT_INT = 4,        /* an integer >= lo, into an int */
  SLEEPACC_OPT_BOOL = 5,       /* int 0/1 */
  SLEEPACC_OPT_MODE = 6,       /* a name (sleepacc_mode_from_name) */
  SLEEPACC_OPT_POLICY = 7,     /* a name (sleepacc_policy_from_name) */
  SLEEPACC_OPT_NAME = 8,       /* a string */
  SLEEPACC_OPT_NUMBER = 9,     /* a double */
  SLEEPACC_OPT_METHODS = 10,   /* a list of METHOD values (sleepacc_sweep_lists) */
  SLEEPACC_OPT_DURATIONS = 11, /* a list of SECONDS values */
  SLEEPACC_OPT_DEADLINE = 12,  /* INT: a CLOCK_MONOTONIC deadline in ns (sleepacc_deadline_check) */
  SLEEPACC_OPT_TABLE = 13,     /* a call's argument: a whole options table (below) */
  SLEEPACC_OPT_VALUES = 14,    /* a call's argument: int64 values a binding lends */
  SLEEPACC_OPT_SLEEP = 15,     /* INT or REAL seconds of a sleep -> its deadline (below) */
  SLEEPACC_OPT_RECORDS = 16,   /* a list of records (Lua: or one record), read by the core
                                  through a getter over the one value */
  SLEEPACC_OPT_RECORD = 17,    /* a table of a struct's fields (what a NESTED row takes) */
  SLEEPACC_OPT_STYLE = 18      /* TEXT, a table style's name (sleepacc_table_style_name), as INT */
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
extern const char *const sleepacc_precise_takes[2][8];
/* The option that fills a field of either list ("env.dma_latency_us" ->
 * "dma_latency", "period_ns" -> "period"); another field is returned as is. */
const char *sleepacc_option_of_field(const char *field);
/* Option rules a binding applies while converting. */
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
/* One option from a script's value: the conversion of every option kind,
 * so no binding and no Python code writes an option's rule. */
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

/* A whole options table read by the core through one getter the binding
 * supplies, and one fault the binding words in one place.  The binding
 * converts values; the core walks the options (which it takes, required
 * ones, defaults, lists and their element rules, the config check, a
 * sweep's plan). */
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
/* -------------------------------------------------------------------------
 * Words: the one sentence of each error both bindings raise (words.c).
 * ---------------------------------------------------------------------- */
/* The sentence of a read's fault, composed by the core for both bindings.
 * A binding gives
 * only what its language knows: the type name of the value and the value
 * as the language shows it (Python's repr()); the core's table of words
 * has a column per binding of what each option kind takes ("a number of
 * seconds (int or float)" / "a number of seconds") and of the index an
 * element is named by (Python 0-based, Lua 1-based). */
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
/* The template of a wrong type
 * (sleepacc_fault_text's TYPE sentence is composed by it) for an argument
 * that is no option as well (Lua: a path, sa.sweep's progress, the
 * results; Python: _core.table's rows and style), so each binding words
 * only what the argument takes, in its language ("a table", "a str"). */
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
/* Its one row, "seconds": what a binding's sleep(seconds) reads, then
 * hands the deadline to sleepacc_precise_begin. */
extern const sleepacc_option sleepacc_sleep_option[];
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
 * Calls: the bindings' queries as rows of one table (calls.c), so a
 * binding has one generic dispatcher and adding a query is one row and one
 * core function, no binding code.  A row names
 * the query in each binding, its arguments (option rows, converted by the
 * binding's option converter), the size of the caller's answer buffer, the
 * function that fills it and the field table the answer is converted by.
 * ---------------------------------------------------------------------- */
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
/* Calls with options: a query whose argument is a whole options table,
 * read by the core through the binding's getter (sleepacc_getter), its
 * refusal in the answer's fault, which the binding words in its one fault
 * mapper; so a binding's plan of a run or of a sweep is a row too (plan,
 * sweep_plan, seconds_ns; Python's rows), and so are the statistics of
 * values a binding lends (stats).
 * A TABLE argument: the binding passes a getter over it in
 * sleepacc_call_args.options (a Python dict: its keys, each value by its
 * option's rule) and, when the call fails with the answer's fault set (or
 * its getter failed: kind NONE), words that fault as it words a read's.  A
 * row with a TABLE argument is never SLEEPACC_CALL_BLOCKS (the getter runs
 * in the binding's interpreter).
 * A VALUES argument: int64 values a binding lends for the call (a Python
 * buffer of int64, stats' samples), in sleepacc_call_args.values and .count. */
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

/* The rules both bindings apply to what a script gives, in one wording. */
/* The rule of every text a script gives (an option's or a field's value, a
 * path, a style): NULL when s (len bytes; 0: not known) holds no NUL byte,
 * else the words "must not contain a NUL byte" (it would be cut short
 * there).  sleepacc_option_set and sleepacc_field_set apply it to a TEXT
 * value whose .i is its length, before any other rule (-ERANGE). */
const char *sleepacc_text_words(const char *s, size_t len);
/* A name argument given with its length (method, strategy, missed policy):
 * 0, or -EINVAL when it is NULL or holds a NUL byte (it would be cut short
 * there).  A TEXT value's NUL byte is refused by sleepacc_option_set and
 * sleepacc_field_set, in sleepacc_text_words' words ("must not contain a NUL
 * byte"), by the length the binding gave. */
int sleepacc_name_check(const char *name, size_t len);
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
/* The words of a precise handle's failure, one wording for both bindings. */
/* Where a handle failed, for sleepacc_precise_message. */
#define SLEEPACC_PRECISE_AT_HANDLE 0 /* open, close, stats */
#define SLEEPACC_PRECISE_AT_CALL 1   /* its sleep (a sleeper) or wait (a pacer) */
/* Room enough for sleepacc_precise_message's words. */
#define SLEEPACC_PRECISE_WORDS_MAX 320
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
/* Records: a struct read back from a script's table by its field table,
 * through the getter (sleepacc_getter.enter), so a table of records is a
 * call row like the others (table) (fields.c, calls.c).  A RECORDS
 * argument is read through a getter over the one value
 * (sleepacc_call_args.options). */
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
#endif /* SLEEPACC_BINDING_H */
