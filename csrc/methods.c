/*
 * methods.c -- the method registry: ONE table of sleep primitives, one
 * function per method, the cached availability probe and the waiter.
 *
 * Adding a method is one row in sleepacc__methods[] plus its function(s).
 * Nothing anywhere switches on a method's identity: callers use the row's
 * fields (family, absolute, granularity_ns, ...) and its function pointers.
 *
 * Wait contract (every row): wait(w, duration_ns, deadline_ns) with
 * duration_ns >= 0 the relative request and deadline_ns the same moment on
 * CLOCK_MONOTONIC.  Relative methods use duration_ns (rounded UP to their
 * granularity, never down to 0 for a nonzero request), absolute methods use
 * deadline_ns.  Returns 0, -EINTR when a signal interrupted the wait (never
 * restarted silently), -EAGAIN when a spin gave up after w->rt_bound_ns
 * before the deadline (call again toward the same deadline), or -errno.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/select.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#define SLEEPACC__LINUX 1
#ifndef SYS_epoll_pwait2
#define SYS_epoll_pwait2 441 /* same number on every architecture */
#endif
#endif

#if defined(__has_include)
#if __has_include(<sys/event.h>) && (defined(__FreeBSD__) || defined(__NetBSD__) || \
                                     defined(__OpenBSD__) || defined(__DragonFly__) || \
                                     defined(__APPLE__))
#include <sys/event.h>
#define SLEEPACC__KQUEUE 1
#endif
#endif

#if defined(SLEEPACC__LINUX) && defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
#include <sys/mman.h>
#define SLEEPACC__IO_URING 1 /* raw syscalls, no liburing: every build has the row */
#endif
#endif


/* ------------------------------------------------------------------ helpers */

/* Absolute CLOCK_MONOTONIC deadline -> timespec; 0 would disarm a timer, so
 * the earliest deadline used is 1 ns. */
static struct timespec sleepacc__abs_ts(int64_t deadline_ns) {
  return sleepacc__ts(deadline_ns > 0 ? deadline_ns : 1);
}

/* ns rounded up to whole `unit`s (ns >= 0). */
static int64_t sleepacc__ceil_div(int64_t ns, int64_t unit) {
  return ns <= 0 ? 0 : (ns + unit - 1) / unit;
}

/* poll/epoll timeout: ms rounded up; a nonzero request is never 0 ms. */
static int sleepacc__ms_up(int64_t ns) {
  int64_t ms = sleepacc__ceil_div(ns, 1000000LL);
  return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* -errno of the last failed call (never 0). */
static int sleepacc__neg_errno(void) { return errno ? -errno : -EINVAL; }

static int sleepacc__always(void) { return 1; }

/* -------------------------------------------------- select / pselect / poll */

static int sleepacc__wait_select(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  int64_t us = sleepacc__ceil_div(d, 1000);
  struct timeval tv;
  tv.tv_sec = (time_t)(us / 1000000);
  tv.tv_usec = (suseconds_t)(us % 1000000);
  return select(0, NULL, NULL, NULL, &tv) < 0 ? sleepacc__neg_errno() : 0;
}

static int sleepacc__wait_pselect(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  struct timespec ts = sleepacc__ts(d);
  return pselect(0, NULL, NULL, NULL, &ts, NULL) < 0 ? sleepacc__neg_errno() : 0;
}

static int sleepacc__wait_poll(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  return poll(NULL, 0, sleepacc__ms_up(d)) < 0 ? sleepacc__neg_errno() : 0;
}

#ifdef SLEEPACC__LINUX
static int sleepacc__wait_ppoll(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  struct timespec ts = sleepacc__ts(d);
  return ppoll(NULL, 0, &ts, NULL) < 0 ? sleepacc__neg_errno() : 0;
}

/* ------------------------------------------------------------------ epoll */

static int sleepacc__open_epoll(sleepacc_waiter *w) {
  w->fd = epoll_create1(EPOLL_CLOEXEC);
  return w->fd < 0 ? sleepacc__neg_errno() : 0;
}

static void sleepacc__close_fd(sleepacc_waiter *w) {
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
}

static int sleepacc__wait_epoll(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)dl;
  struct epoll_event ev;
  return epoll_wait(w->fd, &ev, 1, sleepacc__ms_up(d)) < 0 ? sleepacc__neg_errno() : 0;
}

static int sleepacc__wait_epoll_pwait2(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)dl;
  struct epoll_event ev;
  struct timespec ts = sleepacc__ts(d);
  long rc = syscall(SYS_epoll_pwait2, w->fd, &ev, 1, &ts, NULL, (size_t)0);
  return rc < 0 ? sleepacc__neg_errno() : 0;
}

/* Probe the running kernel (not the headers): a zero-timeout call on a real
 * epoll fd; ENOSYS (or a seccomp EPERM) means unavailable. */
static int sleepacc__avail_epoll_pwait2(void) {
  struct epoll_event ev;
  struct timespec ts = {0, 0};
  int fd = epoll_create1(EPOLL_CLOEXEC);
  long rc;
  if (fd < 0) return sleepacc__probe_failed(errno);
  rc = syscall(SYS_epoll_pwait2, fd, &ev, 1, &ts, NULL, (size_t)0);
  close(fd);
  return rc >= 0;
}

static int sleepacc__avail_epoll(void) {
  int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return sleepacc__probe_failed(errno);
  close(fd);
  return 1;
}
#endif /* SLEEPACC__LINUX */

/* ------------------------------------------------------------ plain sleeps */

static int sleepacc__wait_usleep(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  int64_t us = sleepacc__ceil_div(d, 1000);
  /* useconds_t is 32 bits: split very long requests (> ~16 min). */
  do {
    int64_t part = us > 1000000000LL ? 1000000000LL : us;
    if (usleep((useconds_t)part) != 0) return sleepacc__neg_errno();
    us -= part;
  } while (us > 0);
  return 0;
}

static int sleepacc__wait_nanosleep(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  struct timespec ts = sleepacc__ts(d);
  return nanosleep(&ts, NULL) != 0 ? sleepacc__neg_errno() : 0;
}

static int sleepacc__wait_cns(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)dl;
  struct timespec ts = sleepacc__ts(d);
  int rc = clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
  return -rc;
}

static int sleepacc__wait_cns_abs(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)d;
  struct timespec ts = sleepacc__abs_ts(dl);
  int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
  return -rc;
}

#ifdef SLEEPACC__LINUX
/* ----------------------------------------------------------------- timerfd */

static int sleepacc__open_timerfd(sleepacc_waiter *w) {
  w->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  return w->fd < 0 ? sleepacc__neg_errno() : 0;
}

static int sleepacc__avail_timerfd(void) {
  int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
  if (fd < 0) return sleepacc__probe_failed(errno);
  close(fd);
  return 1;
}

static int sleepacc__wait_timerfd(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  struct itimerspec its;
  uint64_t expirations;
  memset(&its, 0, sizeof its);
  its.it_value = sleepacc__abs_ts(dl);
  if (timerfd_settime(w->fd, TFD_TIMER_ABSTIME, &its, NULL) != 0) return sleepacc__neg_errno();
  if (read(w->fd, &expirations, sizeof expirations) < 0) {
    int rc = sleepacc__neg_errno();
    memset(&its, 0, sizeof its); /* disarm */
    timerfd_settime(w->fd, 0, &its, NULL);
    return rc;
  }
  return 0;
}

/* ---------------------------------------------- timer_signal / sigtimedwait */

/* The caller's signals are the caller's.  Each of these methods blocks one
 * real-time signal on the waiting thread during a wait, so:
 *   - open picks a signal the caller is not using: the one named by the
 *     environment variable (SLEEPACC_TIMER_SIGNAL for timer_signal,
 *     SLEEPACC_SIGTIMEDWAIT_SIGNAL for sigtimedwait; a number in
 *     SIGRTMIN..SIGRTMAX, taken as is: the caller's choice), else the first
 *     of SIGRTMIN+2 (+3) .. SIGRTMAX with the default disposition, not
 *     blocked on this thread and not pending;
 *   - a wait consumes only its own instances (timer_signal: si_code SI_TIMER
 *     with this waiter's si_value; sigtimedwait sends none), keeps every
 *     other instance it dequeued (queued before the call, or sent during
 *     it) and queues it again, siginfo intact, before the caller's mask is
 *     restored; when the caller's mask lets the signal in, the wait then
 *     returns -EINTR so the caller's handler runs now (the engine resumes
 *     toward the same deadline). */
#define SLEEPACC__SIG_KEEP 16 /* foreign instances held during one wait */

typedef struct sleepacc__sigheld {
  int n;
  siginfo_t info[SLEEPACC__SIG_KEEP];
} sleepacc__sigheld;

/* Queue a dequeued foreign instance again with its siginfo: to the process
 * (as it most likely came), or to this thread where the kernel allows only
 * that (a kill()-style si_code re-sent from a thread other than the main
 * one). */
static void sleepacc__sig_requeue(int signo, siginfo_t *info) {
  pid_t pid = getpid();
  if (syscall(SYS_rt_sigqueueinfo, pid, signo, info) == 0) return;
  syscall(SYS_rt_tgsigqueueinfo, pid, (pid_t)syscall(SYS_gettid), signo, info);
}

/* Hold a foreign instance; -EBUSY when more arrived than can be held (the
 * caller chose a signal it floods; the held ones are queued again). */
static int sleepacc__sig_hold(sleepacc__sigheld *h, int signo, const siginfo_t *info) {
  if (h->n == SLEEPACC__SIG_KEEP) {
    siginfo_t copy = *info;
    sleepacc__sig_requeue(signo, &copy);
    return -EBUSY;
  }
  h->info[h->n++] = *info;
  return 0;
}

/* Queue the held instances again, in order.  Returns 1 when there were
 * some and the caller's mask `old` lets the signal in (its handler is due). */
static int sleepacc__sig_release(sleepacc__sigheld *h, int signo, const sigset_t *old) {
  int n = h->n;
  for (int i = 0; i < n; i++) sleepacc__sig_requeue(signo, &h->info[i]);
  h->n = 0;
  return n > 0 && !sigismember(old, signo);
}

/* 1 when signo looks unused by the caller: default disposition, not
 * blocked on this thread, not pending. */
static int sleepacc__sig_free(int signo) {
  struct sigaction sa;
  sigset_t mask, pend;
  if (sigaction(signo, NULL, &sa) != 0) return 0;
  if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler != SIG_DFL) return 0;
  if ((sa.sa_flags & SA_SIGINFO) && sa.sa_sigaction != NULL) return 0;
  if (pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 || sigismember(&mask, signo)) return 0;
  if (sigpending(&pend) != 0 || sigismember(&pend, signo)) return 0;
  return 1;
}

/* The signal a waiter uses: $var when set (a number in SIGRTMIN..SIGRTMAX,
 * else -EINVAL), else the first free one from SIGRTMIN+first (-EBUSY when
 * every real-time signal is in use). */
static int sleepacc__sig_choose(const char *var, int first) {
  const char *v = getenv(var);
  if (v && *v) {
    char *end;
    long n = strtol(v, &end, 10);
    if (*end != '\0' || n < SIGRTMIN || n > SIGRTMAX) return -EINVAL;
    return (int)n;
  }
  for (int s = SIGRTMIN + first; s <= SIGRTMAX; s++)
    if (sleepacc__sig_free(s)) return s;
  return -EBUSY;
}

int sleepacc_signal_words(char *buf, size_t cap) {
  int first = SIGRTMIN + 2, handled = 0, pending = 0, run = -1;
  size_t len;
  sigset_t mask, pend;
  if (!buf || !cap) return -EINVAL;
  buf[0] = '\0';
  if (pthread_sigmask(SIG_BLOCK, NULL, &mask) != 0 || sigpending(&pend) != 0) return 0;
  len = (size_t)snprintf(buf, cap, "no free real-time signal: of "
                         "SIGRTMIN+2..SIGRTMAX (%d..%d), blocked on this thread:", first, SIGRTMAX);
  for (int s = first; s <= SIGRTMAX + 1; s++) { /* the blocked ones as ranges */
    int b = s <= SIGRTMAX && sigismember(&mask, s);
    if (s <= SIGRTMAX && sleepacc__sig_free(s)) return buf[0] = '\0', 0;
    if (b && run < 0) run = s;
    if (!b && run >= 0 && len < cap)
      len += (size_t)snprintf(buf + len, cap - len, run == s - 1 ? " %d" : " %d-%d", run, s - 1), run = -1;
    if (s <= SIGRTMAX && !b) /* not free, not blocked: pending, or it has a handler */
      sigismember(&pend, s) ? pending++ : handled++;
  }
  if (len < cap)
    snprintf(buf + len, cap - len, "%s; with a handler %d, pending %d (SLEEPACC_TIMER_SIGNAL or "
             "SLEEPACC_SIGTIMEDWAIT_SIGNAL=<n> takes one as is)", len > 0 && buf[len - 1] == ':' ? " none" : "",
             handled, pending);
  return 1;
}

/* Per-waiter state of timer_signal, kept in w->priv. */
typedef struct sleepacc__tsig {
  pid_t tid;     /* thread the timer signals */
  int armed;     /* 1 when the timer (in w->timer) exists */
  int cookie;    /* si_value of this waiter's timer */
} sleepacc__tsig;

/* The timer_t lives in w->timer itself (no pointer into the waiter, so a
 * waiter may be copied); its signals carry a cookie unique in the process. */
_Static_assert(sizeof(timer_t) <= sizeof(void *), "timer_t does not fit w->timer");
#define SLEEPACC__TSIG_COOKIE 0x5ACC0000

static timer_t sleepacc__tsig_timer(const sleepacc_waiter *w) {
  timer_t timer;
  memcpy(&timer, &w->timer, sizeof timer);
  return timer;
}

static int sleepacc__tsig_create(sleepacc_waiter *w) {
  static int serial; /* cookies: one per timer created in the process */
  sleepacc__tsig *t = (sleepacc__tsig *)(void *)w->priv;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID; /* to this thread only, never the process */
  sev.sigev_signo = w->signo;
  t->cookie = SLEEPACC__TSIG_COOKIE | (__atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED) & 0xFFFF);
  sev.sigev_value.sival_int = t->cookie;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) return sleepacc__neg_errno();
  memcpy(&w->timer, &timer, sizeof timer);
  t->tid = sev._sigev_un._tid;
  t->armed = 1;
  return 0;
}

static int sleepacc__open_tsig(sleepacc_waiter *w) {
  int s = sleepacc__sig_choose("SLEEPACC_TIMER_SIGNAL", 2);
  if (s < 0) return s;
  w->signo = s;
  return sleepacc__tsig_create(w);
}

static void sleepacc__close_tsig(sleepacc_waiter *w) {
  sleepacc__tsig *t = (sleepacc__tsig *)(void *)w->priv;
  if (t->armed) timer_delete(sleepacc__tsig_timer(w));
  t->armed = 0;
  w->timer = NULL;
}

static int sleepacc__avail_tsig(void) {
  sleepacc_waiter w;
  int rc;
  memset(&w, 0, sizeof w);
  w.signo = SIGRTMIN + 2; /* the probe never arms the timer */
  if ((rc = sleepacc__tsig_create(&w)) != 0) return sleepacc__probe_failed(-rc); /* EAGAIN: RLIMIT_SIGPENDING */
  sleepacc__close_tsig(&w);
  return 1;
}

/* 1 when info is an instance of this waiter's timer. */
static int sleepacc__tsig_mine(const sleepacc_waiter *w, const siginfo_t *info) {
  const sleepacc__tsig *t = (const sleepacc__tsig *)(const void *)w->priv;
  return info->si_code == SI_TIMER && info->si_value.sival_int == t->cookie;
}

/* Arm the POSIX timer at the absolute deadline and sigwaitinfo for its
 * signal, with the signal blocked only on this thread during the wait.  On
 * every path the timer is disarmed, none of its instances stays pending,
 * every foreign instance is queued again and the caller's signal mask is
 * restored. */
static int sleepacc__wait_tsig(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  sleepacc__tsig *t = (sleepacc__tsig *)(void *)w->priv;
  sleepacc__sigheld held;
  sigset_t set, old;
  struct itimerspec its;
  struct timespec zero = {0, 0};
  siginfo_t si;
  int rc = 0, done = 0;
  held.n = 0;
  if (t->tid != (pid_t)syscall(SYS_gettid)) { /* used from another thread */
    sleepacc__close_tsig(w);
    if ((rc = sleepacc__tsig_create(w)) != 0) return rc;
  }
  sigemptyset(&set);
  sigaddset(&set, w->signo);
  if ((rc = pthread_sigmask(SIG_BLOCK, &set, &old)) != 0) return -rc;
  memset(&its, 0, sizeof its);
  its.it_value = sleepacc__abs_ts(dl);
  if (timer_settime(sleepacc__tsig_timer(w), TIMER_ABSTIME, &its, NULL) != 0) {
    rc = sleepacc__neg_errno();
  } else {
    while (!done) {
      if (sigwaitinfo(&set, &si) < 0) {
        rc = sleepacc__neg_errno();
        break;
      }
      if (sleepacc__tsig_mine(w, &si)) {
        done = 1;
      } else {
        if ((rc = sleepacc__sig_hold(&held, w->signo, &si)) != 0) break;
        if (!sigismember(&old, w->signo)) { /* the caller's handler is due */
          rc = -EINTR;
          break;
        }
      }
    }
  }
  if (!done) {
    /* disarmed, then take out our instance if it fired meanwhile (only
     * ours: what else is pending is held and queued again) */
    memset(&its, 0, sizeof its);
    timer_settime(sleepacc__tsig_timer(w), 0, &its, NULL);
    for (int i = 0; i < 64 && sigtimedwait(&set, &si, &zero) == w->signo; i++)
      if (!sleepacc__tsig_mine(w, &si) && sleepacc__sig_hold(&held, w->signo, &si) != 0) break;
  }
  sleepacc__sig_release(&held, w->signo, &old);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return done ? 0 : rc;
}

static int sleepacc__open_sigtimedwait(sleepacc_waiter *w) {
  int s = sleepacc__sig_choose("SLEEPACC_SIGTIMEDWAIT_SIGNAL", 3);
  if (s < 0) return s;
  w->signo = s;
  return 0;
}

/* sigtimedwait for a signal nobody sends: the timeout is the sleep.  The
 * signal is blocked on this thread only during the call; an instance that
 * arrives anyway is not ours: it is held and queued again, and when the
 * caller's mask lets it in the wait ends with -EINTR so its handler runs. */
static int sleepacc__wait_sigtimedwait(sleepacc_waiter *w, int64_t d, int64_t dl) {
  sleepacc__sigheld held;
  sigset_t set, old;
  siginfo_t si;
  struct timespec ts = sleepacc__ts(d);
  int rc = 0;
  held.n = 0;
  sigemptyset(&set);
  sigaddset(&set, w->signo);
  if ((rc = pthread_sigmask(SIG_BLOCK, &set, &old)) != 0) return -rc;
  for (;;) {
    int64_t left;
    if (sigtimedwait(&set, &si, &ts) < 0) {
      if (errno != EAGAIN) rc = sleepacc__neg_errno();
      break;
    }
    if ((rc = sleepacc__sig_hold(&held, w->signo, &si)) != 0) break;
    if (!sigismember(&old, w->signo)) break; /* the caller's handler is due: -EINTR below */
    /* the caller blocks it: it stays queued for the caller; wait out the rest */
    if ((left = dl - sleepacc_now_ns()) <= 0) break;
    ts = sleepacc__ts(left);
  }
  if (sleepacc__sig_release(&held, w->signo, &old) && rc == 0 && dl - sleepacc_now_ns() > 0)
    rc = -EINTR;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

/* ------------------------------------------------------------------- futex */

static int sleepacc__avail_futex(void) {
  uint32_t word = 0;
  struct timespec ts = {0, 0};
  long rc = syscall(SYS_futex, &word, FUTEX_WAIT_PRIVATE, 1u, &ts, NULL, 0);
  return !(rc < 0 && errno == ENOSYS);
}

/* FUTEX_WAIT with a relative timeout on a word nobody wakes.  A spurious
 * return (woken, value changed) waits again for what is left. */
static int sleepacc__wait_futex(sleepacc_waiter *w, int64_t d, int64_t dl) {
  struct timespec ts = sleepacc__ts(d);
  w->futex_word = 0;
  for (;;) {
    long rc = syscall(SYS_futex, &w->futex_word, FUTEX_WAIT_PRIVATE, 0u, &ts, NULL, 0);
    int64_t left;
    if (rc < 0 && errno == ETIMEDOUT) return 0;
    if (rc < 0 && errno != EAGAIN) return sleepacc__neg_errno();
    left = dl - sleepacc_now_ns();
    if (left <= 0) return 0;
    ts = sleepacc__ts(left);
  }
}
#endif /* SLEEPACC__LINUX */

/* ---------------------------------------------------------- cond_timedwait */

typedef struct sleepacc__cond {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
} sleepacc__cond;

_Static_assert(sizeof(sleepacc__cond) <= sizeof(((sleepacc_waiter *)0)->priv),
               "waiter priv too small for mutex+cond");
_Static_assert(offsetof(sleepacc_waiter, priv) % _Alignof(sleepacc__cond) == 0,
               "waiter priv misaligned");

static int sleepacc__open_cond(sleepacc_waiter *w) {
  sleepacc__cond *c = (sleepacc__cond *)(void *)w->priv;
  pthread_condattr_t attr;
  int rc;
  if ((rc = pthread_mutex_init(&c->mutex, NULL)) != 0) return -rc;
  if ((rc = pthread_condattr_init(&attr)) != 0) goto fail_mutex;
  rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  if (rc == 0) rc = pthread_cond_init(&c->cond, &attr);
  pthread_condattr_destroy(&attr);
  if (rc == 0) {
    w->aux_fd = 1; /* marks "initialised" for close */
    return 0;
  }
fail_mutex:
  pthread_mutex_destroy(&c->mutex);
  return -rc;
}

static void sleepacc__close_cond(sleepacc_waiter *w) {
  sleepacc__cond *c = (sleepacc__cond *)(void *)w->priv;
  if (w->aux_fd != 1) return;
  pthread_cond_destroy(&c->cond);
  pthread_mutex_destroy(&c->mutex);
  w->aux_fd = -1;
}

/* pthread_cond_timedwait on a CLOCK_MONOTONIC condvar nobody signals;
 * spurious wake-ups wait again until the deadline. */
static int sleepacc__wait_cond(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  sleepacc__cond *c = (sleepacc__cond *)(void *)w->priv;
  /* pthread_cond_timedwait never returns EINTR, so a signal cannot end it:
   * with a bound set, wait at most that long and return -EAGAIN so the
   * caller can look at signals and resume toward the same deadline. */
  int64_t now = sleepacc_now_ns();
  int64_t until = dl;
  int rc;
  if (w->rt_bound_ns > 0 && dl - now > w->rt_bound_ns) until = now + w->rt_bound_ns;
  struct timespec ts = sleepacc__abs_ts(until);
  pthread_mutex_lock(&c->mutex);
  do {
    rc = pthread_cond_timedwait(&c->cond, &c->mutex, &ts);
  } while (rc == 0 && sleepacc_now_ns() < until);
  pthread_mutex_unlock(&c->mutex);
  if (rc != 0 && rc != ETIMEDOUT) return -rc;
  return until < dl ? -EAGAIN : 0;
}

/* --------------------------------------------------- spin / yield / hybrid */

/* Spin (clock poll + PAUSE) until dl; -EAGAIN if w->rt_bound_ns elapsed first. */
static int sleepacc__spin_until(const sleepacc_waiter *w, int64_t dl) {
  int64_t t = sleepacc_now_ns();
  int64_t give_up = w->rt_bound_ns > 0 ? t + w->rt_bound_ns : INT64_MAX;
  while (t < dl) {
    if (t >= give_up) return -EAGAIN;
    sleepacc_cpu_relax();
    t = sleepacc_now_ns();
  }
  return 0;
}

static int sleepacc__wait_spin(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  return sleepacc__spin_until(w, dl);
}

static int sleepacc__wait_yield(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  int64_t t = sleepacc_now_ns();
  int64_t give_up = w->rt_bound_ns > 0 ? t + w->rt_bound_ns : INT64_MAX;
  while (t < dl) {
    if (t >= give_up) return -EAGAIN;
    sched_yield();
    t = sleepacc_now_ns();
  }
  return 0;
}

/* clock_nanosleep(TIMER_ABSTIME) to dl - margin, then spin to dl. */
static int sleepacc__wait_hybrid(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  int64_t wake = dl - w->margin_ns;
  if (wake > sleepacc_now_ns()) {
    struct timespec ts = sleepacc__abs_ts(wake);
    int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    if (rc != 0) return -rc;
  }
  return sleepacc__spin_until(w, dl);
}

/* ---------------------------------------------------------------- baseline */

#ifdef SLEEPACC__LINUX
static int sleepacc__wait_syscall(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)d; (void)dl;
  syscall(SYS_getppid); /* never cached by libc: a real kernel entry */
  return 0;
}
#endif

static int sleepacc__wait_clock(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)d; (void)dl;
  return 0;
}

/* ------------------------------------------------------------------ kqueue */
#ifdef SLEEPACC__KQUEUE
static int sleepacc__open_kqueue(sleepacc_waiter *w) {
  w->fd = kqueue();
  return w->fd < 0 ? sleepacc__neg_errno() : 0;
}

static void sleepacc__close_kqueue(sleepacc_waiter *w) {
  if (w->fd >= 0) close(w->fd);
  w->fd = -1;
}

/* kevent with no changes and a relative timeout. */
static int sleepacc__wait_kqueue(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)dl;
  struct kevent ev;
  struct timespec ts = sleepacc__ts(d);
  return kevent(w->fd, NULL, 0, &ev, 1, &ts) < 0 ? sleepacc__neg_errno() : 0;
}
#endif

/* ---------------------------------------------------------------- io_uring */
#ifdef SLEEPACC__IO_URING
/* Raw io_uring_setup/io_uring_enter syscalls (no liburing, so every build of
 * the core has this row when the kernel headers do).
 *
 * One ring per thread, opened on the thread's first io_uring wait and kept
 * until the thread ends (a pthread key destructor closes it; the process's
 * exit closes the main thread's).  Why not one per waiter: closing a ring
 * makes the kernel notify every thread that used it (io_ring_exit_work,
 * task work with TWA_SIGNAL) up to ~20 ms later, and that notification ends
 * whatever interruptible wait the thread is in then (epoll_wait,
 * sigwaitinfo, ...) with EINTR: measured here in 47 of 50 closes.  A ring
 * kept for the thread's life leaves its later waits alone; its cost is one
 * descriptor and three small mmaps per thread that used the row.  A timeout
 * interrupted by a signal is cancelled at once (IORING_OP_TIMEOUT_REMOVE),
 * so no stale completion notifies the thread later either.  The availability
 * probe opens no ring (io_uring_setup with 0 entries: EINVAL when the
 * syscall exists and is allowed). */
typedef struct sleepacc__uring {
  unsigned char *sq;              /* SQ ring mmap (also the CQ ring with SINGLE_MMAP) */
  unsigned char *cq;              /* CQ ring mmap */
  struct io_uring_sqe *sqes;      /* SQE array mmap */
  uint32_t sq_len, cq_len;        /* mmap lengths (cq_len 0: shared with sq) */
  uint32_t sqes_len;              /* SQE array mmap length */
  uint32_t sq_head, sq_tail, sq_mask, sq_array; /* offsets into sq */
  uint32_t cq_head, cq_tail, cq_mask, cq_cqes; /* offsets into cq */
  int fd;                         /* the ring, -1 when none */
  pid_t pid;                      /* process that opened it (a forked child opens its own) */
} sleepacc__uring;
_Static_assert(sizeof(sleepacc__uring) <= sizeof(((sleepacc_waiter *)0)->priv),
               "io_uring state fits the waiter");

static __thread sleepacc__uring sleepacc__thread_ring = {.fd = -1};
static pthread_key_t sleepacc__ring_key;
static pthread_once_t sleepacc__ring_once = PTHREAD_ONCE_INIT;

static void sleepacc__unmap_uring(sleepacc__uring *u, int close_fd) {
  if (u->sqes) munmap(u->sqes, u->sqes_len);
  if (u->cq && u->cq != u->sq) munmap(u->cq, u->cq_len);
  if (u->sq) munmap(u->sq, u->sq_len);
  if (close_fd && u->fd >= 0) close(u->fd);
  memset(u, 0, sizeof *u);
  u->fd = -1;
}

/* Thread exit: close the thread's ring. */
static void sleepacc__ring_dtor(void *p) {
  sleepacc__uring *u = p;
  if (u && u->pid == getpid()) sleepacc__unmap_uring(u, 1);
}

static int sleepacc__ring_keyed; /* the key exists */

static void sleepacc__ring_key_init(void) {
  sleepacc__ring_keyed = pthread_key_create(&sleepacc__ring_key, sleepacc__ring_dtor) == 0;
}

/* The core unloaded (a Lua state closed dlcloses the module, say on a
 * worker thread about to end) or the process exiting: the key goes, so no
 * thread ending later calls a destructor where this code was (it did:
 * SIGSEGV at thread exit); this thread's ring is closed, another thread's
 * stays open until the process ends. */
__attribute__((destructor)) static void sleepacc__ring_unload(void) {
  if (!sleepacc__ring_keyed) return;
  (void)pthread_key_delete(sleepacc__ring_key);
  sleepacc__ring_keyed = 0;
  sleepacc__ring_dtor(&sleepacc__thread_ring);
}

/* Set up a ring into *u (all or nothing). */
static int sleepacc__setup_uring(sleepacc__uring *u) {
  struct io_uring_params p;
  void *m;
  int rc;
  memset(&p, 0, sizeof p);
  memset(u, 0, sizeof *u);
  u->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
  if (u->fd < 0) return sleepacc__neg_errno();
  u->sq_len = p.sq_off.array + p.sq_entries * (uint32_t)sizeof(uint32_t);
  u->cq_len = p.cq_off.cqes + p.cq_entries * (uint32_t)sizeof(struct io_uring_cqe);
  if (p.features & IORING_FEAT_SINGLE_MMAP) {
    if (u->cq_len > u->sq_len) u->sq_len = u->cq_len;
    u->cq_len = 0;
  }
  u->sqes_len = p.sq_entries * (uint32_t)sizeof(struct io_uring_sqe);
  m = mmap(NULL, u->sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
           IORING_OFF_SQ_RING);
  if (m == MAP_FAILED) goto fail;
  u->sq = u->cq = m;
  if (u->cq_len) {
    m = mmap(NULL, u->cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
             IORING_OFF_CQ_RING);
    if (m == MAP_FAILED) goto fail;
    u->cq = m;
  }
  m = mmap(NULL, u->sqes_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, u->fd,
           IORING_OFF_SQES);
  if (m == MAP_FAILED) goto fail;
  u->sqes = m;
  u->sq_head = p.sq_off.head;
  u->sq_tail = p.sq_off.tail;
  u->sq_mask = p.sq_off.ring_mask;
  u->sq_array = p.sq_off.array;
  u->cq_head = p.cq_off.head;
  u->cq_tail = p.cq_off.tail;
  u->cq_mask = p.cq_off.ring_mask;
  u->cq_cqes = p.cq_off.cqes;
  u->pid = getpid();
  return 0;
fail:
  rc = sleepacc__neg_errno();
  sleepacc__unmap_uring(u, 1);
  return rc;
}

/* The waiter borrows the thread's ring (a copy of its state in w->priv). */
static int sleepacc__open_uring(sleepacc_waiter *w) {
  sleepacc__uring *t = &sleepacc__thread_ring;
  if (t->fd >= 0 && t->pid != getpid()) /* inherited over fork: the parent's ring */
    sleepacc__unmap_uring(t, 1);       /* (the parent keeps its own reference) */
  if (t->fd < 0) {
    int rc = sleepacc__setup_uring(t);
    if (rc < 0) return rc;
    pthread_once(&sleepacc__ring_once, sleepacc__ring_key_init);
    (void)pthread_setspecific(sleepacc__ring_key, t);
  }
  memcpy(w->priv, t, sizeof *t);
  w->fd = -1; /* not the waiter's to close */
  return 0;
}

static void sleepacc__close_uring(sleepacc_waiter *w) {
  memset(w->priv, 0, sizeof(sleepacc__uring)); /* the ring stays with the thread */
}

static int sleepacc__avail_uring(void) {
  struct io_uring_params p;
  memset(&p, 0, sizeof p);
  /* 0 entries: EINVAL from a kernel that has io_uring and allows it; ENOSYS,
   * or EPERM (io_uring_disabled, seccomp) otherwise */
  return syscall(__NR_io_uring_setup, 0, &p) < 0 && errno == EINVAL;
}

#define SLEEPACC__U32(base, off) ((uint32_t *)(void *)((base) + (off)))

/* Queue one SQE (the SQ is empty between calls: every call submits). */
static void sleepacc__push_uring(const sleepacc__uring *u, uint8_t op, uint64_t addr,
                                 uint32_t len, uint64_t tag) {
  uint32_t tail = *SLEEPACC__U32(u->sq, u->sq_tail);
  uint32_t idx = tail & *SLEEPACC__U32(u->sq, u->sq_mask);
  struct io_uring_sqe *sqe = &u->sqes[idx];
  memset(sqe, 0, sizeof *sqe);
  sqe->opcode = op;
  sqe->fd = -1;
  sqe->addr = addr;
  sqe->len = len;
  sqe->user_data = tag;
  SLEEPACC__U32(u->sq, u->sq_array)[idx] = idx;
  __atomic_store_n(SLEEPACC__U32(u->sq, u->sq_tail), tail + 1, __ATOMIC_RELEASE);
}

/* Reap completions; 1 when the one tagged `mine` was among them (its result
 * in *res), 0 when not yet.  Others (a cancelled timeout, a removal) are
 * skipped. */
static int sleepacc__reap_uring(const sleepacc__uring *u, uint64_t mine, int *res) {
  uint32_t *headp = SLEEPACC__U32(u->cq, u->cq_head);
  uint32_t head = *headp, mask = *SLEEPACC__U32(u->cq, u->cq_mask), found = 0;
  uint32_t tail = __atomic_load_n(SLEEPACC__U32(u->cq, u->cq_tail), __ATOMIC_ACQUIRE);
  const struct io_uring_cqe *cqes = (const struct io_uring_cqe *)(void *)(u->cq + u->cq_cqes);
  for (; head != tail; head++) {
    const struct io_uring_cqe *c = &cqes[head & mask];
    if (c->user_data == mine) {
      *res = c->res;
      found = 1;
    }
  }
  __atomic_store_n(headp, head, __ATOMIC_RELEASE);
  return (int)found;
}

/* Tags of requests, unique in the process (rings are per thread). */
static uint64_t sleepacc__uring_seq;

/* IORING_OP_TIMEOUT, relative, then wait for ITS completion.  A signal
 * ending the wait cancels the timeout before -EINTR is returned.  The kernel
 * copies the timespec when the request is submitted. */
static int sleepacc__wait_uring(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)dl;
  sleepacc__uring u;
  struct __kernel_timespec ts;
  uint64_t mine = __atomic_add_fetch(&sleepacc__uring_seq, 2, __ATOMIC_RELAXED);
  int res = 0, err;
  memcpy(&u, w->priv, sizeof u);
  ts.tv_sec = d / 1000000000LL;
  ts.tv_nsec = d % 1000000000LL;
  sleepacc__push_uring(&u, IORING_OP_TIMEOUT, (uint64_t)(uintptr_t)&ts, 1, mine);
  /* submit, then wait in a second call: a signal ends that one with EINTR
   * (a call that submits and waits reports the submission instead) */
  if (syscall(__NR_io_uring_enter, u.fd, 1, 0, 0, NULL, 0) < 0) {
    err = errno;
    if (*SLEEPACC__U32(u.sq, u.sq_tail) !=
        __atomic_load_n(SLEEPACC__U32(u.sq, u.sq_head), __ATOMIC_ACQUIRE)) /* withdraw it */
      __atomic_store_n(SLEEPACC__U32(u.sq, u.sq_tail), *SLEEPACC__U32(u.sq, u.sq_tail) - 1,
                       __ATOMIC_RELEASE);
    return -err;
  }
  for (;;) {
    if (sleepacc__reap_uring(&u, mine, &res)) return res == -ETIME || res == 0 ? 0 : res;
    if (syscall(__NR_io_uring_enter, u.fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
      if ((err = errno) != EINTR) return -err;
      break;
    }
  }
  /* interrupted: remove the timeout now (its completion and the removal's are
   * posted during this call and skipped by the next reap) */
  sleepacc__push_uring(&u, IORING_OP_TIMEOUT_REMOVE, mine, 0, mine + 1);
  (void)syscall(__NR_io_uring_enter, u.fd, 1, 0, 0, NULL, 0);
  return -EINTR;
}
#endif

/* ------------------------------------------------------------ the registry */

#define SLEEPACC__K SLEEPACC_FAMILY_KERNEL
#define SLEEPACC__S SLEEPACC_FAMILY_SPIN
#define SLEEPACC__H SLEEPACC_FAMILY_HYBRID
#define SLEEPACC__B SLEEPACC_FAMILY_BASELINE

/* name, family, granularity_ns (0: the request is ignored), honours_slack,
 * absolute, description, available, open, close, wait */
static const sleepacc_method sleepacc__methods[] = {
    {"select", SLEEPACC__K, 1000, SLEEPACC_YES, 0,
     "select() with no fds; timeval in us, rounded up",
     sleepacc__always, NULL, NULL, sleepacc__wait_select},
    {"pselect", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "pselect() with no fds; timespec in ns",
     sleepacc__always, NULL, NULL, sleepacc__wait_pselect},
    {"poll", SLEEPACC__K, 1000000, SLEEPACC_YES, 0,
     "poll() with no fds; timeout in ms, rounded up (never 0 for a nonzero request)",
     sleepacc__always, NULL, NULL, sleepacc__wait_poll},
#ifdef SLEEPACC__LINUX
    {"ppoll", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "ppoll() with no fds; timespec in ns",
     sleepacc__always, NULL, NULL, sleepacc__wait_ppoll},
    {"epoll_wait", SLEEPACC__K, 1000000, SLEEPACC_YES, 0,
     "epoll_wait() on an empty epoll set; timeout in ms, rounded up",
     sleepacc__avail_epoll, sleepacc__open_epoll, sleepacc__close_fd, sleepacc__wait_epoll},
    {"epoll_pwait2", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "epoll_pwait2() on an empty epoll set; timespec in ns (Linux 5.11+, probed)",
     sleepacc__avail_epoll_pwait2, sleepacc__open_epoll, sleepacc__close_fd,
     sleepacc__wait_epoll_pwait2},
#endif
    {"usleep", SLEEPACC__K, 1000, SLEEPACC_YES, 0,
     "usleep(); microseconds, rounded up",
     sleepacc__always, NULL, NULL, sleepacc__wait_usleep},
    {"nanosleep", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "nanosleep(); relative, CLOCK_MONOTONIC on Linux",
     sleepacc__always, NULL, NULL, sleepacc__wait_nanosleep},
    {"clock_nanosleep", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "clock_nanosleep(CLOCK_MONOTONIC), relative",
     sleepacc__always, NULL, NULL, sleepacc__wait_cns},
    {"clock_nanosleep_abs", SLEEPACC__K, 1, SLEEPACC_YES, 1,
     "clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to the deadline",
     sleepacc__always, NULL, NULL, sleepacc__wait_cns_abs},
#ifdef SLEEPACC__LINUX
    {"timerfd", SLEEPACC__K, 1, SLEEPACC_NO, 1,
     "timerfd armed at the absolute deadline, then read()",
     sleepacc__avail_timerfd, sleepacc__open_timerfd, sleepacc__close_fd,
     sleepacc__wait_timerfd},
    {"timer_signal", SLEEPACC__K, 1, SLEEPACC_NO, 1,
     "POSIX timer_create(CLOCK_MONOTONIC) to this thread (a free RT signal from SIGRTMIN+2), "
     "sigwaitinfo()",
     sleepacc__avail_tsig, sleepacc__open_tsig, sleepacc__close_tsig, sleepacc__wait_tsig},
    {"sigtimedwait", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "sigtimedwait() for a signal never sent (a free RT signal from SIGRTMIN+3); the timeout "
     "is the sleep",
     sleepacc__always, sleepacc__open_sigtimedwait, NULL, sleepacc__wait_sigtimedwait},
    {"futex", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "FUTEX_WAIT (private) with a relative timeout on a word nobody wakes",
     sleepacc__avail_futex, NULL, NULL, sleepacc__wait_futex},
#endif
    {"cond_timedwait", SLEEPACC__K, 1, SLEEPACC_YES, 1,
     "pthread_cond_timedwait() on a CLOCK_MONOTONIC condvar, absolute deadline",
     sleepacc__always, sleepacc__open_cond, sleepacc__close_cond, sleepacc__wait_cond},
#ifdef SLEEPACC__KQUEUE
    {"kqueue", SLEEPACC__K, 1, SLEEPACC_UNKNOWN, 0,
     "kevent() on an empty kqueue with a relative timeout",
     sleepacc__always, sleepacc__open_kqueue, sleepacc__close_kqueue, sleepacc__wait_kqueue},
#endif
#ifdef SLEEPACC__IO_URING
    {"io_uring", SLEEPACC__K, 1, SLEEPACC_NO, 0, /* hrtimer with no range: slack unused */
     "io_uring IORING_OP_TIMEOUT (relative; raw syscalls), wait for its completion",
     sleepacc__avail_uring, sleepacc__open_uring, sleepacc__close_uring, sleepacc__wait_uring},
#endif
    {"sched_yield", SLEEPACC__S, 1, SLEEPACC_NO, 1,
     "sched_yield() in a loop until the deadline (burns CPU when nothing else runs)",
     sleepacc__always, NULL, NULL, sleepacc__wait_yield},
    {"spin", SLEEPACC__S, 1, SLEEPACC_NO, 1,
     "poll CLOCK_MONOTONIC with a CPU pause hint until the deadline",
     sleepacc__always, NULL, NULL, sleepacc__wait_spin},
    {"hybrid", SLEEPACC__H, 1, SLEEPACC_UNKNOWN, 1,
     "clock_nanosleep_abs to deadline - margin, then spin (slack matters only if > margin)",
     sleepacc__always, NULL, NULL, sleepacc__wait_hybrid},
#ifdef SLEEPACC__LINUX
    {"syscall", SLEEPACC__B, 0, SLEEPACC_NO, 0,
     "a null system call (getppid): the floor under any kernel sleep; ignores the request",
     sleepacc__always, NULL, NULL, sleepacc__wait_syscall},
#endif
    {"clock", SLEEPACC__B, 0, SLEEPACC_NO, 0,
     "no call at all: the harness floor (two clock reads); ignores the request",
     sleepacc__always, NULL, NULL, sleepacc__wait_clock},
};

#define SLEEPACC__NMETHODS (sizeof sleepacc__methods / sizeof sleepacc__methods[0])

/* Cached probe results: 0 unknown, 1 available, 2 unavailable. */
static int sleepacc__probe_cache[SLEEPACC__NMETHODS];

size_t sleepacc_method_count(void) { return SLEEPACC__NMETHODS; }

int sleepacc_method_ready(const sleepacc_method *m, char *why, size_t cap) {
  int rc = 1;
  if (why && cap) why[0] = '\0';
  if (!m || !sleepacc_method_available(m)) rc = 0;
#ifdef SLEEPACC__LINUX
  else if (m->open == sleepacc__open_tsig && sleepacc__sig_choose("SLEEPACC_TIMER_SIGNAL", 2) < 0) rc = 0;
  else if (m->open == sleepacc__open_sigtimedwait && sleepacc__sig_choose("SLEEPACC_SIGTIMEDWAIT_SIGNAL", 3) < 0)
    rc = 0;
  if (rc == 0 && m && sleepacc_method_available(m) && why && cap) {
    size_t k = (size_t)snprintf(why, cap, "%s: ", m->name);
    if (k >= cap || !sleepacc_signal_words(why + k, cap - k))
      snprintf(why, cap, "%s: its signal is not free (SLEEPACC_TIMER_SIGNAL or "
               "SLEEPACC_SIGTIMEDWAIT_SIGNAL is not a real-time signal number)", m->name);
    return 0;
  }
#endif
  if (rc == 0 && why && cap) snprintf(why, cap, "%s: %s", m ? m->name : "?", sleepacc_strerror(-ENOSYS));
  return rc;
}

const sleepacc_method *sleepacc_method_at(size_t i) {
  return i < SLEEPACC__NMETHODS ? &sleepacc__methods[i] : NULL;
}

const sleepacc_method *sleepacc_method_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < SLEEPACC__NMETHODS; i++)
    if (strcmp(sleepacc__methods[i].name, name) == 0) return &sleepacc__methods[i];
  return NULL;
}

int sleepacc__transient(int err) {
  if (err < 0) err = -err;
  return err == EMFILE || err == ENFILE || err == EAGAIN || err == ENOMEM || err == ENOBUFS ||
         err == EINTR;
}

int sleepacc__probe_failed(int err) { return sleepacc__transient(err) ? -(err < 0 ? -err : err) : 0; }

/* 1 if m works here.  Rows of the table are probed once and cached; a row
 * that is not from the table is probed every time.  A probe that could not
 * tell for want of a resource (a negative errno: a descriptor, memory, a
 * queued signal) is not cached and counts as available: the method is
 * there, and opening it says what is missing (-EMFILE, ...) while it is;
 * only what the kernel lacks is "not available" for the process's life.
 * NULL -> 0. */
int sleepacc_method_available(const sleepacc_method *m) {
  size_t i;
  int v;
  if (!m || !m->wait) return 0;
  if (m < sleepacc__methods || m >= sleepacc__methods + SLEEPACC__NMETHODS)
    return m->available ? m->available() != 0 : 1;
  i = (size_t)(m - sleepacc__methods);
  v = __atomic_load_n(&sleepacc__probe_cache[i], __ATOMIC_ACQUIRE);
  if (v == 0) {
    int probe = m->available ? m->available() : 1;
    if (probe < 0) return 1; /* asked again next time */
    v = probe ? 1 : 2;
    __atomic_store_n(&sleepacc__probe_cache[i], v, __ATOMIC_RELEASE);
  }
  return v == 1;
}

/* ------------------------------------------------------------------ waiter */

/* Open w for m.  margin_ns: hybrid's margin (0 = SLEEPACC_DEFAULT_MARGIN_NS).
 * -EINVAL for NULLs or a bad margin, -ENOSYS when m is unavailable, or the
 * open error (then nothing is left open and w->method is NULL). */
int sleepacc_waiter_open(sleepacc_waiter *w, const sleepacc_method *m, int64_t margin_ns) {
  int rc;
  if (!w) return -EINVAL;
  memset(w, 0, sizeof *w);
  w->fd = -1;
  w->aux_fd = -1;
  if (!m || !m->wait || margin_ns < 0 || margin_ns > SLEEPACC_MAX_DURATION_NS) return -EINVAL;
  if (!sleepacc_method_available(m)) return -ENOSYS;
  w->margin_ns = margin_ns > 0 ? margin_ns : SLEEPACC_DEFAULT_MARGIN_NS;
  if (m->open && (rc = m->open(w)) != 0) {
    if (m->close) m->close(w);
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->aux_fd = -1;
    return rc < 0 ? rc : -rc;
  }
  w->method = m;
  return 0;
}

/* 1 when fd is still a descriptor of the kind open makes (an anonymous
 * inode: timerfd, epoll, io_uring), so a forked child may close its copy. */
static int sleepacc__is_anon_fd(int fd) {
  char path[64], link[64];
  ssize_t n;
  if (fd < 0) return 0;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  n = readlink(path, link, sizeof link - 1);
  if (n <= 0) return 0;
  link[n] = '\0';
  return strncmp(link, "anon_inode:", 11) == 0;
}

static uint64_t sleepacc__fork_gen;
static pthread_once_t sleepacc__fork_once = PTHREAD_ONCE_INIT;
static void sleepacc__fork_child(void) {
  __atomic_add_fetch(&sleepacc__fork_gen, 1, __ATOMIC_RELAXED);
}
static void sleepacc__fork_register(void) { pthread_atfork(NULL, NULL, sleepacc__fork_child); }

uint64_t sleepacc_fork_generation(void) {
  pthread_once(&sleepacc__fork_once, sleepacc__fork_register);
  return __atomic_load_n(&sleepacc__fork_gen, __ATOMIC_RELAXED);
}

int sleepacc_waiter_reopen(sleepacc_waiter *w) {
  const sleepacc_method *m;
  int64_t margin;
  if (!w || !w->method) return -EINVAL;
  m = w->method;
  margin = w->margin_ns;
  /* no m->close: it would delete a timer id this process never had (or
   * has for something else now) and destroy a condvar another thread of
   * the parent waited on (glibc waits for its waiters) */
  if (sleepacc__is_anon_fd(w->fd)) close(w->fd);
  if (w->aux_fd != w->fd && sleepacc__is_anon_fd(w->aux_fd)) close(w->aux_fd);
  w->method = NULL;
  return sleepacc_waiter_open(w, m, margin);
}

/* Wait through w's method.  -EINVAL for a closed waiter or a duration
 * outside 0..SLEEPACC_MAX_DURATION_NS (the one cheap guard of this public
 * entry point; the engine's per-sample path calls the method directly, its
 * durations checked once by sleepacc_config_check); otherwise the method's
 * result. */
int sleepacc_waiter_wait(sleepacc_waiter *w, int64_t duration_ns, int64_t deadline_ns) {
  if (!w || !w->method) return -EINVAL;
  if (duration_ns < 0 || duration_ns > SLEEPACC_MAX_DURATION_NS) return -EINVAL;
  return w->method->wait(w, duration_ns, deadline_ns);
}

/* Close what open acquired; a closed (or never opened) waiter is left alone. */
void sleepacc_waiter_close(sleepacc_waiter *w) {
  if (!w || !w->method) return;
  if (w->method->close) w->method->close(w);
  w->method = NULL;
  w->fd = -1;
  w->aux_fd = -1;
}
