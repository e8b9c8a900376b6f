/* test_table.c -- Go-style durations, the irtt sleep table (byte for byte
 * against published and locally captured irtt output) and the wide table. */
#include "check.h"
#include "sleepacc.h"

#include <math.h>
#include <string.h>

static void test_format_duration_cases(void)
{
  static const struct {
    int64_t ns;
    const char *want;
  } cases[] = {
    {0, "0s"},
    {1, "1ns"},
    {381, "381ns"},
    {999, "999ns"},
    {1000, "1\xc2\xb5s"},
    {1001, "1.001\xc2\xb5s"},
    {9041, "9.041\xc2\xb5s"},
    {10000, "10\xc2\xb5s"},
    {309477, "309.477\xc2\xb5s"},
    {999999, "999.999\xc2\xb5s"},
    {1000000, "1ms"},
    {1011542, "1.011542ms"},
    {2539460, "2.53946ms"},
    {2000929, "2.000929ms"},
    {999999999, "999.999999ms"},
    {1000000000, "1s"},
    {1500000000, "1.5s"},
    {59999999999LL, "59.999999999s"},
    {60000000000LL, "1m0s"},
    {90000000000LL, "1m30s"},
    {3600000000000LL, "1h0m0s"},
    {3661000000001LL, "1h1m1.000000001s"},
    {86400000000000LL, "24h0m0s"},
    {-1, "-1ns"},
    {-1500, "-1.5\xc2\xb5s"},
    {-90000000000LL, "-1m30s"},
    {INT64_MAX, "2562047h47m16.854775807s"},
    {INT64_MIN, "-2562047h47m16.854775808s"},
  };
  char buf[64];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int n = sleepacc_format_duration(cases[i].ns, buf, sizeof buf);
    CHECKF(n == (int)strlen(cases[i].want) && strcmp(buf, cases[i].want) == 0,
           "%lld -> \"%s\" (%d), want \"%s\"", (long long)cases[i].ns, buf, n, cases[i].want);
  }
}

static void test_format_duration_enospc(void)
{
  char buf[16];
  /* "309.477µs" is 10 bytes: needs cap 11 */
  memset(buf, 'X', sizeof buf);
  CHECK(sleepacc_format_duration(309477, buf, 10) == -ENOSPC);
  CHECK(buf[9] == '\0');  /* a NUL-terminated prefix */
  CHECK(buf[10] == 'X');  /* nothing at or beyond cap */
  memset(buf, 'X', sizeof buf);
  CHECK(sleepacc_format_duration(309477, buf, 11) == 10);
  CHECK(strcmp(buf, "309.477\xc2\xb5s") == 0);
  CHECK(buf[11] == 'X');
  CHECK(sleepacc_format_duration(1, NULL, 0) == -ENOSPC);
  CHECK(sleepacc_format_duration(1, NULL, 5) == -EINVAL);
}

/* A relative row whose mean error is err_ns. */
static sleepacc_row rel_row(int64_t req, double err_ns)
{
  sleepacc_row r;
  memset(&r, 0, sizeof r);
  r.method = "nanosleep";
  r.requested_ns = req;
  r.mode = SLEEPACC_MODE_RELATIVE;
  r.stats.n = 100;
  r.stats.mean = (double)req + err_ns;
  r.cpu_percent = -1;
  return r;
}

/* Seed 004 (Pete Heist, OS X 10.11.6, irtt sleep): the published table.
 * Each error is a mean that truncates to the shown duration and gives the
 * shown percentage (e.g. 381.941 ns -> "381ns" and 38194.1 %). */
static void test_irtt_seed_table(void)
{
  static const struct {
    int64_t req;
    double err;
  } rows[] = {
    {1, 381.941}, {10, 370.351}, {100, 286.6}, {1000, 9041.6},
    {10000, 30538.5}, {100000, 60746.5}, {1000000, 263256.5},
    {10000000, 2000929.5}, {100000000, 3309786.5}, {200000000, 4183972.5},
    {500000000, 2539460.5},
  };
  const char *want =
    "Testing sleep accuracy...\n"
    "\n"
    "Sleep Duration        Mean Error       % Error\n"
    "           1ns             381ns       38194.1\n"
    "          10ns             370ns        3703.5\n"
    "         100ns             286ns         286.6\n"
    "           1\xc2\xb5s           9.041\xc2\xb5s         904.2\n"
    "          10\xc2\xb5s          30.538\xc2\xb5s         305.4\n"
    "         100\xc2\xb5s          60.746\xc2\xb5s          60.7\n"
    "           1ms         263.256\xc2\xb5s          26.3\n"
    "          10ms        2.000929ms          20.0\n"
    "         100ms        3.309786ms           3.3\n"
    "         200ms        4.183972ms           2.1\n"
    "         500ms         2.53946ms           0.5\n";
  sleepacc_row r[11];
  for (size_t i = 0; i < 11; i++)
    r[i] = rel_row(rows[i].req, rows[i].err);
  char buf[2048];
  size_t need = 0;
  int n = sleepacc_table_irtt(r, 11, buf, sizeof buf, &need);
  CHECKF(n == (int)strlen(want) && strcmp(buf, want) == 0, "got:\n%s", buf);
  CHECK(need == strlen(want) + 1);
}

/* `irtt sleep` (irtt 0.9.0, Debian) run on the development VM, captured
 * byte for byte: no trailing blank line, µ as C2 B5, padding by runes. */
static void test_irtt_local_capture(void)
{
  static const struct {
    int64_t req;
    double err;
  } rows[] = {
    {1, 198.043}, {10, 188.12}, {100, 876.1}, {1000, 345209.9},
    {10000, 1049350.2}, {100000, 973191.5}, {1000000, 74459.5},
    {10000000, 164308.5}, {100000000, 256820.5}, {200000000, 368785.5},
    {500000000, 690309.5},
  };
  const char *want =
    "Testing sleep accuracy...\n"
    "\n"
    "Sleep Duration        Mean Error       % Error\n"
    "           1ns             198ns       19804.3\n"
    "          10ns             188ns        1881.2\n"
    "         100ns             876ns         876.1\n"
    "           1\xc2\xb5s         345.209\xc2\xb5s       34521.0\n"
    "          10\xc2\xb5s         1.04935ms       10493.5\n"
    "         100\xc2\xb5s         973.191\xc2\xb5s         973.2\n"
    "           1ms          74.459\xc2\xb5s           7.4\n"
    "          10ms         164.308\xc2\xb5s           1.6\n"
    "         100ms          256.82\xc2\xb5s           0.3\n"
    "         200ms         368.785\xc2\xb5s           0.2\n"
    "         500ms         690.309\xc2\xb5s           0.1\n";
  sleepacc_row r[11];
  for (size_t i = 0; i < 11; i++)
    r[i] = rel_row(rows[i].req, rows[i].err);
  char buf[2048];
  int n = sleepacc_table_irtt(r, 11, buf, sizeof buf, NULL);
  CHECKF(n == (int)strlen(want) && strcmp(buf, want) == 0, "got:\n%s", buf);
}

/* Truncation toward zero, periodic rows, requested 0 (Go's +Inf/NaN/-Inf),
 * negative errors, empty rows. */
static void test_irtt_edge_rows(void)
{
  sleepacc_row r[6];
  r[0] = rel_row(1000, 0.999);   /* truncates to 0s, 0.1 % */
  r[1] = rel_row(1000, -1500.7); /* -1.5µs, -150.1 % */
  r[2] = rel_row(0, 50.0);       /* +Inf */
  r[3] = rel_row(0, 0.0);        /* NaN */
  r[4] = rel_row(0, -3.0);       /* -Inf */
  r[5] = rel_row(1000000, 0.0);
  r[5].mode = SLEEPACC_MODE_PERIODIC; /* mean lateness is the error */
  r[5].stats.mean = 2500.4;
  const char *want =
    "Testing sleep accuracy...\n"
    "\n"
    "Sleep Duration        Mean Error       % Error\n"
    "           1\xc2\xb5s                0s           0.1\n"
    "           1\xc2\xb5s            -1.5\xc2\xb5s        -150.1\n"
    "            0s              50ns          +Inf\n"
    "            0s                0s           NaN\n"
    "            0s              -3ns          -Inf\n"
    "           1ms             2.5\xc2\xb5s           0.3\n";
  char buf[1024];
  int n = sleepacc_table_irtt(r, 6, buf, sizeof buf, NULL);
  CHECKF(n == (int)strlen(want) && strcmp(buf, want) == 0, "got:\n%s", buf);

  sleepacc_row e = rel_row(1000, 0);
  e.stats.n = 0;
  n = sleepacc_table_irtt(&e, 1, buf, sizeof buf, NULL);
  CHECKF(n > 0 && strstr(buf, "           1\xc2\xb5s               n/a           NaN\n"), "got:\n%s", buf);

  /* huge errors stay defined (no UB converting to int64) */
  sleepacc_row h = rel_row(1, 1e300);
  CHECK(sleepacc_table_irtt(&h, 1, buf, sizeof buf, NULL) > 0);
  CHECK(strstr(buf, "2562047h47m16.854775807s") != NULL);
  h.stats.mean = NAN;
  CHECK(sleepacc_table_irtt(&h, 1, buf, sizeof buf, NULL) > 0);
}

/* Every cap below the size needed is -ENOSPC with the right *needed and
 * no byte written at or beyond cap; the needed cap works. */
static void check_enospc(int (*fn)(const sleepacc_row *, size_t, char *, size_t, size_t *),
                         const sleepacc_row *rows, size_t n)
{
  char full[4096];
  size_t need = 0;
  int len = fn(rows, n, full, sizeof full, &need);
  CHECK(len > 0);
  CHECK(need == (size_t)len + 1);
  size_t probe = 0;
  CHECK(fn(rows, n, NULL, 0, &probe) == -ENOSPC);
  CHECK(probe == need);
  for (size_t cap = 1; cap < need; cap++) {
    char buf[4096 + 8];
    memset(buf, 'X', sizeof buf);
    size_t got = 0;
    int rc = fn(rows, n, buf, cap, &got);
    if (rc != -ENOSPC || got != need || buf[cap] != 'X' || memchr(buf, '\0', cap) == NULL ||
        strncmp(buf, full, strlen(buf)) != 0) {
      CHECKF(0, "cap %zu: rc %d needed %zu (want %zu)", cap, rc, got, need);
      return;
    }
  }
  char exact[4096 + 8];
  memset(exact, 'X', sizeof exact);
  CHECK(fn(rows, n, exact, need, NULL) == len);
  CHECK(strcmp(exact, full) == 0 && exact[need] == 'X');
}

static sleepacc_row wide_row(const char *m, int mode, int64_t req, int64_t med, int64_t p99,
                             int64_t max, double cpu)
{
  sleepacc_row r;
  memset(&r, 0, sizeof r);
  r.method = m;
  r.mode = mode;
  r.requested_ns = req;
  r.stats.n = 1000;
  r.stats.min = med;
  r.stats.median = med;
  r.stats.p90 = p99;
  r.stats.p99 = p99;
  r.stats.p999 = max;
  r.stats.max = max;
  r.stats.mean = (double)med;
  r.cpu_percent = cpu;
  return r;
}

/* Display width of a UTF-8 line. */
static size_t cols(const char *s, size_t n)
{
  size_t c = 0;
  for (size_t i = 0; i < n; i++)
    if (((unsigned char)s[i] & 0xC0) != 0x80)
      c++;
  return c;
}

static void test_wide_table(void)
{
  sleepacc_row r[4];
  r[0] = wide_row("clock_nanosleep", SLEEPACC_MODE_RELATIVE, 1000000, 1057035, 1081204, 1160010, 0.9);
  r[1] = wide_row("spin", SLEEPACC_MODE_RELATIVE, 1000, 1040, 1100, 25000, 100.0);
  r[2] = wide_row("clock_nanosleep_abs", SLEEPACC_MODE_PERIODIC, 1000000, 52000, 90000, 400000, -1);
  r[3] = wide_row("poll", SLEEPACC_MODE_RELATIVE, 0, 0, 0, 0, 3.25);
  r[3].stats.n = 0;
  char buf[4096];
  size_t need = 0;
  int n = sleepacc_table_wide(r, 4, buf, sizeof buf, &need);
  CHECK(n > 0 && need == (size_t)n + 1);
  const char *want =
    "method               request     n  median err  p99 err  max err  CPU %\n"
    "clock_nanosleep          1ms  1000     57.04\xc2\xb5""s   81.2\xc2\xb5""s    160\xc2\xb5""s    0.9\n"
    "spin                     1\xc2\xb5""s  1000        40ns    100ns     24\xc2\xb5""s  100.0\n"
    "clock_nanosleep_abs      1ms  1000        52\xc2\xb5""s     90\xc2\xb5""s    400\xc2\xb5""s      -\n"
    "poll                      0s     0           -        -        -    3.2\n";
  CHECKF(strcmp(buf, want) == 0, "got:\n%s", buf);
  /* every line has the same display width */
  size_t w0 = 0;
  int lines = 0;
  for (const char *p = buf; *p;) {
    const char *e = strchr(p, '\n');
    CHECK(e != NULL);
    if (!e)
      break;
    size_t w = cols(p, (size_t)(e - p));
    if (lines == 0)
      w0 = w;
    CHECK(w == w0);
    lines++;
    p = e + 1;
  }
  CHECK(lines == 5);
  /* header only for no rows */
  n = sleepacc_table_wide(NULL, 0, buf, sizeof buf, NULL);
  CHECK(n > 0 && strncmp(buf, "method", 6) == 0 && strchr(buf, '\n') == buf + n - 1);
  check_enospc(sleepacc_table_wide, r, 4);
  /* errors to four significant digits, half away from zero; the request exact */
  r[0] = wide_row("nanosleep", SLEEPACC_MODE_RELATIVE, 1234567, 1234567 + 3831636,
                  1234567 + 9999500, 1234567 + 1234567891, 1.0);
  n = sleepacc_table_wide(r, 1, buf, sizeof buf, NULL);
  CHECKF(n > 0 && strstr(buf, "1.234567ms") && strstr(buf, "3.832ms") && strstr(buf, "10ms") &&
           strstr(buf, "1.235s"),
         "got:\n%s", buf);
}

static void test_irtt_enospc(void)
{
  sleepacc_row r[3] = {rel_row(1, 381.941), rel_row(1000, 9041.6), rel_row(1000000, 263256.5)};
  check_enospc(sleepacc_table_irtt, r, 3);
}

static void test_bad_args(void)
{
  char buf[64];
  CHECK(sleepacc_table_irtt(NULL, 1, buf, sizeof buf, NULL) == -EINVAL);
  CHECK(sleepacc_table_wide(NULL, 1, buf, sizeof buf, NULL) == -EINVAL);
  sleepacc_row r = rel_row(1, 1);
  CHECK(sleepacc_table_irtt(&r, 1, NULL, 10, NULL) == -EINVAL);
  CHECK(sleepacc_table_wide(&r, 1, NULL, 10, NULL) == -EINVAL);
  /* a NULL method name is rendered, not dereferenced */
  r.method = NULL;
  CHECK(sleepacc_table_wide(&r, 1, buf, sizeof buf, NULL) == -ENOSPC ||
        sleepacc_table_wide(&r, 1, buf, sizeof buf, NULL) > 0);
}

/* Rows of several methods: one irtt table per method, in order of first
 * appearance, each under "== <method>"; each block is irtt's bytes. */
static void test_irtt_several_methods(void)
{
  sleepacc_row r[4];
  r[0] = rel_row(1000, 55413.0);
  r[1] = rel_row(1000, 123.0);
  r[1].method = "spin";
  r[2] = rel_row(1000000, 94710.0);
  r[3] = rel_row(1000000, 538.0);
  r[3].method = "spin";
  const char *want =
    "== nanosleep\n"
    "Testing sleep accuracy...\n"
    "\n"
    "Sleep Duration        Mean Error       % Error\n"
    "           1\xc2\xb5s          55.413\xc2\xb5s        5541.3\n"
    "           1ms           94.71\xc2\xb5s           9.5\n"
    "\n"
    "== spin\n"
    "Testing sleep accuracy...\n"
    "\n"
    "Sleep Duration        Mean Error       % Error\n"
    "           1\xc2\xb5s             123ns          12.3\n"
    "           1ms             538ns           0.1\n";
  char buf[1024];
  int n = sleepacc_table_irtt(r, 4, buf, sizeof buf, NULL);
  CHECKF(n == (int)strlen(want) && strcmp(buf, want) == 0, "got:\n%s", buf);
  check_enospc(sleepacc_table_irtt, r, 4);
  /* one method: no header line, irtt's bytes exactly */
  n = sleepacc_table_irtt(r, 1, buf, sizeof buf, NULL);
  CHECK(n > 0 && strncmp(buf, "Testing sleep accuracy...\n", 26) == 0);
}

int main(void)
{
  TEST(test_format_duration_cases);
  TEST(test_format_duration_enospc);
  TEST(test_irtt_seed_table);
  TEST(test_irtt_local_capture);
  TEST(test_irtt_edge_rows);
  TEST(test_wide_table);
  TEST(test_irtt_enospc);
  TEST(test_irtt_several_methods);
  TEST(test_bad_args);
  return check_summary();
}
