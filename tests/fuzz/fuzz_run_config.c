/*
 * fuzz_run_config.c -- sleepacc_run_start with an arbitrary configuration,
 * and (for inputs that ask) a short real run with clamped durations.
 *
 * Input: a flags byte, the method (a registry index, an arbitrary name, or
 * NULL), then every sleepacc_config/sleepacc_env field as raw bits, then
 * the buffer shape (NULL/buffer, capacity 0..4).
 *
 *   - validate-only inputs keep every value as given and finish at once
 *     after a successful start: nothing ever sleeps, so a day-long
 *     duration cannot hang the target;
 *   - run inputs (flag bit 0) clamp duration to < 20 us, n to < 5, the
 *     budget to < 2 ms, warm-up to < 3 and chunk/margin to < 1 ms / 50 us,
 *     then step until complete (at most a few ms of real sleeping).
 *
 * lock_memory = 1 is turned into 0 (mlockall under ASan would try to pin
 * its shadow memory) and a dma latency >= 0 into -1 (no global device);
 * every other value is passed through.
 *
 * Invariants: start returns 0 or a documented error (-EINVAL, -ENOSYS,
 * -EPERM, -EACCES, -ENOMEM, -EMFILE); a configuration the header calls
 * invalid is -EINVAL; after finish (and after a failed start) the
 * thread's timer slack, policy, priority and affinity are what they were;
 * a completed run's stats are ordered, count at most n samples, and a
 * kernel method in relative mode never records an undersleep.
 */
#include "fuzz.h"

#include <sched.h>
#include <sys/prctl.h>

typedef struct thread_state {
  int slack, policy, prio;
  cpu_set_t cpus;
} thread_state;

static void snapshot(thread_state *t) {
  struct sched_param sp = {0};
  memset(t, 0, sizeof *t);
  t->slack = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  t->policy = sched_getscheduler(0);
  sched_getparam(0, &sp);
  t->prio = sp.sched_priority;
  CPU_ZERO(&t->cpus);
  sched_getaffinity(0, sizeof t->cpus, &t->cpus);
}

static int same_state(const thread_state *a, const thread_state *b) {
  return a->slack == b->slack && a->policy == b->policy && a->prio == b->prio &&
         CPU_EQUAL(&a->cpus, &b->cpus);
}

static int64_t clamp(int64_t v, int64_t mod) {
  uint64_t u = (uint64_t)v;
  return (int64_t)(u % (uint64_t)mod);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static sleepacc_run run; /* large (embeds a histogram) */
  static int64_t scratch[8];
  fuzz_in in = {data, size};
  uint8_t flags = fuzz_u8(&in);
  int do_run = flags & 1;
  sleepacc_config c;
  char *name = NULL;
  memset(&c, 0, sizeof c);

  uint8_t pick = fuzz_u8(&in);
  size_t count = sleepacc_method_count();
  if (flags & 2) {
    name = fuzz_str(&in, 24);
    c.method = sleepacc_method_find(name);
  } else {
    c.method = sleepacc_method_at(pick % (count + 1)); /* count -> NULL */
  }
  c.mode = (flags & 4) ? fuzz_i32(&in) : (int)(fuzz_u8(&in) & 1);
  c.duration_ns = fuzz_i64(&in);
  c.n = fuzz_i64(&in);
  c.budget_ns = fuzz_i64(&in);
  c.warmup = fuzz_i64(&in);
  c.margin_ns = fuzz_i64(&in);
  c.chunk_ns = fuzz_i64(&in);
  sleepacc_env_default(&c.env);
  if (flags & 8) {
    c.env.slack_ns = fuzz_i64(&in);
    c.env.policy = fuzz_i32(&in);
    c.env.priority = fuzz_i32(&in);
    c.env.cpu = fuzz_i32(&in);
    c.env.lock_memory = fuzz_i32(&in);
    c.env.dma_latency_us = fuzz_i32(&in);
  } else if (flags & 16) { /* small, mostly valid values */
    c.env.slack_ns = (int64_t)fuzz_u8(&in) - 1;
    c.env.policy = (int)(fuzz_u8(&in) % 7) - 1;
    c.env.priority = fuzz_u8(&in) % 101;
    c.env.cpu = (int)(fuzz_u8(&in) % 6) - 1;
  }
  if (c.env.lock_memory == 1) c.env.lock_memory = 0;
  if (c.env.dma_latency_us >= 0) c.env.dma_latency_us = -1;
  uint8_t shape = fuzz_u8(&in);
  size_t capacity = shape % 5;
  int64_t *samples = NULL;
  if (shape & 8) { /* a buffer whose size matches capacity (or a mismatch) */
    samples = malloc((capacity ? capacity : 1) * sizeof *samples);
  }

  if (do_run) {
    c.duration_ns = clamp(c.duration_ns, 20000);
    if (c.mode == SLEEPACC_MODE_PERIODIC && c.duration_ns == 0) c.duration_ns = 1;
    c.n = clamp(c.n, 5);
    c.budget_ns = clamp(c.budget_ns, 2000000);
    c.warmup = clamp(c.warmup, 3);
    c.margin_ns = clamp(c.margin_ns, 50000);
    c.chunk_ns = clamp(c.chunk_ns, 1000000);
  }

  /* what the header calls invalid, computed independently */
  int invalid = !c.method || c.mode < 0 || c.mode > 1 || c.duration_ns < 0 ||
                c.duration_ns > SLEEPACC_MAX_DURATION_NS ||
                (c.mode == SLEEPACC_MODE_PERIODIC && c.duration_ns == 0) || c.n < 0 ||
                c.budget_ns < 0 || c.warmup < 0 || (c.n == 0 && c.budget_ns == 0) ||
                c.margin_ns < 0 || c.chunk_ns < 0 || ((samples == NULL) != (capacity == 0)) ||
                sleepacc_env_check(&c.env) == -EINVAL;

  thread_state before, after;
  snapshot(&before);
  int rc = sleepacc_run_start(&run, &c, samples, capacity);
  FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOSYS || rc == -EPERM || rc == -EACCES ||
                 rc == -ENOMEM || rc == -EMFILE,
             "run_start = %d (%s)", rc, sleepacc_errname(rc));
  if (invalid) FUZZ_CHECK(rc == -EINVAL, "invalid config accepted: rc %d", rc);
  if (rc == 0 && do_run) {
    int step = 0, iters = 0;
    do {
      step = sleepacc_run_step(&run);
    } while ((step == 0 || step == -EINTR) && ++iters < 100000);
    FUZZ_CHECK(step == 1, "run did not complete: step %d after %d chunks", step, iters);
  }
  if (rc == 0) {
    FUZZ_CHECK(sleepacc_run_finish(&run) == 0, "finish");
    FUZZ_CHECK(sleepacc_run_finish(&run) == 0, "second finish");
    sleepacc_stats s;
    FUZZ_CHECK(sleepacc_run_stats(&run, scratch, &s) == 0, "stats");
    FUZZ_CHECK(run.done >= 0 && (c.n == 0 || run.done <= c.n), "done %lld n %lld",
               (long long)run.done, (long long)c.n);
    if (capacity) FUZZ_CHECK(run.done <= (int64_t)capacity, "done beyond capacity");
    if (!do_run) FUZZ_CHECK(run.done == 0, "validate-only run recorded samples");
    if (s.n > 0) {
      FUZZ_CHECK(fuzz_stats_ordered(&s), "stats out of order");
      if (c.method->family == SLEEPACC_FAMILY_KERNEL && c.mode == SLEEPACC_MODE_RELATIVE)
        FUZZ_CHECK(s.undersleeps == 0 && s.min >= c.duration_ns,
                   "%s woke early: min %lld < %lld ns", c.method->name, (long long)s.min,
                   (long long)c.duration_ns);
    }
  } else {
    FUZZ_CHECK(sleepacc_run_finish(&run) == 0, "finish after a failed start");
  }
  if (getenv("FUZZ_VERBOSE"))
    fprintf(stderr, "run_config: %s mode %d d=%lld n=%lld budget=%lld run=%d -> %s, %lld samples\n",
            c.method ? c.method->name : "(null)", c.mode, (long long)c.duration_ns,
            (long long)c.n, (long long)c.budget_ns, do_run, sleepacc_errname(rc),
            (long long)run.done);
  snapshot(&after);
  FUZZ_CHECK(same_state(&before, &after),
             "thread changed: slack %d->%d policy %d->%d prio %d->%d (rc %d)", before.slack,
             after.slack, before.policy, after.policy, before.prio, after.prio, rc);
  free(samples);
  free(name);
  return 0;
}
