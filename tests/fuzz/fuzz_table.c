/*
 * fuzz_table.c -- the core's text renderers fed arbitrary rows and caps:
 * sleepacc_table_irtt, sleepacc_table_wide and sleepacc_format_duration.
 *
 * Input: style/cap bytes, then up to 6 rows (method: NULL, a registry
 * name or arbitrary bytes; requested_ns, mode, every stats field and
 * cpu_percent: arbitrary bits, NaN and inf included).
 *
 * Invariants (the buffer contract in table.c): the buffer is an exact-size
 * heap block (ASan sees any write past it); a return >= 0 is strlen(buf)
 * and < cap; -ENOSPC sets *needed > cap, and rendering again into
 * `needed` bytes writes exactly needed - 1; a cap of 0 with a NULL buffer
 * only measures; -EINVAL only for NULL rows with n > 0.
 */
#include "fuzz.h"

#define MAXROWS 6

typedef int (*render_fn)(const sleepacc_row *, size_t, char *, size_t, size_t *);

static void check_render(const char *what, render_fn fn, const sleepacc_row *rows, size_t n,
                         size_t cap) {
  char *buf = cap ? malloc(cap) : NULL;
  size_t needed = 0;
  int rc = fn(rows, n, buf, cap, &needed);
  if (rc >= 0) {
    FUZZ_CHECK((size_t)rc < cap, "%s: length %d with cap %zu", what, rc, cap);
    FUZZ_CHECK(strlen(buf) == (size_t)rc, "%s: strlen %zu != %d", what, strlen(buf), rc);
  } else {
    FUZZ_CHECK(rc == -ENOSPC, "%s: rc %d", what, rc);
    FUZZ_CHECK(needed > cap, "%s: needed %zu <= cap %zu", what, needed, cap);
    if (cap > 0) FUZZ_CHECK(strlen(buf) < cap, "%s: prefix not terminated", what);
    char *full = malloc(needed);
    size_t again = 0;
    int rc2 = fn(rows, n, full, needed, &again);
    FUZZ_CHECK(rc2 >= 0 && (size_t)rc2 == needed - 1, "%s: second render %d, needed %zu", what,
               rc2, needed);
    FUZZ_CHECK(strlen(full) == needed - 1, "%s: strlen", what);
    if (cap > 0) /* the prefix is the start of the full text */
      FUZZ_CHECK(strncmp(full, buf, strlen(buf)) == 0, "%s: prefix differs", what);
    free(full);
  }
  free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_in in = {data, size};
  sleepacc_row rows[MAXROWS];
  char *names[MAXROWS] = {0};
  size_t cap = (size_t)fuzz_u64(&in, 2);
  size_t n = fuzz_u8(&in) % (MAXROWS + 1);
  memset(rows, 0, sizeof rows);
  for (size_t i = 0; i < n; i++) {
    uint8_t kind = fuzz_u8(&in);
    if (kind % 3 == 0) {
      rows[i].method = NULL;
    } else if (kind % 3 == 1) {
      const sleepacc_method *m = sleepacc_method_at(kind % (sleepacc_method_count() + 1));
      rows[i].method = m ? m->name : "";
    } else {
      names[i] = fuzz_str(&in, 40);
      rows[i].method = names[i];
    }
    rows[i].requested_ns = fuzz_i64(&in);
    rows[i].mode = (kind & 0x80) ? fuzz_i32(&in) : (kind >> 3) & 1;
    rows[i].stats.n = fuzz_i64(&in);
    rows[i].stats.min = fuzz_i64(&in);
    rows[i].stats.max = fuzz_i64(&in);
    rows[i].stats.mean = fuzz_double(&in);
    rows[i].stats.std = fuzz_double(&in);
    rows[i].stats.median = fuzz_i64(&in);
    rows[i].stats.p90 = fuzz_i64(&in);
    rows[i].stats.p99 = fuzz_i64(&in);
    rows[i].stats.p999 = fuzz_i64(&in);
    rows[i].stats.undersleeps = fuzz_i64(&in);
    rows[i].cpu_percent = fuzz_double(&in);
  }
  /* caps around the interesting sizes: 0, tiny, whatever the input says */
  size_t caps[] = {0, 1, cap % 64, cap};
  for (size_t k = 0; k < sizeof caps / sizeof caps[0]; k++) {
    check_render("irtt", sleepacc_table_irtt, rows, n, caps[k]);
    check_render("wide", sleepacc_table_wide, rows, n, caps[k]);
  }
  /* NULL rows: only n == 0 is valid */
  {
    char b[8];
    size_t need = 0;
    FUZZ_CHECK(sleepacc_table_irtt(NULL, n ? n : 1, b, sizeof b, &need) == -EINVAL, "NULL rows");
    FUZZ_CHECK(sleepacc_table_wide(NULL, n ? n : 1, b, sizeof b, &need) == -EINVAL, "NULL rows");
    FUZZ_CHECK(sleepacc_table_irtt(rows, n, NULL, 5, &need) == -EINVAL, "NULL buf, cap 5");
  }
  /* Go durations of arbitrary values into arbitrary caps */
  for (size_t i = 0; i < n; i++) {
    int64_t vals[] = {rows[i].requested_ns, rows[i].stats.min, rows[i].stats.max};
    for (size_t j = 0; j < 3; j++) {
      size_t c = (size_t)(rows[i].stats.n & 63);
      char *b = c ? malloc(c) : NULL;
      int rc = sleepacc_format_duration(vals[j], b, c);
      if (rc >= 0) {
        FUZZ_CHECK((size_t)rc < c && strlen(b) == (size_t)rc, "duration %lld into %zu: %d",
                   (long long)vals[j], c, rc);
      } else {
        char big[64];
        int full = sleepacc_format_duration(vals[j], big, sizeof big);
        FUZZ_CHECK(rc == -ENOSPC && full >= 0 && (size_t)full >= c,
                   "duration %lld into %zu: %d (full %d)", (long long)vals[j], c, rc, full);
      }
      free(b);
    }
  }
  for (size_t i = 0; i < MAXROWS; i++) free(names[i]);
  return 0;
}
