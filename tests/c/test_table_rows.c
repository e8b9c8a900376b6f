/* test_table_rows.c -- sleepacc_row_fields and sleepacc_table_style
 * (csrc/table.c): the row a binding fills by field table (every key
 * required, the mode by name) and the renderer by style name. */
#include "check.h"
#include "sleepacc.h"

#include <string.h>

static const sleepacc_field *row_field(const char *name) {
  for (const sleepacc_field *f = sleepacc_row_fields; f->name; f++)
    if (strcmp(f->name, name) == 0) return f;
  return NULL;
}

static void test_row_fields(void) {
  static const char *const keys[] = {"method", "requested_ns", "mode", "stats", "cpu_percent"};
  sleepacc_row row;
  size_t n = 0;
  for (const sleepacc_field *f = sleepacc_row_fields; f->name; f++, n++) {
    CHECK(n < 5 && strcmp(f->name, keys[n]) == 0);
    CHECK(f->flags & SLEEPACC_FIELD_REQUIRED);
  }
  CHECK(n == 5);
  CHECK(row_field("mode")->type == SLEEPACC_FIELD_MODE);
  CHECK(row_field("stats")->type == SLEEPACC_FIELD_NESTED);
  CHECK(row_field("stats")->sub == sleepacc_stats_fields);
  CHECK(row_field("cpu_percent")->type == SLEEPACC_FIELD_DOUBLE && row_field("cpu_percent")->is_double);
  /* the offsets address the struct's members: fill by table, read by name */
  memset(&row, 0, sizeof row);
  *(const char **)((char *)&row + row_field("method")->offset) = "nanosleep";
  *(int64_t *)((char *)&row + row_field("requested_ns")->offset) = 1000;
  *(int *)((char *)&row + row_field("mode")->offset) = SLEEPACC_MODE_PERIODIC;
  *(double *)((char *)&row + row_field("cpu_percent")->offset) = 2.5;
  ((sleepacc_stats *)((char *)&row + row_field("stats")->offset))->n = 7;
  CHECK(strcmp(row.method, "nanosleep") == 0 && row.requested_ns == 1000);
  CHECK(row.mode == SLEEPACC_MODE_PERIODIC && row.cpu_percent == 2.5 && row.stats.n == 7);
}

static void test_table_style(void) {
  sleepacc_row row;
  char a[2048], b[2048];
  memset(&row, 0, sizeof row);
  row.method = "nanosleep", row.requested_ns = 1000000, row.stats.n = 1, row.cpu_percent = -1;
  CHECK(sleepacc_table_style("irtt") == sleepacc_table_irtt);
  CHECK(sleepacc_table_style("wide") == sleepacc_table_wide);
  CHECK(sleepacc_table_style("WIDE") == NULL && sleepacc_table_style("") == NULL);
  CHECK(sleepacc_table_style(NULL) == NULL);
  CHECK(sleepacc_table_style("wide")(&row, 1, a, sizeof a, NULL) ==
        sleepacc_table_wide(&row, 1, b, sizeof b, NULL));
  CHECK(strcmp(a, b) == 0);
}

int main(void) {
  TEST(test_row_fields);
  TEST(test_table_style);
  return check_summary();
}
