/* test_precise.c -- the precise handle (csrc/precise.c), through its
 * public calls only: one identity at a time (another gets -EBUSY), a call
 * re-entered by the holding identity runs with its own sleeper (a pacer's
 * takes the pending tick), a claim made before fork() is void in the
 * child, close twice, the stats and the table that describes them, and
 * the tick tokens (unwait, a tick taken from a hand-off), a sleep longer
 * than a day. */
#include "sleepacc_binding.h"
#include "check.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Large objects live here, not on the stack. */
static sleepacc_precise H;
static sleepacc_sleeper OWN;
static sleepacc_precise_stats ST;

#define MS 1000000LL

static sleepacc_sleeper_config config(const char *method, int64_t period_ns, const char *missed) {
  sleepacc_sleeper_config c;
  sleepacc_sleeper_config_default(&c);
  c.method = method;
  c.period_ns = period_ns;
  if (missed) c.missed = missed;
  return c;
}

/* Step call c to its end (or a hand-off); the last step's result. */
static int run(sleepacc_precise_call *c) {
  int rc;
  do rc = sleepacc_precise_step(c);
  while (rc == 0 || rc == -EINTR);
  return rc;
}

/* The row called name in table t, or NULL. */
static const sleepacc_field *row(const sleepacc_field *t, const char *name) {
  for (; t && t->name; t++)
    if (strcmp(t->name, name) == 0) return t;
  return NULL;
}

static int64_t i64_at(const void *base, const sleepacc_field *f) {
  return *(const int64_t *)(const void *)((const char *)base + f->offset);
}

/* The one wording of a handle's failure, both
 * bindings': the whole refusal, else what failed (the option an open
 * blamed, the call, the handle), cut to fit. */
static void test_message_words(void) {
  static sleepacc_precise p; /* a closed handle of each kind, opened once */
  sleepacc_sleeper_config c = config("nanosleep", 10 * MS, NULL);
  char w[SLEEPACC_PRECISE_WORDS_MAX];
  const char *field = NULL;
  CHECK(sleepacc_precise_message(&H, -EBADF, NULL, SLEEPACC_PRECISE_AT_CALL, w, sizeof w) == 1);
  CHECK(!strcmp(w, "Sleeper is closed"));
  CHECK(sleepacc_precise_message(&H, EBUSY, NULL, SLEEPACC_PRECISE_AT_HANDLE, w, sizeof w) == 1);
  CHECK(!strcmp(w, "Sleeper is sleeping in another thread"));
  /* an open's EBUSY (field "method") is its signal method's, never a busy handle */
  CHECK(sleepacc_precise_message(&H, EBUSY, "method", SLEEPACC_PRECISE_AT_HANDLE, w, sizeof w) == 0);
  CHECK(!strcmp(w, "method")); /* here a signal is free: the option's name */
  CHECK(sleepacc_precise_message(&H, -ENOMEM, NULL, SLEEPACC_PRECISE_AT_CALL, w, sizeof w) == 0);
  CHECK(!strcmp(w, "Sleeper.sleep"));
  CHECK(sleepacc_precise_message(&H, 0, NULL, SLEEPACC_PRECISE_AT_HANDLE, w, sizeof w) == 0);
  CHECK(!strcmp(w, "Sleeper"));
  CHECK(sleepacc_precise_message(&H, -ENOENT, "dma_latency_us", 0, w, sizeof w) == 0);
  CHECK(!strcmp(w, "dma_latency (/dev/cpu_dma_latency)")); /* the option's name and its device */
  CHECK(sleepacc_precise_message(&H, -ENOENT, "method", 0, w, sizeof w) == 0);
  CHECK(!strcmp(w, "method")); /* another field: the option's name */
  CHECK(sleepacc_precise_message(NULL, -EBADF, NULL, 0, w, sizeof w) == 1 && !strcmp(w, "Sleeper is closed"));
  CHECK(sleepacc_precise_open(&p, SLEEPACC_PRECISE_PACER, &c, NULL) == 0 && sleepacc_precise_close(&p) == 0);
  CHECK(sleepacc_precise_message(&p, -EBADF, NULL, 0, w, sizeof w) == 1 && !strcmp(w, "Pacer is closed"));
  CHECK(sleepacc_precise_message(&p, -EIO, NULL, SLEEPACC_PRECISE_AT_CALL, w, sizeof w) == 0);
  CHECK(!strcmp(w, "Pacer.wait"));
  c.period_ns = 0; /* a pacer's open blames its period */
  CHECK(sleepacc_precise_open(&p, SLEEPACC_PRECISE_PACER, &c, &field) == -EINVAL);
  CHECK(sleepacc_precise_message(&p, -EINVAL, field, 0, w, sizeof w) == 0 && !strcmp(w, "period"));
  CHECK(sleepacc_precise_message(&p, -EBUSY, NULL, 0, w, 5) == 1 && !strcmp(w, "Pace")); /* cut */
  CHECK(sleepacc_precise_message(&p, -EBUSY, NULL, 0, NULL, 0) == 1);
}

static void test_open_close_twice(void) {
  sleepacc_sleeper_config c = config("nanosleep", 0, NULL);
  sleepacc_precise_call call;
  const char *field = "x";
  CHECK(sleepacc_precise_is_open(&H) == 0); /* zeroed memory is a closed handle */
  CHECK(sleepacc_precise_close(&H) == 0);
  CHECK(sleepacc_precise_open(&H, 7, &c, &field) == -EINVAL && field == NULL);
  c.method = "no_such_method";
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, &field) < 0);
  CHECK(field && strcmp(field, "method") == 0 && !sleepacc_precise_is_open(&H));
  c = config("nanosleep", 0, NULL);
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, &field) == -EINVAL); /* no period */
  CHECK(field && strcmp(field, "period_ns") == 0);
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, &field) == 0 && field == NULL);
  CHECK(sleepacc_precise_is_open(&H) == 1);
  CHECK(sleepacc_precise_begin(&call, &H, 1, sleepacc_now_ns() + MS, 0, NULL) == 0);
  CHECK(run(&call) == 1 && sleepacc_now_ns() >= call.deadline_ns);
  CHECK(sleepacc_precise_end(&call, 0) == 0);
  CHECK(sleepacc_precise_end(&call, 0) == 0); /* twice is a no-op */
  CHECK(sleepacc_precise_unwait(&H, 1) == -EINVAL); /* a sleeper has no ticks */
  CHECK(sleepacc_precise_close(&H) == 0);
  CHECK(sleepacc_precise_close(&H) == 0);
  CHECK(!sleepacc_precise_is_open(&H));
  CHECK(sleepacc_precise_begin(&call, &H, 1, sleepacc_now_ns(), 0, NULL) == -EBADF);
  CHECK(sleepacc_precise_step(&call) == -EINVAL && sleepacc_precise_end(&call, 1) == 0);
  CHECK(sleepacc_precise_poll(&H, 1, sleepacc_now_ns(), 0) == -EBADF);
  /* each binding's refusal follows its type's name */
  CHECK(!strcmp(sleepacc_precise_words(-EBADF), "is closed"));
  CHECK(!strcmp(sleepacc_precise_words(EBADF), "is closed"));
  CHECK(!strcmp(sleepacc_precise_words(-EBUSY), "is sleeping in another thread"));
  CHECK(sleepacc_precise_words(-EINVAL) == NULL && sleepacc_precise_words(0) == NULL);
  test_message_words();
  /* the stats of a closed handle stay readable */
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.sleeper.count == 1);
  /* reopened: as the kind asked for */
  c = config("auto", 10 * MS, NULL);
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, NULL) == 0);
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == 0); /* closes first */
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* Two identities: the second gets -EBUSY for every call until the first
 * ends; the same identity is re-entered and needs a sleeper of its own. */
static void test_claim_two_identities_and_reentry(void) {
  sleepacc_sleeper_config c = config("timerfd", 0, NULL);
  sleepacc_precise_call outer, other, inner;
  int64_t t0, dl;
  if (sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) != 0) {
    c.method = "clock_nanosleep";
    CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == 0);
  }
  dl = sleepacc_now_ns() + 300 * MS; /* far past one chunk, even for a thread preempted a while */
  CHECK(sleepacc_precise_begin(&outer, &H, 1, dl, 0, NULL) == 0);
  CHECK(sleepacc_precise_step(&outer) == 0); /* one 50 ms chunk: still sleeping */
  CHECK(sleepacc_precise_reentered(&H, 1) == 1 && sleepacc_precise_reentered(&H, 2) == 0);
  CHECK(sleepacc_precise_begin(&other, &H, 2, sleepacc_now_ns(), 0, &OWN) == -EBUSY);
  CHECK(sleepacc_precise_end(&other, 1) == 0);
  CHECK(sleepacc_precise_poll(&H, 2, dl, 0) == -EBUSY);
  CHECK(sleepacc_precise_stats_get(&H, 2, &ST, NULL) == -EBUSY);
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0); /* the holder's own thread */
  CHECK(sleepacc_precise_close(&H) == -EBUSY && sleepacc_precise_is_open(&H));
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == -EBUSY);
  /* re-entered: no memory for its own sleeper is -ENOMEM, with it the call
   * runs to its end and leaves the outer call's sleep alone */
  CHECK(sleepacc_precise_begin(&inner, &H, 1, sleepacc_now_ns() + 5 * MS, 0, NULL) == -ENOMEM);
  t0 = sleepacc_now_ns();
  CHECK(sleepacc_precise_begin(&inner, &H, 1, t0 + 5 * MS, 0, &OWN) == 0);
  CHECK(run(&inner) == 1 && sleepacc_now_ns() >= t0 + 5 * MS);
  CHECK(sleepacc_precise_end(&inner, 0) == 0);
  CHECK(sleepacc_sleeper_until(&OWN, sleepacc_now_ns(), 0) == -EINVAL); /* end closed it */
  CHECK(sleepacc_precise_poll(&H, 1, dl, 0) == 1); /* re-entered: at once */
  CHECK(sleepacc_precise_begin(&other, &H, 2, sleepacc_now_ns(), 0, NULL) == -EBUSY); /* still held */
  CHECK(run(&outer) == 1 && sleepacc_now_ns() >= dl);
  CHECK(sleepacc_precise_end(&outer, 0) == 0);
  CHECK(sleepacc_precise_stats_get(&H, 2, &ST, NULL) == 0 && ST.sleeper.count == 1);
  /* released: the other identity may sleep now */
  CHECK(sleepacc_precise_begin(&other, &H, 2, sleepacc_now_ns(), 0, NULL) == 0);
  CHECK(run(&other) == 1 && sleepacc_precise_end(&other, 0) == 0);
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* A pacer's re-entered wait takes the pending tick; the interrupted one
 * goes on to the next (each tick delivered once). */
static void test_pacer_reentry_takes_the_pending_tick(void) {
  sleepacc_sleeper_config c = config("auto", 120 * MS, "burst");
  sleepacc_precise_call outer, inner;
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, NULL) == 0);
  CHECK(sleepacc_precise_begin(&outer, &H, 1, 0, 1, NULL) == 0);
  CHECK(sleepacc_precise_step(&outer) == 0); /* tick 1 pending */
  CHECK(sleepacc_precise_begin(&inner, &H, 1, 0, 2, &OWN) == 0);
  CHECK(run(&inner) == 1 && sleepacc_now_ns() >= inner.deadline_ns);
  CHECK(sleepacc_precise_end(&inner, 0) == 0);
  CHECK(run(&outer) == 1 && outer.deadline_ns == inner.deadline_ns + 120 * MS);
  CHECK(sleepacc_precise_end(&outer, 0) == 0);
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.pacer.count == 2);
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* A claim made before fork() belongs to a thread the child lacks: void
 * there (the child sleeps and closes); the parent's stays. */
static void test_claim_void_after_fork(void) {
  sleepacc_sleeper_config c = config("auto", 0, NULL);
  sleepacc_precise_call held, call;
  int st = 0;
  pid_t pid;
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == 0);
  CHECK(sleepacc_precise_begin(&held, &H, 1, sleepacc_now_ns() + 10 * MS, 0, NULL) == 0);
  pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int ok;
    alarm(5);
    ok = sleepacc_precise_reentered(&H, 1) == 0 && sleepacc_precise_stats_get(&H, 2, &ST, NULL) == 0 &&
         sleepacc_precise_begin(&call, &H, 2, sleepacc_now_ns() + 2 * MS, 0, NULL) == 0 &&
         run(&call) == 1 && sleepacc_precise_end(&call, 0) == 0 && sleepacc_precise_close(&H) == 0;
    _exit(ok ? 0 : 1);
  }
  waitpid(pid, &st, 0);
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
  CHECK(sleepacc_precise_begin(&call, &H, 2, sleepacc_now_ns(), 0, NULL) == -EBUSY);
  CHECK(run(&held) == 1 && sleepacc_precise_end(&held, 0) == 0);
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* The stats by the table stats_get names: a value read through a row is
 * the struct's, nested rows included, and the margins come as pairs. */
static void test_stats_table_round_trip(void) {
  sleepacc_sleeper_config c = config("auto", 0, NULL);
  const sleepacc_field *t = NULL, *f, *m;
  sleepacc_precise_call call;
  const sleepacc_pairs *pairs;
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == 0);
  for (int i = 0; i < 40; i++) {
    CHECK(sleepacc_precise_begin(&call, &H, 1, sleepacc_now_ns() + (i % 4 + 1) * 300000, 0, NULL) == 0);
    CHECK(run(&call) == 1 && sleepacc_precise_end(&call, 0) == 0);
  }
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, &t) == 0 && t == sleepacc_sleeper_stats_fields);
  CHECK((f = row(t, "count")) != NULL && f && i64_at(&ST, f) == 40 && ST.sleeper.count == 40);
  CHECK((f = row(t, "lateness")) && f->type == SLEEPACC_FIELD_NESTED);
  CHECK(f && (m = row(f->sub, "n")) && i64_at((const char *)&ST + f->offset, m) == 40);
  CHECK((m = row(t, "margins")) && m->type == SLEEPACC_FIELD_PAIRS && m->sub);
  if (m && m->type == SLEEPACC_FIELD_PAIRS && m->sub) {
    const sleepacc_field *k = row(m->sub, "band_lo_ns"), *v = row(m->sub, "margin_ns");
    pairs = (const sleepacc_pairs *)(const void *)((const char *)&ST + m->offset);
    CHECK(pairs == &ST.sleeper.margins && pairs->n > 0 && pairs->n <= SLEEPACC_PAIRS_MAX);
    CHECK(k && v && k->type == SLEEPACC_FIELD_INT64 && v->type == SLEEPACC_FIELD_INT64);
    for (int64_t i = 0; k && v && i < pairs->n; i++) {
      CHECK(i64_at(&pairs->at[i], k) == pairs->at[i].key && i64_at(&pairs->at[i], v) == pairs->at[i].value);
      CHECK(pairs->at[i].value >= 0 && pairs->at[i].value <= pairs->at[i].key);
      CHECK(i == 0 || pairs->at[i].key > pairs->at[i - 1].key);
    }
  }
  CHECK(sleepacc_precise_close(&H) == 0);
  /* a pacer: its table, the sleeper's (with the margins) nested in it */
  c = config("hybrid", 2 * MS, NULL);
  CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, NULL) == 0);
  CHECK(sleepacc_precise_begin(&call, &H, 1, 0, 0, NULL) == 0);
  CHECK(run(&call) == 1 && sleepacc_precise_end(&call, 0) == 0);
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, &t) == 0 && t == sleepacc_pacer_stats_fields);
  CHECK((f = row(t, "last_deadline_ns")) && i64_at(&ST, f) == call.deadline_ns);
  CHECK((f = row(t, "sleeper")) && f->type == SLEEPACC_FIELD_NESTED && row(f->sub, "margins"));
  CHECK(ST.pacer.sleeper.margins.n == 0); /* hybrid learns no margins */
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* Tokens: a tick a failed call had delivered is offered again at once; an
 * unwait names the call that got the tick, once. */
static void test_tick_token_unwait(void) {
  sleepacc_sleeper_config c = config("timerfd", 20 * MS, "burst");
  sleepacc_precise_call call;
  int64_t d1;
  if (sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, NULL) != 0) {
    c.method = "clock_nanosleep";
    CHECK(sleepacc_precise_open(&H, SLEEPACC_PRECISE_PACER, &c, NULL) == 0);
  }
  /* delivered, then given up (an exception landed): offered again */
  CHECK(sleepacc_precise_begin(&call, &H, 1, 0, 7, NULL) == 0);
  CHECK(run(&call) == 1);
  d1 = call.deadline_ns;
  CHECK(sleepacc_precise_end(&call, 1) == 0);
  CHECK(sleepacc_precise_begin(&call, &H, 1, 0, 8, NULL) == 0);
  CHECK(sleepacc_precise_step(&call) == 1 && call.deadline_ns == d1); /* at once */
  CHECK(sleepacc_precise_end(&call, 0) == 0);
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.pacer.count == 1);
  /* the caller's wait 8 returned it, then could not hand it on */
  CHECK(sleepacc_precise_unwait(&H, 9) == -EINVAL); /* another call's token */
  CHECK(sleepacc_precise_unwait(&H, 0) == -EINVAL);
  CHECK(sleepacc_precise_unwait(&H, 8) == 0);
  CHECK(sleepacc_precise_unwait(&H, 8) == -EINVAL); /* once */
  CHECK(sleepacc_precise_begin(&call, &H, 1, 0, 10, NULL) == 0);
  CHECK(sleepacc_precise_step(&call) == 1 && call.deadline_ns == d1);
  CHECK(sleepacc_precise_end(&call, 0) == 0);
  /* the next one is the next tick */
  CHECK(sleepacc_precise_begin(&call, &H, 1, 0, 11, NULL) == 0);
  CHECK(run(&call) == 1 && call.deadline_ns == d1 + 20 * MS);
  CHECK(sleepacc_precise_end(&call, 0) == 0);
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.pacer.count == 2);
  /* closed: nothing to offer */
  CHECK(sleepacc_precise_close(&H) == 0 && sleepacc_precise_unwait(&H, 11) == -EINVAL);
}

/* Open H as kind with c and begin call (token tok, deadline dl for a
 * sleeper) until its first run is handed off: a thread preempted across
 * the whole hand-off window (under load) is past the deadline and is not
 * handed off, so up to 50 tries; 1 when one was handed off.  A hybrid sleep
 * (kernel sleep, then spin) comes back from the kernel just before the
 * window with a fresh time slice; a pure spin under load could be preempted
 * at the same point of every try. */
static int handed_off(int kind, sleepacc_sleeper_config *c, sleepacc_precise_call *call,
                      int64_t tok) {
  for (int tries = 0; tries < 50; tries++) {
    int rc;
    if (sleepacc_precise_open(&H, kind, c, NULL) != 0 ||
        sleepacc_precise_begin(call, &H, 1, kind == SLEEPACC_PRECISE_SLEEPER ? sleepacc_now_ns() + MS : 0,
                               tok, NULL) != 0)
      return 0;
    rc = run(call);
    if (sleepacc_precise_end(call, 0) == 1) return rc == SLEEPACC_NEAR;
    if (sleepacc_precise_close(&H) != 0) return 0;
  }
  return 0;
}

/* A hand-off: end says so and poll finishes it; a pacer tick taken from
 * the hand-off by another wait (itself handed off, then polled to its end)
 * is SLEEPACC_PRECISE_TAKEN for the first wait's poll. */
static void test_handoff_and_taken(void) {
  sleepacc_sleeper_config c = config("hybrid", 0, NULL);
  sleepacc_precise_call call, other;
  int rc;
  c.handoff_ns = MS; /* the widest window (SLEEPACC_MAX_HANDOFF_NS) */
  CHECK(handed_off(SLEEPACC_PRECISE_SLEEPER, &c, &call, 0));
  while ((rc = sleepacc_precise_poll(&H, 1, call.deadline_ns, 0)) == 0) {
  }
  CHECK(rc == 1 && sleepacc_now_ns() >= call.deadline_ns);
  c = config("hybrid", 5 * MS, NULL);
  c.handoff_ns = MS; /* the widest window (SLEEPACC_MAX_HANDOFF_NS) */
  CHECK(handed_off(SLEEPACC_PRECISE_PACER, &c, &call, 21));
  /* a wait in between (a signal handler's) takes the tick handed off */
  CHECK(sleepacc_precise_begin(&other, &H, 1, 0, 22, NULL) == 0);
  rc = run(&other);
  CHECK(other.deadline_ns == call.deadline_ns);
  if (sleepacc_precise_end(&other, 0) == 1) {
    while ((rc = sleepacc_precise_poll(&H, 1, 0, 22)) == 0) {
    }
  }
  CHECK(rc == 1 && sleepacc_now_ns() >= other.deadline_ns);
  CHECK(sleepacc_precise_poll(&H, 1, 0, 21) == SLEEPACC_PRECISE_TAKEN);
  CHECK(sleepacc_precise_poll(&H, 1, 0, 0) == -EINVAL); /* no token: a plain error */
  CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.pacer.count == 1);
  CHECK(sleepacc_precise_close(&H) == 0);
}

/* The sleep of seconds both bindings' sleep(seconds) make: the
 * seconds by the core's sleep row (sleepacc_sleep_option, as the bindings
 * read them), whose deadline begin takes.  A 2-day sleep is accepted by
 * every strategy and its first step is not done, not early; seconds whose
 * ns overflow int64 are refused naming seconds, in each binding's words;
 * sleep_until's deadline more than a day ahead is still refused. */
static void test_sleep_longer_than_a_day(void) {
  static const char *const methods[] = {"auto", "hybrid", "comp", "spin", "nanosleep", "timerfd"};
  sleepacc_value two_days = {SLEEPACC_VALUE_INT, 2 * 86400, 0.0, NULL, NULL, NULL, 0};
  sleepacc_value huge = {SLEEPACC_VALUE_REAL, 0, 1e300, NULL, NULL, NULL, 0};
  sleepacc_value beyond = {SLEEPACC_VALUE_INT, INT64_MAX, 0.0, NULL, NULL, NULL, 1};
  sleepacc_value yes = {SLEEPACC_VALUE_BOOL, 1, 0.0, NULL, NULL, NULL, 0};
  sleepacc_precise_call call;
  sleepacc_fault f;
  char text[SLEEPACC_FAULT_TEXT_MAX];
  int64_t dl = 0, t0, t1;
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
    sleepacc_sleeper_config c = config(methods[i], 0, NULL);
    int rc;
    CHECKF(sleepacc_precise_open(&H, SLEEPACC_PRECISE_SLEEPER, &c, NULL) == 0, "%s", methods[i]);
    t0 = sleepacc_now_ns();
    CHECK(sleepacc_value_read(sleepacc_sleep_option, NULL, &dl, &two_days, &f) == 0);
    t1 = sleepacc_now_ns();
    CHECK(dl >= t0 + 2 * 86400 * 1000 * MS && dl <= t1 + 2 * 86400 * 1000 * MS);
    CHECK(sleepacc_precise_begin(&call, &H, 1, dl, 0, NULL) == 0 && call.deadline_ns == dl);
    rc = sleepacc_precise_step(&call); /* one chunk: not done */
    CHECKF(rc == 0 || rc == -EINTR, "%s: first step of a 2-day sleep returned %d", methods[i], rc);
    CHECK(sleepacc_now_ns() < dl);
    CHECK(sleepacc_precise_end(&call, 1) == 0); /* given up, as Ctrl-C does */
    CHECK(sleepacc_precise_stats_get(&H, 1, &ST, NULL) == 0 && ST.sleeper.count == 0);
    CHECK(sleepacc_precise_close(&H) == 0);
  }
  /* ns beyond int64: refused naming seconds, the same words in both bindings */
  dl = 7;
  CHECK(sleepacc_value_read(sleepacc_sleep_option, NULL, &dl, &huge, &f) == -ERANGE && dl == 7);
  CHECK(f.kind == SLEEPACC_FAULT_RULE && !strcmp(f.option, "seconds") && strstr(f.words, "int64"));
  sleepacc_fault_text(&f, SLEEPACC_BINDING_PYTHON, &huge, "float", "1e+300", text, sizeof text);
  CHECK(!strcmp(text, "seconds: must end before the int64 ns clock does (292 years from boot), got 1e+300"));
  sleepacc_fault_text(&f, SLEEPACC_BINDING_LUA, &huge, "number", "1e+300", text, sizeof text);
  CHECK(!strcmp(text, "seconds: must end before the int64 ns clock does (292 years from boot), got 1e+300"));
  CHECK(sleepacc_value_read(sleepacc_sleep_option, NULL, &dl, &beyond, &f) == -ERANGE && dl == 7);
  CHECK(!strcmp(f.option, "seconds") && strstr(f.words, "int64"));
  /* a bool is no number of seconds: a TYPE fault naming seconds */
  CHECK(sleepacc_value_read(sleepacc_sleep_option, NULL, &dl, &yes, &f) == -EINVAL && dl == 7);
  CHECK(f.kind == SLEEPACC_FAULT_TYPE && !strcmp(f.option, "seconds"));
  sleepacc_fault_text(&f, SLEEPACC_BINDING_PYTHON, &yes, "bool", NULL, text, sizeof text);
  CHECK(!strcmp(text, "seconds: must be a number of seconds (int or float), got bool"));
  sleepacc_fault_text(&f, SLEEPACC_BINDING_LUA, &yes, "boolean", NULL, text, sizeof text);
  CHECK(!strcmp(text, "seconds: must be a number of seconds, got boolean"));
  /* sleep_until keeps its guard: a deadline 2 days ahead is refused */
  two_days.i = sleepacc_now_ns() + 2 * 86400 * 1000 * MS;
  CHECK(sleepacc_value_read(sleepacc_deadline_option, NULL, &dl, &two_days, &f) == -ERANGE && dl == 7);
  CHECK(!strcmp(f.option, "deadline_ns") && !strcmp(f.words, "must be at most one day ahead"));
}

int main(void) {
  TEST(test_open_close_twice);
  TEST(test_claim_two_identities_and_reentry);
  TEST(test_pacer_reentry_takes_the_pending_tick);
  TEST(test_claim_void_after_fork);
  TEST(test_stats_table_round_trip);
  TEST(test_tick_token_unwait);
  TEST(test_handoff_and_taken);
  TEST(test_sleep_longer_than_a_day);
  return check_summary();
}
