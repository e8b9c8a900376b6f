/* test_engine.c -- the measurement engine: modes, stopping, chunks, EINTR,
 * streaming, cost, bad arguments.  Invariants only, never tight timings. */
#include "check.h"
#include "sleepacc.h"

#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

static sleepacc_run run; /* large: keep it off the stack */
static int64_t buf[4096], scratch[4096];

static sleepacc_config cfg_for(const char *method, int mode, int64_t d, int64_t n,
                               int64_t budget) {
  sleepacc_config c;
  memset(&c, 0, sizeof c);
  c.method = sleepacc_method_find(method);
  c.mode = mode;
  c.duration_ns = d;
  c.n = n;
  c.budget_ns = budget;
  sleepacc_env_default(&c.env);
  return c;
}

static void check_order(const sleepacc_stats *s) {
  CHECKF(s->min <= s->median && s->median <= s->p90 && s->p90 <= s->p99 &&
             s->p99 <= s->p999 && s->p999 <= s->max,
         "min %lld median %lld p90 %lld p99 %lld p999 %lld max %lld", (long long)s->min,
         (long long)s->median, (long long)s->p90, (long long)s->p99, (long long)s->p999,
         (long long)s->max);
}

static void test_mode_names(void) {
  CHECK(strcmp(sleepacc_mode_name(SLEEPACC_MODE_RELATIVE), "relative") == 0);
  CHECK(strcmp(sleepacc_mode_name(SLEEPACC_MODE_PERIODIC), "periodic") == 0);
  CHECK(sleepacc_mode_name(2) == NULL && sleepacc_mode_name(-1) == NULL);
  CHECK(sleepacc_mode_from_name("periodic") == SLEEPACC_MODE_PERIODIC);
  CHECK(sleepacc_mode_from_name("relative") == SLEEPACC_MODE_RELATIVE);
  CHECK(sleepacc_mode_from_name("bogus") == -EINVAL);
  CHECK(sleepacc_mode_from_name(NULL) == -EINVAL);
}

/* Every available method runs in relative mode at 0, 1 us and 1 ms; kernel
 * (and spin/hybrid) samples are never shorter than the rounded request. */
static void test_relative_every_method(void) {
  static const int64_t reqs[] = {0, 1000, 1000000};
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!sleepacc_method_available(m)) continue;
    for (size_t r = 0; r < 3; r++) {
      sleepacc_config c = cfg_for(m->name, SLEEPACC_MODE_RELATIVE, reqs[r], 5, 0);
      sleepacc_stats s;
      int rc = sleepacc_measure(&c, buf, 4096, &run);
      CHECKF(rc == 0, "%s: %d", m->name, rc);
      CHECK(run.done == 5);
      CHECK(sleepacc_run_stats(&run, scratch, &s) == 0);
      CHECK(s.n == 5);
      check_order(&s);
      if (m->family != SLEEPACC_FAMILY_BASELINE) {
        int64_t g = m->granularity_ns > 0 ? m->granularity_ns : 1;
        int64_t need = (reqs[r] + g - 1) / g * g;
        CHECKF(s.min >= need, "%s ended early: %lld < %lld", m->name, (long long)s.min,
               (long long)need);
        CHECK(s.undersleeps == 0);
      }
    }
  }
}

/* Periodic: lateness >= 0 for every absolute-capable method. */
static void test_periodic_absolute_never_early(void) {
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    sleepacc_stats s;
    if (!sleepacc_method_available(m) || !m->absolute) continue;
    sleepacc_config c = cfg_for(m->name, SLEEPACC_MODE_PERIODIC, 1000000, 20, 0);
    int rc = sleepacc_measure(&c, buf, 4096, &run);
    CHECKF(rc == 0, "%s: %d", m->name, rc);
    CHECK(sleepacc_run_stats(&run, scratch, &s) == 0);
    CHECK(s.n == 20);
    CHECKF(s.min >= 0, "%s: lateness %lld < 0", m->name, (long long)s.min);
    CHECK(s.undersleeps == 0);
    /* each deadline is served or passed over: never more than were due */
    CHECK(run.missed >= 0 && run.done + run.missed <= run.k);
  }
}

/* A caller away for 100 ms (stopped, or busy) between steps of a 1 ms
 * schedule: every deadline passed over is missed (irtt's rule, expected -
 * sent: about 100), not the one wake-up that found them passed. */
static void test_periodic_missed_counts_every_deadline(void) {
  sleepacc_config c = cfg_for("clock_nanosleep_abs", SLEEPACC_MODE_PERIODIC, 1000000, 0, 300000000);
  struct timespec away = {0, 100000000};
  int rc;
  c.chunk_ns = 10000000;
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
  CHECK(sleepacc_run_step(&run) == 0);
  nanosleep(&away, NULL);
  while ((rc = sleepacc_run_step(&run)) == 0) {}
  CHECK(rc == 1);
  CHECKF(run.missed >= 90, "missed %lld after 100 ms away", (long long)run.missed);
  CHECK(run.done + run.missed <= run.k);
  CHECK(sleepacc_run_finish(&run) == 0);
}

/* nanosleep under 50 us default slack cannot keep a 10 us period. */
static void test_periodic_forced_miss(void) {
  sleepacc_config c = cfg_for("nanosleep", SLEEPACC_MODE_PERIODIC, 10000, 200, 0);
  c.env.slack_ns = 50000; /* the default, stated explicitly */
  CHECK(sleepacc_measure(&c, buf, 4096, &run) == 0);
  CHECK(run.done == 200);
  CHECKF(run.missed > 0, "missed %lld", (long long)run.missed);
  printf("  nanosleep, 10 us period: %lld deadlines passed over in 200 wake-ups\n",
         (long long)run.missed);
  /* the schedule skips ahead: it never serves more deadlines than elapsed */
  CHECK(run.k <= (sleepacc_now_ns() - run.origin_ns) / 10000 + 2);
}

/* A 0.2 s budget stops at >= 0.2 s and well under 1 s, for a kernel and a
 * spinning method, and it takes more than one chunk. */
static void test_budget(void) {
  static const char *const names[] = {"clock_nanosleep", "spin"};
  for (size_t i = 0; i < 2; i++) {
    sleepacc_config c = cfg_for(names[i], SLEEPACC_MODE_RELATIVE, 1000000, 0, 200000000);
    int steps = 0, rc;
    int64_t t0 = sleepacc_now_ns();
    CHECK(sleepacc_run_start(&run, &c, NULL, 0) == 0);
    while ((rc = sleepacc_run_step(&run)) == 0) steps++;
    int64_t el = sleepacc_now_ns() - t0;
    CHECK(rc == 1);
    CHECK(sleepacc_run_finish(&run) == 0);
    CHECKF(el >= 200000000, "%s: %lld ns", names[i], (long long)el);
    CHECKF(el < 1000000000, "%s: %lld ns", names[i], (long long)el);
    CHECKF(steps >= 2, "%s: %d chunks", names[i], steps);
    CHECK(run.done > 0);
  }
}

/* A budget shorter than one sleep, with n given (without n such a run is
 * refused: test_config.c), still gives one measured sample, and the warm-up
 * is cut short instead of run in full (100 warm-up sleeps of 10 ms would
 * take 1 s), in both modes. */
static void test_budget_never_empty(void) {
  for (int mode = 0; mode < 2; mode++) {
    sleepacc_config c = cfg_for("clock_nanosleep", mode, 10000000, 5, 1000000);
    sleepacc_stats s;
    int rc;
    int64_t t0 = sleepacc_now_ns(), el;
    c.warmup = 100;
    CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
    while ((rc = sleepacc_run_step(&run)) == 0 || rc == -EINTR) {}
    el = sleepacc_now_ns() - t0;
    CHECK(rc == 1);
    CHECK(sleepacc_run_finish(&run) == 0);
    CHECKF(run.done == 1, "mode %d: %lld samples", mode, (long long)run.done);
    CHECKF(el < 500000000, "mode %d: %lld ns: the warm-up was not cut short", mode, (long long)el);
    CHECK(sleepacc_run_stats(&run, scratch, &s) == 0 && s.n == 1);
    if (mode == SLEEPACC_MODE_RELATIVE) CHECK(s.min >= 10000000 && s.undersleeps == 0);
  }
}

/* A spin longer than a chunk is split across steps and still complete. */
static void test_long_spin_resumes(void) {
  sleepacc_config c = cfg_for("spin", SLEEPACC_MODE_RELATIVE, 60000000, 2, 0);
  int zeros = 0, rc;
  sleepacc_stats s;
  c.chunk_ns = 10000000;
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
  while ((rc = sleepacc_run_step(&run)) == 0) zeros++;
  CHECK(rc == 1);
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECKF(zeros >= 4, "only %d chunks", zeros);
  CHECK(run.done == 2);
  CHECK(sleepacc_run_stats(&run, scratch, &s) == 0);
  CHECK(s.min >= 60000000);
}

/* cond_timedwait cannot be interrupted by a signal, so a long wait must
 * still come back at chunk boundaries (Ctrl-C is seen) and end on time. */
static void test_uninterruptible_wait_chunks(void) {
  sleepacc_config c = cfg_for("cond_timedwait", SLEEPACC_MODE_RELATIVE, 60000000, 1, 0);
  int zeros = 0, rc;
  int64_t longest = 0, t;
  sleepacc_stats s;
  c.chunk_ns = 10000000;
  c.warmup = 0;
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
  for (;;) {
    t = sleepacc_now_ns();
    rc = sleepacc_run_step(&run);
    t = sleepacc_now_ns() - t;
    if (t > longest) longest = t;
    if (rc != 0) break;
    zeros++;
  }
  CHECK(rc == 1);
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECKF(zeros >= 3, "only %d chunk returns", zeros);
  CHECKF(longest < 60000000, "one step took %lld ns", (long long)longest);
  CHECK(sleepacc_run_stats(&run, scratch, &s) == 0);
  CHECK(s.n == 1 && s.min >= 60000000);
}

/* Streaming (no buffer) and buffer statistics from the same run agree. */
static void test_streaming_and_buffer(void) {
  sleepacc_config c = cfg_for("clock_nanosleep", SLEEPACC_MODE_RELATIVE, 20000, 300, 0);
  sleepacc_stats sb, sh;
  c.warmup = 7;
  CHECK(sleepacc_measure(&c, buf, 4096, &run) == 0);
  CHECK(run.done == 300 && run.warm_done == 7);
  CHECK(run.hist.count == 300);
  CHECK(sleepacc_run_stats(&run, scratch, &sb) == 0);
  sleepacc_hist_stats(&run.hist, &sh);
  check_order(&sb);
  check_order(&sh);
  CHECK(sb.min == sh.min && sb.max == sh.max);
  double tol = SLEEPACC_HIST_PRECISION;
  CHECKF(sh.median >= sb.median * (1 - tol) - 1 && sh.median <= sb.median * (1 + tol) + 1,
         "median %lld vs %lld", (long long)sh.median, (long long)sb.median);
  CHECKF(sh.p99 >= sb.p99 * (1 - tol) - 1 && sh.p99 <= sb.p99 * (1 + tol) + 1,
         "p99 %lld vs %lld", (long long)sh.p99, (long long)sb.p99);
  /* streaming: no buffer at all */
  c.n = 200;
  CHECK(sleepacc_measure(&c, NULL, 0, &run) == 0);
  CHECK(run.done == 200 && run.samples == NULL);
  CHECK(sleepacc_run_stats(&run, NULL, &sh) == 0);
  CHECK(sh.n == 200 && sh.min >= 20000);
  check_order(&sh);
  /* capacity stops a run too */
  c.n = 0;
  c.budget_ns = 5000000000LL;
  CHECK(sleepacc_measure(&c, buf, 10, &run) == 0);
  CHECK(run.done == 10);
}

/* Cost: a blocking sleep switches voluntarily; a spin burns CPU (more than
 * the sleep: its share of the wall time depends on the host's load, which
 * on a shared 2-vCPU machine left a spin 23% of its wall time). */
static void test_cost(void) {
  sleepacc_config c = cfg_for("nanosleep", SLEEPACC_MODE_RELATIVE, 1000000, 20, 0);
  int64_t sleep_cpu;
  CHECK(sleepacc_measure(&c, NULL, 0, &run) == 0);
  CHECKF(run.ctx_voluntary >= 10, "voluntary %lld", (long long)run.ctx_voluntary);
  CHECK(run.cpu_ns >= 0 && run.wall_ns >= 20000000);
  sleep_cpu = run.cpu_ns;
  c = cfg_for("spin", SLEEPACC_MODE_RELATIVE, 1000000, 20, 0);
  CHECK(sleepacc_measure(&c, NULL, 0, &run) == 0);
  CHECKF(run.cpu_ns > sleep_cpu && run.cpu_ns > 0, "spin cpu %lld (sleep %lld) wall %lld",
         (long long)run.cpu_ns, (long long)sleep_cpu, (long long)run.wall_ns);
  CHECK(run.ctx_involuntary >= 0);
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

/* SIGALRM during a 200 ms nanosleep run: a step returns -EINTR, the sample
 * is dropped, resuming completes, and no sample is short. */
static void test_eintr(void) {
  struct sigaction sa, old;
  struct itimerval it;
  sleepacc_stats s;
  int eintr = 0, rc;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, &old);
  sleepacc_config c = cfg_for("nanosleep", SLEEPACC_MODE_RELATIVE, 200000000, 2, 0);
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 50000; /* one shot, 50 ms into the first sleep */
  setitimer(ITIMER_REAL, &it, NULL);
  while ((rc = sleepacc_run_step(&run)) != 1) {
    if (rc == -EINTR) eintr++;
    else CHECK(rc == 0);
    if (rc < 0 && rc != -EINTR) break;
  }
  CHECK(sleepacc_run_finish(&run) == 0);
  sigaction(SIGALRM, &old, NULL);
  CHECK(alarms >= 1);
  CHECKF(eintr >= 1, "no EINTR seen");
  printf("  %d EINTR step(s), %d alarm(s), %lld samples\n", eintr, (int)alarms,
         (long long)run.done);
  CHECK(run.done == 2);
  CHECK(sleepacc_run_stats(&run, scratch, &s) == 0);
  CHECKF(s.min >= 200000000, "undersleep %lld", (long long)s.min);
  /* sleepacc_measure resumes by itself */
  alarms = 0;
  sigaction(SIGALRM, &sa, &old);
  c.duration_ns = 100000000;
  c.n = 1;
  setitimer(ITIMER_REAL, &it, NULL);
  CHECK(sleepacc_measure(&c, buf, 4096, &run) == 0);
  sigaction(SIGALRM, &old, NULL);
  CHECK(alarms == 1 && run.done == 1 && buf[0] >= 100000000);
}

/* Lifecycle: finish twice, step after finish, finish after a failed start. */
static void test_lifecycle(void) {
  sleepacc_config c = cfg_for("nanosleep", SLEEPACC_MODE_RELATIVE, 1000, 3, 0);
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == 0);
  CHECK(sleepacc_run_finish(&run) == 0); /* before any step */
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_step(&run) == -EINVAL);
  CHECK(run.waiter.method == NULL);
  c.duration_ns = -5;
  CHECK(sleepacc_run_start(&run, &c, buf, 4096) == -EINVAL);
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_step(&run) == -EINVAL);
  c.duration_ns = 1000;
  CHECK(sleepacc_measure(&c, buf, 4096, &run) == 0);
  CHECK(sleepacc_run_step(&run) == -EINVAL);
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_stats(NULL, scratch, NULL) == -EINVAL);
  CHECK(sleepacc_run_stats(&run, NULL, NULL) == -EINVAL);
  sleepacc_stats s;
  CHECK(sleepacc_run_stats(&run, NULL, &s) == -EINVAL); /* buffer mode needs scratch */
}

static int fake_avail_no(void) { return 0; }
static int fake_wait(sleepacc_waiter *w, int64_t d, int64_t dl) { (void)w; (void)d; (void)dl; return 0; }

/* Every bad argument is refused (-EINVAL unless documented) and changes nothing. */
static void test_bad_arguments(void) {
  sleepacc_config good = cfg_for("nanosleep", SLEEPACC_MODE_RELATIVE, 1000, 3, 0), c;
  sleepacc_method gone = {"gone", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "gone",
                          fake_avail_no, NULL, NULL, fake_wait};
  int64_t slack0 = sleepacc_current_slack();
#define BAD(expr, code)                                                   \
  do {                                                                    \
    c = good;                                                             \
    expr;                                                                 \
    int rc_ = sleepacc_run_start(&run, &c, buf, 4096);                    \
    CHECKF(rc_ == (code), "%s -> %d", #expr, rc_);                        \
    CHECK(sleepacc_run_finish(&run) == 0);                                \
  } while (0)
  BAD(c.method = NULL, -EINVAL);
  BAD(c.method = sleepacc_method_find("no_such_method"), -EINVAL); /* unknown name */
  BAD(c.method = &gone, -ENOSYS);
  BAD(c.duration_ns = -1, -EINVAL);
  BAD(c.duration_ns = SLEEPACC_MAX_DURATION_NS + 1, -EINVAL);
  BAD(c.duration_ns = INT64_MAX, -EINVAL);
  BAD(c.n = -1, -EINVAL);
  BAD(c.budget_ns = -1, -EINVAL);
  BAD((c.n = 0, c.budget_ns = 0), -EINVAL);
  BAD(c.warmup = -1, -EINVAL);
  BAD(c.margin_ns = -1, -EINVAL);
  BAD(c.chunk_ns = -1, -EINVAL);
  BAD(c.mode = 2, -EINVAL);
  BAD(c.mode = -1, -EINVAL);
  BAD((c.mode = SLEEPACC_MODE_PERIODIC, c.duration_ns = 0), -EINVAL);
  BAD(c.budget_ns = INT64_MAX, -EINVAL);             /* start + budget overflows */
  BAD(c.budget_ns = INT64_MAX - 1000, -EINVAL);
  BAD((c.mode = SLEEPACC_MODE_PERIODIC, c.duration_ns = SLEEPACC_MAX_DURATION_NS,
       c.n = INT64_MAX / 2), -EINVAL);                /* origin + k*d overflows */
  BAD((c.n = INT64_MAX, c.warmup = INT64_MAX), -EINVAL);
  BAD(c.env.slack_ns = 0, -EINVAL);
  BAD(c.env.policy = 99, -EINVAL);
  BAD(c.env.priority = 5, -EINVAL);                  /* priority without FIFO/RR */
  BAD((c.env.policy = SLEEPACC_POLICY_FIFO, c.env.priority = 0), -EINVAL);
  BAD(c.env.cpu = 100000, -EINVAL);
  BAD(c.env.lock_memory = 2, -EINVAL);
  BAD(c.env.dma_latency_us = -2, -EINVAL);
  /* spinning under FIFO/RR needs a budget */
  BAD((c.method = sleepacc_method_find("spin"), c.env.policy = SLEEPACC_POLICY_FIFO,
       c.env.priority = 1), -EINVAL);
  BAD((c.method = sleepacc_method_find("hybrid"), c.env.policy = SLEEPACC_POLICY_RR,
       c.env.priority = 1), -EINVAL);
  BAD((c.method = sleepacc_method_find("sched_yield"), c.env.policy = SLEEPACC_POLICY_FIFO,
       c.env.priority = 1), -EINVAL);
#undef BAD
  /* buffer arguments */
  CHECK(sleepacc_run_start(&run, &good, NULL, 10) == -EINVAL);
  CHECK(sleepacc_run_start(&run, &good, buf, 0) == -EINVAL);
  CHECK(sleepacc_run_start(&run, NULL, buf, 10) == -EINVAL);
  CHECK(sleepacc_run_start(NULL, &good, buf, 10) == -EINVAL);
  CHECK(sleepacc_measure(NULL, buf, 10, &run) == -EINVAL);
  CHECK(sleepacc_measure(&good, buf, 10, NULL) == -EINVAL);
  CHECK(sleepacc_run_step(NULL) == -EINVAL);
  CHECK(sleepacc_run_finish(NULL) == -EINVAL);
  CHECK(sleepacc_current_slack() == slack0);
}

/* A spinning run under FIFO with a budget runs, bounded, and restores the
 * policy.  (Needs CAP_SYS_NICE; without it the run must say -EPERM.) */
static void test_rt_spin_with_budget(void) {
  sleepacc_config c = cfg_for("spin", SLEEPACC_MODE_RELATIVE, 100000, 0, 100000000);
  int pol0 = sched_getscheduler(0);
  c.env.policy = SLEEPACC_POLICY_FIFO;
  c.env.priority = 1;
  int rc = sleepacc_measure(&c, NULL, 0, &run);
  CHECKF(rc == 0 || rc == -EPERM, "rc %d", rc);
  if (rc == -EPERM) printf("  (no CAP_SYS_NICE: FIFO refused with EPERM, as it must be)\n");
  else {
    CHECK(run.done > 0 && run.waiter.method == NULL);
    printf("  FIFO spin, 0.1 s budget: %lld samples\n", (long long)run.done);
  }
  CHECK(sched_getscheduler(0) == pol0);
}

int main(void) {
  TEST(test_mode_names);
  TEST(test_relative_every_method);
  TEST(test_periodic_absolute_never_early);
  TEST(test_periodic_forced_miss);
  TEST(test_periodic_missed_counts_every_deadline);
  TEST(test_budget);
  TEST(test_budget_never_empty);
  TEST(test_long_spin_resumes);
  TEST(test_uninterruptible_wait_chunks);
  TEST(test_streaming_and_buffer);
  TEST(test_cost);
  TEST(test_eintr);
  TEST(test_lifecycle);
  TEST(test_bad_arguments);
  TEST(test_rt_spin_with_budget);
  return check_summary();
}
