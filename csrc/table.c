/*
 * table.c -- text rendered by the core, so C, Python and Lua print the
 * same bytes: Go-style durations, the `irtt sleep` table and a wide table.
 *
 * Owns: sleepacc_format_duration, sleepacc_table_irtt, sleepacc_table_wide,
 * sleepacc_row_from_result, sleepacc_row_fields, sleepacc_table_style,
 * sleepacc_table_text (a style by its one rule, the size then the text).
 *
 * Buffer contract (all three functions): the result is NUL-terminated in
 * buf (cap bytes) and its length (without the NUL) is returned.  When cap
 * is too small the return is -ENOSPC, *needed (tables, when not NULL) gets
 * the size required including the NUL, and buf holds a NUL-terminated
 * prefix when cap > 0.  Nothing is ever written at or beyond buf + cap.
 * Sizes are found by formatting once into a measuring writer, so the
 * needed size is exactly what a second call would write.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------
 * A bounded writer that keeps counting past the end of its buffer.
 * ------------------------------------------------------------------ */
typedef struct writer {
  char *buf;  /* destination (may be NULL when cap == 0) */
  size_t cap; /* its size in bytes */
  size_t len; /* bytes produced so far (may exceed cap) */
} writer;

static void w_put(writer *w, const char *s, size_t n)
{
  if (w->len < w->cap) {
    size_t room = w->cap - 1 - w->len; /* keep one byte for the NUL */
    size_t k = n < room ? n : room;
    memcpy(w->buf + w->len, s, k);
    w->buf[w->len + k] = '\0';
  }
  w->len += n;
}

static void w_str(writer *w, const char *s)
{
  w_put(w, s, strlen(s));
}

static void w_spaces(writer *w, size_t n)
{
  static const char sp[] = "                                ";
  while (n > 0) {
    size_t k = n < sizeof sp - 1 ? n : sizeof sp - 1;
    w_put(w, sp, k);
    n -= k;
  }
}

/* Display width of UTF-8 text: one column per code point (this is also
 * how Go's fmt counts padding: runes, not bytes). */
static size_t text_width(const char *s)
{
  size_t n = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80)
      n++;
  return n;
}

/* s right-aligned in `width` columns (Go "%<width>s"). */
static void w_right(writer *w, const char *s, size_t width)
{
  size_t tw = text_width(s);
  if (tw < width)
    w_spaces(w, width - tw);
  w_str(w, s);
}

/* s left-aligned in `width` columns (Go "%-<width>s"). */
static void w_left(writer *w, const char *s, size_t width)
{
  size_t tw = text_width(s);
  w_str(w, s);
  if (tw < width)
    w_spaces(w, width - tw);
}

/* Finish: NUL-terminate and map to the return convention above. */
static int w_finish(writer *w, size_t *needed)
{
  size_t need = w->len + 1;
  if (w->len > (size_t)INT_MAX || need > w->cap) {
    if (needed)
      *needed = need;
    if (w->cap > 0 && w->buf)
      w->buf[w->len < w->cap ? w->len : w->cap - 1] = '\0';
    return -ENOSPC;
  }
  w->buf[w->len] = '\0';
  if (needed)
    *needed = need;
  return (int)w->len;
}

/* ---------------------------------------------------------------------
 * Go's time.Duration.String(), byte for byte (golang/go src/time/time.go,
 * func (d Duration) String, with its helpers fmtFrac and fmtInt):
 *   - 0 is "0s";
 *   - below one second a single unit with the leading digit non-zero:
 *     ns with no fraction, µs (U+00B5, bytes C2 B5) with up to 3 fraction
 *     digits, ms with up to 6; trailing zeros and a bare '.' are dropped;
 *   - from one second on "72h3m0.5s": hours, minutes (only when non-zero
 *     or hours follow), then seconds with up to 9 fraction digits;
 *   - negative values get a leading '-' (INT64_MIN included).
 * ------------------------------------------------------------------ */
#define GODUR_MAX 32 /* longest: "-2562047h47m16.854775808s" + NUL fits */

/* Fraction of v / 10^prec into the tail of buf[0..w), omitting trailing
 * zeros (and the '.' when the fraction is 0).  Returns the new start and
 * stores v / 10^prec in *rest. */
static size_t go_frac(char *buf, size_t w, uint64_t v, int prec, uint64_t *rest)
{
  int print = 0;
  for (int i = 0; i < prec; i++) {
    unsigned digit = (unsigned)(v % 10);
    print = print || digit != 0;
    if (print)
      buf[--w] = (char)('0' + digit);
    v /= 10;
  }
  if (print)
    buf[--w] = '.';
  *rest = v;
  return w;
}

/* Decimal v into the tail of buf[0..w).  Returns the new start. */
static size_t go_int(char *buf, size_t w, uint64_t v)
{
  if (v == 0) {
    buf[--w] = '0';
    return w;
  }
  while (v > 0) {
    buf[--w] = (char)('0' + v % 10);
    v /= 10;
  }
  return w;
}

/* Go duration text of ns into tmp[GODUR_MAX]; returns a pointer into it. */
static const char *go_duration(int64_t ns, char tmp[GODUR_MAX])
{
  size_t w = GODUR_MAX - 1;
  tmp[w] = '\0';
  int neg = ns < 0;
  uint64_t u = neg ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  const uint64_t second = 1000000000u;

  if (u < second) {
    int prec;
    tmp[--w] = 's';
    if (u == 0) {
      tmp[--w] = '0';
      return tmp + w;
    } else if (u < 1000u) {
      prec = 0;
      tmp[--w] = 'n';
    } else if (u < 1000000u) {
      prec = 3;
      tmp[--w] = (char)0xB5; /* U+00B5 MICRO SIGN = C2 B5 */
      tmp[--w] = (char)0xC2;
    } else {
      prec = 6;
      tmp[--w] = 'm';
    }
    w = go_frac(tmp, w, u, prec, &u);
    w = go_int(tmp, w, u);
  } else {
    tmp[--w] = 's';
    w = go_frac(tmp, w, u, 9, &u);
    w = go_int(tmp, w, u % 60); /* u is whole seconds */
    u /= 60;
    if (u > 0) { /* whole minutes */
      tmp[--w] = 'm';
      w = go_int(tmp, w, u % 60);
      u /= 60;
      if (u > 0) { /* whole hours: Go stops here (days vary) */
        tmp[--w] = 'h';
        w = go_int(tmp, w, u);
      }
    }
  }
  if (neg)
    tmp[--w] = '-';
  return tmp + w;
}

/* A duration the way Go prints it; see sleepacc.h and go_duration. */
int sleepacc_format_duration(int64_t ns, char *buf, size_t cap)
{
  if (!buf && cap > 0)
    return -EINVAL;
  char tmp[GODUR_MAX];
  writer w = {buf, cap, 0};
  w_str(&w, go_duration(ns, tmp));
  return w_finish(&w, NULL);
}

/* ---------------------------------------------------------------------
 * Row helpers.
 * ------------------------------------------------------------------ */

/* a - b, saturated to the int64 range. */
static int64_t sub_sat(int64_t a, int64_t b)
{
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* Error of an order statistic v of row r: v - requested for relative
 * rows (v is an actual duration), v itself for periodic rows (lateness). */
static int64_t row_err(const sleepacc_row *r, int64_t v)
{
  return r->mode == SLEEPACC_MODE_PERIODIC ? v : sub_sat(v, r->requested_ns);
}

/* Go's float64 -> time.Duration conversion truncates toward zero; values
 * outside int64 (or NaN) are clamped here instead of being undefined. */
static int64_t trunc_to_ns(double x)
{
  if (isnan(x))
    return 0;
  if (x >= 9223372036854775807.0)
    return INT64_MAX;
  if (x <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)x; /* C conversion truncates toward zero too */
}

/* Go's "%<width>.1f": like C's, except that infinities print as "+Inf" /
 * "-Inf" and NaN as "NaN" (golang/go src/fmt/format.go, fmtFloat). */
static void w_go_float1(writer *w, double x, size_t width)
{
  char tmp[400];
  if (isnan(x))
    snprintf(tmp, sizeof tmp, "NaN");
  else if (isinf(x))
    snprintf(tmp, sizeof tmp, "%s", x > 0 ? "+Inf" : "-Inf");
  else {
    locale_t prev = sleepacc__c_numbers_enter(); /* Go's point, whatever the locale */
    snprintf(tmp, sizeof tmp, "%.1f", x);
    sleepacc__c_numbers_leave(prev);
  }
  w_right(w, tmp, width);
}

/* ---------------------------------------------------------------------
 * The `irtt sleep` table, byte for byte.
 *
 * Source of truth: heistp/irtt, irtt_sleep.go (cli_sleep.go in older
 * trees), func runSleep, with printf() from irtt_print.go, which appends
 * "\n" to every format and writes to stdout without a tabwriter:
 *
 *   printf("Testing sleep accuracy...")
 *   printf("")
 *   printf("Sleep Duration        Mean Error       %% Error")
 *   per duration d:
 *     errorNs := float64(errTotal) / float64(i)      // mean of elapsed - d
 *     percentError := 100 * errorNs / float64(d)
 *     printf("%14s%18s%14.1f", d, time.Duration(errorNs), percentError)
 *
 * So the output is exactly these lines and no trailing blank line; the
 * mean error is truncated toward zero (not rounded) to whole ns while the
 * percentage uses the unrounded mean (seed: 1ns -> "381ns" and 38194.1%,
 * i.e. 381.941 ns); Go pads %s by runes, so "µs" counts one column.
 *
 * Here a row's mean error is stats.mean - requested_ns (relative rows) or
 * stats.mean (periodic rows: mean lateness).  irtt never asks for 0 ns (it
 * would divide by zero); for requested 0 the percentage is what Go prints
 * for 100*e/0.0: "+Inf", "-Inf" or, for e == 0, "NaN".  A row with no
 * samples prints "n/a" as its mean error and "NaN" as its percentage.
 *
 * irtt's table has no method column.  Rows of several methods give one
 * such table per method, in order of first appearance, each headed by a
 * line "== <method>" and separated by a blank line; each block is still
 * irtt's bytes.
 * ------------------------------------------------------------------ */
/* 1 when rows a and b belong to the same method (NULL names are one group). */
static int same_method(const sleepacc_row *a, const sleepacc_row *b)
{
  if (!a->method || !b->method)
    return !a->method && !b->method;
  return strcmp(a->method, b->method) == 0;
}

/* One irtt table of the rows of rows[first]'s method, in their order. */
static void irtt_block(writer *w, const sleepacc_row *rows, size_t n, size_t first)
{
  char tmp[GODUR_MAX];
  w_str(w, "Testing sleep accuracy...\n");
  w_str(w, "\n");
  w_str(w, "Sleep Duration        Mean Error       % Error\n");
  for (size_t i = first; i < n; i++) {
    const sleepacc_row *r = &rows[i];
    if (!same_method(r, &rows[first]))
      continue;
    w_right(w, go_duration(r->requested_ns, tmp), 14);
    if (r->stats.n <= 0) {
      w_right(w, "n/a", 18);
      w_go_float1(w, NAN, 14);
    } else {
      double err = r->mode == SLEEPACC_MODE_PERIODIC
                       ? r->stats.mean
                       : r->stats.mean - (double)r->requested_ns;
      w_right(w, go_duration(trunc_to_ns(err), tmp), 18);
      w_go_float1(w, 100.0 * err / (double)r->requested_ns, 14);
    }
    w_str(w, "\n");
  }
}

int sleepacc_table_irtt(const sleepacc_row *rows, size_t n, char *buf, size_t cap, size_t *needed)
{
  if ((!rows && n > 0) || (!buf && cap > 0))
    return -EINVAL;
  writer w = {buf, cap, 0};
  int several = 0;
  for (size_t i = 1; i < n && !several; i++)
    several = !same_method(&rows[i], &rows[0]);
  if (!several) { /* irtt's own output, byte for byte */
    irtt_block(&w, rows, n, 0);
    return w_finish(&w, needed);
  }
  /* several methods: one irtt table per method, in order of first
   * appearance, each under "== <method>" and after a blank line */
  for (size_t i = 0, blocks = 0; i < n; i++) {
    size_t j = 0;
    while (j < i && !same_method(&rows[j], &rows[i]))
      j++;
    if (j < i)
      continue; /* this method has its table already */
    if (blocks++ > 0)
      w_str(&w, "\n");
    w_str(&w, "== ");
    w_str(&w, rows[i].method ? rows[i].method : "?");
    w_str(&w, "\n");
    irtt_block(&w, rows, n, i);
  }
  return w_finish(&w, needed);
}

/* ---------------------------------------------------------------------
 * The wide table.
 *
 *   method               request     n  median err  p99 err  max err  CPU %
 *   clock_nanosleep          1ms  1000     57.04µs  81.2µs  160µs    0.9
 *   clock_nanosleep_abs      1ms  1000        52µs     90µs    400µs      -
 *
 * It fits an 80-column terminal: the errors are rounded to four
 * significant digits (at most 8 columns, "-999.9µs"; the records keep
 * them to the ns), so with the longest method name (19), a request of up
 * to 7 columns and n below ten million a line is at most 74 columns.
 * One line per row plus a header.  Columns are separated by two spaces;
 * the method is left-aligned, everything else right-aligned, and every
 * column is as wide as its widest cell (so the table is aligned whatever
 * the names).  Durations use the Go-style formatter above (the same unit
 * text as the irtt table; the request exact to the ns).  Errors are order statistics
 * minus the request for relative rows, and the lateness order statistics
 * themselves for periodic rows.  A row with no samples shows "-" in its
 * error columns; CPU % is "%.1f", or "-" when unknown (< 0).
 * ------------------------------------------------------------------ */
enum { WIDE_COLS = 7 };
static const char *const wide_head[WIDE_COLS] = {
  "method", "request", "n", "median err", "p99 err", "max err", "CPU %"};

/* ns rounded to four significant digits, half away from zero (the
 * wide table's errors: 3831636 -> 3832000, shown "3.832ms"). */
static int64_t four_digits(int64_t ns)
{
  if (ns > -10000 && ns < 10000)
    return ns;
  uint64_t u = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
  uint64_t unit = 1;
  for (uint64_t v = u; v >= 10000; v /= 10)
    unit *= 10;
  uint64_t q = u / unit, rem = u % unit;
  if (2 * rem >= unit)
    q++;
  uint64_t r = q * unit;
  if (r > (uint64_t)INT64_MAX) /* only near the int64 ends (q * unit < 2^64) */
    r = (uint64_t)INT64_MAX;
  return ns < 0 ? -(int64_t)r : (int64_t)r;
}

/* Cell c (0..WIDE_COLS-1) of row r as text into cell (cellsz bytes). */
static void wide_cell(const sleepacc_row *r, int c, char *cell, size_t cellsz)
{
  char tmp[GODUR_MAX];
  switch (c) {
  case 0:
    snprintf(cell, cellsz, "%s", r->method ? r->method : "?");
    break;
  case 1:
    snprintf(cell, cellsz, "%s", go_duration(r->requested_ns, tmp));
    break;
  case 2:
    snprintf(cell, cellsz, "%lld", (long long)r->stats.n);
    break;
  case 3:
  case 4:
  case 5: {
    int64_t v = c == 3 ? r->stats.median : c == 4 ? r->stats.p99 : r->stats.max;
    if (r->stats.n <= 0)
      snprintf(cell, cellsz, "-");
    else
      snprintf(cell, cellsz, "%s", go_duration(four_digits(row_err(r, v)), tmp));
    break;
  }
  default:
    if (r->cpu_percent < 0 || isnan(r->cpu_percent))
      snprintf(cell, cellsz, "-");
    else {
      locale_t prev = sleepacc__c_numbers_enter(); /* a point, whatever the locale */
      snprintf(cell, cellsz, "%.1f", r->cpu_percent);
      sleepacc__c_numbers_leave(prev);
    }
    break;
  }
}

int sleepacc_table_wide(const sleepacc_row *rows, size_t n, char *buf, size_t cap, size_t *needed)
{
  if ((!rows && n > 0) || (!buf && cap > 0))
    return -EINVAL;
  size_t width[WIDE_COLS];
  char cell[400];
  for (int c = 0; c < WIDE_COLS; c++)
    width[c] = text_width(wide_head[c]);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < WIDE_COLS; c++) {
      wide_cell(&rows[i], c, cell, sizeof cell);
      size_t tw = text_width(cell);
      if (tw > width[c])
        width[c] = tw;
    }

  writer w = {buf, cap, 0};
  for (size_t i = 0; i <= n; i++) { /* i == 0: the header */
    for (int c = 0; c < WIDE_COLS; c++) {
      const char *text = wide_head[c];
      if (i > 0) {
        wide_cell(&rows[i - 1], c, cell, sizeof cell);
        text = cell;
      }
      if (c > 0)
        w_spaces(&w, 2);
      if (c == 0)
        /* no trailing spaces after the last column; pad the first */
        w_left(&w, text, width[c]);
      else
        w_right(&w, text, width[c]);
    }
    w_str(&w, "\n");
  }
  return w_finish(&w, needed);
}

void sleepacc_row_from_result(const sleepacc_result *res, sleepacc_row *row)
{
  row->method = res->method;
  row->requested_ns = res->requested_ns;
  row->mode = sleepacc_mode_from_name(res->mode);
  row->stats = res->stats;
  row->cpu_percent = res->cpu_percent;
}

#define SLEEPACC__ROW(f, type, sub) \
  {#f, offsetof(sleepacc_row, f), type, sub, SLEEPACC_FIELD_REQUIRED}
const sleepacc_field sleepacc_row_fields[] = {
  SLEEPACC__ROW(method, SLEEPACC_FIELD_STRING, NULL),
  SLEEPACC__ROW(requested_ns, SLEEPACC_FIELD_INT64, NULL),
  SLEEPACC__ROW(mode, SLEEPACC_FIELD_MODE, NULL),
  SLEEPACC__ROW(stats, SLEEPACC_FIELD_NESTED, sleepacc_stats_fields),
  SLEEPACC__ROW(cpu_percent, SLEEPACC_FIELD_DOUBLE, NULL),
  {NULL, 0, 0, NULL, 0},
};

/* The renderer of each style, in the order of its name
 * (sleepacc_table_style_name, names.c). */
static const sleepacc_table_fn table_renderers[] = {sleepacc_table_irtt, sleepacc_table_wide};

sleepacc_table_fn sleepacc_table_style(const char *style)
{
  const char *name;
  for (int i = 0; style && (name = sleepacc_table_style_name(i)) != NULL; i++)
    if (strcmp(style, name) == 0)
      return i < (int)(sizeof table_renderers / sizeof table_renderers[0]) ? table_renderers[i] : NULL;
  return NULL;
}

/* The rule of a style in words, one for both bindings (the style names;
 * a C test checks them). */
static const char table_style_words[] = "must be 'irtt' or 'wide'";

int sleepacc_table_text(const char *style, const sleepacc_row *rows, size_t n,
                        void *(*alloc)(void *ctx, size_t bytes), void *ctx, char **text,
                        const char **words)
{
  sleepacc_table_fn render = sleepacc_table_style(style ? style : "irtt");
  size_t needed = 0;
  int len;
  if (words)
    *words = NULL;
  if (!text || !alloc)
    return -EFAULT;
  *text = NULL;
  if (!render) {
    if (words)
      *words = table_style_words;
    return -EINVAL;
  }
  /* the size first, then the table */
  len = render(rows, n, NULL, 0, &needed);
  if (len >= 0)
    needed = (size_t)len + 1;
  else if (len != -ENOSPC)
    return len;
  if ((*text = (char *)alloc(ctx, needed)) == NULL)
    return -ENOMEM;
  return render(rows, n, *text, needed, NULL);
}
