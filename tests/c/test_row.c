/* test_row.c -- sleepacc_row_from_result (csrc/table.c): a run's record
 * becomes the table row every binding renders (mode by name back to its
 * value), and the row renders as the record's method and statistics. */
#include "check.h"
#include "sleepacc.h"

#include <string.h>

static void test_row_from_result(void) {
  sleepacc_result r;
  sleepacc_row row;
  char buf[2048];
  memset(&r, 0, sizeof r);
  r.method = "nanosleep", r.mode = "periodic", r.requested_ns = 1000000;
  r.stats.n = 5, r.stats.min = 10, r.stats.median = 20, r.stats.max = 90;
  r.cpu_percent = 1.5;
  memset(&row, 0xff, sizeof row);
  sleepacc_row_from_result(&r, &row);
  CHECK(row.method == r.method && row.requested_ns == 1000000 && row.mode == SLEEPACC_MODE_PERIODIC);
  CHECK(row.stats.n == 5 && row.stats.median == 20 && row.cpu_percent == 1.5);
  r.mode = "relative";
  sleepacc_row_from_result(&r, &row);
  CHECK(row.mode == SLEEPACC_MODE_RELATIVE);
  CHECK(sleepacc_table_wide(&row, 1, buf, sizeof buf, NULL) > 0 && strstr(buf, "nanosleep"));
}

int main(void) {
  TEST(test_row_from_result);
  return check_summary();
}
