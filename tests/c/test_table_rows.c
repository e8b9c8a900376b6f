/* test_table_rows.c -- sleepacc_row_fields and sleepacc_table_style
 * (csrc/table.c): the row a binding fills by field table (every key
 * required, the mode by name) and the renderer by style name. */
#include "check.h"
#include "sleepacc_binding.h"

#include <errno.h>
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
  CHECK(row_field("cpu_percent")->type == SLEEPACC_FIELD_DOUBLE);
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

/* sleepacc_table_text -- the style's one rule and words,
 * the size then the text in the binding's memory, asked for once. */
typedef struct pool {
  char mem[4096];
  size_t asked;
  int calls, fail;
} pool;

static void *pool_alloc(void *ctx, size_t bytes) {
  pool *p = (pool *)ctx;
  p->calls++, p->asked = bytes;
  return p->fail || bytes > sizeof p->mem ? NULL : p->mem;
}

static void test_table_text(void) {
  sleepacc_row row;
  pool p = {{0}, 0, 0, 0};
  char want[2048];
  char *text = NULL;
  const char *words = NULL;
  int len;
  memset(&row, 0, sizeof row);
  row.method = "nanosleep", row.requested_ns = 1000000, row.stats.n = 1, row.cpu_percent = -1;
  len = sleepacc_table_text("wide", &row, 1, pool_alloc, &p, &text, &words);
  CHECK(len == sleepacc_table_wide(&row, 1, want, sizeof want, NULL) && len > 0);
  CHECK(text == p.mem && !strcmp(text, want) && p.calls == 1 && p.asked == (size_t)len + 1 && !words);
  len = sleepacc_table_text(NULL, &row, 1, pool_alloc, &p, &text, &words); /* NULL: irtt */
  CHECK(len == sleepacc_table_irtt(&row, 1, want, sizeof want, NULL) && !strcmp(text, want));
  CHECK(sleepacc_table_text("irtt", &row, 0, pool_alloc, &p, &text, &words) >= 0 && !words);
  /* an unknown style: the rule's words, naming every style; nothing asked for */
  p.calls = 0;
  CHECK(sleepacc_table_text("fancy", &row, 1, pool_alloc, &p, &text, &words) == -EINVAL);
  CHECK(words && !strcmp(words, "must be 'irtt' or 'wide'") && p.calls == 0 && text == NULL);
  CHECK(sleepacc_table_style("irtt") && sleepacc_table_style("wide"));
  CHECK(strstr(words, "'irtt'") && strstr(words, "'wide'"));
  p.fail = 1;
  CHECK(sleepacc_table_text("irtt", &row, 1, pool_alloc, &p, &text, &words) == -ENOMEM && !words);
  CHECK(sleepacc_table_text("irtt", &row, 1, NULL, &p, &text, &words) == -EFAULT);
}

int main(void) {
  TEST(test_row_fields);
  TEST(test_table_style);
  TEST(test_table_text);
  return check_summary();
}
