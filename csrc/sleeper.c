/*
 * sleeper.c -- a precise sleep toward an absolute deadline, with the
 * strategies spin, hybrid, comp, kernel and auto (a hybrid whose margin is
 * learned online, per log2 duration band).
 *
 * Every strategy aims at an ABSOLUTE CLOCK_MONOTONIC deadline, so a loop of
 * sleeps never drifts, and none returns before its deadline.
 *
 * The kernel wait.  Strategies other than `kernel` use the first available
 * of timerfd, clock_nanosleep_abs, clock_nanosleep, nanosleep.  timerfd
 * comes first because it ignores timer slack and leaves the caller's thread
 * alone (no slack or policy change).  Measured on the 2-vCPU KVM guest this
 * was written on (default 50 us slack, 2000 absolute waits each):
 *     request   clock_nanosleep_abs late    timerfd late
 *                 median     p99            median    p99
 *     100 us      55.3 us    63.8 us         5.5 us   13.1 us
 *     1 ms        64.1 us   102.3 us        13.3 us   37.3 us
 *     10 ms       70.4 us   170.8 us        41.7 us   87.5 us
 *
 * auto.  Per band b (requested duration in [2^b, 2^(b+1)) ns) a decayed
 * histogram (constant memory, SLEEPACC_SLEEPER_LBUCKETS buckets of 1/8
 * octave; every sample weighs 1/(1-LAMBDA) more than the one before, which
 * is an exponential forgetting of old samples with a memory of about
 * 1/LAMBDA sleeps) tracks how late the kernel wait wakes after its target.
 * The margin is the upper edge of the bucket holding the `quantile` of that
 * lateness, plus one clock read, plus a miss boost:
 *   - start-up: a band with fewer than WARM samples uses the initial margin
 *     (300 us, capped at half the request so the band still gets samples);
 *     until STARTUP samples the quantile is the largest lateness seen, which
 *     is conservative, but the margin stays within that initial margin (a
 *     4 ms outlier among the first samples must not mean 4 ms spins);
 *   - after that the single largest sample in memory never sets the
 *     quantile alone (the tail weight is at least one sample's): about 1 wait
 *     in 100 wakes 0.5-4 ms late (the vCPU was not running), which no
 *     margin short of spinning the whole sleep can absorb;
 *   - a miss (the kernel woke after the deadline itself) adds
 *     min(overshoot, margin) to the band's boost: the overshoot is made up
 *     at once, or the margin doubles, so repeated misses grow it
 *     geometrically; the boost decays by 1/32 per sleep without a miss and
 *     the histogram forgets old samples over ~1/LAMBDA sleeps, so the
 *     margin grows fast and shrinks slowly;
 *   - contention: a spin step longer than GAP_NS means the thread lost the
 *     CPU.  When more than 10% of recent spins (EWMA, 1/16; judged after
 *     16 spins) lost it, other
 *     threads want this CPU, and a long spin backfires: it is preempted and
 *     the sleep ends a whole time slice late.  Measured under stress-ng
 *     --cpu 2: a 10 ms auto sleep whose p99 margin had grown to 8 ms (the
 *     kernel's lateness tail under load) had a 22 ms median error.  So while
 *     contended the margin is capped at CONTENDED_CAP (125 us); the cap goes
 *     when fewer than 2% of spins lose the CPU, after CONTENDED_MIN sleeps
 *     at least (capped spins are preempted less, which is not the load
 *     going away).  Measured with the rows
 *     interleaved (bench/precise_sleep.py) a 125 us spin never made the
 *     median worse than a plain kernel sleep's under load, and dropping the
 *     spin altogether (tried) gave up most of the gain on a busy host;
 *   - the margin is clamped to [0, requested duration]; a band whose margin
 *     is the whole sleep (pure spin) re-tries a kernel wait to half the
 *     request every EXPLORE sleeps, so it can learn that the host improved.
 *
 * Real-time threads.  A spin longer than RT_SPIN_NS checks the thread's
 * policy once per sleep (sched_getscheduler: 185 ns measured, so it is not
 * paid by the short spins that are the common case); under SCHED_FIFO/RR the
 * rest of the sleep is a kernel wait (RT threads get no timer slack), so an
 * RT thread never spins more than RT_SPIN_NS per sleep in C, plus a hand-off
 * (below) of at most RT_HANDOFF_NS in the caller's loop (a hand-off above
 * that checks the policy when the sleep starts).
 *
 * Hand-off (sleepacc_sleeper_set_handoff, off by default; the Python
 * binding's default is 50 us).  Measured on this kind of guest: after a
 * wait of milliseconds the CPU caches are cold (the idle vCPU's core ran
 * other work), so the first interpreter code after a sleep that ends in C
 * runs late: a 10 ms auto sleep ended 25-40 ns after its deadline by the
 * core's own clock read, but Python's next time.monotonic_ns() came 10-20 us
 * later; even a 100 ms pure spin in C showed 9-13 us.  With a hand-off the
 * kernel wait ends handoff_ns earlier than the margin alone asks, the C spin
 * stops handoff_ns before the deadline and returns SLEEPACC_NEAR, and the
 * binding's caller spins the rest in its own interpreter, one
 * sleepacc_sleeper_poll (one clock read; the core decides and records) per
 * turn, so its code is warm when the sleep returns: the median error seen
 * from Python halved at 1, 10 and 100 ms (bench/precise_sleep.py, rows auto
 * and auto handoff=0), for handoff_ns more spinning per sleep.
 *
 * Chunks.  sleepacc_sleeper_until returns 0 at a chunk boundary (kernel
 * waits and spins alike), so bindings can check for Ctrl-C; the sleep in
 * progress is remembered and resumes when called again with its deadline.
 */
#include "sleepacc_int.h"

#include <math.h>
#include <sched.h>
#include <string.h>

#define SLEEPACC__SLEEPER_MAGIC 0x51ee9e7
#define SLEEPACC__AUTO_INITIAL_NS 300000LL   /* auto: margin of a cold band */
#define SLEEPACC__WARM 8                     /* samples before a band is learned */
#define SLEEPACC__STARTUP 32                 /* until then the quantile is the max seen */
#define SLEEPACC__LAMBDA (1.0 / 1024.0)      /* forgetting per sample */
#define SLEEPACC__BOOST_DECAY 32             /* boost -= boost/32 per good sleep */
#define SLEEPACC__EXPLORE 256                /* saturated band: probe every N sleeps */
#define SLEEPACC__RT_SPIN_NS 200000LL        /* most spin per sleep under FIFO/RR */
#define SLEEPACC__RT_HANDOFF_NS 50000LL      /* most hand-off per sleep under FIFO/RR */
#define SLEEPACC__MIN_KERNEL_NS 1000LL       /* shorter kernel waits are skipped */
#define SLEEPACC__COMP_ALPHA 0.10            /* comp: EWMA weight (irtt) */
#define SLEEPACC__GAP_NS 20000LL             /* a spin step this long: the CPU was lost */
#define SLEEPACC__CONTENDED 0.10             /* contention above this: cap the margin */
#define SLEEPACC__UNCONTENDED 0.02           /*   until it falls below this */
#define SLEEPACC__CONTENDED_CAP_NS 125000LL  /* the cap (spin_sleep's fixed margin) */
#define SLEEPACC__CONTENDED_MIN 2048         /* sleeps before the cap can go */

/* Preferred kernel wait of auto/hybrid/comp/spin, best first. */
static const char *const sleepacc__kernel_pref[] = {
    "timerfd", "clock_nanosleep_abs", "clock_nanosleep", "nanosleep", NULL};

/* ------------------------------------------------------------ estimator */

/* Bucket of a lateness value (ns). */
static int sleepacc__lbucket(int64_t v) {
  int o, idx;
  if (v < 128) return 0;
  o = 63 - __builtin_clzll((unsigned long long)v);
  if (o > 26) return SLEEPACC_SLEEPER_LBUCKETS - 1;
  idx = 1 + (o - 7) * 8 + (int)((v >> (o - 3)) & 7);
  return idx < SLEEPACC_SLEEPER_LBUCKETS ? idx : SLEEPACC_SLEEPER_LBUCKETS - 1;
}

/* Upper edge (exclusive) of bucket idx, in ns. */
static int64_t sleepacc__lbucket_hi(int idx) {
  int o, sub;
  if (idx <= 0) return 128;
  o = 7 + (idx - 1) / 8;
  sub = (idx - 1) % 8;
  return (1LL << o) + (int64_t)(sub + 1) * (1LL << (o - 3));
}

/* Band of a requested duration. */
static int sleepacc__band(int64_t d) {
  int b;
  if (d < 2) return 0;
  b = 63 - __builtin_clzll((unsigned long long)d);
  return b < SLEEPACC_SLEEPER_BANDS ? b : SLEEPACC_SLEEPER_BANDS - 1;
}

/* Lower bound of band b (ns). */
static int64_t sleepacc__band_lo(int b) { return b <= 0 ? 0 : (1LL << b); }

/* Add one kernel-wait lateness to band b and refresh its quantile. */
static void sleepacc__band_add(sleepacc_sleeper *s, int b, int64_t late) {
  float *w = s->band_w[b];
  double tail, cum = 0;
  int i;
  if (late < 0) late = 0;
  if (s->band_inc[b] <= 0) s->band_inc[b] = 1.0f;
  s->band_inc[b] *= (float)(1.0 / (1.0 - SLEEPACC__LAMBDA));
  w[sleepacc__lbucket(late)] += s->band_inc[b];
  s->band_total[b] += s->band_inc[b];
  if (s->band_inc[b] > 1e6f) { /* renormalise; ratios are unchanged */
    float k = 1.0f / s->band_inc[b];
    for (i = 0; i < SLEEPACC_SLEEPER_LBUCKETS; i++) w[i] *= k;
    s->band_total[b] *= k;
    s->band_inc[b] = 1.0f;
  }
  s->band_samples[b]++;
  /* Upper-tail walk: the quantile's bucket is the first, from the top,
   * where the weight above plus its own exceeds (1 - q) of the total. */
  tail = (1.0 - s->quantile) * s->band_total[b];
  /* past the start-up, one sample never decides alone */
  if (s->band_samples[b] >= SLEEPACC__STARTUP && tail < s->band_inc[b]) tail = s->band_inc[b];
  for (i = SLEEPACC_SLEEPER_LBUCKETS - 1; i > 0; i--) {
    cum += w[i];
    if (cum > tail) break;
  }
  s->band_q[b] = (double)sleepacc__lbucket_hi(i);
}

/* auto's margin for a request of d ns in band b, clamped to [0, d]. */
static int64_t sleepacc__learned_margin(const sleepacc_sleeper *s, int b, int64_t d) {
  int64_t m;
  if (s->band_samples[b] < SLEEPACC__WARM) {
    m = s->fixed_margin_ns;
    if (m > d / 2) m = d / 2;
  } else {
    m = (int64_t)s->band_q[b] + s->clock_cost_ns + s->band_boost_ns[b];
    /* start-up: the largest lateness seen, but no more than the initial margin */
    if (s->band_samples[b] < SLEEPACC__STARTUP) {
      int64_t cap = s->fixed_margin_ns < d / 2 ? s->fixed_margin_ns : d / 2;
      if (m > cap) m = cap;
    }
    /* other threads want this CPU: spin little (see the top) */
    if (s->contended && m > SLEEPACC__CONTENDED_CAP_NS) m = SLEEPACC__CONTENDED_CAP_NS;
  }
  if (m > d) m = d;
  if (m < 0) m = 0;
  return m;
}

/* The margin auto uses for a sleep of d ns in band b, in [0, d]. */
static int64_t sleepacc__auto_margin(sleepacc_sleeper *s, int b, int64_t d) {
  int64_t m = sleepacc__learned_margin(s, b, d);
  if (m >= d && d > 0) {
    /* Saturated: the margin is the whole sleep, so no sample is learned.
     * Probe with half the request now and then. */
    s->band_saturated[b]++;
    if (s->band_saturated[b] % SLEEPACC__EXPLORE == 0 && d / 2 >= SLEEPACC__MIN_KERNEL_NS) m = d / 2;
  }
  s->band_margin_ns[b] = m;
  return m;
}

/* ------------------------------------------------------------ open/close */

/* Open a sleeper (see sleepacc.h).  -EINVAL for bad arguments, -ENOENT for
 * an unknown method, -ENOTSUP for a non-kernel registry row, -ENOSYS when
 * the method (or every kernel wait) is unavailable.  On failure *s is left
 * closed. */
int sleepacc_sleeper_open(sleepacc_sleeper *s, const char *method, double quantile,
                          int64_t margin_ns) {
  const sleepacc_method *kernel = NULL;
  sleepacc_clock_info ci;
  int strategy, rc;
  if (!s) return -EINVAL;
  memset(s, 0, sizeof *s);
  s->waiter.fd = s->waiter.aux_fd = -1;
  s->held.dma_fd = -1;
  s->dma_latency_us = -1;
  if (!method) method = "auto";
  if (!(quantile > 0.0 && quantile < 1.0)) return -EINVAL; /* NaN fails too */
  if (margin_ns < -1 || margin_ns > SLEEPACC_MAX_DURATION_NS) return -EINVAL;
  strategy = sleepacc_strategy_from_name(method, &kernel);
  if (strategy < 0) return strategy;
  s->fork_gen = sleepacc_fork_generation();
  if (strategy == SLEEPACC_STRATEGY_KERNEL) {
    if (!sleepacc_method_available(kernel)) return -ENOSYS;
    if ((rc = sleepacc_waiter_open(&s->waiter, kernel, 0)) < 0) return rc;
  } else { /* the first preferred wait that opens; one short of a resource
            * (timerfd at EMFILE) gives way to the next, and stats say so */
    const sleepacc_method *skipped = NULL;
    int skipped_err = 0;
    rc = -ENOSYS;
    for (int i = 0; sleepacc__kernel_pref[i] && !kernel; i++) {
      const sleepacc_method *m = sleepacc_method_find(sleepacc__kernel_pref[i]);
      if (!m || !sleepacc_method_available(m)) continue;
      if ((rc = sleepacc_waiter_open(&s->waiter, m, 0)) == 0) kernel = m;
      else if (!sleepacc__transient(rc)) return rc;
      else if (!skipped) skipped = m, skipped_err = rc;
    }
    if (!kernel) return rc;
    s->kernel_skipped = skipped;
    s->kernel_skipped_err = skipped_err;
  }
  s->strategy = strategy;
  s->kernel = kernel;
  s->quantile = quantile;
  if (margin_ns >= 0)
    s->fixed_margin_ns = margin_ns;
  else
    s->fixed_margin_ns = strategy == SLEEPACC_STRATEGY_AUTO ? SLEEPACC__AUTO_INITIAL_NS
                                                            : SLEEPACC_DEFAULT_MARGIN_NS;
  s->clock_cost_ns = 0;
  if (sleepacc_clock_info_get(SLEEPACC_CLOCK_MONOTONIC, 200, &ci) == 0 && ci.read_cost_ns > 0)
    s->clock_cost_ns = ci.read_cost_ns;
  s->comp_ratio = 1.0;
  s->cur_rt = -1;
  sleepacc_hist_init(&s->lateness, 0);
  s->magic = SLEEPACC__SLEEPER_MAGIC;
  return 0;
}

/* A sleeper like `like` (strategy or kernel method, quantile, margin; no
 * hand-off, no dma latency, nothing learned): the own sleeper of a call
 * re-entered from a signal handler while `like` is mid-sleep. */
int sleepacc_sleeper_open_like(sleepacc_sleeper *s, const sleepacc_sleeper *like) {
  const char *name = NULL;
  if (!s || !like || like->magic != SLEEPACC__SLEEPER_MAGIC) return -EINVAL;
  if (like->strategy == SLEEPACC_STRATEGY_KERNEL) {
    name = like->kernel ? like->kernel->name : NULL;
  } else {
    name = sleepacc_strategy_name(like->strategy);
  }
  if (!name) return -EINVAL;
  return sleepacc_sleeper_open(s, name, like->quantile, like->fixed_margin_ns);
}

/* Close the waiter.  Safe on a closed or never-opened (zeroed) sleeper. */
void sleepacc_sleeper_close(sleepacc_sleeper *s) {
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC) return;
  sleepacc_env_restore(&s->held);
  s->dma_latency_us = -1;
  /* in a forked child the waiter's timer/condvar are the parent's: trade
   * them for our own first, so close never touches the parent's */
  if (s->fork_gen != sleepacc_fork_generation()) sleepacc_waiter_reopen(&s->waiter);
  sleepacc_waiter_close(&s->waiter);
  s->magic = 0;
  s->cur_active = 0;
}

/* ------------------------------------------------------------ sleeping */

/* Kernel wait until target (absolute); 0, -EINTR or -errno. */
static int sleepacc__kwait(sleepacc_sleeper *s, int64_t now, int64_t target) {
  return sleepacc_waiter_wait(&s->waiter, target > now ? target - now : 0, target);
}

/* 1 if the calling thread runs under SCHED_FIFO or SCHED_RR (cached per sleep). */
static int sleepacc__is_rt(sleepacc_sleeper *s) {
  if (s->cur_rt < 0) {
    int p = sched_getscheduler(0);
    s->cur_rt = p >= 0 && ((p & ~SCHED_RESET_ON_FORK) == SCHED_FIFO ||
                           (p & ~SCHED_RESET_ON_FORK) == SCHED_RR);
  }
  return s->cur_rt;
}

/* Spin until `until` or chunk_end, whichever first.  Under FIFO/RR a spin
 * beyond RT_SPIN_NS per sleep becomes a kernel wait.  Returns 1 when `until`
 * is reached, 0 at the chunk end, or a negative errno from the kernel wait.
 * *now is updated. */
static int sleepacc__spin(sleepacc_sleeper *s, int64_t *now, int64_t until, int64_t chunk_end) {
  int64_t t = *now, t0 = t;
  int rc = 1;
  while (t < until) {
    if (t >= chunk_end) { rc = 0; break; }
    if (s->cur_spin_ns + (t - t0) > SLEEPACC__RT_SPIN_NS && sleepacc__is_rt(s)) {
      int64_t target = until < chunk_end ? until : chunk_end;
      s->cur_spin_ns += t - t0;
      s->spin_ns += t - t0;
      s->rt_fallbacks++;
      rc = sleepacc__kwait(s, t, target);
      t = t0 = sleepacc_now_ns();
      if (rc < 0) break;
      rc = 1;
      continue;
    }
    sleepacc_cpu_relax();
    {
      int64_t prev = t;
      t = sleepacc_now_ns();
      if (t - prev > SLEEPACC__GAP_NS) s->cur_preempted = 1;
    }
  }
  s->cur_spin_ns += t - t0;
  s->spin_ns += t - t0;
  *now = t;
  return rc;
}

/* The spin phase of a sleep: spin to the deadline, or with a hand-off set
 * (and not yet done for this sleep) spin to deadline - handoff_ns and return
 * SLEEPACC_NEAR, so the caller spins the rest with sleepacc_sleeper_poll.
 * Returns 1 at the deadline, SLEEPACC_NEAR, 0 at the chunk end or -errno. */
static int sleepacc__spin_phase(sleepacc_sleeper *s, int64_t *now, int64_t deadline_ns,
                                int64_t chunk_end) {
  if (s->cur_handoff_ns > 0 && !s->cur_handed) {
    int rc = sleepacc__spin(s, now, deadline_ns - s->cur_handoff_ns, chunk_end);
    if (rc <= 0) return rc;
    if (*now < deadline_ns) {
      s->cur_handed = 1;
      s->cur_handed_ns = *now;
      return SLEEPACC_NEAR;
    }
    return 1;
  }
  return sleepacc__spin(s, now, deadline_ns, chunk_end);
}

/* Record the end of the sleep in progress, woken at `now`. */
static void sleepacc__finish(sleepacc_sleeper *s, int64_t now) {
  int b = s->cur_band;
  int64_t late;
  if (__builtin_sub_overflow(now, s->cur_deadline_ns, &late)) late = INT64_MAX;
  sleepacc_hist_add(&s->lateness, late);
  s->count++;
  s->band_count[b]++;
  s->last_wake_ns = now;
  s->cur_active = 0;
  if (s->cur_spin_ns > 0) { /* contention: how often spinning lost the CPU */
    s->contention += ((s->cur_preempted ? 1.0 : 0.0) - s->contention) / 16.0;
    s->preempted_spins += s->cur_preempted;
    s->spins++;
    if (s->strategy == SLEEPACC_STRATEGY_AUTO && s->spins >= 16 &&
        s->contention > SLEEPACC__CONTENDED) {
      if (!s->contended) s->contended_since = s->count;
      s->contended = 1;
    }
    /* capped spins are preempted less often, so leave only after a while */
    if (s->contention < SLEEPACC__UNCONTENDED &&
        s->count - s->contended_since >= SLEEPACC__CONTENDED_MIN)
      s->contended = 0;
  }
}

/* Kernel wait toward target for the hybrid-like strategies, bounded by the
 * chunk.  Returns 1 when the wait reached target (then *late gets how late
 * the kernel woke after it, or -1 when the wait was cut by the chunk and so
 * says nothing about lateness), 0 at the chunk end, or -errno. */
static int sleepacc__kphase(sleepacc_sleeper *s, int64_t *now, int64_t target,
                            int64_t chunk_end, int64_t *late) {
  int rc;
  *late = -1;
  if (target > chunk_end) {
    rc = sleepacc__kwait(s, *now, chunk_end);
    *now = sleepacc_now_ns();
    return rc < 0 ? rc : (*now >= target ? 1 : 0);
  }
  rc = sleepacc__kwait(s, *now, target);
  *now = sleepacc_now_ns();
  if (rc < 0) return rc;
  *late = *now - target;
  s->kernel_waits++;
  return 1;
}

/* In a child of fork() the waiter is the parent's (a timerfd both would
 * arm and one would read for ever): open our own.  0 or -errno. */
static int sleepacc__fork_check(sleepacc_sleeper *s) {
  uint64_t gen = sleepacc_fork_generation();
  int rc;
  if (s->fork_gen == gen) return 0;
  if ((rc = sleepacc_waiter_reopen(&s->waiter)) != 0) return rc;
  s->fork_gen = gen;
  s->cur_rt = -1;
  return 0;
}

/* Sleep toward deadline_ns for at most chunk_ns (see sleepacc.h). */
int sleepacc_sleeper_until(sleepacc_sleeper *s, int64_t deadline_ns, int64_t chunk_ns) {
  int64_t now, chunk_end, d, late = 0;
  int rc;
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC || chunk_ns < 0) return -EINVAL;
  if ((rc = sleepacc__fork_check(s)) != 0) return rc;
  if (chunk_ns == 0) chunk_ns = SLEEPACC_CHUNK_NS;
  /* any deadline, however far (a sleep of seconds has no day cap,
   * sleepacc_sleep_check); a chunk, and so each kernel wait, is at most a day */
  if (chunk_ns > SLEEPACC_MAX_DURATION_NS) chunk_ns = SLEEPACC_MAX_DURATION_NS;
  now = sleepacc_now_ns();
  chunk_end = now + chunk_ns; /* chunk_ns <= INT64_MAX - now is not guaranteed: */
  if (chunk_end < now) chunk_end = INT64_MAX;

  if (!s->cur_active || s->cur_deadline_ns != deadline_ns) { /* a new sleep */
    d = deadline_ns > now ? deadline_ns - now : 0;
    s->cur_active = 1;
    s->cur_deadline_ns = deadline_ns;
    s->cur_start_ns = now;
    s->cur_band = sleepacc__band(d);
    s->cur_rt = -1;
    s->cur_spin_ns = 0;
    s->cur_preempted = 0;
    s->cur_handed = 0;
    s->cur_handoff_ns = s->handoff_ns;
    if (s->cur_handoff_ns > SLEEPACC__RT_HANDOFF_NS && sleepacc__is_rt(s))
      s->cur_handoff_ns = SLEEPACC__RT_HANDOFF_NS; /* the caller's spin is not bounded by us */
    switch (s->strategy) {
      case SLEEPACC_STRATEGY_AUTO: s->cur_margin_ns = sleepacc__auto_margin(s, s->cur_band, d); break;
      case SLEEPACC_STRATEGY_HYBRID:
        s->cur_margin_ns = s->fixed_margin_ns < d ? s->fixed_margin_ns : d;
        break;
      case SLEEPACC_STRATEGY_SPIN: s->cur_margin_ns = d; break;
      default: s->cur_margin_ns = 0; break;
    }
  }
  if (now >= deadline_ns) {
    sleepacc__finish(s, now);
    return 1;
  }

  switch (s->strategy) {
    case SLEEPACC_STRATEGY_KERNEL:
      /* Plain kernel wait; re-wait if a relative method woke early. */
      while (now < deadline_ns) {
        int64_t target = deadline_ns < chunk_end ? deadline_ns : chunk_end;
        if (now >= chunk_end) return 0;
        rc = sleepacc__kwait(s, now, target);
        now = sleepacc_now_ns();
        if (rc < 0) return rc;
        if (target == chunk_end && now < deadline_ns) return 0;
      }
      s->kernel_waits++;
      break;

    case SLEEPACC_STRATEGY_COMP: {
      /* irtt's comp: ask for rem / r, r = EWMA of actual/asked; a wake
       * before the deadline spins the rest, so it never returns early. */
      int64_t rem = deadline_ns - now;
      int64_t ask, t0 = now, target;
      if (rem > chunk_ns) { /* far away: a plain wait to the chunk end */
        rc = sleepacc__kwait(s, now, chunk_end);
        return rc < 0 ? rc : 0;
      }
      ask = (int64_t)((double)rem / (s->comp_ratio > 0.5 ? s->comp_ratio : 0.5));
      if (ask < 0) ask = 0;
      target = now + ask;
      if (ask >= SLEEPACC__MIN_KERNEL_NS) {
        rc = sleepacc__kwait(s, now, target);
        now = sleepacc_now_ns();
        if (rc < 0) return rc;
        s->kernel_waits++;
        if (ask > 0) {
          double erf = (double)(now - t0) / (double)ask;
          if (erf >= 0.0 && erf <= 2.0)
            s->comp_ratio += SLEEPACC__COMP_ALPHA * (erf - s->comp_ratio);
        }
        if (now > deadline_ns) s->misses++;
      }
      rc = sleepacc__spin_phase(s, &now, deadline_ns, chunk_end);
      if (rc != 1) return rc;
      break;
    }

    default: { /* AUTO, HYBRID, SPIN: kernel wait to deadline - margin, spin */
      /* with a hand-off the kernel wait ends handoff_ns earlier still, so
       * the caller's poll loop gets its handoff_ns even when the kernel
       * wakes as late as the margin allows */
      int64_t target = deadline_ns - s->cur_margin_ns - (s->cur_handed ? 0 : s->cur_handoff_ns);
      if (target - now >= SLEEPACC__MIN_KERNEL_NS) {
        rc = sleepacc__kphase(s, &now, target, chunk_end, &late);
        if (rc <= 0) return rc;
        if (now > deadline_ns) {
          s->misses++;
          if (s->strategy == SLEEPACC_STRATEGY_AUTO && !s->contended) {
            int b = s->cur_band;
            int64_t over = now - deadline_ns;
            int64_t add = over < s->cur_margin_ns ? over : s->cur_margin_ns;
            if (add < s->clock_cost_ns) add = s->clock_cost_ns;
            if (s->band_boost_ns[b] <= SLEEPACC_MAX_DURATION_NS) s->band_boost_ns[b] += add;
          }
        } else if (s->strategy == SLEEPACC_STRATEGY_AUTO) {
          s->band_boost_ns[s->cur_band] -= s->band_boost_ns[s->cur_band] / SLEEPACC__BOOST_DECAY;
        }
        if (s->strategy == SLEEPACC_STRATEGY_AUTO && late >= 0)
          sleepacc__band_add(s, s->cur_band, late);
      }
      rc = sleepacc__spin_phase(s, &now, deadline_ns, chunk_end);
      if (rc != 1) return rc;
      break;
    }
  }
  sleepacc__finish(s, now);
  return 1;
}

/* Set the hand-off (see sleepacc.h): 0 or -EINVAL. */
int sleepacc_sleeper_set_handoff(sleepacc_sleeper *s, int64_t handoff_ns) {
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC) return -EINVAL;
  if (handoff_ns < 0 || handoff_ns > SLEEPACC_MAX_HANDOFF_NS) return -EINVAL;
  s->handoff_ns = s->strategy == SLEEPACC_STRATEGY_KERNEL ? 0 : handoff_ns; /* never spins */
  return 0;
}

/* One step of the handed-off spin (see sleepacc.h): 1 reached, 0 not yet. */
int sleepacc_sleeper_poll(sleepacc_sleeper *s, int64_t deadline_ns) {
  int64_t now;
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC) return -EINVAL;
  if (!s->cur_active || s->cur_deadline_ns != deadline_ns || !s->cur_handed) {
    int rc = sleepacc_sleeper_until(s, deadline_ns, 1);
    return rc == SLEEPACC_NEAR ? 0 : rc;
  }
  now = sleepacc_now_ns();
  if (now < deadline_ns) return 0;
  s->cur_spin_ns += now - s->cur_handed_ns;
  s->spin_ns += now - s->cur_handed_ns;
  sleepacc__finish(s, now);
  return 1;
}

/* Hold (or with -1 release) a /dev/cpu_dma_latency request for the
 * sleeper's life, through the environment code (one place opens the file).
 * The previous request is released first. */
int sleepacc_sleeper_hold_dma_latency(sleepacc_sleeper *s, int us) {
  sleepacc_env env;
  int rc;
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC) return -EINVAL;
  if (us < -1 || us > SLEEPACC_MAX_DMA_LATENCY_US) return -EINVAL;
  sleepacc_env_restore(&s->held);
  s->dma_latency_us = -1;
  if (us < 0) return 0;
  sleepacc_env_default(&env);
  env.dma_latency_us = us;
  if ((rc = sleepacc_env_apply(&env, &s->held)) < 0) return rc;
  s->dma_latency_us = us;
  return 0;
}

/* The settings of an open sleeper from c: hand-off, dma latency.  0, or
 * -errno with *field blamed (the caller closes). */
int sleepacc__sleeper_configure(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                const char **field) {
  int rc = sleepacc_sleeper_set_handoff(s, c->handoff_ns);
  if (rc == 0 && c->dma_latency_us >= 0) {
    if (field) *field = "dma_latency_us";
    rc = sleepacc_sleeper_hold_dma_latency(s, (int)c->dma_latency_us);
  }
  if (rc == 0 && field) *field = NULL;
  return rc;
}

/* Check, open, hand-off, dma latency (see sleepacc.h). */
int sleepacc_sleeper_open_config(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                 const char **field) {
  int rc;
  if (field) *field = NULL;
  if ((rc = sleepacc_sleeper_config_explain(c, 0, field, NULL)) < 0) return rc;
  if (field) *field = "method";
  if ((rc = sleepacc_sleeper_open(s, c->method, c->quantile, c->margin_ns)) < 0) {
    if (field && sleepacc__transient(rc)) *field = NULL; /* a resource, not the method */
    return rc;
  }
  if ((rc = sleepacc__sleeper_configure(s, c, field)) < 0) sleepacc_sleeper_close(s);
  return rc;
}

/* ------------------------------------------------------------ results */

/* Counters, lateness statistics and auto's learned margins.  A NULL or
 * closed sleeper gives zeros (the statistics of a closed sleeper are kept
 * until it is reopened). */
void sleepacc_sleeper_stats_get(const sleepacc_sleeper *s, sleepacc_sleeper_stats *out) {
  if (!out) return;
  memset(out, 0, sizeof *out);
  if (!s) return;
  out->count = s->count;
  out->misses = s->misses;
  out->spin_ns = s->spin_ns;
  if (s->lateness.count > 0) sleepacc_hist_stats(&s->lateness, &out->lateness);
  out->strategy = sleepacc_strategy_name(s->strategy);
  out->kernel = s->kernel ? s->kernel->name : NULL;
  out->kernel_skipped = s->kernel_skipped ? s->kernel_skipped->name : NULL;
  out->kernel_skipped_err = s->kernel_skipped ? sleepacc_errname(s->kernel_skipped_err) : NULL;
  out->quantile = s->quantile;
  out->margin_ns = s->fixed_margin_ns;
  out->handoff_ns = s->handoff_ns;
  out->clock_cost_ns = s->clock_cost_ns;
  out->comp_ratio = s->comp_ratio;
  out->kernel_waits = s->kernel_waits;
  out->rt_fallbacks = s->rt_fallbacks;
  out->preempted_spins = s->preempted_spins;
  out->contended = s->contended != 0;
  out->last_wake_ns = s->last_wake_ns;
  out->dma_latency_us = s->magic == SLEEPACC__SLEEPER_MAGIC ? s->dma_latency_us : -1;
  {
    int64_t lo[SLEEPACC_SLEEPER_BANDS], m[SLEEPACC_SLEEPER_BANDS];
    out->margins.n = sleepacc_sleeper_margins(s, lo, m, SLEEPACC_SLEEPER_BANDS);
    for (int64_t i = 0; i < out->margins.n; i++) {
      out->margins.at[i].key = lo[i];
      out->margins.at[i].value = m[i];
    }
  }
}

_Static_assert(SLEEPACC_SLEEPER_BANDS <= SLEEPACC_PAIRS_MAX, "margins: one pair per band");

/* auto: for each band that has seen sleeps, its lower bound and the margin
 * it would use now for a request of that lower bound (so in [0, lower
 * bound]).  Other strategies have no learned margins: 0 is returned. */
int sleepacc_sleeper_margins(const sleepacc_sleeper *s, int64_t *band_lo_ns,
                             int64_t *margin_ns, size_t cap) {
  size_t n = 0;
  if (!s || s->strategy != SLEEPACC_STRATEGY_AUTO) return 0;
  for (int b = 0; b < SLEEPACC_SLEEPER_BANDS && n < cap; b++) {
    int64_t lo = sleepacc__band_lo(b), m;
    if (s->band_count[b] == 0) continue;
    m = sleepacc__learned_margin(s, b, lo);
    if (band_lo_ns) band_lo_ns[n] = lo;
    if (margin_ns) margin_ns[n] = m;
    n++;
  }
  return (int)n;
}
