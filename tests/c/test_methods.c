/* test_methods.c -- the method registry, every method, the waiter, clocks
 * and error names.  Invariants only: a sleep never ends early. */
#include "check.h"
#include "sleepacc.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Smallest time the method must wait for a request: the request rounded
 * up to the row's granularity (poll/epoll_wait: whole ms; select: us). */
static int64_t rounded(const sleepacc_method *m, int64_t req) {
  int64_t g = m->granularity_ns > 0 ? m->granularity_ns : 1;
  return (req + g - 1) / g * g;
}

static void test_errors(void) {
  CHECK(strcmp(sleepacc_errname(-EINVAL), "EINVAL") == 0);
  CHECK(strcmp(sleepacc_errname(EPERM), "EPERM") == 0);
  CHECK(strcmp(sleepacc_errname(-ENOSYS), "ENOSYS") == 0);
  CHECK(strcmp(sleepacc_errname(-12345), "EUNKNOWN") == 0);
  CHECK(strcmp(sleepacc_strerror(-EINTR), "interrupted by a signal") == 0);
  CHECK(sleepacc_strerror(-12345) != NULL);
  CHECK(sleepacc_strerror(0) != NULL);
  CHECK(sleepacc_errname(0) != NULL);
}

static void test_clocks(void) {
  for (int id = 0; id < SLEEPACC_CLOCK_COUNT; id++) {
    sleepacc_clock_info info;
    int64_t a = 0, b = 0;
    CHECK(sleepacc_clock_info_get(id, 0, &info) == 0);
    CHECK(info.name != NULL);
    CHECKF(info.resolution_ns > 0, "%s resolution %lld", info.name, (long long)info.resolution_ns);
    CHECKF(info.read_cost_ns >= 0, "%s read cost %lld", info.name, (long long)info.read_cost_ns);
    CHECK(sleepacc_clock_read(id, &a) == 0);
    CHECK(sleepacc_clock_read(id, &b) == 0);
    CHECK(b >= a || id == SLEEPACC_CLOCK_REALTIME);
    printf("  clock %-14s resolution %lld ns, read cost %lld ns\n", info.name,
           (long long)info.resolution_ns, (long long)info.read_cost_ns);
  }
  sleepacc_clock_info info;
  int64_t v;
  CHECK(sleepacc_clock_info_get(-1, 0, &info) == -EINVAL);
  CHECK(sleepacc_clock_info_get(SLEEPACC_CLOCK_COUNT, 0, &info) == -EINVAL);
  CHECK(sleepacc_clock_info_get(0, -5, &info) == -EINVAL);
  CHECK(sleepacc_clock_info_get(0, 0, NULL) == -EINVAL);
  CHECK(sleepacc_clock_read(SLEEPACC_CLOCK_COUNT, &v) == -EINVAL);
  CHECK(sleepacc_clock_read(0, NULL) == -EINVAL);
  int64_t t0 = sleepacc_now_ns();
  sleepacc_cpu_relax();
  CHECK(sleepacc_now_ns() >= t0);
}

static void test_registry(void) {
  size_t n = sleepacc_method_count();
  static const char *const required[] = {
      "select", "pselect", "poll", "ppoll", "epoll_wait", "epoll_pwait2", "usleep",
      "nanosleep", "clock_nanosleep", "clock_nanosleep_abs", "timerfd", "timer_signal",
      "sigtimedwait", "futex", "cond_timedwait", "sched_yield", "spin", "hybrid", "syscall",
      "clock"};
  CHECK(n >= sizeof required / sizeof required[0]);
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    CHECKF(sleepacc_method_find(required[i]) != NULL, "missing row %s", required[i]);
  for (size_t i = 0; i < n; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    CHECK(m && m->name && m->description && m->wait && m->available);
    if (!m) continue;
    CHECK(sleepacc_method_find(m->name) == m); /* names unique */
    CHECK(m->granularity_ns >= 0);
    CHECK(m->absolute == 0 || m->absolute == 1);
    CHECK(strcmp(sleepacc_family_name(m->family), "unknown") != 0);
    CHECK(strcmp(sleepacc_tristate_name(m->honours_slack), "unknown") != 0 ||
          m->honours_slack == SLEEPACC_UNKNOWN);
    int a1 = sleepacc_method_available(m), a2 = sleepacc_method_available(m);
    CHECK(a1 == a2 && (a1 == 0 || a1 == 1));
    printf("  %-20s %-8s gran %-7lld slack %-7s abs %d  %s\n", m->name,
           sleepacc_family_name(m->family), (long long)m->granularity_ns,
           sleepacc_tristate_name(m->honours_slack), m->absolute,
           a1 ? "available" : "UNAVAILABLE");
  }
  CHECK(sleepacc_method_at(n) == NULL);
  CHECK(sleepacc_method_find(NULL) == NULL);
  CHECK(sleepacc_method_find("no_such_method") == NULL);
  CHECK(sleepacc_method_available(NULL) == 0);
  CHECK(strcmp(sleepacc_family_name(SLEEPACC_FAMILY_HYBRID), "hybrid") == 0);
  CHECK(strcmp(sleepacc_family_name((sleepacc_family)42), "unknown") == 0);
  CHECK(strcmp(sleepacc_tristate_name(SLEEPACC_YES), "yes") == 0);
  /* the core's rounding contract for the ms-unit rows */
  CHECK(sleepacc_method_find("poll")->granularity_ns == 1000000);
  CHECK(sleepacc_method_find("epoll_wait")->granularity_ns == 1000000);
  CHECK(sleepacc_method_find("select")->granularity_ns == 1000);
}

/* epoll_pwait2's availability must match what the running kernel says. */
static void test_epoll_pwait2_probe(void) {
  struct epoll_event ev;
  struct timespec ts = {0, 0};
  int fd = epoll_create1(0);
  CHECK(fd >= 0);
  long rc = syscall(441, fd, &ev, 1, &ts, NULL, (size_t)0);
  close(fd);
  CHECK(sleepacc_method_available(sleepacc_method_find("epoll_pwait2")) == (rc >= 0));
}

/* Every available method, through the waiter, at 0, 1 us and 1 ms:
 * non-baseline methods never end before the request (after rounding). */
static void test_every_method_waits(void) {
  static const int64_t reqs[] = {0, 1000, 1000000, 1500};
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    sleepacc_waiter w;
    if (!sleepacc_method_available(m)) {
      CHECK(sleepacc_waiter_open(&w, m, 0) == -ENOSYS);
      continue;
    }
    CHECKF(sleepacc_waiter_open(&w, m, 0) == 0, "%s", m->name);
    for (size_t r = 0; r < sizeof reqs / sizeof reqs[0]; r++) {
      for (int rep = 0; rep < 3; rep++) {
        int64_t t0 = sleepacc_now_ns();
        int rc = sleepacc_waiter_wait(&w, reqs[r], t0 + reqs[r]);
        int64_t t1 = sleepacc_now_ns();
        CHECKF(rc == 0, "%s at %lld: %d", m->name, (long long)reqs[r], rc);
        if (m->family != SLEEPACC_FAMILY_BASELINE)
          CHECKF(t1 - t0 >= rounded(m, reqs[r]), "%s woke early: %lld < %lld", m->name,
                 (long long)(t1 - t0), (long long)rounded(m, reqs[r]));
      }
    }
    sleepacc_waiter_close(&w);
    sleepacc_waiter_close(&w); /* twice is safe */
  }
}

/* poll and epoll_wait never round a nonzero request down to 0 ms. */
static void test_ms_round_up(void) {
  static const char *const names[] = {"poll", "epoll_wait"};
  for (size_t i = 0; i < 2; i++) {
    sleepacc_waiter w;
    const sleepacc_method *m = sleepacc_method_find(names[i]);
    if (!sleepacc_method_available(m)) continue;
    CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
    int64_t t0 = sleepacc_now_ns();
    CHECK(sleepacc_waiter_wait(&w, 1, t0 + 1) == 0);
    CHECKF(sleepacc_now_ns() - t0 >= 1000000, "%s: 1 ns request slept < 1 ms", names[i]);
    sleepacc_waiter_close(&w);
  }
}

static void test_waiter_bad_args(void) {
  sleepacc_waiter w;
  const sleepacc_method *m = sleepacc_method_find("nanosleep");
  CHECK(sleepacc_waiter_open(NULL, m, 0) == -EINVAL);
  CHECK(sleepacc_waiter_open(&w, NULL, 0) == -EINVAL);
  CHECK(sleepacc_waiter_open(&w, m, -1) == -EINVAL);
  CHECK(sleepacc_waiter_wait(NULL, 0, 0) == -EINVAL);
  CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
  CHECK(sleepacc_waiter_wait(&w, -1, 0) == -EINVAL);
  CHECK(sleepacc_waiter_wait(&w, SLEEPACC_MAX_DURATION_NS + 1, 0) == -EINVAL);
  sleepacc_waiter_close(&w);
  CHECK(sleepacc_waiter_wait(&w, 0, 0) == -EINVAL); /* closed */
  sleepacc_waiter_close(NULL);
  /* hybrid: 0 margin means the default */
  CHECK(sleepacc_waiter_open(&w, sleepacc_method_find("hybrid"), 0) == 0);
  CHECK(w.margin_ns == SLEEPACC_DEFAULT_MARGIN_NS);
  sleepacc_waiter_close(&w);
}

/* A method whose open fails leaves nothing open. */
static int fake_open_fail(sleepacc_waiter *w) { (void)w; return -EMFILE; }
static int fake_avail(void) { return 1; }
static int fake_unavail(void) { return 0; }
static int fake_wait(sleepacc_waiter *w, int64_t d, int64_t dl) { (void)w; (void)d; (void)dl; return 0; }

static void test_waiter_open_failure(void) {
  sleepacc_method bad = {"fake", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "fake",
                         fake_avail, fake_open_fail, NULL, fake_wait};
  sleepacc_method gone = {"gone", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "gone",
                          fake_unavail, NULL, NULL, fake_wait};
  sleepacc_waiter w;
  CHECK(sleepacc_waiter_open(&w, &bad, 0) == -EMFILE);
  CHECK(w.method == NULL && w.fd == -1);
  CHECK(sleepacc_waiter_open(&w, &gone, 0) == -ENOSYS);
  CHECK(sleepacc_method_available(&gone) == 0);
}

/* Signal methods leave the caller's mask exactly as it was. */
static void test_signal_mask_restored(void) {
  static const char *const names[] = {"timer_signal", "sigtimedwait"};
  for (size_t i = 0; i < 2; i++) {
    sigset_t before, after;
    sleepacc_waiter w;
    const sleepacc_method *m = sleepacc_method_find(names[i]);
    if (!sleepacc_method_available(m)) continue;
    pthread_sigmask(SIG_SETMASK, NULL, &before);
    CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
    for (int k = 0; k < 20; k++) {
      int64_t t0 = sleepacc_now_ns();
      CHECK(sleepacc_waiter_wait(&w, 10000, t0 + 10000) == 0);
    }
    sleepacc_waiter_close(&w);
    pthread_sigmask(SIG_SETMASK, NULL, &after);
    for (int s = 1; s < SIGRTMAX; s++)
      CHECKF(sigismember(&before, s) == sigismember(&after, s), "%s changed signal %d",
             names[i], s);
    sigset_t pend;
    sigpending(&pend);
    CHECKF(!sigismember(&pend, w.signo), "%s left its signal pending", names[i]);
  }
}

/* timer_signal used from a thread other than the one that opened it. */
static void *other_thread(void *arg) {
  sleepacc_waiter *w = arg;
  int64_t t0 = sleepacc_now_ns();
  int rc = sleepacc_waiter_wait(w, 200000, t0 + 200000);
  int64_t t1 = sleepacc_now_ns();
  return (void *)(intptr_t)(rc == 0 && t1 - t0 >= 200000);
}

static void test_timer_signal_other_thread(void) {
  sleepacc_waiter w;
  pthread_t th;
  void *ok = NULL;
  const sleepacc_method *m = sleepacc_method_find("timer_signal");
  if (!sleepacc_method_available(m)) return;
  CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
  CHECK(pthread_create(&th, NULL, other_thread, &w) == 0);
  pthread_join(th, &ok);
  CHECK(ok != NULL);
  int64_t t0 = sleepacc_now_ns();
  CHECK(sleepacc_waiter_wait(&w, 100000, t0 + 100000) == 0);
  CHECK(sleepacc_now_ns() - t0 >= 100000);
  sleepacc_waiter_close(&w);
}

/* A foreign instance of a method's signal (sent by someone else while the
 * method waits) does not end the wait early. */
static pthread_t main_thread;
static volatile int foreign_signo;
static void on_foreign(int sig) { (void)sig; }
static void *send_foreign(void *arg) {
  (void)arg;
  struct timespec ts = {0, 20000000};
  nanosleep(&ts, NULL);
  pthread_kill(main_thread, foreign_signo);
  return NULL;
}

static void test_foreign_signal_no_early_wake(void) {
  static const char *const names[] = {"timer_signal", "sigtimedwait"};
  for (size_t i = 0; i < 2; i++) {
    sleepacc_waiter w;
    struct sigaction sa, old;
    pthread_t th;
    const sleepacc_method *m = sleepacc_method_find(names[i]);
    if (!sleepacc_method_available(m)) continue;
    CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_foreign; /* never the default action (terminate) */
    sigemptyset(&sa.sa_mask);
    sigaction(w.signo, &sa, &old);
    main_thread = pthread_self();
    foreign_signo = w.signo;
    int64_t t0 = sleepacc_now_ns();
    CHECK(pthread_create(&th, NULL, send_foreign, NULL) == 0);
    int rc = sleepacc_waiter_wait(&w, 100000000, t0 + 100000000);
    int64_t t1 = sleepacc_now_ns();
    pthread_join(th, NULL);
    CHECKF(rc == 0 || rc == -EINTR, "%s: %d", names[i], rc);
    if (rc == 0)
      CHECKF(t1 - t0 >= 100000000, "%s woke early on a foreign signal: %lld ns", names[i],
             (long long)(t1 - t0));
    sleepacc_waiter_close(&w);
    sigaction(w.signo, &old, NULL);
  }
}

/* The spin bound: a spin longer than rt_bound_ns returns -EAGAIN early,
 * and a second call toward the same deadline completes.  The deadline is
 * 50 bounds away: one sched_yield under load can give the CPU away for
 * several ms, and a yield that outlasts the whole wait hits no bound (with
 * 5 bounds, 10 ms, it failed once beside another test run). */
static void test_spin_bound(void) {
  static const char *const names[] = {"spin", "sched_yield", "hybrid"};
  for (size_t i = 0; i < 3; i++) {
    sleepacc_waiter w;
    CHECK(sleepacc_waiter_open(&w, sleepacc_method_find(names[i]), 1000000) == 0);
    w.rt_bound_ns = 2000000;
    int64_t t0 = sleepacc_now_ns(), dl = t0 + 100000000;
    int rc, calls = 0;
    while ((rc = sleepacc_waiter_wait(&w, dl - sleepacc_now_ns() > 0 ? dl - sleepacc_now_ns() : 0,
                                      dl)) == -EAGAIN)
      calls++;
    CHECK(rc == 0);
    CHECKF(calls >= 1 || i == 2, "%s: bound never hit", names[i]);
    CHECK(sleepacc_now_ns() >= dl);
    sleepacc_waiter_close(&w);
  }
}

int main(void) {
  TEST(test_errors);
  TEST(test_clocks);
  TEST(test_registry);
  TEST(test_epoll_pwait2_probe);
  TEST(test_every_method_waits);
  TEST(test_ms_round_up);
  TEST(test_waiter_bad_args);
  TEST(test_waiter_open_failure);
  TEST(test_signal_mask_restored);
  TEST(test_timer_signal_other_thread);
  TEST(test_foreign_signal_no_early_wake);
  TEST(test_spin_bound);
  return check_summary();
}
