/* test_host.c -- host facts: the list is well formed, the facts the issue
 * requires are filled on this machine, a short cap truncates cleanly and
 * bad arguments are refused.  Prints the facts (a record of the host). */
#include "check.h"
#include "sleepacc.h"

#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <time.h>

static const sleepacc_fact *find(const sleepacc_fact *f, size_t n, const char *key)
{
  for (size_t i = 0; i < n; i++)
    if (f[i].key && strcmp(f[i].key, key) == 0)
      return &f[i];
  return NULL;
}

static void test_facts_well_formed(void)
{
  sleepacc_fact f[SLEEPACC_MAX_FACTS];
  size_t n = 12345;
  CHECK(sleepacc_host_facts(f, SLEEPACC_MAX_FACTS, &n) == 0);
  CHECK(n > 0 && n <= SLEEPACC_MAX_FACTS);
  for (size_t i = 0; i < n; i++) {
    CHECKF(f[i].key && f[i].key[0], "fact %zu has no key", i);
    if (!f[i].key)
      continue;
    CHECKF(f[i].type == SLEEPACC_FACT_UNKNOWN || f[i].type == SLEEPACC_FACT_INT ||
               f[i].type == SLEEPACC_FACT_STR || f[i].type == SLEEPACC_FACT_REAL,
           "%s: type %d", f[i].key, f[i].type);
    CHECKF(memchr(f[i].s, '\0', sizeof f[i].s) != NULL, "%s: not NUL-terminated", f[i].key);
    for (size_t j = 0; j < i; j++)
      CHECKF(!f[j].key || strcmp(f[i].key, f[j].key) != 0, "duplicate key %s", f[i].key);
    if (f[i].type == SLEEPACC_FACT_INT)
      printf("  %-24s %lld\n", f[i].key, (long long)f[i].i);
    else if (f[i].type == SLEEPACC_FACT_REAL)
      printf("  %-24s %g\n", f[i].key, f[i].d);
    else if (f[i].type == SLEEPACC_FACT_STR)
      printf("  %-24s %s\n", f[i].key, f[i].s);
    else
      printf("  %-24s (unknown)\n", f[i].key);
  }
}

static void test_required_facts(void)
{
  sleepacc_fact f[SLEEPACC_MAX_FACTS];
  size_t n = 0;
  CHECK(sleepacc_host_facts(f, SLEEPACC_MAX_FACTS, &n) == 0);

  /* every key the issue names is present (known or not) */
  static const char *const keys[] = {
    "kernel_release", "kernel_version", "preempt_model", "clocksource",
    "clocksources_available", "hz", "hz_source", "high_res_timers", "nohz",
    "timer_slack_ns", "cpu_model", "cpus_online", "cpus_isolated", "cpufreq_governor",
    "cpuidle_driver", "cpuidle_states", "virtualization", "rt_runtime_us", "rt_period_us",
    "cmdline", "loadavg_1m", "sched_policy", "guest_halt_poll_ns"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    CHECKF(find(f, n, keys[i]) != NULL, "missing key %s", keys[i]);

  /* the haltpoll governor's polling time: the file's value where it is readable */
  long long poll = 0;
  const sleepacc_fact *gp = find(f, n, "guest_halt_poll_ns");
  FILE *pf = fopen("/sys/module/haltpoll/parameters/guest_halt_poll_ns", "r");
  int have = pf && fscanf(pf, "%lld", &poll) == 1;
  if (pf)
    fclose(pf);
  if (gp && have)
    CHECKF(gp->type == SLEEPACC_FACT_INT && gp->i == poll, "guest_halt_poll_ns %lld, file %lld",
           (long long)gp->i, poll);
  else if (gp)
    CHECK(gp->type == SLEEPACC_FACT_UNKNOWN);

  /* the issue: clocksource and HZ are read or estimated on this machine */
  const sleepacc_fact *cs = find(f, n, "clocksource");
  CHECK(cs && cs->type == SLEEPACC_FACT_STR && cs->s[0]);
  const sleepacc_fact *hz = find(f, n, "hz");
  CHECK(hz && hz->type == SLEEPACC_FACT_INT && hz->i >= 24 && hz->i <= 10000);
  const sleepacc_fact *hzs = find(f, n, "hz_source");
  CHECK(hzs && hzs->type == SLEEPACC_FACT_STR &&
        (strcmp(hzs->s, "config") == 0 || strcmp(hzs->s, "coarse_clock_estimate") == 0));
  /* an estimate must agree with the coarse clock it came from */
  struct timespec res;
  if (hzs && strcmp(hzs->s, "coarse_clock_estimate") == 0 && hz &&
      clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
    CHECK(hz->i == (1000000000LL + res.tv_nsec / 2) / res.tv_nsec);

  /* uname and prctl agree with what the facts say */
  struct utsname u;
  CHECK(uname(&u) == 0);
  const sleepacc_fact *rel = find(f, n, "kernel_release");
  CHECK(rel && rel->type == SLEEPACC_FACT_STR && strcmp(rel->s, u.release) == 0);
  const sleepacc_fact *slack = find(f, n, "timer_slack_ns");
  CHECK(slack && slack->type == SLEEPACC_FACT_INT &&
        slack->i == (int64_t)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0));
  const sleepacc_fact *hres = find(f, n, "high_res_timers");
  CHECK(hres && hres->type == SLEEPACC_FACT_STR &&
        (strcmp(hres->s, "yes") == 0 || strcmp(hres->s, "no") == 0));
  const sleepacc_fact *virt = find(f, n, "virtualization");
  CHECK(virt && virt->type == SLEEPACC_FACT_STR);
  const sleepacc_fact *pol = find(f, n, "sched_policy");
  CHECK(pol && pol->type == SLEEPACC_FACT_STR && pol->s[0]);
  /* the timer slack fact follows the thread */
  int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  CHECK(prctl(PR_SET_TIMERSLACK, 12345, 0, 0, 0) == 0);
  CHECK(sleepacc_host_facts(f, SLEEPACC_MAX_FACTS, &n) == 0);
  slack = find(f, n, "timer_slack_ns");
  CHECK(slack && slack->type == SLEEPACC_FACT_INT && slack->i == 12345);
  CHECK(prctl(PR_SET_TIMERSLACK, (unsigned long)old, 0, 0, 0) == 0);
}

static void test_short_cap_and_bad_args(void)
{
  sleepacc_fact all[SLEEPACC_MAX_FACTS], few[3];
  size_t n_all = 0, n = 99;
  CHECK(sleepacc_host_facts(all, SLEEPACC_MAX_FACTS, &n_all) == 0);
  CHECK(sleepacc_host_facts(few, 3, &n) == 0);
  CHECK(n == 3 || n == n_all);
  for (size_t i = 0; i < n && i < n_all; i++)
    CHECK(few[i].key && strcmp(few[i].key, all[i].key) == 0); /* a prefix, same order */
  n = 99;
  CHECK(sleepacc_host_facts(NULL, 0, &n) == 0 && n == 0);
  CHECK(sleepacc_host_facts(NULL, 5, &n) == -EINVAL);
  CHECK(sleepacc_host_facts(all, SLEEPACC_MAX_FACTS, NULL) == -EINVAL);
  /* a cap larger than SLEEPACC_MAX_FACTS is fine */
  static sleepacc_fact big[SLEEPACC_MAX_FACTS + 8];
  CHECK(sleepacc_host_facts(big, SLEEPACC_MAX_FACTS + 8, &n) == 0 && n == n_all);
}

/* loadavg_1m is a number; cmdline is the whole of /proc/cmdline (was cut at 255 bytes). */
static void test_loadavg_number_and_whole_cmdline(void)
{
  static sleepacc_fact f[SLEEPACC_MAX_FACTS];
  size_t n = 0;
  CHECK(sleepacc_host_facts(f, SLEEPACC_MAX_FACTS, &n) == 0);
  const sleepacc_fact *load = find(f, n, "loadavg_1m");
  CHECK(load && load->type == SLEEPACC_FACT_REAL && load->d >= 0.0);
  char want[4096] = "";
  FILE *fp = fopen("/proc/cmdline", "r");
  if (fp) {
    size_t len = fread(want, 1, sizeof want - 1, fp);
    fclose(fp);
    want[len] = '\0';
    while (len && (want[len - 1] == '\n' || want[len - 1] == ' '))
      want[--len] = '\0';
  }
  const sleepacc_fact *cmd = find(f, n, "cmdline");
  if (want[0])
    CHECKF(cmd && cmd->type == SLEEPACC_FACT_STR && strcmp(cmd->s, want) == 0,
           "cmdline: %zu bytes of %zu", cmd ? strlen(cmd->s) : 0, strlen(want));
}

int main(void)
{
  TEST(test_facts_well_formed);
  TEST(test_required_facts);
  TEST(test_short_cap_and_bad_args);
  TEST(test_loadavg_number_and_whole_cmdline);
  return check_summary();
}
