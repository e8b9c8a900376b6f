/* test_env.c -- environment control: apply, restore on every path (errors
 * included), EPERM reported, idempotent restore. */
#include "check.h"
#include "sleepacc.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static sleepacc_run run;
static int64_t buf[64];

/* The calling thread's slack, policy, priority and affinity. */
typedef struct snap {
  int64_t slack;
  int policy, priority;
  cpu_set_t cpus;
} snap;

static snap take(void) {
  snap s;
  struct sched_param sp;
  memset(&s, 0, sizeof s);
  s.slack = sleepacc_current_slack();
  s.policy = sched_getscheduler(0);
  sched_getparam(0, &sp);
  s.priority = sp.sched_priority;
  sched_getaffinity(0, sizeof s.cpus, &s.cpus);
  return s;
}

static int same(const snap *a, const snap *b) {
  return a->slack == b->slack && a->policy == b->policy && a->priority == b->priority &&
         CPU_EQUAL(&a->cpus, &b->cpus);
}

static void test_names_and_default(void) {
  sleepacc_env e;
  static const char *const names[] = {"other", "batch", "idle", "fifo", "rr"};
  for (int i = 0; i < 5; i++) {
    CHECK(sleepacc_policy_from_name(names[i]) == i);
    CHECK(strcmp(sleepacc_policy_name(i), names[i]) == 0);
  }
  CHECK(sleepacc_policy_from_name("deadline") == -EINVAL);
  CHECK(sleepacc_policy_from_name(NULL) == -EINVAL);
  CHECK(sleepacc_policy_name(-1) == NULL && sleepacc_policy_name(5) == NULL);
  sleepacc_env_default(&e);
  CHECK(e.slack_ns == -1 && e.policy == SLEEPACC_POLICY_KEEP && e.cpu == -1 &&
        e.lock_memory == 0 && e.dma_latency_us == -1 && e.priority == 0);
  CHECK(sleepacc_env_check(&e) == 0);
  CHECK(sleepacc_current_slack() > 0);
}

static void test_check_rejects(void) {
  sleepacc_env e;
  cpu_set_t set;
  int outside = -1;
#define REJ(expr)                                   \
  do {                                              \
    sleepacc_env_default(&e);                       \
    expr;                                           \
    CHECKF(sleepacc_env_check(&e) == -EINVAL, #expr); \
  } while (0)
  REJ(e.slack_ns = 0);
  REJ(e.slack_ns = -2);
  REJ(e.slack_ns = SLEEPACC_MAX_SLACK_NS + 1);
  REJ(e.policy = -2);
  REJ(e.policy = 5);
  REJ((e.policy = SLEEPACC_POLICY_FIFO, e.priority = 0));
  REJ((e.policy = SLEEPACC_POLICY_RR, e.priority = 100));
  REJ((e.policy = SLEEPACC_POLICY_OTHER, e.priority = 1));
  REJ(e.priority = 3);
  REJ(e.cpu = -2);
  REJ(e.cpu = CPU_SETSIZE);
  REJ(e.lock_memory = -1);
  REJ(e.dma_latency_us = -7);
#undef REJ
  CHECK(sleepacc_env_check(NULL) == -EINVAL);
  /* a cpu that exists in no allowed set */
  sched_getaffinity(0, sizeof set, &set);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (!CPU_ISSET(c, &set)) { outside = c; break; }
  CHECK(outside >= 0);
  sleepacc_env_default(&e);
  e.cpu = outside;
  CHECK(sleepacc_env_check(&e) == -EINVAL);
}

/* Each setting takes effect while applied and is undone by restore. */
static void test_apply_restore(void) {
  snap before = take();
  sleepacc_env e;
  sleepacc_env_saved sv;
  sleepacc_env_default(&e);
  e.slack_ns = 1000;
  e.policy = SLEEPACC_POLICY_BATCH;
  e.cpu = sched_getcpu() >= 0 ? sched_getcpu() : 0;
  CHECK(sleepacc_env_apply(&e, &sv) == 0);
  CHECK(sleepacc_current_slack() == 1000);
  CHECK(sched_getscheduler(0) == SCHED_BATCH);
  cpu_set_t now;
  sched_getaffinity(0, sizeof now, &now);
  CHECK(CPU_COUNT(&now) == 1 && CPU_ISSET(e.cpu, &now));
  CHECK(sleepacc_env_restore(&sv) == 0);
  snap after = take();
  CHECK(same(&before, &after));
  CHECK(sleepacc_env_restore(&sv) == 0); /* idempotent */
  after = take();
  CHECK(same(&before, &after));
  CHECK(sleepacc_env_restore(NULL) == -EINVAL);
  /* an env that changes nothing */
  sleepacc_env_default(&e);
  CHECK(sleepacc_env_apply(&e, &sv) == 0 && sv.applied == 0);
  CHECK(sleepacc_env_restore(&sv) == 0);
  /* bad env: apply refuses and changes nothing */
  e.slack_ns = 0;
  CHECK(sleepacc_env_apply(&e, &sv) == -EINVAL);
  CHECK(sleepacc_env_apply(NULL, &sv) == -EINVAL);
  CHECK(sleepacc_env_apply(&e, NULL) == -EINVAL);
  after = take();
  CHECK(same(&before, &after));
}

/* FIFO/RR with a priority (root here); without CAP_SYS_NICE it is -EPERM. */
static void test_realtime_policy(void) {
  snap before = take();
  sleepacc_env e;
  sleepacc_env_saved sv;
  sleepacc_env_default(&e);
  e.policy = SLEEPACC_POLICY_RR;
  e.priority = 5;
  int rc = sleepacc_env_apply(&e, &sv);
  CHECKF(rc == 0 || rc == -EPERM, "rc %d", rc);
  if (rc == 0) {
    struct sched_param sp;
    sched_getparam(0, &sp);
    CHECK(sched_getscheduler(0) == SCHED_RR && sp.sched_priority == 5);
    CHECK(sleepacc_env_restore(&sv) == 0);
  }
  snap after = take();
  CHECK(same(&before, &after));
}

/* Memory locking and the DMA-latency request are held, then released. */
static void test_mlock_and_dma(void) {
  sleepacc_env e;
  sleepacc_env_saved sv;
  sleepacc_env_default(&e);
  e.dma_latency_us = 0;
  int rc = sleepacc_env_apply(&e, &sv);
  if (access("/dev/cpu_dma_latency", W_OK) == 0) {
    CHECK(rc == 0);
    CHECK(sv.dma_fd >= 0);
    CHECK(sleepacc_env_restore(&sv) == 0);
    CHECK(sv.dma_fd == -1);
  } else {
    CHECKF(rc < 0, "apply without a writable /dev/cpu_dma_latency returned %d", rc);
  }
#if defined(__SANITIZE_ADDRESS__)
  /* mlockall(MCL_CURRENT) would try to lock ASan's terabytes of shadow map */
  printf("  mlockall not exercised under AddressSanitizer (shadow memory)\n");
#else
  sleepacc_env_default(&e);
  e.lock_memory = 1;
  rc = sleepacc_env_apply(&e, &sv);
  CHECKF(rc == 0 || rc == -EPERM || rc == -ENOMEM, "rc %d", rc);
  if (rc == 0) {
    /* a second mlockall must still work; munlockall undoes it at restore */
    CHECK(sleepacc_env_restore(&sv) == 0);
    CHECK(sv.applied == 0);
  }
#endif
}

/* A failure part-way through apply restores what was already applied:
 * slack + affinity applied, then FIFO refused (unprivileged child). */
static void test_partial_failure_unprivileged(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int bad = 0;
    struct rlimit rl = {0, 0};
    setrlimit(RLIMIT_RTPRIO, &rl); /* no real-time priority without privilege */
    if (getuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
    if (getuid() == 0) _exit(3);
    snap before = take();
    sleepacc_env e;
    sleepacc_env_saved sv;
    sleepacc_env_default(&e);
    e.slack_ns = 12345;
    e.policy = SLEEPACC_POLICY_FIFO;
    e.priority = 10;
    if (sleepacc_env_apply(&e, &sv) != -EPERM) bad |= 1;
    snap after = take();
    if (!same(&before, &after)) bad |= 2;
    /* the same through run_start: EPERM, nothing changed */
    sleepacc_config c;
    memset(&c, 0, sizeof c);
    c.method = sleepacc_method_find("nanosleep");
    c.duration_ns = 1000;
    c.n = 3;
    c.env = e;
    if (sleepacc_run_start(&run, &c, buf, 64) != -EPERM) bad |= 4;
    if (sleepacc_run_finish(&run) != 0) bad |= 8;
    after = take();
    if (!same(&before, &after)) bad |= 16;
    /* SCHED_IDLE could not be left again without CAP_SYS_NICE or an
     * RLIMIT_NICE that covers our nice value: refused, nothing changed */
    rl.rlim_cur = rl.rlim_max = 0;
    setrlimit(RLIMIT_NICE, &rl);
    sleepacc_env_default(&e);
    e.policy = SLEEPACC_POLICY_IDLE;
    if (sleepacc_env_apply(&e, &sv) != -EPERM) bad |= 32;
    after = take();
    if (!same(&before, &after) || sched_getscheduler(0) != SCHED_OTHER) bad |= 64;
    _exit(bad);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", WEXITSTATUS(st));
}

/* In a forked child that makes itself FIFO 50 first
 * (skipped when the kernel refuses): (a) as root, policy OTHER with slack
 * 1000 runs with that slack (set after the policy, which resets it) and
 * restore gives back FIFO 50 and the RT slack; (b) without privilege
 * (RLIMIT_RTPRIO 0, uid nobody) OTHER and a lower FIFO priority are refused
 * up front with -EPERM, bad_field "policy" / "priority", nothing changed. */
static void test_rt_caller(void) {
  pid_t pid = fork();
  CHECK(pid >= 0);
  if (pid == 0) {
    int bad = 0;
    struct sched_param sp = {.sched_priority = 50};
    struct rlimit rl = {0, 0};
    sleepacc_env e;
    sleepacc_env_saved sv;
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) _exit(77);
    snap before = take();
    sleepacc_env_default(&e);
    e.policy = SLEEPACC_POLICY_OTHER;
    e.slack_ns = 1000;
    if (sleepacc_env_apply(&e, &sv) != 0) bad |= 1;
    if (sleepacc_current_slack() != 1000 || sched_getscheduler(0) != SCHED_OTHER) bad |= 2;
    if (sleepacc_env_restore(&sv) != 0) bad |= 4;
    snap after = take();
    if (!same(&before, &after)) bad |= 8;
    setrlimit(RLIMIT_RTPRIO, &rl);
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(bad | 64);
    sleepacc_env_default(&e);
    e.policy = SLEEPACC_POLICY_OTHER;
    e.slack_ns = 1000;
    if (sleepacc_env_apply(&e, &sv) != -EPERM || !sv.bad_field ||
        strcmp(sv.bad_field, "policy") != 0 || !sv.why)
      bad |= 16;
    e.policy = SLEEPACC_POLICY_FIFO;
    e.priority = 5;
    if (sleepacc_env_apply(&e, &sv) != -EPERM || !sv.bad_field ||
        strcmp(sv.bad_field, "priority") != 0)
      bad |= 32;
    after = take();
    if (!same(&before, &after)) bad |= 8;
    e.priority = 50; /* the same policy and priority: nothing to undo, allowed */
    if (sleepacc_env_apply(&e, &sv) != 0 || sleepacc_env_restore(&sv) != 0) bad |= 128;
    _exit(bad);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
    printf("  skip: the kernel refused SCHED_FIFO 50 for the child\n");
    return;
  }
  CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", WEXITSTATUS(st));
}

/* bad_field of a rejected env names the field. */
static void test_check_field(void) {
  sleepacc_env e;
  const char *f = "x";
  sleepacc_env_default(&e);
  CHECK(sleepacc_env_check_field(&e, &f) == 0 && f == NULL);
  e.slack_ns = 0;
  CHECK(sleepacc_env_check_field(&e, &f) == -EINVAL && strcmp(f, "slack_ns") == 0);
  sleepacc_env_default(&e);
  e.policy = SLEEPACC_POLICY_FIFO;
  CHECK(sleepacc_env_check_field(&e, &f) == -EINVAL && strcmp(f, "priority") == 0);
  sleepacc_env_default(&e);
  e.dma_latency_us = -5;
  CHECK(sleepacc_env_check_field(&e, &f) == -EINVAL && strcmp(f, "dma_latency_us") == 0);
  sleepacc_env_saved sv;
  sleepacc_env_default(&e);
  e.cpu = -7;
  CHECK(sleepacc_env_apply(&e, &sv) == -EINVAL && sv.bad_field && strcmp(sv.bad_field, "cpu") == 0);
}

static int fail_open(sleepacc_waiter *w) { (void)w; return -EMFILE; }
static int yes(void) { return 1; }
static int nowait(sleepacc_waiter *w, int64_t d, int64_t dl) { (void)w; (void)d; (void)dl; return 0; }
static int wait_fails(sleepacc_waiter *w, int64_t d, int64_t dl) { (void)w; (void)d; (void)dl; return -EBADF; }

/* run_start fails AFTER the environment was applied (the waiter cannot
 * open): the environment is restored; a run whose wait fails mid-way is
 * restored by finish. */
static void test_run_failure_restores(void) {
  snap before = take();
  sleepacc_method m = {"fails_open", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "x",
                       yes, fail_open, NULL, nowait};
  sleepacc_config c;
  memset(&c, 0, sizeof c);
  c.method = &m;
  c.duration_ns = 1000;
  c.n = 3;
  sleepacc_env_default(&c.env);
  c.env.slack_ns = 777;
  c.env.policy = SLEEPACC_POLICY_BATCH;
  c.env.cpu = 0;
  CHECK(sleepacc_run_start(&run, &c, buf, 64) == -EMFILE);
  snap after = take();
  CHECK(same(&before, &after));
  CHECK(sleepacc_run_finish(&run) == 0);

  sleepacc_method m2 = {"fails_wait", SLEEPACC_FAMILY_KERNEL, 1, SLEEPACC_NO, 0, "x",
                        yes, NULL, NULL, wait_fails};
  c.method = &m2;
  CHECK(sleepacc_run_start(&run, &c, buf, 64) == 0);
  CHECK(sleepacc_current_slack() == 777);
  CHECK(sleepacc_run_step(&run) == -EBADF);
  CHECK(sleepacc_run_finish(&run) == 0);
  CHECK(sleepacc_run_finish(&run) == 0);
  after = take();
  CHECK(same(&before, &after));
  CHECK(sleepacc_measure(&c, buf, 64, &run) == -EBADF);
  after = take();
  CHECK(same(&before, &after));

  /* and a normal run with every setting */
  c.method = sleepacc_method_find("clock_nanosleep");
  c.env.policy = SLEEPACC_POLICY_FIFO;
  c.env.priority = 2;
  int rc = sleepacc_measure(&c, buf, 64, &run);
  CHECK(rc == 0 || rc == -EPERM);
  after = take();
  CHECK(same(&before, &after));
}

/* The cause of a SCHED_FIFO refused to root: the thread's cpu cgroup with
 * cpu.rt_runtime_us 0 is found and named (env.c's sentence), a group with
 * RT time or another hierarchy's 0 is not; over a made-up tree. */
int sleepacc__rt_group_words(const char *cgroup_file, const char *root, char *buf, size_t cap);
static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) fputs(text, f), fclose(f);
}
static void test_rt_group_words(void) {
  char dir[] = "/tmp/sleepacc-rtgroup-XXXXXX", p[256], q[256], words[512];
  if (!mkdtemp(dir)) return;
  snprintf(p, sizeof p, "%s/cpu,cpuacct", dir), mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/cpu,cpuacct/grp", dir), mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/memory", dir), mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/memory/grp", dir), mkdir(p, 0700);
  snprintf(p, sizeof p, "%s/memory/grp/cpu.rt_runtime_us", dir), put(p, "0\n");
  snprintf(q, sizeof q, "%s/cgroup", dir);
  put(q, "7:memory:/grp\n4:cpu,cpuacct:/grp\n0::/\n");
  snprintf(p, sizeof p, "%s/cpu,cpuacct/grp/cpu.rt_runtime_us", dir), put(p, "950000\n");
  CHECK(sleepacc__rt_group_words(q, dir, words, sizeof words) == 0); /* RT time: not the cause */
  put(p, "0\n");
  CHECK(sleepacc__rt_group_words(q, dir, words, sizeof words) == 1);
  snprintf(p, sizeof p, "%s/cpu,cpuacct/grp has cpu.rt_runtime_us 0", dir);
  CHECKF(strstr(words, p) != NULL, "%s", words);
  put(q, "7:memory:/grp\n"); /* no cpu hierarchy: the memory one's file is not read */
  CHECK(sleepacc__rt_group_words(q, dir, words, sizeof words) == 0);
  CHECK(sleepacc__rt_group_words("/nonexistent/cgroup", dir, words, sizeof words) == 0);
  snprintf(p, sizeof p, "rm -rf %s", dir);
  if (system(p) != 0) fprintf(stderr, "  could not remove %s\n", dir);
}

int main(void) {
  TEST(test_rt_group_words);
  TEST(test_names_and_default);
  TEST(test_check_rejects);
  TEST(test_apply_restore);
  TEST(test_realtime_policy);
  TEST(test_mlock_and_dma);
  TEST(test_partial_failure_unprivileged);
  TEST(test_run_failure_restores);
  TEST(test_rt_caller);
  TEST(test_check_field);
  return check_summary();
}
