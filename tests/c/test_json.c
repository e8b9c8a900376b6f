/* test_json.c -- the sleepacc/1 JSON Lines renderers (csrc/json.c): exact
 * bytes of a point and a footer, the header's shape, and the buffer
 * contract (-ENOSPC with the size needed, never a byte past cap). */
#include "check.h"
#include "sleepacc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int starts(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }
static int ends(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static sleepacc_result sample_result(void) {
  sleepacc_result r;
  memset(&r, 0, sizeof r);
  r.method = "nanosleep";
  r.mode = "relative";
  r.requested_ns = 1000000;
  r.n = 3;
  r.stats.n = 3;
  r.stats.min = 1050000;
  r.stats.max = 1090000;
  r.stats.mean = 1070000.0; /* integral double: keeps ".0" */
  r.stats.std = 0.5;
  r.cpu_ns_per_call = 1234.0;
  r.cpu_percent = NAN; /* not finite: null */
  r.ctx_voluntary = 3;
  r.ctx_involuntary = -1; /* a plain int64 row: written as is */
  r.wall_ns = 3300000;
  r.env.slack_ns = 50000;
  r.env.policy = "other";
  r.env.dma_latency_us = -1;
  r.env.margin_ns = -1; /* not hybrid: left out */
  return r;
}

static void test_point_bytes(void) {
  sleepacc_result r = sample_result();
  const int64_t s[3] = {1050000, 1070000, 1090000};
  char buf[4096];
  int len = sleepacc_json_point(&r, s, 3, buf, sizeof buf, NULL);
  CHECKF(len > 0 && (size_t)len == strlen(buf), "%d", len);
  CHECKF(starts(buf, "{\"type\":\"point\",\"method\":\"nanosleep\",\"mode\":\"relative\","
                     "\"requested_ns\":1000000,\"n\":3,\"stats\":{\"n\":3,\"min\":1050000,"), "%s", buf);
  CHECKF(strstr(buf, "\"mean\":1070000.0,") && strstr(buf, "\"std\":0.5"), "%s", buf);
  CHECKF(strstr(buf, "\"cpu_percent\":null"), "%s", buf);
  CHECKF(strstr(buf, "\"ctx_switches\":{\"voluntary\":3,\"involuntary\":-1}"), "%s", buf);
  CHECKF(!strstr(buf, "margin_ns"), "margin left out: %s", buf);
  CHECKF(strstr(buf, "\"env\":{\"slack_ns\":50000,\"policy\":\"other\",") && strstr(buf, "\"dma_latency_us\":null}"),
         "%s", buf);
  CHECKF(ends(buf, ",\"samples\":[1050000,1070000,1090000]}\n"), "%s", buf);
  len = sleepacc_json_point(&r, NULL, 0, buf, sizeof buf, NULL);
  CHECKF(len > 0 && ends(buf, ",\"samples\":null}\n"), "%s", buf);
}

static void test_footer_and_time(void) {
  char buf[128];
  int len = sleepacc_json_footer(1764570098017000000LL, buf, sizeof buf, NULL);
  CHECKF(!strcmp(buf, "{\"type\":\"footer\",\"finished\":\"2025-12-01T06:21:38.017Z\"}\n"), "%s", buf);
  CHECK(len == (int)strlen(buf));
  CHECK(sleepacc_json_footer(-1, buf, sizeof buf, NULL) == len); /* now: same length */
}

static void test_header(void) {
  static sleepacc_fact f[3];
  char buf[8192];
  int len;
  memset(f, 0, sizeof f);
  f[0].key = "hz", f[0].type = SLEEPACC_FACT_INT, f[0].i = 250;
  f[1].key = "clocksource", f[1].type = SLEEPACC_FACT_STR;
  strcpy(f[1].s, "kvm \"clock\"\n");
  f[2].key = "governor", f[2].type = SLEEPACC_FACT_UNKNOWN;
  len = sleepacc_json_header(f, 3, "lua", "Lua 5.4", 0, buf, sizeof buf, NULL);
  CHECK(len == (int)strlen(buf));
  CHECKF(starts(buf, "{\"schema\":\"sleepacc/1\",\"type\":\"header\",\"host\":{\"hz\":250,"
                       "\"clocksource\":\"kvm \\\"clock\\\"\\u000a\",\"governor\":null,\"hostname\":"),
         "%s", buf);
  CHECKF(strstr(buf, "},\"settings\":{\"version\":\"" SLEEPACC_VERSION
                     "\",\"writer\":\"lua\",\"lua\":\"Lua 5.4\"},\"started\":\"1970-01-01T00:00:00.000Z\"}\n"),
         "%s", buf);
}

static void test_buffer_contract(void) {
  sleepacc_result r = sample_result();
  const int64_t s[3] = {1, 2, 3};
  char full[4096], small[16];
  size_t needed = 0;
  int len = sleepacc_json_point(&r, s, 3, full, sizeof full, NULL);
  memset(small, 'x', sizeof small);
  CHECK(sleepacc_json_point(&r, s, 3, small, 8, &needed) == -ENOSPC);
  CHECK(needed == (size_t)len + 1);
  CHECK(small[7] == '\0' && small[8] == 'x' && !strncmp(small, full, 7));
  needed = 0;
  CHECK(sleepacc_json_point(&r, s, 3, NULL, 0, &needed) == -ENOSPC && needed == (size_t)len + 1);
  CHECK(sleepacc_json_point(&r, s, 3, full, (size_t)len, NULL) == -ENOSPC); /* no room for the NUL */
  CHECK(sleepacc_json_footer(0, NULL, 0, &needed) == -ENOSPC &&
        needed == sizeof "{\"type\":\"footer\",\"finished\":\"1970-01-01T00:00:00.000Z\"}\n");
  CHECK(sleepacc_json_point(NULL, s, 3, full, sizeof full, NULL) == -EINVAL);
  CHECK(sleepacc_json_point(&r, NULL, 3, full, sizeof full, NULL) == -EINVAL);
  CHECK(sleepacc_json_header(NULL, 1, "lua", "x", 0, full, sizeof full, NULL) == -EINVAL);
  CHECK(sleepacc_json_header(NULL, 0, NULL, "x", 0, full, sizeof full, NULL) == -EINVAL);
}

/* A string's bytes that are no UTF-8 are written as U+FFFD: they were
 * written raw, and Python's sleepacc.load refused the whole file ("not
 * UTF-8 text"); a valid sequence is written as it is. */
static void test_strings_are_utf8(void) {
  static sleepacc_fact f[1];
  static const struct { const char *in, *out; } cases[] = {
      {"nano\xffsleep", "nano\\ufffdsleep"},       /* no lead byte */
      {"caf\xc3\xa9", "caf\xc3\xa9"},               /* U+00E9 as it is */
      {"\xe2\x82", "\\ufffd\\ufffd"},               /* cut short by the end */
      {"\xc0\xaf", "\\ufffd\\ufffd"},               /* overlong '/' */
      {"\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd"},   /* a surrogate */
      {"\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd"}, /* beyond U+10FFFF */
      {"\xf0\x9f\x98\x80x", "\xf0\x9f\x98\x80x"},   /* U+1F600 */
  };
  char buf[8192], want[128];
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sleepacc_result r = sample_result();
    r.method = cases[i].in;
    CHECK(sleepacc_json_point(&r, NULL, 0, buf, sizeof buf, NULL) > 0);
    snprintf(want, sizeof want, "\"method\":\"%s\",", cases[i].out);
    CHECKF(strstr(buf, want) != NULL, "case %zu: %.60s", i, buf);
  }
  memset(f, 0, sizeof f);
  f[0].key = "dmi_product", f[0].type = SLEEPACC_FACT_STR;
  strcpy(f[0].s, "Caf\xe9");
  CHECK(sleepacc_json_header(f, 1, "c", "1", 0, buf, sizeof buf, NULL) > 0);
  CHECKF(strstr(buf, "\"dmi_product\":\"Caf\\ufffd\""), "%.80s", buf);
}

int main(void) {
  TEST(test_point_bytes);
  TEST(test_strings_are_utf8);
  TEST(test_footer_and_time);
  TEST(test_header);
  TEST(test_buffer_contract);
  return check_summary();
}
