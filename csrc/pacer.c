/*
 * pacer.c -- periodic ticks at start + k * period (k = 1, 2, ...), waited
 * for by a sleeper, so no drift accumulates however long it runs.
 *
 * A tick is missed when wait() is called after its deadline (the caller's
 * work overran).  Policies:
 *   skip  (default) every tick whose deadline has passed is dropped and the
 *         pacer waits for the next future tick of the same grid;
 *   burst every missed tick is delivered, immediately, one per wait();
 *   delay the schedule restarts from now: the next tick is now + period.
 *
 * Statistics: count (ticks delivered), misses (tick deadlines that had
 * passed before wait() was called), lateness (wake - deadline per delivered
 * tick) and irtt's timer stats under irtt's names and definitions
 * (heistp/irtt client.go / result.go): timer_err is |actual - requested|
 * of each sleep the pacer did (= its lateness, since it never wakes early),
 * kept as irtt's DurationStats (Welford mean, sample stddev, min, max);
 * timer_err_percent = 100 * mean(timer_err) / period; timer_misses = ticks
 * that were never delivered (irtt: expected packets - packets sent).
 */
#include "sleepacc_int.h"

#include <math.h>
#include <string.h>

/* Open a pacer whose first tick is one period after now.  -EINVAL for a
 * NULL p, a period outside (0, SLEEPACC_MAX_DURATION_NS] or an unknown
 * policy; else the errors of sleepacc_sleeper_open (auto's quantile 0.99). */
int sleepacc_pacer_open(sleepacc_pacer *p, int64_t period_ns, const char *method,
                        int missed_policy) {
  int rc;
  if (!p) return -EINVAL;
  memset(p, 0, sizeof *p);
  if (period_ns <= 0 || period_ns > SLEEPACC_MAX_DURATION_NS) return -EINVAL;
  if (!sleepacc_missed_name(missed_policy)) return -EINVAL;
  rc = sleepacc_sleeper_open(&p->sleeper, method, 0.99, -1);
  if (rc < 0) return rc;
  p->period_ns = period_ns;
  p->missed_policy = missed_policy;
  p->start_ns = sleepacc_now_ns();
  p->k = 1;
  sleepacc_hist_init(&p->lateness, 0);
  return 0;
}

/* Check, open (the sleeper as configured), hand-off, dma latency. */
int sleepacc_pacer_open_config(sleepacc_pacer *p, const sleepacc_sleeper_config *c,
                               const char **field) {
  int rc;
  if (field) *field = NULL;
  if ((rc = sleepacc_sleeper_config_explain(c, 1, field, NULL)) < 0) return rc;
  if (field) *field = "method";
  rc = sleepacc_pacer_open(p, c->period_ns, c->method, sleepacc_missed_from_name(c->missed));
  if (rc < 0 && field && sleepacc__transient(rc)) *field = NULL; /* a resource, not the method */
  if (rc < 0) return rc;
  if ((rc = sleepacc__sleeper_configure(&p->sleeper, c, field)) < 0) sleepacc_pacer_close(p);
  return rc;
}

/* Deadline of tick k, or -EOVERFLOW. */
static int sleepacc__tick(const sleepacc_pacer *p, int64_t k, int64_t *out) {
  int64_t off;
  if (__builtin_mul_overflow(k, p->period_ns, &off) ||
      __builtin_add_overflow(p->start_ns, off, out))
    return -EOVERFLOW;
  return 0;
}

/* Deliver the tick with deadline dl, woken at `wake`. */
static void sleepacc__deliver(sleepacc_pacer *p, int64_t dl, int64_t wake) {
  sleepacc_hist_add(&p->lateness, wake - dl);
  p->count++;
  p->k++;
  p->last_deadline_ns = dl;
  p->pending = 0;
}

static void sleepacc__pacer_done(sleepacc_pacer *p, const sleepacc_sleeper *s, int64_t dl);

/* Wait for the next tick with sleeper s (p->sleeper, or a re-entrant
 * caller's own). */
static int sleepacc__pacer_wait(sleepacc_pacer *p, sleepacc_sleeper *s, int64_t chunk_ns,
                                int64_t *deadline_ns) {
  int64_t dl, now;
  int rc;
  if (!p || !s || p->period_ns <= 0 || chunk_ns < 0) return -EINVAL;
  if (p->redeliver) { /* a tick the caller could not take last time */
    p->redeliver = 0;
    if (deadline_ns) *deadline_ns = p->redeliver_deadline_ns;
    return 1;
  }
  if (!p->pending) {
    rc = sleepacc__tick(p, p->k, &dl);
    if (rc < 0) return rc;
    now = sleepacc_now_ns();
    if (now > dl) { /* the caller came back after this tick's deadline */
      int64_t passed = (now - dl) / p->period_ns + 1; /* deadlines <= now */
      switch (p->missed_policy) {
        case SLEEPACC_MISSED_BURST:
          p->misses++;
          sleepacc__deliver(p, dl, now);
          if (deadline_ns) *deadline_ns = dl;
          return 1;
        case SLEEPACC_MISSED_DELAY:
          p->misses += passed;
          p->timer_misses += passed;
          p->start_ns = now;
          p->k = 1;
          break;
        default: /* skip */
          p->misses += passed;
          p->timer_misses += passed;
          p->k += passed;
          break;
      }
      rc = sleepacc__tick(p, p->k, &dl);
      if (rc < 0) return rc;
    }
    p->pending = 1;
    p->pending_deadline_ns = dl;
  }
  dl = p->pending_deadline_ns;
  rc = sleepacc_sleeper_until(s, dl, chunk_ns);
  if (rc == SLEEPACC_NEAR && deadline_ns) *deadline_ns = dl;
  if (rc != 1) return rc;
  sleepacc__pacer_done(p, s, dl);
  if (deadline_ns) *deadline_ns = dl;
  return 1;
}

/* Wait for the next tick for at most chunk_ns (see sleepacc.h). */
int sleepacc_pacer_wait(sleepacc_pacer *p, int64_t chunk_ns, int64_t *deadline_ns) {
  return sleepacc__pacer_wait(p, p ? &p->sleeper : NULL, chunk_ns, deadline_ns);
}

/* The same with another sleeper (a wait re-entered from a signal handler
 * while p->sleeper is mid-wait on this thread). */
int sleepacc_pacer_wait_with(sleepacc_pacer *p, sleepacc_sleeper *s, int64_t chunk_ns,
                             int64_t *deadline_ns) {
  return sleepacc__pacer_wait(p, s, chunk_ns, deadline_ns);
}

/* The tick last delivered could not be handed to the caller: offer it
 * again (see sleepacc.h). */
int sleepacc_pacer_unwait(sleepacc_pacer *p, int64_t deadline_ns) {
  if (!p || p->period_ns <= 0 || p->count == 0 || p->pending || p->redeliver ||
      p->last_deadline_ns != deadline_ns)
    return -EINVAL;
  p->redeliver = 1;
  p->redeliver_deadline_ns = deadline_ns;
  return 0;
}

/* One step of a handed-off wait (see sleepacc.h). */
int sleepacc_pacer_poll(sleepacc_pacer *p, int64_t *deadline_ns) {
  int64_t dl;
  int rc;
  if (!p || p->period_ns <= 0 || !p->pending) return -EINVAL;
  dl = p->pending_deadline_ns;
  rc = sleepacc_sleeper_poll(&p->sleeper, dl);
  if (rc != 1) return rc;
  sleepacc__pacer_done(p, &p->sleeper, dl);
  if (deadline_ns) *deadline_ns = dl;
  return 1;
}

/* The tick with deadline dl was reached: irtt's timer error and delivery. */
static void sleepacc__pacer_done(sleepacc_pacer *p, const sleepacc_sleeper *s, int64_t dl) {
  int64_t wake = s->last_wake_ns;
  {
    double err = (double)(wake > dl ? wake - dl : dl - wake), old = p->err_mean;
    int64_t e = (int64_t)err;
    p->err_n++;
    p->err_mean += (err - old) / (double)p->err_n;
    p->err_m2 += (err - old) * (err - p->err_mean);
    if (p->err_n == 1 || e < p->err_min) p->err_min = e;
    if (p->err_n == 1 || e > p->err_max) p->err_max = e;
  }
  sleepacc__deliver(p, dl, wake);
}

/* Close the sleeper.  Safe twice. */
void sleepacc_pacer_close(sleepacc_pacer *p) {
  if (!p) return;
  sleepacc_sleeper_close(&p->sleeper);
  p->pending = 0;
  p->redeliver = 0;
}

/* The pacer's sleeper (for its hand-off and dma latency settings). */
sleepacc_sleeper *sleepacc_pacer_sleeper(sleepacc_pacer *p) { return p ? &p->sleeper : NULL; }

/* Counters, lateness statistics and irtt's timer stats (zeros when empty). */
void sleepacc_pacer_stats_get(const sleepacc_pacer *p, sleepacc_pacer_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!p) return;
  out->count = p->count;
  out->misses = p->misses;
  if (p->lateness.count > 0) sleepacc_hist_stats(&p->lateness, &out->lateness);
  out->timer_misses = p->timer_misses;
  out->missed = p->timer_misses;
  if (p->err_n > 0) {
    out->timer_err_mean = p->err_mean;
    out->timer_err_min = (double)p->err_min;
    out->timer_err_max = (double)p->err_max;
    out->timer_err_stddev = p->err_n > 1 ? sqrt(p->err_m2 / (double)(p->err_n - 1)) : 0.0;
    if (p->period_ns > 0) out->timer_err_percent = 100.0 * p->err_mean / (double)p->period_ns;
  }
  out->period_ns = p->period_ns;
  out->missed_policy = sleepacc_missed_name(p->missed_policy);
  out->start_ns = p->start_ns;
  out->last_deadline_ns = p->last_deadline_ns;
  sleepacc_sleeper_stats_get(&p->sleeper, &out->sleeper);
}
