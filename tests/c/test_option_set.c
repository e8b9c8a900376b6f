/* test_option_set.c -- sleepacc_option_set (csrc/options.c): every option
 * kind set from a script's value by the core's rule, a wrong kind -EINVAL,
 * a broken rule -ERANGE with its words, and nothing set on an error. */
#include "check.h"
#include "sleepacc.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

static sleepacc_value val(int kind, int64_t i, double d, const char *s) {
  sleepacc_value v;
  memset(&v, 0, sizeof v);
  v.kind = kind, v.i = i, v.d = d, v.s = s;
  return v;
}
#define INTV(i) val(SLEEPACC_VALUE_INT, (i), 0.0, NULL)
#define REALV(d) val(SLEEPACC_VALUE_REAL, 0, (d), NULL)
#define BOOLV(b) val(SLEEPACC_VALUE_BOOL, (b), 0.0, NULL)
#define TEXTV(s) val(SLEEPACC_VALUE_TEXT, 0, 0.0, (s))
#define NULLV() val(SLEEPACC_VALUE_NULL, 0, 0.0, NULL)

static const sleepacc_option *opt(const char *name) {
  const sleepacc_option *o = sleepacc_option_find(sleepacc_options, name);
  CHECK(o != NULL);
  return o;
}

/* set name from v into c: the return code, msg filled */
static int set(sleepacc_config *c, const char *name, sleepacc_value v, char *msg) {
  return sleepacc_option_set(opt(name), c, &v, msg, SLEEPACC_OPTION_MESSAGE_MAX);
}

static void test_seconds_and_budget(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  sleepacc_config_default(&c);
  CHECK(set(&c, "duration", REALV(1e-3), msg) == 0 && c.duration_ns == 1000000);
  CHECK(set(&c, "duration", INTV(2), msg) == 0 && c.duration_ns == 2000000000LL);
  CHECK(set(&c, "duration", REALV(-1e-9), msg) == -ERANGE && !strcmp(msg, "must be non-negative"));
  CHECK(set(&c, "duration", REALV(NAN), msg) == -ERANGE && !strcmp(msg, "must be finite"));
  CHECK(set(&c, "duration", INTV(86401), msg) == -ERANGE && strstr(msg, "one day"));
  CHECK(c.duration_ns == 2000000000LL); /* untouched by the refusals */
  CHECK(set(&c, "duration", BOOLV(1), msg) == -EINVAL);
  CHECK(set(&c, "duration", TEXTV("1"), msg) == -EINVAL);
  CHECK(set(&c, "duration", NULLV(), msg) == -EINVAL);
  CHECK(set(&c, "margin", REALV(5e-5), msg) == 0 && c.margin_ns == 50000);
  /* budget: > 0, or none (NULL / false): 0 */
  CHECK(set(&c, "budget", REALV(0.2), msg) == 0 && c.budget_ns == 200000000);
  CHECK(set(&c, "budget", INTV(0), msg) == -ERANGE && strstr(msg, "must be positive"));
  CHECK(set(&c, "budget", REALV(1e-12), msg) == -ERANGE && strstr(msg, "must be positive"));
  CHECK(c.budget_ns == 200000000);
  CHECK(set(&c, "budget", NULLV(), msg) == 0 && c.budget_ns == 0);
  c.budget_ns = 5;
  CHECK(set(&c, "budget", BOOLV(0), msg) == 0 && c.budget_ns == 0);
  CHECK(set(&c, "budget", BOOLV(1), msg) == -EINVAL);
}

static void test_integers_and_bools(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  sleepacc_config_default(&c);
  CHECK(set(&c, "n", INTV(10), msg) == 0 && c.n == 10);
  CHECK(set(&c, "n", INTV(0), msg) == -ERANGE && !strcmp(msg, "must be >= 1") && c.n == 10);
  CHECK(set(&c, "n", REALV(1.5), msg) == -EINVAL);
  CHECK(set(&c, "n", BOOLV(1), msg) == -EINVAL);
  CHECK(set(&c, "slack", INTV(-1), msg) == -ERANGE && !strcmp(msg, "must be >= 0"));
  CHECK(set(&c, "slack", INTV(1), msg) == 0 && c.env.slack_ns == 1);
  CHECK(set(&c, "cpu", INTV(1), msg) == 0 && c.env.cpu == 1);
  CHECK(set(&c, "cpu", INTV((int64_t)INT_MAX + 1), msg) == -ERANGE && !strcmp(msg, "must be <= 2147483647"));
  CHECK(c.env.cpu == 1);
  CHECK(set(&c, "keep_samples", BOOLV(0), msg) == 0 && c.keep_samples == 0);
  CHECK(set(&c, "keep_samples", BOOLV(7), msg) == 0 && c.keep_samples == 1);
  CHECK(set(&c, "keep_samples", INTV(1), msg) == -EINVAL);
  CHECK(set(&c, "lock_memory", NULLV(), msg) == -EINVAL);
}

static void test_names(void) {
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  sleepacc_config c;
  const sleepacc_option *q;
  sleepacc_sleeper_config sc;
  sleepacc_value v;
  sleepacc_config_default(&c);
  CHECK(set(&c, "mode", TEXTV("periodic"), msg) == 0 && c.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&c, "mode", TEXTV("sideways"), msg) == -ERANGE);
  CHECK(!strcmp(msg, "must be 'relative' or 'periodic'") && c.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(set(&c, "mode", INTV(1), msg) == -EINVAL);
  CHECK(set(&c, "policy", TEXTV("fifo"), msg) == 0 && c.env.policy == SLEEPACC_POLICY_FIFO);
  CHECK(set(&c, "policy", TEXTV("FIFO"), msg) == -ERANGE);
  CHECK(!strcmp(msg, "must be one of 'other', 'batch', 'idle', 'fifo', 'rr'"));
  CHECK(set(&c, "method", TEXTV("nanosleep"), msg) == 0 && c.method == sleepacc_method_find("nanosleep"));
  CHECK(set(&c, "method", TEXTV("nope"), msg) == -ERANGE && c.method == sleepacc_method_find("nanosleep"));
  CHECK(!strncmp(msg, "must be an available method (", 29) && strstr(msg, "nanosleep"));
  CHECK(msg[strlen(msg) - 1] == ')');
  CHECK(set(&c, "method", NULLV(), msg) == -EINVAL);
  /* a sleeper's options: NAME keeps the pointer, NUMBER takes both kinds */
  sleepacc_sleeper_config_default(&sc);
  q = sleepacc_option_find(sleepacc_sleeper_options, "missed");
  v = TEXTV("skip");
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.missed == v.s);
  q = sleepacc_option_find(sleepacc_sleeper_options, "quantile");
  v = INTV(1);
  CHECK(q && sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.quantile == 1.0);
  v = REALV(0.5);
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == 0 && sc.quantile == 0.5);
  v = TEXTV("0.5");
  CHECK(sleepacc_option_set(q, &sc, &v, msg, sizeof msg) == -EINVAL && sc.quantile == 0.5);
  /* a short message buffer is cut, never overrun; NULL arguments */
  CHECK(sleepacc_option_set(opt("method"), &c, &(sleepacc_value){SLEEPACC_VALUE_TEXT, 0, 0, "x", 0, 0},
                            msg, 8) == -ERANGE && strlen(msg) == 7);
  CHECK(sleepacc_option_set(opt("n"), &c, NULL, msg, sizeof msg) == -EFAULT);
  CHECK(sleepacc_option_set(NULL, &c, &v, NULL, 0) == -EFAULT);
  CHECK(sleepacc_option_set(opt("n"), &c, &(sleepacc_value){SLEEPACC_VALUE_INT, 0, 0, 0, 0, 0}, NULL, 0)
        == -ERANGE);
}

int main(void) {
  TEST(test_seconds_and_budget);
  TEST(test_integers_and_bools);
  TEST(test_names);
  return check_summary();
}
