/*
 * engine.c -- the measurement engine: one method, one mode, n samples or a
 * time budget, run in chunks so a binding can check for Ctrl-C and resume.
 *
 * Modes:
 *   relative  t0 = now; wait(d, t0 + d); t1 = now; sample = t1 - t0.
 *   periodic  deadlines origin + k*d (k = 1, 2, ...); absolute methods wait on
 *             the deadline, relative ones sleep max(0, deadline - now);
 *             sample = wake - deadline (lateness).  A wake at or after the
 *             NEXT deadline passes over every deadline up to it: each counts
 *             as missed (irtt's timer_misses, expected - sent: a 2 s stop of
 *             a 10 ms schedule misses about 200), and the schedule skips
 *             ahead to the first deadline still in the future (no burst).
 *
 * Stopping: n samples (after warm-up), the buffer's capacity, or the budget.
 * The budget counts from sleepacc_run_start, warm-up included; a sleep that
 * is in progress when the budget ends is completed and recorded.  A run
 * never ends empty: a budget that ends before the first measured sample cuts
 * the warm-up short and takes that one sample (a 10 ms sleep with a 1 ms
 * budget gives n = 1 after ~20 ms, not n = 0).
 *
 * Waits a signal cannot interrupt (spin, hybrid, sched_yield,
 * cond_timedwait) are bounded to one chunk (waiter.rt_bound_ns = chunk): a
 * longer one ends the chunk with -EAGAIN and the same sample is resumed by
 * the next step, so no single step outlasts a chunk.
 *
 * Overflowing deadline arithmetic (start + budget, origin + k*d beyond
 * INT64_MAX) is refused with -EINVAL, like every other bad argument.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Run states (sleepacc_run.state). */
enum { SLEEPACC__NEW = 0, SLEEPACC__RUNNING = 1, SLEEPACC__DONE = 2, SLEEPACC__CLOSED = 3 };

/* Thread CPU time and context switches of the calling thread. */
void sleepacc__thread_cost(int64_t *cpu_ns, int64_t *vol, int64_t *invol) {
  struct timespec ts;
  struct rusage ru;
  *cpu_ns = clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? sleepacc__ts_ns(&ts) : -1;
  *vol = *invol = -1;
#ifdef RUSAGE_THREAD
  if (getrusage(RUSAGE_THREAD, &ru) == 0) {
    *vol = ru.ru_nvcsw;
    *invol = ru.ru_nivcsw;
  }
#else
  (void)ru;
#endif
}

/* Reset r to a state that finish/step treat as "nothing open". */
static void sleepacc__clear(sleepacc_run *r) {
  memset(r, 0, sizeof *r);
  r->waiter.fd = -1;
  r->waiter.aux_fd = -1;
  r->saved.dma_fd = -1;
  r->budget_end_ns = INT64_MAX;
  r->state = SLEEPACC__CLOSED;
}

/* Validate, apply the environment, open the waiter.  On failure nothing is
 * left changed and r is in the closed state (finish is a no-op). */
int sleepacc_run_start(sleepacc_run *r, const sleepacc_config *cfg, int64_t *samples,
                       size_t capacity) {
  int rc;
  if (!r) return -EINVAL;
  sleepacc__clear(r);
  if (!cfg) return -EINVAL;
  /* every rule of the configuration, once (config.c) */
  if ((rc = sleepacc_config_check(cfg, NULL)) != 0) return rc;
  return sleepacc__run_begin(r, cfg, samples, capacity);
}

int sleepacc__run_begin(sleepacc_run *r, const sleepacc_config *cfg, int64_t *samples,
                        size_t capacity) {
  int64_t now;
  int rc;
  sleepacc__clear(r);
  if ((samples == NULL) != (capacity == 0)) return -EINVAL;
  r->cfg = *cfg;
  if (r->cfg.chunk_ns == 0) r->cfg.chunk_ns = SLEEPACC_CHUNK_NS;
  r->samples = samples;
  r->capacity = capacity;
  r->threshold = cfg->mode == SLEEPACC_MODE_RELATIVE ? cfg->duration_ns : 0;
  sleepacc_hist_init(&r->hist, r->threshold);

  if ((rc = sleepacc_env_apply(&r->cfg.env, &r->saved)) != 0) return rc;
  if ((rc = sleepacc_waiter_open(&r->waiter, cfg->method, cfg->margin_ns)) != 0) {
    sleepacc_env_restore(&r->saved);
    return rc;
  }
  /* No single wait call may outlast a chunk without a chance to see
   * signals: methods a signal cannot interrupt (spins, cond_timedwait)
   * honour this bound with -EAGAIN; the others return -EINTR anyway. */
  r->waiter.rt_bound_ns = r->cfg.chunk_ns;

  now = sleepacc_now_ns();
  r->start_ns = now;
  r->budget_end_ns = cfg->budget_ns > 0 ? now + cfg->budget_ns : INT64_MAX;
  r->origin_ns = now;
  r->k = 1;
  r->next_deadline_ns = now + cfg->duration_ns;
  sleepacc__thread_cost(&r->cpu0_ns, &r->vol0, &r->invol0);
  r->state = SLEEPACC__RUNNING;
  return 0;
}

/* 1 when n or capacity is reached. */
static int sleepacc__full(const sleepacc_run *r) {
  if (r->cfg.n > 0 && r->done >= r->cfg.n) return 1;
  if (r->capacity > 0 && (uint64_t)r->done >= (uint64_t)r->capacity) return 1;
  return 0;
}

/* Record one completed sample (warm-up first).  t0: its start, t1: wake time. */
static void sleepacc__record(sleepacc_run *r, int64_t sample, int64_t t0, int64_t t1) {
  if (r->warm_done < r->cfg.warmup) {
    if (++r->warm_done == r->cfg.warmup) { /* measured part starts now */
      r->start_ns = t1;
      sleepacc__thread_cost(&r->cpu0_ns, &r->vol0, &r->invol0);
    }
    return;
  }
  if (r->samples) r->samples[r->done] = sample;
  if (r->starts) r->starts[r->done] = t0 - r->start_ns;
  sleepacc_hist_add(&r->hist, sample);
  r->done++;
}

/* 1 when the budget (at `now`) may end the run: only once it holds a measured
 * sample.  Before that the rest of the warm-up is dropped, so exactly one
 * more sleep is taken. */
static int sleepacc__budget_stops(sleepacc_run *r, int64_t now) {
  if (now < r->budget_end_ns) return 0;
  if (r->done > 0) return 1;
  if (r->warm_done < r->cfg.warmup) {
    r->warm_done = r->cfg.warmup; /* measured part starts now */
    r->start_ns = now;
    sleepacc__thread_cost(&r->cpu0_ns, &r->vol0, &r->invol0);
  }
  return 0;
}

/* Periodic bookkeeping after a wake at t1 for the deadline just served. */
static void sleepacc__advance(sleepacc_run *r, int64_t t1) {
  int64_t d = r->cfg.duration_ns, served = r->k;
  int counting = r->warm_done >= r->cfg.warmup;
  r->k++;
  r->next_deadline_ns = r->origin_ns + r->k * d;
  if (r->next_deadline_ns <= t1) { /* skip to the first future deadline */
    r->k = (t1 - r->origin_ns) / d + 1;
    r->next_deadline_ns = r->origin_ns + r->k * d;
  }
  /* every deadline passed over is one never served (irtt: expected - sent) */
  if (counting) r->missed += r->k - served - 1;
}

/* One chunk.  1 complete, 0 more to do, -EINTR (the interrupted sleep resumes
 * toward its deadline on the next call),
 * or -errno from the method (the run stays open; call finish). */
int sleepacc_run_step(sleepacc_run *r) {
  int64_t chunk_end, now;
  int first = 1;
  if (!r) return -EINVAL;
  if (r->state == SLEEPACC__DONE) return 1;
  if (r->state != SLEEPACC__RUNNING) return -EINVAL;
  now = sleepacc_now_ns();
  chunk_end = now + r->cfg.chunk_ns;
  for (;;) {
    int64_t t0, deadline, dur, t1;
    int rc;
    if (!r->pending) {
      if (sleepacc__full(r) || sleepacc__budget_stops(r, now)) {
        r->state = SLEEPACC__DONE;
        return 1;
      }
      if (!first && now >= chunk_end) return 0;
    } else if (!first && now >= chunk_end) {
      return 0;
    }
    first = 0;
    if (r->pending) {
      t0 = r->pending_t0_ns;
      deadline = r->pending_deadline_ns;
    } else if (r->cfg.mode == SLEEPACC_MODE_RELATIVE) {
      t0 = sleepacc_now_ns();
      deadline = t0 + r->cfg.duration_ns;
    } else {
      t0 = now;
      deadline = r->next_deadline_ns;
    }
    if (r->cfg.mode == SLEEPACC_MODE_RELATIVE && !r->pending) {
      dur = r->cfg.duration_ns;
    } else {
      dur = deadline - sleepacc_now_ns();
      if (dur < 0) dur = 0;
    }
    /* the method directly: durations were checked once, by config_check */
    rc = r->waiter.method->wait(&r->waiter, dur, deadline);
    t1 = sleepacc_now_ns();
    if (rc == -EAGAIN || rc == -EINTR) {
      /* A bounded spin stopped before the deadline, or a signal interrupted
       * the wait: the next step resumes this sample toward the SAME deadline
       * (as CPython's sleep does), so signals arriving faster than the
       * duration cannot livelock the run and no sample is lost or short. */
      r->pending = 1;
      r->pending_t0_ns = t0;
      r->pending_deadline_ns = deadline;
      return rc == -EINTR ? -EINTR : 0;
    }
    r->pending = 0;
    if (rc != 0) return rc;
    if (r->cfg.mode == SLEEPACC_MODE_RELATIVE) {
      sleepacc__record(r, t1 - t0, t0, t1);
    } else {
      sleepacc__record(r, t1 - deadline, t0, t1);
      sleepacc__advance(r, t1);
    }
    now = t1;
  }
}

/* Close the waiter, restore the environment, fill cpu/ctx/wall.  A no-op on
 * a run that is not open (failed start, already finished). */
int sleepacc_run_finish(sleepacc_run *r) {
  int64_t cpu, vol, invol;
  if (!r) return -EINVAL;
  if (r->state != SLEEPACC__RUNNING && r->state != SLEEPACC__DONE) return 0;
  sleepacc__thread_cost(&cpu, &vol, &invol);
  r->wall_ns = sleepacc_now_ns() - r->start_ns;
  r->cpu_ns = cpu >= 0 && r->cpu0_ns >= 0 ? cpu - r->cpu0_ns : -1;
  r->ctx_voluntary = vol >= 0 && r->vol0 >= 0 ? vol - r->vol0 : -1;
  r->ctx_involuntary = invol >= 0 && r->invol0 >= 0 ? invol - r->invol0 : -1;
  r->state = SLEEPACC__CLOSED;
  r->pending = 0;
  sleepacc_waiter_close(&r->waiter);
  return sleepacc_env_restore(&r->saved);
}

/* Statistics of the recorded samples: exact from the buffer (scratch must
 * hold r->done values), else from the histogram.  -EINVAL on NULLs. */
int sleepacc_run_stats(const sleepacc_run *r, int64_t *scratch, sleepacc_stats *out) {
  if (!r || !out) return -EINVAL;
  if (r->samples && r->done > 0) {
    if (!scratch) return -EINVAL;
    return sleepacc_stats_compute(r->samples, (size_t)r->done, r->threshold, scratch, out);
  }
  sleepacc_hist_stats(&r->hist, out);
  return 0;
}

int64_t sleepacc_run_count(const sleepacc_run *r) { return r ? r->done : 0; }

void sleepacc_run_refusal(const sleepacc_run *r, const char **field, const char **why) {
  if (field) *field = r ? r->saved.bad_field : NULL;
  if (why) *why = r ? r->saved.why : NULL;
}

int sleepacc_run_set_starts(sleepacc_run *r, int64_t *starts) {
  if (!r || !r->samples || !starts || r->done > 0) return -EINVAL;
  r->starts = starts;
  return 0;
}

/* The record of a finished run: statistics, costs and the environment
 * applied, in the shape of sleepacc_result_fields. */
int sleepacc_run_result(const sleepacc_run *r, int64_t *scratch, sleepacc_result *out) {
  const sleepacc_env *e;
  int rc;
  if (!r || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  if ((rc = sleepacc_run_stats(r, scratch, &out->stats)) != 0) return rc;
  sleepacc_hist_stats(&r->hist, &out->stream_stats);
  e = &r->cfg.env;
  out->method = r->cfg.method ? r->cfg.method->name : NULL;
  out->mode = sleepacc_mode_name(r->cfg.mode);
  out->requested_ns = r->cfg.duration_ns;
  out->n = r->done;
  out->missed = r->missed;
  out->cpu_ns = r->cpu_ns;
  out->cpu_ns_per_call = r->cpu_ns < 0 ? -1.0 : r->done > 0 ? (double)r->cpu_ns / (double)r->done : 0.0;
  out->cpu_percent =
      r->cpu_ns >= 0 && r->wall_ns > 0 ? 100.0 * (double)r->cpu_ns / (double)r->wall_ns : -1.0;
  out->ctx_voluntary = r->ctx_voluntary;
  out->ctx_involuntary = r->ctx_involuntary;
  out->wall_ns = r->wall_ns;
  out->env.slack_ns = e->slack_ns;
  out->env.policy = e->policy == SLEEPACC_POLICY_KEEP ? NULL : sleepacc_policy_name(e->policy);
  out->env.priority = e->policy == SLEEPACC_POLICY_KEEP ? -1 : e->priority;
  out->env.cpu = e->cpu;
  out->env.lock_memory = e->lock_memory;
  out->env.dma_latency_us = e->dma_latency_us;
  out->env.margin_ns = r->cfg.method && r->cfg.method->family == SLEEPACC_FAMILY_HYBRID
                           ? (r->cfg.margin_ns > 0 ? r->cfg.margin_ns : SLEEPACC_DEFAULT_MARGIN_NS)
                           : -1;
  return 0;
}

/* start, step until complete (resuming after EINTR), finish. */
int sleepacc_measure(const sleepacc_config *cfg, int64_t *samples, size_t capacity,
                     sleepacc_run *r) {
  int rc;
  if (!r) return -EINVAL;
  if ((rc = sleepacc_run_start(r, cfg, samples, capacity)) != 0) return rc;
  do {
    rc = sleepacc_run_step(r);
  } while (rc == 0 || rc == -EINTR);
  if (rc < 0) {
    sleepacc_run_finish(r);
    return rc;
  }
  return sleepacc_run_finish(r);
}
