/* test_io_uring.c -- the io_uring row (raw syscalls, one ring per thread):
 * it leaves the thread's later waits alone (closing a ring would notify the
 * thread with a task work that ends an interruptible wait with EINTR up to
 * ~20 ms later), an interrupted wait cancels its timeout, a new thread and
 * a forked child get rings of their own. */
#include "check.h"
#include "sleepacc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static const sleepacc_method *uring(void) {
  const sleepacc_method *m = sleepacc_method_find("io_uring");
  return m && sleepacc_method_available(m) ? m : NULL;
}

/* epoll_wait on an empty set for ms: 0 when it timed out, -EINTR when a
 * notification (or signal) ended it. */
static int quiet_wait(int ms) {
  struct epoll_event ev;
  int ep = epoll_create1(EPOLL_CLOEXEC), rc;
  rc = epoll_wait(ep, &ev, 1, ms);
  rc = rc < 0 ? -errno : 0;
  close(ep);
  return rc;
}

static int one_run(const sleepacc_method *m, int64_t d) {
  sleepacc_waiter w;
  int rc = sleepacc_waiter_open(&w, m, 0);
  if (rc == 0) {
    int64_t t0 = sleepacc_now_ns();
    rc = sleepacc_waiter_wait(&w, d, t0 + d);
    if (rc == 0 && sleepacc_now_ns() - t0 < d) rc = -1000; /* woke early */
  }
  sleepacc_waiter_close(&w);
  return rc;
}

/* Open, wait, close, then a quiet 30 ms epoll_wait: never EINTR. */
static void test_close_leaves_thread_alone(void) {
  const sleepacc_method *m = uring();
  if (!m) { printf("  (io_uring not available: skipped)\n"); return; }
  for (int i = 0; i < 5; i++) {
    CHECKF(one_run(m, 100000) == 0, "run %d", i);
    CHECKF(quiet_wait(30) == 0, "a wait after closing io_uring waiter %d ended with EINTR", i);
  }
}

static void on_alarm(int sig) { (void)sig; }

/* A signal ends a long wait with -EINTR; the cancelled timeout then never
 * completes into a later wait of the thread. */
static void test_interrupted_wait_cancels(void) {
  const sleepacc_method *m = uring();
  struct sigaction sa, old;
  struct itimerval it;
  sleepacc_waiter w;
  int64_t t0;
  int rc;
  if (!m) return;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART */
  sigaction(SIGALRM, &sa, &old);
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 5000;
  CHECK(sleepacc_waiter_open(&w, m, 0) == 0);
  t0 = sleepacc_now_ns();
  setitimer(ITIMER_REAL, &it, NULL);
  rc = sleepacc_waiter_wait(&w, 40000000, t0 + 40000000); /* 40 ms, interrupted at 5 */
  CHECKF(rc == -EINTR, "rc %d", rc);
  CHECKF(sleepacc_now_ns() - t0 < 40000000, "the signal did not end the wait");
  /* the removed 40 ms timeout must not complete into this 60 ms wait */
  CHECKF(quiet_wait(60) == 0, "the interrupted timeout notified the thread later");
  /* and the waiter still works toward a new request */
  t0 = sleepacc_now_ns();
  CHECK(sleepacc_waiter_wait(&w, 1000000, t0 + 1000000) == 0);
  CHECK(sleepacc_now_ns() - t0 >= 1000000);
  sleepacc_waiter_close(&w);
  sigaction(SIGALRM, &old, NULL);
}

static void *thread_main(void *arg) {
  *(int *)arg = one_run(uring(), 200000);
  return NULL;
}

/* Threads get their own ring (closed at thread exit); a forked child too. */
static void test_threads_and_fork(void) {
  const sleepacc_method *m = uring();
  pthread_t t;
  int rc = -1, status = 0;
  pid_t pid;
  if (!m) return;
  CHECK(one_run(m, 100000) == 0); /* this thread's ring exists */
  for (int i = 0; i < 3; i++) {
    CHECK(pthread_create(&t, NULL, thread_main, &rc) == 0);
    pthread_join(t, NULL);
    CHECKF(rc == 0, "thread %d: %d", i, rc);
  }
  pid = fork();
  if (pid == 0) _exit(one_run(m, 100000) == 0 && one_run(m, 1000) == 0 ? 0 : 1);
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
  CHECKF(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
  CHECK(one_run(m, 100000) == 0); /* the parent's ring is untouched */
}

int main(void) {
  TEST(test_close_leaves_thread_alone);
  TEST(test_interrupted_wait_cancels);
  TEST(test_threads_and_fork);
  return check_summary();
}
