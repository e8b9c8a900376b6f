/* test_runs.c -- one run as a binding measures it (measure.c):
 * the block the core states, open/chunk/close, the block's layout after
 * close, the first failure kept, and the one wording of a failed run.
 * Invariants only, never tight timings. */
#include "check.h"
#include "sleepacc_binding.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static sleepacc_run run; /* large: keep it off the stack */
static int64_t block[3 * 4096], before[2 * 4096], sorted[4096];
static char words[SLEEPACC_RUN_WORDS_MAX];

static sleepacc_config cfg_for(const char *method, int64_t d, int64_t n, int64_t budget) {
  sleepacc_config c;
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find(method);
  c.duration_ns = d;
  c.n = n;
  c.budget_ns = budget;
  return c;
}

/* 1 when words is "<name>: <the core's message of name> <context>". */
static int said(const char *name, const char *context) {
  char want[SLEEPACC_RUN_WORDS_MAX];
  int err = 0;
  for (int e = 1; e < 200 && !err; e++)
    if (!strcmp(sleepacc_errname(-e), name)) err = -e;
  snprintf(want, sizeof want, "%s: %s %s", name, sleepacc_strerror(err), context);
  return strcmp(words, want) == 0;
}

/* Open, chunk until done, close: the record, *used bytes at the front. */
static int run_all(const sleepacc_config *c, int flags, sleepacc_result *res, size_t *used) {
  size_t size = sleepacc_run_memory(c, flags);
  int rc = sleepacc_run_open(&run, c, size ? block : NULL, size, flags);
  for (int i = 0; rc == 0 && i < 100000 && sleepacc_run_chunk(&run) != 1; i++) continue;
  return sleepacc_run_close(&run, res, used);
}

static void test_memory(void) {
  sleepacc_config c = cfg_for("clock", 0, 10, 0);
  CHECK(sleepacc_run_memory(&c, 0) == 10 * 8 * 2);
  CHECK(sleepacc_run_memory(&c, SLEEPACC_RUN_STARTS) == 10 * 8 * 3);
  c.keep_samples = 0; /* streaming: the histogram only */
  CHECK(sleepacc_run_memory(&c, SLEEPACC_RUN_STARTS) == 0);
  c = cfg_for("nanosleep", 1000000, 0, 20000000); /* a budget: ceil(20 ms / 1 ms) + 1 */
  CHECK(sleepacc_run_memory(&c, 0) == (size_t)sleepacc_config_capacity(&c) * 16);
  CHECK(sleepacc_config_capacity(&c) == 21);
  c.duration_ns = -1; /* a broken rule: nothing to allocate, open says why */
  CHECK(sleepacc_run_memory(&c, SLEEPACC_RUN_STARTS) == 0);
  CHECK(sleepacc_run_memory(NULL, 0) == 0);
}

/* The samples keep their order (the statistics sort in the scratch), the
 * start times follow them, the record's stats are the exact ones. */
static void test_layout_and_record(void) {
  sleepacc_config c = cfg_for("nanosleep", 100000, 0, 20000000); /* cap 201, n fewer */
  int64_t cap = sleepacc_config_capacity(&c), n;
  size_t size = sleepacc_run_memory(&c, SLEEPACC_RUN_STARTS), used = 1;
  sleepacc_result res;
  sleepacc_stats st;
  CHECK(sleepacc_run_open(&run, &c, block, size, SLEEPACC_RUN_STARTS) == 0);
  for (int i = 0; i < 100000 && sleepacc_run_chunk(&run) != 1; i++) continue;
  n = sleepacc_run_count(&run);
  CHECKF(n >= 1 && n < cap, "n %lld cap %lld", (long long)n, (long long)cap);
  memcpy(before, block, (size_t)n * 8);                   /* samples, in order */
  memcpy(before + n, block + cap, (size_t)n * 8);         /* their start times */
  CHECK(sleepacc_run_close(&run, &res, &used) == 0);
  CHECK(used == (size_t)n * 16 && res.n == n && res.stats.n == n);
  CHECK(memcmp(before, block, (size_t)n * 16) == 0);      /* samples, then starts, at the front */
  for (int64_t i = 0; i < n; i++) CHECK(block[i] >= 100000); /* a kernel sleep never ends early */
  for (int64_t i = 1; i < n; i++) CHECK(block[n + i] - block[n + i - 1] >= block[i - 1]);
  CHECK(sleepacc_stats_compute(before, (size_t)n, 100000, sorted, &st) == 0);
  CHECK(st.median == res.stats.median && st.p99 == res.stats.p99 && st.max == res.stats.max &&
        st.min == res.stats.min);
  CHECK(strcmp(res.method, "nanosleep") == 0 && res.requested_ns == 100000);
  CHECK(sleepacc_run_words(&run, 0, words, sizeof words) == 0 && words[0] == '\0');
  /* without start times: the samples alone at the front */
  c = cfg_for("clock", 0, 50, 0);
  CHECK(run_all(&c, 0, &res, &used) == 0 && used == 50 * 8 && res.n == 50);
  for (int i = 0; i < 50; i++) CHECK(block[i] >= 0);
  /* streaming: no block at all */
  c.keep_samples = 0;
  CHECK(run_all(&c, SLEEPACC_RUN_STARTS, &res, &used) == 0 && used == 0 && res.n == 50);
  CHECK(res.stats.n == 50 && res.stream_stats.n == 50);
}

static volatile sig_atomic_t alarms;
static void on_alarm(int sig) { (void)sig; alarms++; }

/* A signal interrupting a sleep is "call again", never a failure. */
static void test_chunk_resumes_after_eintr(void) {
  struct sigaction sa, old;
  struct itimerval it;
  sleepacc_config c = cfg_for("nanosleep", 100000000, 2, 0);
  sleepacc_result res;
  size_t size = sleepacc_run_memory(&c, 0);
  int rc, chunks = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGALRM, &sa, &old);
  memset(&it, 0, sizeof it);
  it.it_value.tv_usec = 30000; /* one shot, 30 ms into the first sleep */
  CHECK(sleepacc_run_open(&run, &c, block, size, 0) == 0);
  setitimer(ITIMER_REAL, &it, NULL);
  while ((rc = sleepacc_run_chunk(&run)) == 0 && chunks < 1000) chunks++;
  sigaction(SIGALRM, &old, NULL);
  CHECK(rc == 1 && alarms == 1 && chunks >= 1);
  CHECK(sleepacc_run_close(&run, &res, NULL) == 0 && res.n == 2 && res.stats.min >= 100000000);
}

static int yes(void) { return 1; }
static int fail_open(sleepacc_waiter *w) { (void)w; return -EMFILE; }
static int nowait(sleepacc_waiter *w, int64_t d, int64_t dl) { (void)w; (void)d; (void)dl; return 0; }
static int wait_fails(sleepacc_waiter *w, int64_t d, int64_t dl) {
  (void)w; (void)d; (void)dl;
  return -EBADF;
}

/* The first failure is kept, close returns it, the words say where. */
static void test_failures_and_words(void) {
  sleepacc_method opens = {"fails_open", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "x",
                           yes, fail_open, NULL, nowait};
  sleepacc_method waits = {"fails_wait", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "x",
                           yes, NULL, NULL, wait_fails};
  sleepacc_config c = cfg_for("nanosleep", 1000, 3, 0);
  sleepacc_result res;
  size_t size = sleepacc_run_memory(&c, SLEEPACC_RUN_STARTS), used = 7;
  /* the binding's allocation failed */
  CHECK(sleepacc_run_open(&run, &c, NULL, size, SLEEPACC_RUN_STARTS) == -ENOMEM);
  CHECK(sleepacc_run_chunk(&run) == 1);
  CHECK(sleepacc_run_close(&run, &res, &used) == -ENOMEM && used == 0);
  CHECK(sleepacc_run_words(&run, 0, words, sizeof words) == 0);
  CHECKF(said("ENOMEM", "(allocating the block of the samples)"), "%s", words);
  CHECK(sleepacc_run_open(&run, &c, block, size - 8, SLEEPACC_RUN_STARTS) == -EINVAL);
  CHECK(sleepacc_run_close(&run, &res, NULL) == -EINVAL);
  /* a broken rule: its option and the core's words */
  c.duration_ns = -1;
  CHECK(sleepacc_run_open(&run, &c, block, sizeof block, 0) == -EINVAL);
  CHECK(sleepacc_run_close(&run, &res, NULL) == -EINVAL);
  sleepacc_run_words(&run, 0, words, sizeof words);
  CHECKF(said("EINVAL", "(duration: must be non-negative)"), "%s", words);
  /* the method could not be opened; then the same with the point */
  c = cfg_for("nanosleep", 1000, 3, 0);
  c.method = &opens;
  CHECK(sleepacc_run_open(&run, &c, block, sizeof block, 0) == -EMFILE);
  CHECK(sleepacc_run_close(&run, &res, NULL) == -EMFILE);
  sleepacc_run_words(&run, 0, words, sizeof words);
  CHECKF(said("EMFILE", "(opening the method)"), "%s", words);
  sleepacc_run_words(&run, SLEEPACC_RUN_POINT, words, sizeof words);
  CHECKF(said("EMFILE", "(opening the method, method fails_open, duration 1000 ns)"), "%s", words);
  /* a step failed: the chunks end, close restores and returns it */
  c.method = &waits;
  c.env.slack_ns = 4321;
  CHECK(sleepacc_run_open(&run, &c, block, sizeof block, 0) == 0);
  CHECK(sleepacc_current_slack() == 4321);
  CHECK(sleepacc_run_chunk(&run) == 1 && sleepacc_run_chunk(&run) == 1);
  CHECK(sleepacc_run_close(&run, &res, NULL) == -EBADF);
  CHECK(sleepacc_current_slack() != 4321);
  CHECK(sleepacc_run_close(&run, &res, NULL) == -EBADF); /* twice: the same */
  sleepacc_run_words(&run, 0, words, sizeof words);
  CHECKF(said("EBADF", "(measuring)"), "%s", words);
  /* the words are cut to fit, always terminated */
  CHECK(sleepacc_run_words(&run, 0, words, 5) == 0 && !strcmp(words, "EBAD"));
  CHECK(sleepacc_run_words(NULL, 0, words, sizeof words) == 0 && words[0] == '\0');
  CHECK(sleepacc_run_open(NULL, &c, NULL, 0, 0) == -EINVAL);
  CHECK(sleepacc_run_close(NULL, &res, NULL) == -EINVAL && sleepacc_run_chunk(NULL) == 1);
  CHECK(sleepacc_run_close(&run, NULL, NULL) == -EINVAL);
}

/* Refusals for privileges, in a child that drops to nobody (root only):
 * FIFO refused by the kernel (the core's explanation, a privilege), IDLE
 * refused up front (the core's reason and what was asked), nothing changed. */
/* sleepacc_chunks, the one chunk protocol of both bindings' runners: a
 * scripted step (its return codes in order) and a checkpoint that counts
 * its calls and stops at a given one. */
typedef struct script {
  const int *codes;
  int at, checks, stop_at;
} script;

static int scripted_step(void *arg) {
  script *s = (script *)arg;
  return s->codes[s->at++];
}

static int counting_checkpoint(void *ctx) {
  script *s = (script *)ctx;
  return ++s->checks == s->stop_at;
}

static void test_chunks_protocol(void) {
  static const int done[] = {0, -EINTR, 0, 1}, near[] = {0, SLEEPACC_NEAR, 0},
                   fails[] = {-EINTR, -ENOMEM, 1}, odd[] = {7, 1}, stops[] = {0, 0, 0, 1};
  script s = {done, 0, 0, 0};
  /* 0 and -EINTR call again, a checkpoint between chunks, none after the last */
  CHECK(sleepacc_chunks(scripted_step, &s, counting_checkpoint, &s) == 0 && s.at == 4 && s.checks == 3);
  s = (script){near, 0, 0, 0};
  CHECK(sleepacc_chunks(scripted_step, &s, counting_checkpoint, &s) == SLEEPACC_NEAR && s.at == 2);
  s = (script){fails, 0, 0, 0};
  CHECK(sleepacc_chunks(scripted_step, &s, counting_checkpoint, &s) == -ENOMEM && s.at == 2);
  s = (script){odd, 0, 0, 0};
  CHECK(sleepacc_chunks(scripted_step, &s, NULL, NULL) == -EINVAL && s.at == 1);
  s = (script){stops, 0, 0, 2}; /* the checkpoint stops it at its second call */
  CHECK(sleepacc_chunks(scripted_step, &s, counting_checkpoint, &s) == -ECANCELED && s.at == 2);
  CHECK(sleepacc_chunks(NULL, &s, NULL, NULL) == -EINVAL);
  CHECK(strcmp(sleepacc_errname(-ECANCELED), "ECANCELED") == 0);
}

static void test_refusal_words_unprivileged(void) {
  pid_t pid;
  int st = 0;
  if (geteuid() != 0) {
    printf("  skip: needs root to drop to nobody\n");
    return;
  }
  if ((pid = fork()) == 0) {
    struct rlimit none = {0, 0};
    sleepacc_config c = cfg_for("nanosleep", 100000, 3, 0);
    sleepacc_result res;
    int bad = 0;
    int64_t slack;
    setrlimit(RLIMIT_RTPRIO, &none);
    setrlimit(RLIMIT_NICE, &none);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(99);
    slack = sleepacc_current_slack();
    c.env.slack_ns = 1000;
    c.env.policy = SLEEPACC_POLICY_FIFO;
    c.env.priority = 3;
    if (sleepacc_run_open(&run, &c, block, sizeof block, 0) != -EPERM) bad |= 1;
    if (sleepacc_run_close(&run, &res, NULL) != -EPERM || sleepacc_current_slack() != slack) bad |= 2;
    if (sleepacc_run_words(&run, SLEEPACC_RUN_POINT, words, sizeof words) != 1 ||
        !said("EPERM", "(policy='fifo' (priority 3) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE "
                       "allowance, method nanosleep, duration 100000 ns)"))
      bad |= 4;
    c.env.policy = SLEEPACC_POLICY_IDLE;
    c.env.priority = 0;
    if (sleepacc_run_open(&run, &c, block, sizeof block, 0) != -EPERM) bad |= 8;
    if (sleepacc_run_words(&run, 0, words, sizeof words) != 1 ||
        !said("EPERM", "(policy: SCHED_IDLE could not be left again without CAP_SYS_NICE or an "
                       "RLIMIT_NICE covering the thread's nice value; nothing was changed; asked: "
                       "policy='idle', priority 0)"))
      bad |= 16;
    if (sleepacc_current_slack() != slack) bad |= 32;
    if (bad) fprintf(stderr, "  words: %s\n", words);
    _exit(bad);
  }
  waitpid(pid, &st, 0);
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", WEXITSTATUS(st));
}

int main(void) {
  TEST(test_memory);
  TEST(test_layout_and_record);
  TEST(test_chunk_resumes_after_eintr);
  TEST(test_failures_and_words);
  TEST(test_chunks_protocol);
  TEST(test_refusal_words_unprivileged);
  return check_summary();
}
