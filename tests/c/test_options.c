/* test_options.c -- the core's option list (csrc/options.c): every row
 * fills a real config field of its kind, a core field maps back to its
 * option, and the seconds -> ns conversion rounds and saturates. */
#include "check.h"
#include "sleepacc_binding.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static void test_rows(void) {
  const sleepacc_option *o = sleepacc_options;
  size_t n = 0;
  CHECK(!strcmp(o[0].name, "method") && o[0].offset == offsetof(sleepacc_config, method));
  CHECK(!strcmp(o[1].name, "duration") && o[1].offset == offsetof(sleepacc_config, duration_ns));
  for (; o->name; o++, n++) {
    CHECKF(o->offset < sizeof(sleepacc_config), "%s", o->name);
    CHECKF(!strcmp(sleepacc_option_of_field(o->field), o->name), "%s", o->name);
  }
  CHECK(n == SLEEPACC_OPTION_COUNT);
}

static void test_bad_fields_name_options(void) {
  sleepacc_config c;
  const char *field = NULL;
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find("nanosleep");
  c.duration_ns = 1000;
  c.env.dma_latency_us = SLEEPACC_MAX_DMA_LATENCY_US + 1;
  CHECK(sleepacc_config_check(&c, &field) < 0 && field);
  CHECKF(field && !strcmp(sleepacc_option_of_field(field), "dma_latency"), "%s", field);
  c.env.dma_latency_us = -1;
  c.duration_ns = -5;
  CHECK(sleepacc_config_check(&c, &field) < 0 && field && !strcmp(sleepacc_option_of_field(field), "duration"));
  CHECK(!strcmp(sleepacc_option_of_field("no_such_field"), "no_such_field"));
  CHECK(sleepacc_option_of_field(NULL) == NULL);
}

static void test_sleeper_fields_name_options(void) {
  sleepacc_sleeper_config c;
  const char *field = NULL, *msg = NULL;
  for (const sleepacc_option *o = sleepacc_sleeper_options; o->name; o++) {
    CHECKF(o->offset < sizeof c, "%s", o->name);
    CHECKF(!strcmp(sleepacc_option_of_field(o->field), o->name), "%s", o->name);
  }
  sleepacc_sleeper_config_default(&c);
  CHECK(sleepacc_sleeper_config_explain(&c, 1, &field, &msg) < 0 && field); /* a pacer needs a period */
  CHECKF(field && !strcmp(sleepacc_option_of_field(field), "period"), "%s", field);
  c.period_ns = 1000000;
  c.missed = "late";
  CHECK(sleepacc_sleeper_config_explain(&c, 1, &field, &msg) < 0 && field && !strcmp(sleepacc_option_of_field(field), "missed"));
  c.missed = "skip";
  c.dma_latency_us = -5;
  CHECK(sleepacc_sleeper_config_explain(&c, 0, &field, &msg) < 0 && field &&
        !strcmp(sleepacc_option_of_field(field), "dma_latency"));
}

static void test_method_info(void) {
  sleepacc_method_info info;
  const sleepacc_field *f = sleepacc_method_info_fields;
  const char *want[] = {"name", "family", "description", "granularity_ns", "honours_slack",
                        "absolute", "available", NULL};
  for (int i = 0; want[i]; i++) CHECKF(f[i].name && !strcmp(f[i].name, want[i]), "%d", i);
  CHECK(sleepacc_method_info_get(sleepacc_method_find("select"), &info) == 0);
  CHECK(!strcmp(info.name, "select") && !strcmp(info.family, "kernel") && info.granularity_ns == 1000);
  CHECK(!strcmp(info.honours_slack, "yes") || !strcmp(info.honours_slack, "no") ||
        !strcmp(info.honours_slack, "unknown"));
  CHECK(sleepacc_method_info_get(sleepacc_method_find("clock"), &info) == 0 &&
        !strcmp(info.family, "baseline") && info.available == 1);
  CHECK(sleepacc_method_info_get(NULL, &info) == -EINVAL);
}

static void test_seconds_to_ns(void) {
  int64_t ns = 7;
  CHECK(sleepacc_seconds_to_ns(1e-3, &ns) == 0 && ns == 1000000);
  CHECK(sleepacc_seconds_to_ns(1.0000000004, &ns) == 0 && ns == 1000000000);
  CHECK(sleepacc_seconds_to_ns(2.5e-9, &ns) == 0 && ns == 3); /* nearest, halves away from 0 */
  CHECK(sleepacc_seconds_to_ns(-1e-12, &ns) == 0 && ns == -1); /* a negative stays negative */
  CHECK(sleepacc_seconds_to_ns(1e300, &ns) == 0 && ns == INT64_MAX);
  CHECK(sleepacc_seconds_to_ns(-1e300, &ns) == 0 && ns == -1);
  CHECK(sleepacc_seconds_to_ns(NAN, &ns) == -EDOM);
  CHECK(sleepacc_seconds_to_ns(INFINITY, &ns) == -EDOM);
  CHECK(sleepacc_seconds_to_ns(1.0, NULL) == -EINVAL);
}

static const sleepacc_option *option(const char *name) {
  for (const sleepacc_option *o = sleepacc_options; o->name; o++)
    if (!strcmp(o->name, name)) return o;
  return NULL;
}

static void test_complete(void) {
  const uint32_t priority = 1u << (option("priority") - sleepacc_options);
  sleepacc_config c;
  sleepacc_config_default(&c);
  sleepacc_options_complete(&c, 0, 0);
  CHECK(c.env.priority == 0); /* no policy: unchanged */
  c.env.policy = SLEEPACC_POLICY_FIFO;
  sleepacc_options_complete(&c, 0, 0);
  CHECK(c.env.priority == 1); /* fifo without a priority: 1 */
  c.env.priority = 0, c.env.policy = SLEEPACC_POLICY_RR;
  sleepacc_options_complete(&c, priority, 0);
  CHECK(c.env.priority == 0); /* given (even a bad 0): left for the check to refuse */
  c.env.policy = SLEEPACC_POLICY_BATCH;
  sleepacc_options_complete(&c, 0, 0);
  CHECK(c.env.priority == 0);
  sleepacc_options_complete(NULL, 0, 0); /* no crash */
  /* a sweep's point takes one sample past its budget: n unless given */
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find("nanosleep");
  c.duration_ns = 500000000, c.budget_ns = 200000000;
  CHECK(sleepacc_config_check(&c, NULL) != 0); /* measure: one sample over the budget */
  sleepacc_options_complete(&c, 0, 0);
  CHECK(c.n == 0);
  sleepacc_options_complete(&c, 0, 1);
  CHECK(c.n == SLEEPACC_MAX_SAMPLES && sleepacc_config_check(&c, NULL) == 0);
  c.n = 7;
  sleepacc_options_complete(&c, 1u << (option("n") - sleepacc_options), 1);
  CHECK(c.n == 7); /* given: kept */
  c.n = 0, c.budget_ns = 0;
  sleepacc_options_complete(&c, 0, 1);
  CHECK(c.n == 0); /* no budget: nothing to stop, nothing set */
}

static void test_choices(void) {
  const sleepacc_option *mode = option("mode"), *policy = option("policy"), *n = option("n");
  CHECK(mode && policy && n);
  CHECK(sleepacc_option_choice(mode, "periodic") == SLEEPACC_MODE_PERIODIC);
  CHECK(sleepacc_option_choice(policy, "rr") == SLEEPACC_POLICY_RR);
  CHECK(sleepacc_option_choice(mode, "fifo") == -EINVAL && sleepacc_option_choice(n, "x") == -EINVAL);
  CHECK(sleepacc_option_choice(NULL, "x") == -EINVAL && sleepacc_option_choice(mode, NULL) == -EINVAL);
}

/* sleepacc_option_find, sleepacc_method_names, sleepacc_config_privileged */
static void test_find(void) {
  const sleepacc_option *o = sleepacc_option_find(sleepacc_sleeper_options, "missed");
  CHECK(o && !strcmp(o->field, "missed") && o->kind == SLEEPACC_OPT_NAME);
  CHECK(sleepacc_option_find(sleepacc_options, "dma_latency") == option("dma_latency"));
  CHECK(sleepacc_option_find(sleepacc_options + 2, "method") == NULL); /* a tail has no method */
  CHECK(sleepacc_option_find(sleepacc_options, "missed") == NULL);
  CHECK(sleepacc_option_find(NULL, "n") == NULL && sleepacc_option_find(sleepacc_options, NULL) == NULL);
}

static void test_method_names(void) {
  char list[2048], want[2048], tiny[6];
  size_t len = 0;
  want[0] = '\0';
  for (size_t i = 0; i < sleepacc_method_count(); i++) /* the available ones, in order */
    if (sleepacc_method_available(sleepacc_method_at(i)))
      len += (size_t)snprintf(want + len, sizeof want - len, "%s%s", len ? ", " : "",
                              sleepacc_method_at(i)->name);
  sleepacc_method_names(list, sizeof list);
  CHECKF(!strcmp(list, want), "%s", list);
  CHECK(strstr(list, "nanosleep") != NULL && strncmp(list, ", ", 2) != 0);
  sleepacc_method_names(tiny, sizeof tiny); /* cut to fit, terminated */
  CHECK(strlen(tiny) < sizeof tiny && !strncmp(tiny, list, strlen(tiny)));
  sleepacc_method_names(NULL, 10);
  sleepacc_method_names(tiny, 0);
}

static void test_privileged(void) {
  sleepacc_config c;
  char buf[48];
  sleepacc_config_default(&c);
  CHECK(sleepacc_config_privileged(&c, buf, sizeof buf) == NULL && !buf[0]);
  c.env.dma_latency_us = 0;
  CHECK(sleepacc_config_privileged(&c, buf, sizeof buf) == buf && !strcmp(buf, "dma_latency"));
  c.env.policy = SLEEPACC_POLICY_FIFO;
  c.env.lock_memory = 1;
  CHECK(sleepacc_config_privileged(&c, buf, sizeof buf) && !strcmp(buf, "policy lock_memory dma_latency"));
  CHECK(sleepacc_config_privileged(NULL, buf, sizeof buf) == NULL);
  CHECK(sleepacc_config_privileged(&c, buf, 0) == NULL);
}

/* sleepacc_privilege_explain, the words both bindings give a refused run */
static void test_privilege_explain(void) {
  sleepacc_config c;
  char buf[SLEEPACC_PRIVILEGE_MESSAGE_MAX], tiny[16];
  const char *want_all = "policy='rr' (priority 7) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE "
                         "allowance; lock_memory needs CAP_IPC_LOCK or a large enough RLIMIT_MEMLOCK; "
                         "dma_latency=0 needs write access to /dev/cpu_dma_latency (root)";
  sleepacc_config_default(&c);
  CHECK(sleepacc_privilege_explain(&c, -EPERM, buf, sizeof buf) == buf);
  CHECKF(!strcmp(buf, "the requested environment needs privileges"), "%s", buf);
  strcpy(buf, "x");
  CHECK(sleepacc_privilege_explain(&c, -EINVAL, buf, sizeof buf) == NULL && !strcmp(buf, "x"));
  CHECK(sleepacc_privilege_explain(&c, -ENOMEM, buf, sizeof buf) == NULL); /* no lock_memory asked */
  c.env.policy = SLEEPACC_POLICY_FIFO, c.env.priority = 1;
  CHECK(sleepacc_privilege_explain(&c, EACCES, buf, sizeof buf) == buf); /* a positive errno too */
  CHECKF(!strcmp(buf, "policy='fifo' (priority 1) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE "
                      "allowance"), "%s", buf);
  sleepacc_config_default(&c);
  c.env.lock_memory = 1;
  CHECK(sleepacc_privilege_explain(&c, -ENOMEM, buf, sizeof buf) == buf);
  CHECKF(!strcmp(buf, "lock_memory needs CAP_IPC_LOCK or a large enough RLIMIT_MEMLOCK"), "%s", buf);
  c.env.policy = SLEEPACC_POLICY_RR, c.env.priority = 7, c.env.dma_latency_us = 0;
  CHECK(sleepacc_privilege_explain(&c, -EPERM, buf, sizeof buf) == buf);
  CHECKF(!strcmp(buf, want_all), "%s", buf);
  CHECK(strlen(want_all) < SLEEPACC_PRIVILEGE_MESSAGE_MAX);
  CHECK(sleepacc_privilege_explain(&c, -EPERM, tiny, sizeof tiny) == tiny); /* cut to fit */
  CHECK(strlen(tiny) == sizeof tiny - 1 && !strncmp(tiny, want_all, sizeof tiny - 1));
  sleepacc_config_default(&c);
  c.env.dma_latency_us = 25;
  CHECK(sleepacc_privilege_explain(&c, -EACCES, buf, sizeof buf) == buf);
  CHECKF(!strcmp(buf, "dma_latency=25 needs write access to /dev/cpu_dma_latency (root)"), "%s", buf);
  CHECK(sleepacc_privilege_explain(NULL, -EPERM, buf, sizeof buf) == NULL);
  CHECK(sleepacc_privilege_explain(&c, -EPERM, buf, 0) == NULL);
}

/* sleepacc_config_words: explain's words, and for an unavailable method the
 * available ones named after them (every method of the registry is tried). */
static void test_config_words(void) {
  char buf[SLEEPACC_OPTION_MESSAGE_MAX * 2], names[SLEEPACC_OPTION_MESSAGE_MAX];
  const char *field = NULL, *msg = NULL;
  sleepacc_config c;
  sleepacc_config_default(&c);
  c.method = sleepacc_method_find("nanosleep"), c.duration_ns = 1000, c.n = 0, c.budget_ns = 0;
  strcpy(buf, "untouched");
  CHECK(sleepacc_config_explain(&c, &field, &msg) == -EINVAL);
  CHECK(sleepacc_config_words(&c, &field, buf, sizeof buf) == -EINVAL && !strcmp(buf, msg));
  CHECK(field && !strcmp(field, "n"));
  c.n = 5;
  strcpy(buf, "untouched");
  CHECK(sleepacc_config_words(&c, &field, buf, sizeof buf) == 0 && !strcmp(buf, "untouched"));
  sleepacc_method_names(names, sizeof names);
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    c.method = sleepacc_method_at(i);
    if (sleepacc_method_available(c.method)) continue; /* none may be unavailable on this host */
    CHECK(sleepacc_config_words(&c, &field, buf, sizeof buf) == -ENOSYS && !strcmp(field, "method"));
    CHECK(strstr(buf, "; available methods: ") &&
          !strcmp(strstr(buf, "; available methods: ") + strlen("; available methods: "), names));
  }
  c.method = sleepacc_method_find("nanosleep"), c.n = 0;
  CHECK(sleepacc_config_words(&c, &field, buf, 4) <= 0 && strlen(buf) <= 3); /* cut, terminated */
}

int main(void) {
  TEST(test_rows);
  TEST(test_bad_fields_name_options);
  TEST(test_sleeper_fields_name_options);
  TEST(test_method_info);
  TEST(test_seconds_to_ns);
  TEST(test_complete);
  TEST(test_choices);
  TEST(test_find);
  TEST(test_method_names);
  TEST(test_privileged);
  TEST(test_privilege_explain);
  TEST(test_config_words);
  return check_summary();
}
