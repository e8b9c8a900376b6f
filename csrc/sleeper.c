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
 *     (300 us, or 1/256 of a request over 77 ms when the caller gave no
 *     margin: idle, timerfd woke 150-315 us late at 100 ms, so 300 us
 *     missed often in a band that sees few sleeps; capped at half the
 *     request so the band still gets samples);
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
 *   - contention: see "Contention" below; while contended no sample is
 *     learned, so the bands keep the idle figures for when the load ends;
 *   - the margin is clamped to [0, requested duration]; a band whose margin
 *     is the whole sleep (pure spin) re-tries a kernel wait to half the
 *     request every EXPLORE sleeps, so it can learn that the host improved.
 *
 * Contention.  A thread that spins while other threads want its CPU uses
 * up its share: the scheduler takes the CPU at the next tick and gives it
 * back a time slice later (4 ms at HZ=250), while a thread that slept in
 * the kernel is woken at once.  Measured under stress-ng --cpu 2 on the
 * 2-vCPU guest: a 100 us auto sleep spinning its whole length had a p99 of
 * 3.96 ms against timerfd's 27 us.  In another run, with other work on the
 * host as well, 3% of such spins were preempted, and both a gap between two
 * clock reads and a rise of the thread's involuntary context switches
 * (getrusage(RUSAGE_THREAD) ru_nivcsw) saw each; a 10 ms sleep spun whole
 * had a median of 2 ms; giving the CPU back between 20 us spin slices
 * (sched_yield) made the median 0.8-7 ms, so it is not used; a kernel wait
 * ending 10-125 us before the deadline, then a spin, was never later than
 * timerfd alone at p50/p99 at 100 us, 1 ms and 10 ms.  Asking for the
 * shortest scheduler slice while waiting (sched_setattr runtime 100 us,
 * Linux 6.12+, which lets a wake-up preempt the running task sooner) cut
 * plain timerfd waits' tail (1 ms waits over 0.5 ms late: 15 of 10,000
 * against 2) but not auto's: with its spin after the wake, 136 of 10,000
 * 100 us sleeps against 12 without, so it is not used.
 *   auto watches, per sleep, whether its spin lost the CPU (a gap over
 * GAP_NS between two clock reads: a lost slice is milliseconds, while the
 * host of a VM takes the vCPU for short spells with nothing else runnable;
 * a 3 s clock-read loop on the idle 2-vCPU guest saw 577 gaps of 20-50 us,
 * 23 of 50-100 us and 2 of 100-500 us; under stress-ng --cpu 2, 223 of
 * over 1 ms), and per window of at least SIGNAL_NS: the thread's
 * involuntary context switches per second (a preemption outside the spin;
 * a rate, since the window holds whatever else the thread did), the share
 * of that window other tasks waited for a CPU (/proc/pressure/cpu "some"
 * total, less how late this thread's own kernel waits woke: PSI counts a
 * woken task as waiting until it runs, and a stream of 10 us timerfd waits
 * alone made 0.3 of pressure on an idle host), this thread's run-queue
 * wait per time it got a CPU (/proc/thread-self/schedstat; judged over 32
 * or more, as a mean over a few is one event's), and more runnable tasks
 * than CPUs (/proc/loadavg).  A window closes when a sleep begins: the first, once it
 * is due, whose length is SIGNAL_ROOM times what a close takes (its recent
 * low: 4 us idle, 15-45 us right after a wake-up under stress-ng), so the
 * reads end long before the deadline; or any sleep once it is
 * SIGNAL_LATE_NS old, so a stream of sleeps of any length is judged (a
 * 10 us sleep then may end a few us late, once per SIGNAL_LATE_NS).  It is
 * contended when 10% of recent sleeps lost the CPU (an EWMA of 1/16, after
 * 16 sleeps), or the CPU was lost more than LOST_PER_S times a second (a
 * stream of 10 us spins under load loses it once per slice, a tiny share
 * of its sleeps), or a window says so (a long run-queue wait: two windows
 * in a row, as a VM's host delays a wake-up now and then; one keeps it);
 * more runnable tasks than CPUs enters
 * it where PSI is missing or at the end of two windows in a row, and at
 * one keeps it (a thread that waits in the kernel adds no pressure and
 * seldom waits to run, so under stress-ng --cpu N the other signals go
 * quiet: without this auto left and re-entered 19 times in a 50 s run,
 * spinning into a lost slice each time).  It leaves once every signal has
 * been quiet for CALM_NS, so idle figures come back within a second of the
 * load's end (0.47 s for 1 ms and 10 us sleeps under a spinner per CPU, whose
 * contended windows close every 500 ms);
 * entered again within RELAPSE_NS of leaving (a load that comes and goes),
 * the next leave waits twice the calm before, at most 8 times CALM_NS.
 *   While contended the spin (margin plus hand-off) is at most
 * CONTENDED_CAP, 1/8 of the sleep (the thread then stays a light task that
 * the scheduler wakes at once) and 1/8 of the scheduler's slice for the
 * thread (sched_getattr).  The longer the spin, the more sleeps lose a
 * slice in it: 1 ms sleeps, auto and timerfd taking turns in blocks of 100
 * after 1.5 s under stress-ng --cpu 2, over 0.5 ms late, auto against
 * timerfd: 48 against 26 at a 50 us cap, 80/57 at 25 us, 60/48 at 12 us,
 * 23/28 with no spin (two timerfd rows: 8/1 and 12/15); the median was
 * 0, 0, 6 and 18 us against timerfd's 18 us.  Longer sleeps make the same
 * trade, smaller, so the cap does not grow with the sleep (measured on a
 * guest whose host took about 2% of a spinning vCPU): 10 ms sleeps, 6,000
 * per row taking turns, over 0.5 ms late: timerfd 129, a 12 us spin 143, a
 * 50 us spin 153 (medians 42, 30 and 0.6 us); 100 ms, 300 per row: timerfd
 * 11 and 17, a 12 us spin 14, a 100 us spin 26.  Nor does it help to keep
 * a longer spin clear of the ticks (a busy CPU's tick comes at multiples of
 * the tick period on CLOCK_MONOTONIC, 4 ms here: 198 of 208 lost slices in
 * a spin began in the 100 us before one).  Spins of 25/50/100 us placed so
 * that no tick fell within 20 us of them were never preempted, yet the
 * wake-ups after them lost the CPU more often, most of them 20-40 us after
 * a tick: 0.5-1.5 ms sleeps, 12,000 per row taking turns, over 0.5 ms late:
 * timerfd 28, a 12 us spin 16, tick-clear spins 36/56/97.  The spin's own
 * CPU time costs the next wake-up, whatever the tick.  The kernel wait ends
 * closer to the deadline, so a sleep is never later than the kernel wait
 * alone would have been unless the spin itself loses the CPU, and the short
 * spin absorbs what it can.  A sleep no longer than CONTENDED_CAP is spun
 * whole: a kernel wait that short keeps the thread on a CPU, or waiting for
 * one, most of the time anyway (it woke 16-19 us late at the median), so it
 * is no lighter a task, and each wake-up may wait for a slice.  Under
 * stress-ng --cpu 2, rows taking turns in blocks of 250 (the order rotated
 * each block), 10,000 sleeps of 10 us each: timerfd 16-19 us at p50, 37-52
 * us at p99, 37-81 over 0.5 ms late; spun whole by auto 0-0.1 us, 0.4-1.8
 * us, 13-21.  Spun whole, longer sleeps lost more often than timerfd's (of
 * 10,000 over 0.5 ms late: 16 us 24 against 19, 20 us 35/22, 40 us 82/14),
 * so the cap is where it stops.  A spin that loses a whole slice (a gap of
 * SLICE_GAP_NS) enters the contended state at once.  Each contended sleep is
 * its own A/B test: how late its kernel wait woke after its target is how
 * late a plain kernel wait to the deadline would have ended; a sleep that
 * ended more than GAP_NS later than that lost to the kernel wait (its spin
 * was preempted or stalled).  One such sleep makes every sleep (but those
 * spun whole, which have no kernel wait) the kernel wait alone for
 * KERNEL_ONLY_NS, and until the share of such sleeps (an
 * EWMA of 1/128, kernel-only sleeps counting as none) is under KERNEL_ONLY;
 * then short spins are tried again.  Sleepacc_sleeper_stats says how the
 * last sleep was made (decision) and why (reason).
 *
 * Real-time spin, opt-in (rt_priority 1..99; never the default).  The end of
 * the sleep (its last kernel wait, when it ends within RT_SPIN_NS of the
 * deadline, and the spin after it) runs under SCHED_FIFO at that priority,
 * as cyclictest does: the wake-up preempts every normal thread, the spin
 * cannot be preempted by one.  The spin under it is bounded by RT_SPIN_NS;
 * past that the policy is dropped and the spin goes on as a normal thread.
 * The thread's attributes (sched_getattr) are put back before
 * sleepacc_sleeper_until returns, on every path (the deadline, the chunk's
 * end, a signal, an error); the hand-off is off, so no spin under it runs
 * outside C.  A thread that is already FIFO/RR is left alone; without the
 * privilege the sleeper goes on as a normal thread (rt_denied).
 *
 * Short slice, opt-in (slice_ns, 100 us..100 ms; never the default).  The
 * opening thread's scheduler slice is held at that value until close, so
 * its wake-ups preempt a busy CPU's running task sooner (figures at
 * sleepacc__slice_hold); put back on close, in the opening process only.
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
 * and auto handoff=0), for handoff_ns more spinning per sleep.  After 100 ms
 * to 1 s the way back is colder still: from the C spin's end to the
 * caller's first poll took 21-65 us (the return to the interpreter, then a
 * first turn of about 15 us), so a 50 us hand-off often ended late; a
 * hand-off is therefore at least 1/1000 of the sleep (at most
 * SLEEPACC_MAX_HANDOFF_NS): 100 us at 100 ms.
 *
 * Chunks.  sleepacc_sleeper_until returns 0 at a chunk boundary (kernel
 * waits and spins alike), so bindings can check for Ctrl-C; the sleep in
 * progress is remembered and resumes when called again with its deadline.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLEEPACC__SLEEPER_MAGIC 0x51ee9e7
#define SLEEPACC__AUTO_INITIAL_NS 300000LL   /* auto: margin of a cold band */
#define SLEEPACC__INITIAL_SHARE 256          /*   or 1/256 of a longer request */
#define SLEEPACC__HANDOFF_SHARE 1000         /* a hand-off is at least 1/1000 of the sleep */
#define SLEEPACC__WARM 8                     /* samples before a band is learned */
#define SLEEPACC__STARTUP 32                 /* until then the quantile is the max seen */
#define SLEEPACC__LAMBDA (1.0 / 1024.0)      /* forgetting per sample */
#define SLEEPACC__BOOST_DECAY 32             /* boost -= boost/32 per good sleep */
#define SLEEPACC__EXPLORE 256                /* saturated band: probe every N sleeps */
#define SLEEPACC__RT_SPIN_NS 200000LL        /* most spin per sleep under FIFO/RR */
#define SLEEPACC__RT_HANDOFF_NS 50000LL      /* most hand-off per sleep under FIFO/RR */
#define SLEEPACC__MIN_KERNEL_NS 1000LL       /* shorter kernel waits are skipped */
#define SLEEPACC__COMP_ALPHA 0.10            /* comp: EWMA weight (irtt) */
#define SLEEPACC__GAP_NS 250000LL            /* a spin step this long: the CPU was lost */
#define SLEEPACC__SLICE_GAP_NS 1000000LL     /*   this long: for a slice (contended at once) */
#define SLEEPACC__CONTENDED 0.10             /* share of sleeps that lost the CPU: contended */
#define SLEEPACC__QUIET 0.05                 /*   at most this in a window: quiet */
#define SLEEPACC__CONTENDED_CAP_NS 12000LL   /* contended: most spin per sleep; shorter: whole */
#define SLEEPACC__CONTENDED_DUTY 8           /* contended: spin at most 1/8 of the sleep, of the slice */
#define SLEEPACC__SIGNAL_NS 100000000LL      /* a signal window is at least 100 ms */
#define SLEEPACC__SIGNAL_ROOM 2              /* a window closes at a sleep this times its cost */
#define SLEEPACC__SIGNAL_LATE_NS 500000000LL /*   or at any sleep once this old */
#define SLEEPACC__CONTENDED_ROOM_NS 8000000LL /*   contended: at a sleep this long */
#define SLEEPACC__LOST_PER_S 100             /* the thread lost the CPU this often: contended */
#define SLEEPACC__CALM_NS 300000000LL        /* every signal quiet this long: not contended */
#define SLEEPACC__RELAPSE_NS 2000000000LL   /* contended again this soon: a longer calm */
#define SLEEPACC__PRESSURE 0.20              /* PSI "some" share of a window: contended */
#define SLEEPACC__PRESSURE_QUIET 0.10        /*   at most this: quiet */
#define SLEEPACC__WAKE_DELAY_NS 20000LL      /* run-queue wait per time on a CPU: contended */
#define SLEEPACC__WAKE_RUNS 32               /*   judged over at least this many times */
#define SLEEPACC__KERNEL_ONLY 0.002          /* short spins that lost to the kernel wait: */
#define SLEEPACC__KERNEL_ONLY_NS 500000000LL /*   the kernel wait alone, this long at least */

/* How a sleep was made, and why (sleepacc_sleeper_stats: decision, reason). */
enum { SLEEPACC__D_NONE, SLEEPACC__D_STARTUP, SLEEPACC__D_LEARNED, SLEEPACC__D_PROBE,
       SLEEPACC__D_SHORT, SLEEPACC__D_KERNEL_ONLY, SLEEPACC__D_FIXED, SLEEPACC__D_SPIN,
       SLEEPACC__D_KERNEL, SLEEPACC__D_COMP };
static const char *const sleepacc__decisions[] = {
    "none", "startup", "learned", "probe", "short spin", "kernel only", "fixed", "spin",
    "kernel", "comp"};
enum { SLEEPACC__W_IDLE, SLEEPACC__W_SPINS, SLEEPACC__W_PRESSURE, SLEEPACC__W_WAKE,
       SLEEPACC__W_RUNNABLE, SLEEPACC__W_SHORT };
static const char *const sleepacc__reasons[] = {
    "idle", "spins lost the CPU", "CPU pressure", "wake-ups waited for a CPU",
    "more runnable tasks than CPUs", "short spins lost to the kernel wait"};

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

/* ------------------------------------------------------------ contention */

/* The calling thread's involuntary context switches, or -1. */
static int64_t sleepacc__nivcsw(void) {
  struct rusage r;
  return getrusage(RUSAGE_THREAD, &r) == 0 ? (int64_t)r.ru_nivcsw : -1;
}

/* The signal files stay open while the sleeper is, and a window reads
 * each with one pread: opening, reading and closing all three at a window's
 * close let the scheduler take the CPU.  Beside stress-ng --cpu 2, 100 us
 * auto sleeps taking turns with timerfd's (eight runs of 20,000 each, the
 * files read every 500 ms, the state held), sleeps over 0.5 ms late, auto
 * against timerfd: 126/94 opening the files each time, 73/70 with kept
 * files, 93/70 reading nothing. */
enum { SLEEPACC__F_PSI, SLEEPACC__F_SCHED, SLEEPACC__F_LOAD };
static const char *const sleepacc__signal_paths[] = {
    "/proc/pressure/cpu", "/proc/thread-self/schedstat", "/proc/loadavg"};

/* Signal file f's text into buf (NUL-terminated); its length, or -1.
 * schedstat is the calling thread's: a sleeper used from another thread
 * (or in a forked child) reopens it. */
static ssize_t sleepacc__read_signal(sleepacc_sleeper *s, int f, char *buf, size_t size) {
  ssize_t n;
  if (f == SLEEPACC__F_SCHED) {
    int tid = (int)syscall(SYS_gettid);
    if (tid != s->signal_tid && s->signal_fd[f] >= 0) {
      close(s->signal_fd[f]);
      s->signal_fd[f] = -1;
    }
    s->signal_tid = tid;
  }
  if (s->signal_fd[f] < 0) s->signal_fd[f] = open(sleepacc__signal_paths[f], O_RDONLY | O_CLOEXEC);
  if (s->signal_fd[f] < 0) return -1;
  do n = pread(s->signal_fd[f], buf, size - 1, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) return -1;
  buf[n] = '\0';
  return n;
}

/* /proc/pressure/cpu's "some" total (us; its first line), or -1. */
static int64_t sleepacc__psi_some_us(sleepacc_sleeper *s) {
  char buf[256];
  const char *t;
  if (sleepacc__read_signal(s, SLEEPACC__F_PSI, buf, sizeof buf) < 0) return -1;
  t = strstr(buf, "total=");
  return t ? strtoll(t + 6, NULL, 10) : -1;
}

/* This thread's time waiting on a run queue (ns) and how many times it
 * was put on a CPU (/proc/thread-self/schedstat); -1 each when unknown. */
static void sleepacc__schedstat(sleepacc_sleeper *s, int64_t *run_delay_ns, int64_t *runs) {
  char buf[128];
  long long on_cpu, delay, count;
  *run_delay_ns = *runs = -1;
  if (sleepacc__read_signal(s, SLEEPACC__F_SCHED, buf, sizeof buf) < 0) return;
  if (sscanf(buf, "%lld %lld %lld", &on_cpu, &delay, &count) != 3) return;
  *run_delay_ns = (int64_t)delay;
  *runs = (int64_t)count;
}

/* Runnable tasks (this thread among them) beyond the online CPUs, from
 * /proc/loadavg; INT64_MIN when unknown. */
static int64_t sleepacc__runnable_excess(sleepacc_sleeper *s) {
  char buf[128];
  double l1, l5, l15;
  long long run, total;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1 || sleepacc__read_signal(s, SLEEPACC__F_LOAD, buf, sizeof buf) < 0 ||
      sscanf(buf, "%lf %lf %lf %lld/%lld", &l1, &l5, &l15, &run, &total) != 5)
    return INT64_MIN;
  return (int64_t)run - n;
}

/* The thread's scheduler slice (sched_getattr's runtime of a normal
 * thread, EEVDF's slice since Linux 6.6), or 0. */
struct sleepacc__attr {
  uint32_t size, policy;
  uint64_t flags;
  int32_t nice;
  uint32_t priority;
  uint64_t runtime, deadline, period;
  uint32_t util_min, util_max;
};
_Static_assert(sizeof(struct sleepacc__attr) <= sizeof(((sleepacc_sleeper *)0)->rt_saved),
               "rt_saved holds a sched_attr");

/* Thread tid's scheduling attributes (tid 0: the calling thread).  0 or -1. */
static int sleepacc__getattr(int tid, struct sleepacc__attr *a) {
#ifdef SYS_sched_getattr
  memset(a, 0, sizeof *a);
  return syscall(SYS_sched_getattr, tid, a, (unsigned)sizeof *a, 0) == 0 ? 0 : -1;
#else
  (void)tid, (void)a;
  return -1;
#endif
}

static int64_t sleepacc__slice_ns(void) {
  struct sleepacc__attr a;
  if (sleepacc__getattr(0, &a) < 0) return 0;
  if (a.policy != SCHED_OTHER && a.policy != SCHED_BATCH) return 0;
  return a.runtime <= (uint64_t)SLEEPACC_MAX_DURATION_NS ? (int64_t)a.runtime : 0;
}

/* The opt-in slice (slice_ns): while other tasks want the CPU, a thread
 * woken from a kernel wait runs at once only when its deadline is earlier
 * than the running task's (EEVDF, Linux 6.6+), and a thread that spent its
 * share on its own work between sleeps often is not: it then waits for the
 * next tick, 4 ms at HZ=250.  A short slice (sched_setattr's runtime of a
 * normal thread, Linux 6.12+) gives it the earlier deadline.  It has to be
 * held across the caller's work too: set for each wait alone and put back
 * after it, 1 ms waits came out worse than without it.  Measured on a
 * 2-vCPU guest under stress-ng --cpu 2, rows taking turns, sleeps over 0.5
 * ms late, without and with a 100 us slice held: 1 ms sleeps with 200 us
 * of work after each, timerfd 81 / 8 of 4,000 and auto 102 / 23; 60 Hz
 * frames with 2 ms of work, timerfd 68 / 7 of 720 and auto 95 / 9; 60 Hz
 * with none, 34 / 20 and 41 / 20.  Where the tail comes from: plain
 * timerfd waits of 0.8-1.2 ms under the same load, their targets spread
 * over the 4 ms tick period, mostly lost the CPU (woke over 0.4 ms late)
 * when they ended in the first 0.75 ms after a tick, a fifth of the
 * period (the task the tick chose runs out its slice first): 75 of 92 such
 * wake-ups of 15,000; in another run 20 of 34, and then with a 100 us
 * slice held 14, spread evenly.  So it is the caller's choice (the thread
 * is changed until close), never the default. */

/* Set thread tid's slice to ns (0: the kernel's default), keeping its policy
 * and nice value; then read it back into *now.  0, or -1. */
static int sleepacc__slice_set(int tid, int64_t ns, int64_t *now) {
#ifdef SYS_sched_setattr
  struct sleepacc__attr a;
  if (sleepacc__getattr(tid, &a) < 0) return -1;
  a.size = sizeof a;
  a.flags &= 1; /* SCHED_FLAG_RESET_ON_FORK is state; the other flags are requests */
  a.runtime = (uint64_t)ns;
  if (syscall(SYS_sched_setattr, tid, &a, 0) != 0) return -1;
  if (sleepacc__getattr(tid, &a) < 0) return -1;
  *now = (int64_t)a.runtime;
  return 0;
#else
  (void)tid, (void)ns, (void)now;
  return -1;
#endif
}

/* The slices held, process-wide: one row per open sleeper that holds one,
 * in the order they were taken.  The first row of a thread carries the
 * slice the thread had before any (saved_ns); its thread runs with the last
 * row's.  So sleepers closed in any order leave the thread as it was once
 * the last is closed. */
#define SLEEPACC__SLICE_HOLDS 64
static struct {
  const sleepacc_sleeper *s;
  int tid;
  int64_t ns, saved_ns;
} sleepacc__holds[SLEEPACC__SLICE_HOLDS];
static int sleepacc__nholds;
static pthread_mutex_t sleepacc__holds_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t sleepacc__holds_once = PTHREAD_ONCE_INIT;

/* fork() is kept out while the table changes, so a child never inherits
 * the lock held by a thread it does not have. */
static void sleepacc__holds_lock(void) { pthread_mutex_lock(&sleepacc__holds_mu); }
static void sleepacc__holds_unlock(void) { pthread_mutex_unlock(&sleepacc__holds_mu); }
static void sleepacc__holds_register(void) {
  pthread_atfork(sleepacc__holds_lock, sleepacc__holds_unlock, sleepacc__holds_unlock);
}

/* Index of the last row of tid (before `before`), or -1. */
static int sleepacc__hold_last(int tid, int before) {
  for (int i = before - 1; i >= 0; i--)
    if (sleepacc__holds[i].tid == tid) return i;
  return -1;
}

/* Hold the calling thread's slice at ns until close.  Not a normal thread
 * (FIFO/RR/IDLE/DEADLINE: no slice), a kernel that keeps no slice per
 * thread (before 6.12 the runtime reads back unchanged), or
 * SLICE_HOLDS sleepers holding one already: slice_denied, and the thread
 * is left as it was. */
static void sleepacc__slice_hold(sleepacc_sleeper *s, int64_t ns) {
  struct sleepacc__attr a;
  int64_t now = 0;
  int tid = (int)syscall(SYS_gettid), prev;
  pthread_once(&sleepacc__holds_once, sleepacc__holds_register);
  pthread_mutex_lock(&sleepacc__holds_mu);
  if (sleepacc__nholds == SLEEPACC__SLICE_HOLDS || sleepacc__getattr(tid, &a) < 0 ||
      (a.policy != SCHED_OTHER && a.policy != SCHED_BATCH)) {
    s->slice_denied = 1;
    goto out;
  }
  if (sleepacc__slice_set(tid, ns, &now) < 0) {
    s->slice_denied = 1;
    goto out;
  }
  if (now != ns) { /* not kept: put back what was, if it moved */
    int64_t back = 0;
    if (now != (int64_t)a.runtime) sleepacc__slice_set(tid, (int64_t)a.runtime, &back);
    s->slice_denied = 1;
    goto out;
  }
  prev = sleepacc__hold_last(tid, sleepacc__nholds);
  sleepacc__holds[sleepacc__nholds].s = s;
  sleepacc__holds[sleepacc__nholds].tid = tid;
  sleepacc__holds[sleepacc__nholds].ns = ns;
  sleepacc__holds[sleepacc__nholds].saved_ns = prev < 0 ? (int64_t)a.runtime : 0;
  sleepacc__nholds++;
  s->slice_tid = tid;
  s->slice_held_ns = ns;
  s->slice_ns = ns;
out:
  pthread_mutex_unlock(&sleepacc__holds_mu);
}

/* Drop s's row.  Its thread then gets the slice of its last row left, or,
 * with none left, the one it had before (the kernel's default is put back
 * as the default, 0, so a later change of the default reaches it).  A
 * thread whose slice is not the one held (changed since by someone else),
 * or in a child of fork() (forked: the row's thread is the parent's), is
 * left alone. */
static void sleepacc__slice_release(sleepacc_sleeper *s) {
  struct sleepacc__attr a;
  int64_t now = 0, want, saved;
  int i, last, first;
  if (s->slice_held_ns <= 0) return;
  pthread_mutex_lock(&sleepacc__holds_mu);
  for (i = 0; i < sleepacc__nholds && sleepacc__holds[i].s != s; i++) {}
  if (i == sleepacc__nholds) goto out;
  last = sleepacc__hold_last(s->slice_tid, sleepacc__nholds);
  first = sleepacc__hold_last(s->slice_tid, i) < 0;
  want = sleepacc__holds[last].ns; /* what the thread runs with now */
  saved = sleepacc__holds[i].saved_ns;
  for (int j = i; j + 1 < sleepacc__nholds; j++) sleepacc__holds[j] = sleepacc__holds[j + 1];
  sleepacc__nholds--;
  {
    int next = -1; /* the thread's next row, which now carries the saved slice */
    for (int j = i; j < sleepacc__nholds && next < 0; j++)
      if (sleepacc__holds[j].tid == s->slice_tid) next = j;
    if (first && next >= 0) sleepacc__holds[next].saved_ns = saved;
    /* a child of fork(): the row's thread is the parent's; leave it */
    if (s->fork_gen != sleepacc_fork_generation()) goto out;
    if (sleepacc__getattr(s->slice_tid, &a) < 0 || (int64_t)a.runtime != want) goto out;
    last = sleepacc__hold_last(s->slice_tid, sleepacc__nholds);
    if (last >= 0) {
      if (sleepacc__holds[last].ns != want) sleepacc__slice_set(s->slice_tid, sleepacc__holds[last].ns, &now);
    } else if (sleepacc__slice_set(s->slice_tid, 0, &now) == 0 && now != saved) {
      sleepacc__slice_set(s->slice_tid, saved, &now);
    }
  }
out:
  s->slice_held_ns = 0;
  pthread_mutex_unlock(&sleepacc__holds_mu);
}

/* Enter (or stay in) the contended state for `why`. */
static void sleepacc__contend(sleepacc_sleeper *s, int why, int64_t now) {
  if (!s->contended) {
    /* back within RELAPSE_NS of leaving: the load is intermittent, so the
     * next leave waits twice the calm (at most 8 times); else once */
    if (s->left_ns > 0 && now - s->left_ns < SLEEPACC__RELAPSE_NS)
      s->calm_shift = s->calm_shift < 3 ? s->calm_shift + 1 : 3;
    else
      s->calm_shift = 0;
    s->contended = 1;
    s->contended_since = s->count;
    s->contended_episodes++;
    s->short_preempted = 0;
  }
  s->reason = why;
  s->calm_since_ns = 0;
}

/* Leave the contended state: the idle figures apply again. */
static void sleepacc__uncontend(sleepacc_sleeper *s, int64_t now) {
  s->contended = 0;
  s->left_ns = now;
  s->contention = 0;
  s->short_preempted = 0;
  s->kernel_only_until_ns = 0;
  s->calm_since_ns = 0;
  s->reason = SLEEPACC__W_IDLE;
}

/* Start a signal window at now. */
static void sleepacc__window_start(sleepacc_sleeper *s, int64_t now) {
  s->win_start_ns = now;
  s->win_sleeps = s->win_preempted = s->win_klate_ns = 0;
  s->psi_some_us = sleepacc__psi_some_us(s);
  sleepacc__schedstat(s, &s->run_delay_ns, &s->run_count);
  s->cur_nivcsw = sleepacc__nivcsw();
}

/* Close the signal window at now: judge it, start the next. */
static void sleepacc__window_close(sleepacc_sleeper *s, int64_t now) {
  int64_t span = now - s->win_start_ns, psi = sleepacc__psi_some_us(s);
  int64_t rd, runs, excess = INT64_MIN, n = sleepacc__nivcsw(), lost = s->win_preempted;
  int why = SLEEPACC__W_IDLE, quiet, wake_judged;
  sleepacc__schedstat(s, &rd, &runs);
  /* The thread's involuntary switches count the preemptions a spin gap did
   * not see (the caller's code, the hand-off), but also those of whatever
   * else the thread did in the window (another sleeper's spins): they
   * weigh as a rate, never as a share of this sleeper's sleeps. */
  if (n >= 0 && s->cur_nivcsw >= 0 && n - s->cur_nivcsw > lost) lost = n - s->cur_nivcsw;
  s->cpu_pressure = -1.0;
  if (psi >= 0 && s->psi_some_us >= 0 && span > 0) {
    /* less this thread's own wake-ups: PSI counts a woken task as waiting
     * from its timer until it runs, which is how late its kernel wait
     * woke; a stream of 10 us timerfd waits alone made 0.3 of pressure on
     * an idle host, which must not keep its own contended state */
    s->cpu_pressure = ((double)(psi - s->psi_some_us) * 1000.0 - (double)s->win_klate_ns) /
                      (double)span;
    if (s->cpu_pressure > 1.0) s->cpu_pressure = 1.0;
    if (s->cpu_pressure < 0.0) s->cpu_pressure = 0.0;
  }
  /* per time the thread was put on a CPU, not per sleep: the window may
   * hold other waits of the thread's (blocking I/O, another sleeper) */
  s->wake_delay_ns = rd >= 0 && s->run_delay_ns >= 0 && runs > s->run_count && s->run_count >= 0
                         ? (rd - s->run_delay_ns) / (runs - s->run_count) : -1;
  /* a mean over a few runs is one event's: a kernel thread that ran 1 ms
   * while this one waited once, in a window of ten 100 ms sleeps */
  wake_judged = s->wake_delay_ns >= 0 && runs - s->run_count >= SLEEPACC__WAKE_RUNS;
  /* and it enters the contended state at the end of two such windows in a
   * row, keeps it at one: a window of the idle guest read 45 us per run
   * once in a bench's 80 s (its host delays a wake-up now and then) */
  s->win_wake = wake_judged && s->wake_delay_ns > SLEEPACC__WAKE_DELAY_NS ? s->win_wake + 1 : 0;
  /* More runnable tasks than CPUs: where PSI is missing, or at the end of
   * two windows in a row, it enters the contended state; at one it keeps
   * it: a thread that waits in the kernel seldom waits to run, so with
   * every CPU busy the other signals go quiet while a spin would still
   * lose the CPU */
  excess = sleepacc__runnable_excess(s);
  s->win_excess = excess != INT64_MIN && excess > 0 ? s->win_excess + 1 : 0;
  if (s->cpu_pressure >= 0 && !s->contended && s->win_excess < 2) excess = INT64_MIN;
  /* the share of sleeps that lost the CPU, or how often it was lost: a
   * stream of sleeps too short to span a tick loses it once per slice */
  if (s->win_sleeps >= 8 && (s->win_preempted * 10 > s->win_sleeps ||
                             (double)lost * 1e9 > SLEEPACC__LOST_PER_S * (double)span))
    why = SLEEPACC__W_SPINS;
  else if (s->cpu_pressure > SLEEPACC__PRESSURE) why = SLEEPACC__W_PRESSURE;
  else if (s->win_wake >= (s->contended ? 1 : 2)) why = SLEEPACC__W_WAKE;
  else if (excess != INT64_MIN && excess > 0) why = SLEEPACC__W_RUNNABLE;
  quiet = why == SLEEPACC__W_IDLE && s->win_preempted <= SLEEPACC__QUIET * (double)s->win_sleeps &&
          (double)lost * 1e9 <= SLEEPACC__LOST_PER_S / 2.0 * (double)span &&
          s->cpu_pressure <= SLEEPACC__PRESSURE_QUIET &&
          (!wake_judged || s->wake_delay_ns <= SLEEPACC__WAKE_DELAY_NS / 2);
  if (s->strategy == SLEEPACC_STRATEGY_AUTO) {
    if (why != SLEEPACC__W_IDLE) {
      sleepacc__contend(s, why, now);
    } else if (s->contended && quiet) {
      if (!s->calm_since_ns) s->calm_since_ns = s->win_start_ns;
      if (now - s->calm_since_ns >= SLEEPACC__CALM_NS << s->calm_shift)
        sleepacc__uncontend(s, now);
    } else if (!quiet) {
      s->calm_since_ns = 0;
    }
  }
  s->win_start_ns = now;
  s->win_sleeps = s->win_preempted = s->win_klate_ns = 0;
  s->psi_some_us = psi;
  s->run_delay_ns = rd;
  s->run_count = runs;
  s->cur_nivcsw = n;
}

/* A new sleep of d ns begins at now: judge the last one (did its spin
 * lose the CPU), maybe close the window.  No system call here but that
 * close: a getrusage per sleep (1.2 us under load) made 10 us sleeps 4 us
 * later at the median, so the involuntary switches are read per window.  A
 * due window closes at a sleep with room for it (SIGNAL_ROOM times what a
 * close takes, so it ends long before the deadline; contended, at least
 * CONTENDED_ROOM_NS, see below), or at any sleep once SIGNAL_LATE_NS old,
 * so a stream of sleeps of any length is judged.
 *   Contended, reading the signal files lets the scheduler take the CPU
 * for a slice: beside stress-ng --cpu 2, in 100 us auto sleeps taking
 * turns with timerfd's, the sleep with a close, or the next, woke 2-4 ms
 * late after half the closes (13 of 25), and each of /proc/loadavg,
 * /proc/pressure/cpu and /proc/thread-self/schedstat alone did it
 * (getrusage, 12 getppid calls or a 20 us busy loop instead did not).
 * A sleep of CONTENDED_ROOM_NS absorbs a lost slice (its wait aims at an
 * absolute deadline), so contended windows close there, or every
 * SIGNAL_LATE_NS in a stream of shorter sleeps.
 * Returns the time after: now, or a fresh clock read after a close. */
static int64_t sleepacc__contention_begin(sleepacc_sleeper *s, int64_t now, int64_t d) {
  int64_t age = now - s->win_start_ns, t, took;
  if (s->count > 0) {
    int lost = s->cur_preempted != 0;
    s->contention += ((lost ? 1.0 : 0.0) - s->contention) / 16.0;
    s->win_sleeps++;
    s->win_preempted += lost;
    if (lost) s->calm_since_ns = 0;
    if (!s->contended && s->count >= 16 && s->contention > SLEEPACC__CONTENDED)
      sleepacc__contend(s, SLEEPACC__W_SPINS, now);
    /* per unit of time too (at least a window's worth): sleeps too short
     * to span a tick lose the CPU once per slice, a tiny share of them */
    if (lost && !s->contended &&
        (double)s->win_preempted * 1e9 >
            SLEEPACC__LOST_PER_S * (double)(age > SLEEPACC__SIGNAL_NS ? age : SLEEPACC__SIGNAL_NS))
      sleepacc__contend(s, SLEEPACC__W_SPINS, now);
    /* a whole slice lost in one gap: another task ran meanwhile (the idle
     * guest's host never took the vCPU that long), and every sleep until
     * a share or a rate is reached would risk another: at once */
    if (s->cur_preempted == 2 && !s->contended) sleepacc__contend(s, SLEEPACC__W_SPINS, now);
  }
  if (age < SLEEPACC__SIGNAL_NS) return now;
  if (age < SLEEPACC__SIGNAL_LATE_NS &&
      ((s->win_cost_ns >= 0 && d < SLEEPACC__SIGNAL_ROOM * s->win_cost_ns) ||
       (s->contended && d < SLEEPACC__CONTENDED_ROOM_NS)))
    return now;
  sleepacc__window_close(s, now);
  t = sleepacc_now_ns();
  took = t - now;
  /* the cost's recent low: a close preempted once must not stop the
   * short sleeps from closing windows; a dearer host raises it in ~8 */
  if (s->win_cost_ns < 0 || took < s->win_cost_ns) s->win_cost_ns = took;
  else s->win_cost_ns += (took - s->win_cost_ns) / 8;
  return t;
}

/* While contended: the most a sleep of d ns may spin (margin and hand-off).
 * A sleep no longer than the cap is spun whole (see "Contention"). */
static int64_t sleepacc__contended_budget(const sleepacc_sleeper *s, int64_t d) {
  int64_t b = SLEEPACC__CONTENDED_CAP_NS;
  if (d <= b) return d;
  if (d / SLEEPACC__CONTENDED_DUTY < b) b = d / SLEEPACC__CONTENDED_DUTY;
  if (s->slice_ns > 0 && s->slice_ns / SLEEPACC__CONTENDED_DUTY < b)
    b = s->slice_ns / SLEEPACC__CONTENDED_DUTY;
  return b;
}

/* auto's margin while band b is cold, for a request of d ns: the initial
 * margin (1/SHARE of a longer request, when the caller gave none), capped
 * at half the request so the band still gets samples. */
static int64_t sleepacc__initial_margin(const sleepacc_sleeper *s, int64_t d) {
  int64_t m = s->fixed_margin_ns;
  if (s->margin_default && d / SLEEPACC__INITIAL_SHARE > m) m = d / SLEEPACC__INITIAL_SHARE;
  return m < d / 2 ? m : d / 2;
}

/* auto's margin for a request of d ns in band b, clamped to [0, d]. */
static int64_t sleepacc__learned_margin(const sleepacc_sleeper *s, int b, int64_t d) {
  int64_t m;
  if (s->band_samples[b] < SLEEPACC__WARM) {
    m = sleepacc__initial_margin(s, d);
  } else {
    m = (int64_t)s->band_q[b] + s->clock_cost_ns + s->band_boost_ns[b];
    /* start-up: the largest lateness seen, but no more than the initial margin */
    if (s->band_samples[b] < SLEEPACC__STARTUP) {
      int64_t cap = sleepacc__initial_margin(s, d);
      if (m > cap) m = cap;
    }
  }
  /* other threads want this CPU: spin little (see "Contention") */
  if (s->contended && m > sleepacc__contended_budget(s, d)) m = sleepacc__contended_budget(s, d);
  if (m > d) m = d;
  if (m < 0) m = 0;
  return m;
}

/* The margin auto uses for a sleep of d ns in band b at now, in [0, d];
 * sets the decision. */
static int64_t sleepacc__auto_margin(sleepacc_sleeper *s, int b, int64_t d, int64_t now) {
  int64_t m = sleepacc__learned_margin(s, b, d);
  s->decision = s->band_samples[b] < SLEEPACC__STARTUP ? SLEEPACC__D_STARTUP : SLEEPACC__D_LEARNED;
  if (s->contended) {
    s->decision = SLEEPACC__D_SHORT;
    /* a sleep no longer than the cap is spun whole, whatever the band
     * learned idle; it has no kernel wait to lose to, so no kernel only */
    if (d <= SLEEPACC__CONTENDED_CAP_NS) m = d;
    else if (now < s->kernel_only_until_ns || s->short_preempted > SLEEPACC__KERNEL_ONLY) {
      s->decision = SLEEPACC__D_KERNEL_ONLY;
      m = 0;
    }
  } else if (m >= d && d > 0) {
    /* Saturated: the margin is the whole sleep, so no sample is learned.
     * Probe with half the request now and then. */
    s->band_saturated[b]++;
    if (s->band_saturated[b] % SLEEPACC__EXPLORE == 0 && d / 2 >= SLEEPACC__MIN_KERNEL_NS) {
      m = d / 2;
      s->decision = SLEEPACC__D_PROBE;
    }
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
  s->signal_fd[0] = s->signal_fd[1] = s->signal_fd[2] = -1;
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
  s->margin_default = margin_ns < 0 && strategy == SLEEPACC_STRATEGY_AUTO;
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
  s->cur_nivcsw = -1;
  s->cpu_pressure = -1.0;
  s->wake_delay_ns = -1;
  s->slice_ns = sleepacc__slice_ns();
  s->win_cost_ns = -1;
  if (strategy == SLEEPACC_STRATEGY_AUTO) { /* the second start is timed: files warm */
    int64_t t0;
    sleepacc__window_start(s, sleepacc_now_ns());
    t0 = sleepacc_now_ns();
    sleepacc__window_start(s, t0);
    s->win_cost_ns = sleepacc_now_ns() - t0;
  }
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
  return sleepacc_sleeper_open(s, name, like->quantile,
                               like->margin_default ? -1 : like->fixed_margin_ns);
}

/* Close the waiter.  Safe on a closed or never-opened (zeroed) sleeper. */
void sleepacc_sleeper_close(sleepacc_sleeper *s) {
  if (!s || s->magic != SLEEPACC__SLEEPER_MAGIC) return;
  sleepacc__slice_release(s);
  sleepacc_env_restore(&s->held);
  s->dma_latency_us = -1;
  /* in a forked child the waiter's timer/condvar are the parent's: trade
   * them for our own first, so close never touches the parent's */
  if (s->fork_gen != sleepacc_fork_generation()) sleepacc_waiter_reopen(&s->waiter);
  sleepacc_waiter_close(&s->waiter);
  for (size_t i = 0; i < sizeof s->signal_fd / sizeof s->signal_fd[0]; i++) {
    if (s->signal_fd[i] >= 0) close(s->signal_fd[i]);
    s->signal_fd[i] = -1;
  }
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

/* The opt-in real-time end of a sleep: SCHED_FIFO at rt_priority, once per
 * sleep, unless the caller's thread is FIFO/RR already (see the top). */
static void sleepacc__rt_raise(sleepacc_sleeper *s, int64_t now) {
  struct sleepacc__attr a;
  struct sched_param sp;
  if (s->rt_priority <= 0 || s->rt_held || s->rt_denied || s->cur_rt_raised) return;
  s->cur_rt_raised = 1;
  if (sleepacc__is_rt(s)) return; /* cached before the raise: the caller's own policy */
  if (sleepacc__getattr(0, &a) < 0) {
    s->rt_denied = 1;
    return;
  }
  memcpy(s->rt_saved, &a, sizeof a);
  memset(&sp, 0, sizeof sp);
  sp.sched_priority = s->rt_priority;
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
    s->rt_denied = 1;
    return;
  }
  s->rt_held = 1;
  s->cur_rt_from_ns = now;
  s->rt_spins++;
}

/* Put back the attributes the raise saved (every return of until). */
static void sleepacc__rt_restore(sleepacc_sleeper *s) {
  struct sleepacc__attr a;
  if (!s->rt_held) return;
  memcpy(&a, s->rt_saved, sizeof a);
  a.size = sizeof a;
  a.flags &= 1; /* SCHED_FLAG_RESET_ON_FORK is state; the other flags are requests */
#ifdef SYS_sched_setattr
  if (syscall(SYS_sched_setattr, 0, &a, 0) == 0) {
    s->rt_held = 0;
    return;
  }
#endif
  {
    struct sched_param sp;
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = (int)a.priority;
    sched_setscheduler(0, (int)a.policy | (a.flags ? SCHED_RESET_ON_FORK : 0), &sp);
    setpriority(PRIO_PROCESS, 0, a.nice);
  }
  s->rt_held = 0;
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
    if (s->rt_priority > 0) { /* opt-in: the last RT_SPIN_NS under FIFO, no more */
      if (!s->rt_held && until - t <= SLEEPACC__RT_SPIN_NS) sleepacc__rt_raise(s, t);
      if (s->rt_held && t - s->cur_rt_from_ns > SLEEPACC__RT_SPIN_NS) sleepacc__rt_restore(s);
    }
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
      if (t - prev > SLEEPACC__SLICE_GAP_NS) s->cur_preempted = 2;
      else if (t - prev > SLEEPACC__GAP_NS && !s->cur_preempted) s->cur_preempted = 1;
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
  if (s->contended && s->cur_klate_ns >= 0) { /* this sleep against the kernel wait alone */
    int lost = late > s->cur_klate_ns + SLEEPACC__GAP_NS;
    s->short_preempted += ((lost ? 1.0 : 0.0) - s->short_preempted) / 128.0;
    if (lost) {
      s->kernel_only_until_ns = now + SLEEPACC__KERNEL_ONLY_NS;
      s->reason = SLEEPACC__W_SHORT;
    }
  }
  if (s->cur_spin_ns > 0) { /* the next sleep judges contention (sleepacc__contention_begin) */
    s->preempted_spins += s->cur_preempted != 0;
    s->spins++;
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
  sleepacc__slice_release(s); /* the held slice's thread is the parent's */
  if ((rc = sleepacc_waiter_reopen(&s->waiter)) != 0) return rc;
  s->fork_gen = gen;
  s->cur_rt = -1;
  return 0;
}

/* A new sleep toward deadline_ns begins at *now: reset the per-sleep state
 * and choose its margin and hand-off.  *now may move (auto may close a
 * contention window first). */
static void sleepacc__begin(sleepacc_sleeper *s, int64_t *now, int64_t deadline_ns) {
  int64_t d = deadline_ns > *now ? deadline_ns - *now : 0;
  s->cur_active = 1;
  s->cur_deadline_ns = deadline_ns;
  s->cur_start_ns = *now;
  s->cur_band = sleepacc__band(d);
  s->cur_rt = -1;
  if (s->strategy == SLEEPACC_STRATEGY_AUTO) *now = sleepacc__contention_begin(s, *now, d);
  s->cur_spin_ns = 0;
  s->cur_preempted = 0;
  s->cur_handed = 0;
  s->cur_rt_raised = 0;
  s->cur_klate_ns = -1;
  s->cur_handoff_ns = s->rt_priority > 0 ? 0 : s->handoff_ns; /* an RT end spins in C */
  /* a long wait leaves the caller's code colder: at least 1/HANDOFF_SHARE */
  if (s->cur_handoff_ns > 0 && d / SLEEPACC__HANDOFF_SHARE > s->cur_handoff_ns)
    s->cur_handoff_ns = d / SLEEPACC__HANDOFF_SHARE < SLEEPACC_MAX_HANDOFF_NS
                            ? d / SLEEPACC__HANDOFF_SHARE : SLEEPACC_MAX_HANDOFF_NS;
  if (s->cur_handoff_ns > SLEEPACC__RT_HANDOFF_NS && sleepacc__is_rt(s))
    s->cur_handoff_ns = SLEEPACC__RT_HANDOFF_NS; /* the caller's spin is not bounded by us */
  switch (s->strategy) {
    case SLEEPACC_STRATEGY_AUTO:
      s->cur_margin_ns = sleepacc__auto_margin(s, s->cur_band, d, *now);
      if (s->contended) { /* the hand-off is spin too: both within the budget */
        int64_t room = sleepacc__contended_budget(s, d) - s->cur_margin_ns;
        if (s->cur_margin_ns >= d) room = d; /* spun whole: handing it off adds no spin */
        if (s->decision == SLEEPACC__D_KERNEL_ONLY || room < 0) room = 0;
        if (s->cur_handoff_ns > room) s->cur_handoff_ns = room;
      }
      break;
    case SLEEPACC_STRATEGY_HYBRID:
      s->cur_margin_ns = s->fixed_margin_ns < d ? s->fixed_margin_ns : d;
      s->decision = SLEEPACC__D_FIXED;
      break;
    case SLEEPACC_STRATEGY_SPIN:
      s->cur_margin_ns = d;
      s->decision = SLEEPACC__D_SPIN;
      break;
    default:
      s->cur_margin_ns = 0;
      s->decision = s->strategy == SLEEPACC_STRATEGY_COMP ? SLEEPACC__D_COMP : SLEEPACC__D_KERNEL;
      break;
  }
}

/* The kernel strategy: a plain wait, again if a relative method woke
 * early.  1 at the deadline, 0 at the chunk end, or -errno. */
static int sleepacc__kernel_sleep(sleepacc_sleeper *s, int64_t *now, int64_t deadline_ns,
                                  int64_t chunk_end) {
  int rc;
  while (*now < deadline_ns) {
    int64_t target = deadline_ns < chunk_end ? deadline_ns : chunk_end;
    if (*now >= chunk_end) return 0;
    rc = sleepacc__kwait(s, *now, target);
    *now = sleepacc_now_ns();
    if (rc < 0) return rc;
    if (target == chunk_end && *now < deadline_ns) return 0;
  }
  s->kernel_waits++;
  return 1;
}

/* irtt's comp: ask for rem / r, r = EWMA of actual/asked; a wake before the
 * deadline spins the rest, so it never returns early.  Returns as
 * sleepacc__spin_phase does. */
static int sleepacc__comp_sleep(sleepacc_sleeper *s, int64_t *now, int64_t deadline_ns,
                                int64_t chunk_ns, int64_t chunk_end) {
  int64_t rem = deadline_ns - *now, ask, t0 = *now, target;
  int rc;
  if (rem > chunk_ns) { /* far away: a plain wait to the chunk end */
    rc = sleepacc__kwait(s, *now, chunk_end);
    return rc < 0 ? rc : 0;
  }
  ask = (int64_t)((double)rem / (s->comp_ratio > 0.5 ? s->comp_ratio : 0.5));
  if (ask < 0) ask = 0;
  target = *now + ask;
  if (ask >= SLEEPACC__MIN_KERNEL_NS) {
    double erf;
    rc = sleepacc__kwait(s, *now, target);
    *now = sleepacc_now_ns();
    if (rc < 0) return rc;
    s->kernel_waits++;
    erf = (double)(*now - t0) / (double)ask;
    if (erf >= 0.0 && erf <= 2.0) s->comp_ratio += SLEEPACC__COMP_ALPHA * (erf - s->comp_ratio);
    if (*now > deadline_ns) s->misses++;
  }
  return sleepacc__spin_phase(s, now, deadline_ns, chunk_end);
}

/* What auto learns from a kernel wait that woke `late` ns after its target,
 * at now: a miss of the deadline grows the band's boost, a hit decays it;
 * the lateness joins the band's histogram unless contended (contended
 * lateness is not this host's idle figure). */
static void sleepacc__auto_learn(sleepacc_sleeper *s, int64_t now, int64_t deadline_ns,
                                 int64_t late) {
  int b = s->cur_band;
  if (now > deadline_ns && !s->contended) {
    int64_t over = now - deadline_ns;
    int64_t add = over < s->cur_margin_ns ? over : s->cur_margin_ns;
    if (add < s->clock_cost_ns) add = s->clock_cost_ns;
    if (s->band_boost_ns[b] <= SLEEPACC_MAX_DURATION_NS) s->band_boost_ns[b] += add;
  } else if (now <= deadline_ns) {
    s->band_boost_ns[b] -= s->band_boost_ns[b] / SLEEPACC__BOOST_DECAY;
  }
  if (late >= 0) s->win_klate_ns += late;
  if (late >= 0 && !s->contended) sleepacc__band_add(s, b, late);
}

/* auto, hybrid and spin: a kernel wait to deadline - margin (and, with a
 * hand-off, handoff_ns earlier still, so the caller's poll loop gets its
 * handoff_ns even when the kernel wakes as late as the margin allows), then
 * the spin.  Returns as sleepacc__spin_phase does. */
static int sleepacc__hybrid_sleep(sleepacc_sleeper *s, int64_t *now, int64_t deadline_ns,
                                  int64_t chunk_end) {
  int64_t target = deadline_ns - s->cur_margin_ns - (s->cur_handed ? 0 : s->cur_handoff_ns);
  int64_t late = 0;
  int rc;
  if (target - *now >= SLEEPACC__MIN_KERNEL_NS) {
    /* opt-in RT: the last wait too, so the wake-up preempts normal threads */
    if (s->rt_priority > 0 && target <= chunk_end && deadline_ns - target <= SLEEPACC__RT_SPIN_NS)
      sleepacc__rt_raise(s, target);
    rc = sleepacc__kphase(s, now, target, chunk_end, &late);
    if (rc <= 0) return rc;
    if (*now > deadline_ns) s->misses++;
    if (late >= 0) s->cur_klate_ns = late;
    if (s->strategy == SLEEPACC_STRATEGY_AUTO) sleepacc__auto_learn(s, *now, deadline_ns, late);
  }
  return sleepacc__spin_phase(s, now, deadline_ns, chunk_end);
}

/* Sleep toward deadline_ns for at most chunk_ns (sleepacc_sleeper_until,
 * which puts back an opt-in real-time policy on every return). */
static int sleepacc__until(sleepacc_sleeper *s, int64_t deadline_ns, int64_t chunk_ns) {
  int64_t now, chunk_end;
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
  if (!s->cur_active || s->cur_deadline_ns != deadline_ns) sleepacc__begin(s, &now, deadline_ns);
  if (now < deadline_ns) {
    if (s->strategy == SLEEPACC_STRATEGY_KERNEL)
      rc = sleepacc__kernel_sleep(s, &now, deadline_ns, chunk_end);
    else if (s->strategy == SLEEPACC_STRATEGY_COMP)
      rc = sleepacc__comp_sleep(s, &now, deadline_ns, chunk_ns, chunk_end);
    else /* AUTO, HYBRID, SPIN */
      rc = sleepacc__hybrid_sleep(s, &now, deadline_ns, chunk_end);
    if (rc != 1) return rc;
  }
  sleepacc__finish(s, now);
  return 1;
}

int sleepacc_sleeper_until(sleepacc_sleeper *s, int64_t deadline_ns, int64_t chunk_ns) {
  int rc = sleepacc__until(s, deadline_ns, chunk_ns);
  if (s && s->rt_held) sleepacc__rt_restore(s);
  return rc;
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

/* The settings of an open sleeper from c: hand-off, RT opt-in, dma latency,
 * slice.  0, or -errno with *field blamed (the caller closes). */
int sleepacc__sleeper_configure(sleepacc_sleeper *s, const sleepacc_sleeper_config *c,
                                const char **field) {
  int rc = sleepacc_sleeper_set_handoff(s, c->handoff_ns);
  if (rc == 0) { /* the opt-in RT end; a kernel method never spins */
    if (c->rt_priority < 0 || c->rt_priority > 99) rc = -EINVAL;
    else s->rt_priority = s->strategy == SLEEPACC_STRATEGY_KERNEL ? 0 : (int)c->rt_priority;
    if (rc < 0 && field) *field = "rt_priority";
  }
  if (rc == 0 && c->dma_latency_us >= 0) {
    if (field) *field = "dma_latency_us";
    rc = sleepacc_sleeper_hold_dma_latency(s, (int)c->dma_latency_us);
  }
  /* the opt-in slice (its range is the configuration's rule, checked first) */
  if (rc == 0 && c->slice_ns > 0) sleepacc__slice_hold(s, c->slice_ns);
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
  out->decision = sleepacc__decisions[s->decision >= 0 && s->decision <= SLEEPACC__D_COMP ? s->decision : 0];
  out->reason = sleepacc__reasons[s->decision == SLEEPACC__D_KERNEL_ONLY ? SLEEPACC__W_SHORT
                                  : s->reason >= 0 && s->reason <= SLEEPACC__W_SHORT ? s->reason : 0];
  out->contention = s->contention;
  out->cpu_pressure = s->strategy == SLEEPACC_STRATEGY_AUTO ? s->cpu_pressure : -1.0;
  out->wake_delay_ns = s->strategy == SLEEPACC_STRATEGY_AUTO ? s->wake_delay_ns : -1;
  out->contended_episodes = s->contended_episodes;
  out->slice_ns = s->slice_ns;
  out->rt_priority = s->rt_priority;
  out->rt_spins = s->rt_spins;
  out->rt_denied = s->rt_denied;
  out->slice_held_ns = s->magic == SLEEPACC__SLEEPER_MAGIC ? s->slice_held_ns : 0;
  out->slice_denied = s->slice_denied;
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
