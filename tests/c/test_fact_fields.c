/* test_fact_fields.c -- clock and host facts by field table: sleepacc_clocks_get
 * and sleepacc_clocks_fields (csrc/clock.c), sleepacc_fact_fields (csrc/host.c).
 * A binding converts either with its one field loop, so each row must
 * address the value it names. */
#include "check.h"
#include "sleepacc_binding.h"

#include <string.h>

static void test_clocks_fields(void) {
  sleepacc_clocks c;
  size_t n = 0;
  memset(&c, 0xff, sizeof c);
  CHECK(sleepacc_clocks_get(10, &c) == 0);
  for (const sleepacc_field *f = sleepacc_clocks_fields; f->name; f++, n++) {
    const sleepacc_clock_info *info = (const sleepacc_clock_info *)((const char *)&c + f->offset);
    CHECK(n < SLEEPACC_CLOCK_COUNT && info == &c.clock[n]);
    CHECK(f->type == SLEEPACC_FIELD_NESTED && f->sub == sleepacc_clock_info_fields);
    /* the row's name is the clock's own */
    CHECKF(info->name && strcmp(info->name, f->name) == 0, "%s", f->name);
    CHECK(info->resolution_ns >= 1 && info->read_cost_ns >= 0);
  }
  CHECK(n == SLEEPACC_CLOCK_COUNT);
  n = 0;
  for (const sleepacc_field *f = sleepacc_clock_info_fields; f->name; f++, n++)
    CHECK(f->type == SLEEPACC_FIELD_OPT_INT64);
  CHECK(n == 2);
  CHECK(sleepacc_clock_info_fields[0].offset == offsetof(sleepacc_clock_info, resolution_ns));
  CHECK(sleepacc_clock_info_fields[1].offset == offsetof(sleepacc_clock_info, read_cost_ns));
  CHECK(sleepacc_clocks_get(-1, &c) == -EINVAL);
  CHECK(sleepacc_clocks_get(0, NULL) == -EINVAL);
}

static void test_fact_fields(void) {
  static sleepacc_fact facts[4];
  sleepacc_field rows[5];
  memset(facts, 0, sizeof facts);
  memset(rows, 0xff, sizeof rows);
  facts[0].key = "hz", facts[0].type = SLEEPACC_FACT_INT, facts[0].i = 250;
  facts[1].key = "loadavg_1m", facts[1].type = SLEEPACC_FACT_REAL, facts[1].d = 0.5;
  facts[2].key = "clocksource", facts[2].type = SLEEPACC_FACT_STR;
  strcpy(facts[2].s, "tsc");
  facts[3].key = "dmi_product", facts[3].type = SLEEPACC_FACT_UNKNOWN;
  sleepacc_fact_fields(facts, 4, rows);
  CHECK(rows[4].name == NULL);
  for (int i = 0; i < 4; i++) CHECK(rows[i].name == facts[i].key && rows[i].sub == NULL);
  CHECK(rows[0].type == SLEEPACC_FIELD_INT64);
  CHECK(*(const int64_t *)((const char *)facts + rows[0].offset) == 250);
  CHECK(rows[1].type == SLEEPACC_FIELD_DOUBLE);
  CHECK(*(const double *)((const char *)facts + rows[1].offset) == 0.5);
  CHECK(rows[2].type == SLEEPACC_FIELD_TEXT && strcmp((const char *)facts + rows[2].offset, "tsc") == 0);
  CHECK(rows[3].type == SLEEPACC_FIELD_NULL);
  sleepacc_fact_fields(facts, 0, rows);
  CHECK(rows[0].name == NULL);
}

static void test_host_facts_as_fields(void) {
  static sleepacc_fact facts[SLEEPACC_MAX_FACTS];
  sleepacc_field rows[SLEEPACC_MAX_FACTS + 1];
  size_t count = 0, n = 0;
  CHECK(sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count) == 0 && count > 0);
  sleepacc_fact_fields(facts, count, rows);
  for (const sleepacc_field *f = rows; f->name; f++, n++) {
    const sleepacc_fact *fact = &facts[n];
    CHECK(f->offset >= n * sizeof *fact && f->offset < (n + 1) * sizeof *fact);
    CHECK(strcmp(f->name, fact->key) == 0);
    CHECK((fact->type == SLEEPACC_FACT_UNKNOWN) == (f->type == SLEEPACC_FIELD_NULL));
  }
  CHECK(n == count);
}

int main(void) {
  TEST(test_clocks_fields);
  TEST(test_fact_fields);
  TEST(test_host_facts_as_fields);
  return check_summary();
}
