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

#if defined(SLEEPACC_HAVE_LIBURING) && SLEEPACC_HAVE_LIBURING
#include <liburing.h>
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
  if (fd < 0) return 0;
  rc = syscall(SYS_epoll_pwait2, fd, &ev, 1, &ts, NULL, (size_t)0);
  close(fd);
  return rc >= 0;
}

static int sleepacc__avail_epoll(void) {
  int fd = epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return 0;
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
  if (fd < 0) return 0;
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

/* Per-waiter state of timer_signal, kept in w->priv. */
typedef struct sleepacc__tsig {
  pid_t tid;     /* thread the timer signals */
  int armed;     /* 1 when the timer (in w->timer) exists */
} sleepacc__tsig;

/* The timer_t lives in w->timer itself (no pointer into the waiter, so a
 * waiter may be copied); its signals carry this cookie. */
_Static_assert(sizeof(timer_t) <= sizeof(void *), "timer_t does not fit w->timer");
#define SLEEPACC__TSIG_COOKIE 0x5ACC

static timer_t sleepacc__tsig_timer(const sleepacc_waiter *w) {
  timer_t timer;
  memcpy(&timer, &w->timer, sizeof timer);
  return timer;
}

static int sleepacc__tsig_create(sleepacc_waiter *w) {
  sleepacc__tsig *t = (sleepacc__tsig *)(void *)w->priv;
  struct sigevent sev;
  memset(&sev, 0, sizeof sev);
  sev.sigev_notify = SIGEV_THREAD_ID; /* to this thread only, never the process */
  sev.sigev_signo = w->signo;
  sev.sigev_value.sival_int = SLEEPACC__TSIG_COOKIE;
  sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  timer_t timer;
  if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) return sleepacc__neg_errno();
  memcpy(&w->timer, &timer, sizeof timer);
  t->tid = sev._sigev_un._tid;
  t->armed = 1;
  return 0;
}

static int sleepacc__open_tsig(sleepacc_waiter *w) {
  w->signo = SIGRTMIN + 2;
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
  memset(&w, 0, sizeof w);
  if (sleepacc__open_tsig(&w) != 0) return 0;
  sleepacc__close_tsig(&w);
  return 1;
}

/* Remove any pending instance of signo without waiting. */
static void sleepacc__drain_signal(int signo) {
  sigset_t set;
  struct timespec zero = {0, 0};
  sigemptyset(&set);
  sigaddset(&set, signo);
  while (sigtimedwait(&set, NULL, &zero) == signo) {
  }
}

/* Arm the POSIX timer at the absolute deadline and sigwaitinfo for its
 * signal, with the signal blocked only on this thread during the wait.  On
 * every path the timer is disarmed, no instance stays pending and the
 * caller's signal mask is restored. */
static int sleepacc__wait_tsig(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)d;
  sleepacc__tsig *t = (sleepacc__tsig *)(void *)w->priv;
  sigset_t set, old;
  struct itimerspec its;
  siginfo_t si;
  int rc = 0;
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
    for (;;) {
      int s = sigwaitinfo(&set, &si);
      if (s < 0) {
        rc = sleepacc__neg_errno();
        break;
      }
      /* ours: from a timer, carrying this waiter; a foreign instance of the
       * signal (kill, sigqueue) is consumed and the wait goes on */
      if (si.si_code == SI_TIMER && si.si_value.sival_int == SLEEPACC__TSIG_COOKIE) break;
    }
  }
  if (rc != 0) {
    memset(&its, 0, sizeof its);
    timer_settime(sleepacc__tsig_timer(w), 0, &its, NULL);
    sleepacc__drain_signal(w->signo);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return rc;
}

static int sleepacc__open_sigtimedwait(sleepacc_waiter *w) {
  w->signo = SIGRTMIN + 3;
  return 0;
}

/* sigtimedwait for a signal nobody sends: the timeout is the sleep.  The
 * signal is blocked on this thread only during the call. */
static int sleepacc__wait_sigtimedwait(sleepacc_waiter *w, int64_t d, int64_t dl) {
  sigset_t set, old;
  struct timespec ts = sleepacc__ts(d);
  int rc = 0, s;
  sigemptyset(&set);
  sigaddset(&set, w->signo);
  if ((rc = pthread_sigmask(SIG_BLOCK, &set, &old)) != 0) return -rc;
  for (;;) {
    int64_t left;
    s = sigtimedwait(&set, NULL, &ts);
    if (s < 0) {
      if (errno != EAGAIN) rc = sleepacc__neg_errno();
      break;
    }
    /* someone sent the signal: wait out what is left of the request */
    if ((left = dl - sleepacc_now_ns()) <= 0) break;
    ts = sleepacc__ts(left);
  }
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
#if defined(SLEEPACC_HAVE_LIBURING) && SLEEPACC_HAVE_LIBURING
/* struct io_uring is larger than w->priv, and the ring's queues are kernel
 * mmaps anyway: this is the one row whose open allocates (freed by close).
 * w->priv holds the pointer. */
static struct io_uring *sleepacc__ring(const sleepacc_waiter *w) {
  struct io_uring *ring;
  memcpy(&ring, w->priv, sizeof ring);
  return ring;
}

static int sleepacc__open_uring(sleepacc_waiter *w) {
  struct io_uring *ring = calloc(1, sizeof *ring);
  int rc;
  if (!ring) return -ENOMEM;
  if ((rc = io_uring_queue_init(4, ring, 0)) < 0) {
    free(ring);
    return rc;
  }
  memcpy(w->priv, &ring, sizeof ring);
  return 0;
}

static void sleepacc__close_uring(sleepacc_waiter *w) {
  struct io_uring *ring = sleepacc__ring(w);
  if (ring) {
    io_uring_queue_exit(ring);
    free(ring);
  }
  memset(w->priv, 0, sizeof ring);
}

static int sleepacc__avail_uring(void) {
  sleepacc_waiter w;
  memset(&w, 0, sizeof w);
  if (sleepacc__open_uring(&w) != 0) return 0;
  sleepacc__close_uring(&w);
  return 1;
}

/* IORING_OP_TIMEOUT, relative, then wait for ITS completion: each request
 * carries a sequence number (w->futex_word), so the completion of a timeout
 * left in flight by an earlier EINTR is reaped and skipped, never taken for
 * this one. */
static int sleepacc__wait_uring(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)dl;
  struct io_uring *ring = sleepacc__ring(w);
  struct __kernel_timespec ts;
  struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
  struct io_uring_cqe *cqe;
  uint64_t mine;
  int rc;
  if (!sqe) return -EBUSY;
  ts.tv_sec = d / 1000000000LL;
  ts.tv_nsec = d % 1000000000LL;
  io_uring_prep_timeout(sqe, &ts, 0, 0);
  mine = ++w->futex_word;
  io_uring_sqe_set_data64(sqe, mine);
  if ((rc = io_uring_submit(ring)) < 0) return rc;
  for (;;) {
    uint64_t tag;
    if ((rc = io_uring_wait_cqe(ring, &cqe)) < 0) return rc; /* -EINTR */
    tag = io_uring_cqe_get_data64(cqe);
    rc = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    if (tag == mine) return rc == -ETIME || rc == 0 ? 0 : rc;
  }
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
     "POSIX timer_create(CLOCK_MONOTONIC) to this thread (SIGRTMIN+2), sigwaitinfo()",
     sleepacc__avail_tsig, sleepacc__open_tsig, sleepacc__close_tsig, sleepacc__wait_tsig},
    {"sigtimedwait", SLEEPACC__K, 1, SLEEPACC_YES, 0,
     "sigtimedwait() for a signal never sent (SIGRTMIN+3); the timeout is the sleep",
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
#if defined(SLEEPACC_HAVE_LIBURING) && SLEEPACC_HAVE_LIBURING
    {"io_uring", SLEEPACC__K, 1, SLEEPACC_UNKNOWN, 0,
     "io_uring IORING_OP_TIMEOUT (relative), wait for its completion (opt-in build)",
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

const sleepacc_method *sleepacc_method_at(size_t i) {
  return i < SLEEPACC__NMETHODS ? &sleepacc__methods[i] : NULL;
}

const sleepacc_method *sleepacc_method_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < SLEEPACC__NMETHODS; i++)
    if (strcmp(sleepacc__methods[i].name, name) == 0) return &sleepacc__methods[i];
  return NULL;
}

/* 1 if m works here.  Rows of the table are probed once and cached; a row
 * that is not from the table is probed every time.  NULL -> 0. */
int sleepacc_method_available(const sleepacc_method *m) {
  size_t i;
  int v;
  if (!m || !m->wait) return 0;
  if (m < sleepacc__methods || m >= sleepacc__methods + SLEEPACC__NMETHODS)
    return m->available ? m->available() != 0 : 1;
  i = (size_t)(m - sleepacc__methods);
  v = __atomic_load_n(&sleepacc__probe_cache[i], __ATOMIC_ACQUIRE);
  if (v == 0) {
    v = (!m->available || m->available()) ? 1 : 2;
    __atomic_store_n(&sleepacc__probe_cache[i], v, __ATOMIC_RELEASE);
  }
  return v == 1;
}

static const char *const sleepacc__family_names[] = {"kernel", "spin", "hybrid", "baseline"};

const char *sleepacc_family_name(sleepacc_family f) {
  return (unsigned)f < 4u ? sleepacc__family_names[f] : "unknown";
}

static const char *const sleepacc__tristate_names[] = {"no", "yes", "unknown"};

const char *sleepacc_tristate_name(sleepacc_tristate t) {
  return (unsigned)t < 3u ? sleepacc__tristate_names[t] : "unknown";
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
