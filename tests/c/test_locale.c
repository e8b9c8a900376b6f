/* test_locale.c -- the core's numbers in text are the C locale's whatever
 * the process set: a program that calls setlocale(LC_ALL, "") under a
 * comma-decimal locale still writes JSON a reader takes ("0.5", never
 * "0,5"), tables with a point, and reads /proc/loadavg's "0.39" as 0.39.
 * The locale is de_DE.UTF-8 compiled with localedef into a temporary
 * LOCPATH; without localedef or its source the test says so and skips. */
#include "check.h"
#include "sleepacc.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/sleepacc-locale-XXXXXX";

/* Compile de_DE.UTF-8 into dir and switch the process to it: 1, or 0 with
 * the reason printed. */
static int comma_locale(void) {
  char cmd[256];
  if (access("/usr/share/i18n/locales/de_DE", R_OK) != 0) {
    printf("  skip: no locale source /usr/share/i18n/locales/de_DE\n");
    return 0;
  }
  if (!mkdtemp(dir)) return printf("  skip: no temporary directory\n"), 0;
  snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
  if (system(cmd) != 0) return printf("  skip: localedef could not compile de_DE.UTF-8\n"), 0;
  setenv("LOCPATH", dir, 1);
  if (!setlocale(LC_ALL, "de_DE.UTF-8") || strcmp(localeconv()->decimal_point, ",") != 0)
    return printf("  skip: de_DE.UTF-8 does not load\n"), 0;
  return 1;
}

static void leave_locale(void) {
  char cmd[300];
  setlocale(LC_ALL, "C");
  unsetenv("LOCPATH");
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (dir[strlen(dir) - 1] != 'X' && system(cmd) != 0) fprintf(stderr, "  could not remove %s\n", dir);
}

/* /proc/loadavg's first field, parsed by hand (no locale involved). */
static double loadavg_by_hand(void) {
  char text[64] = "";
  FILE *f = fopen("/proc/loadavg", "r");
  double v = 0, scale = 1;
  int frac = 0;
  if (!f) return -1;
  if (!fgets(text, sizeof text, f)) text[0] = '\0';
  fclose(f);
  for (const char *c = text; *c && *c != ' '; c++) {
    if (*c == '.') frac = 1;
    else if (frac) v += (*c - '0') * (scale /= 10);
    else v = v * 10 + (*c - '0');
  }
  return v;
}

static void test_numbers_under_a_comma_locale(void) {
  char buf[4096], want[64];
  sleepacc_result r;
  sleepacc_row row;
  sleepacc_fact facts[SLEEPACC_MAX_FACTS];
  size_t count = 0;
  double before, after, got = -1;
  if (!comma_locale()) { /* skipped: the temporary directory goes too */
    leave_locale();
    return;
  }
  snprintf(want, sizeof want, "%.1f", 0.5);
  CHECKF(strcmp(want, "0,5") == 0, "the locale itself writes %s", want); /* the test can fail */
  memset(&r, 0, sizeof r);
  r.method = "nanosleep", r.mode = "relative", r.requested_ns = 1000000, r.n = 3;
  r.stats.n = 3, r.stats.min = 1050000, r.stats.max = 1090000, r.stats.mean = 155333.125;
  r.stats.std = 0.5, r.cpu_ns_per_call = 1234.25, r.cpu_percent = 56.25;
  CHECK(sleepacc_json_point(&r, NULL, 0, buf, sizeof buf, NULL) > 0);
  CHECKF(strstr(buf, "\"mean\":155333.125") && strstr(buf, "\"std\":0.5") &&
         strstr(buf, "\"cpu_percent\":56.25") && !strstr(buf, "0,5"), "%s", buf);
  sleepacc_row_from_result(&r, &row);
  CHECK(sleepacc_table_wide(&row, 1, buf, sizeof buf, NULL) > 0);
  CHECKF(strstr(buf, "56.2") && !strstr(buf, "56,2"), "%s", buf);
  CHECK(sleepacc_table_irtt(&row, 1, buf, sizeof buf, NULL) > 0);
  CHECKF(strstr(buf, ".") && !strstr(buf, ","), "%s", buf); /* % error "-84.5" */
  before = loadavg_by_hand();
  CHECK(sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count) == 0);
  after = loadavg_by_hand();
  for (size_t i = 0; i < count; i++)
    if (facts[i].key && strcmp(facts[i].key, "loadavg_1m") == 0 && facts[i].type == SLEEPACC_FACT_REAL)
      got = facts[i].d;
  CHECKF(fabs(got - before) < 1e-9 || fabs(got - after) < 1e-9, "loadavg_1m %g, /proc/loadavg %g..%g",
         got, before, after);
  snprintf(want, sizeof want, "%.1f", 0.5);
  CHECKF(strcmp(want, "0,5") == 0, "the caller's locale was changed: %s", want);
  leave_locale();
}

int main(void) {
  TEST(test_numbers_under_a_comma_locale);
  return check_summary();
}
