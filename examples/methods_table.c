/*
 * methods_table.c -- the closing-note figure: every available method at
 * 0, 1 us, 100 us, 1 ms and 10 ms (relative mode), with median error, p99
 * error and CPU %, rendered by the core's wide table; then the harness
 * floor: the `clock` method's median next to one back-to-back clock read.
 *
 *   build/examples/methods_table [n [budget_ms]]   (defaults: 200 samples, 300 ms)
 *
 * Each cell stops at n samples or its time budget, whichever comes first,
 * after 5 warm-up samples.  Baseline rows that ignore the request
 * (granularity 0) are measured at 0 only.
 */
#include "sleepacc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sleepacc_run run; /* large (embeds a histogram) */

int main(int argc, char **argv) {
  static const int64_t reqs[] = {0, 1000, 100000, 1000000, 10000000};
  const size_t nreq = sizeof reqs / sizeof reqs[0];
  int64_t n = argc > 1 ? atoll(argv[1]) : 200;
  int64_t budget = (argc > 2 ? atoll(argv[2]) : 300) * 1000000LL;
  size_t nm = sleepacc_method_count(), nrows = 0;
  sleepacc_row *rows = calloc(nm * nreq, sizeof *rows);
  int64_t *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
  int64_t *scratch = malloc((size_t)(n > 0 ? n : 1) * sizeof *scratch);
  int64_t clock_median = -1;
  if (!rows || !buf || !scratch || n <= 0 || budget < 0) {
    fprintf(stderr, "usage: %s [n>0 [budget_ms>=0]]\n", argv[0]);
    return 2;
  }

  for (size_t i = 0; i < nm; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (!sleepacc_method_available(m)) {
      fprintf(stderr, "%s: not available here\n", m->name);
      continue;
    }
    for (size_t r = 0; r < nreq; r++) {
      sleepacc_config c;
      /* rows that ignore the request (granularity 0: syscall, clock) are
       * floors: measured once, at 0 */
      if (m->granularity_ns == 0 && reqs[r] != 0) continue;
      sleepacc_row *row = &rows[nrows];
      int rc;
      memset(&c, 0, sizeof c);
      c.method = m;
      c.mode = SLEEPACC_MODE_RELATIVE;
      c.duration_ns = reqs[r];
      c.n = n;
      c.budget_ns = budget;
      c.warmup = 5;
      sleepacc_env_default(&c.env);
      rc = sleepacc_measure(&c, buf, (size_t)n, &run);
      if (rc != 0) {
        fprintf(stderr, "%s at %lld ns: %s\n", m->name, (long long)reqs[r],
                sleepacc_strerror(rc));
        continue;
      }
      row->method = m->name;
      row->requested_ns = reqs[r];
      row->mode = SLEEPACC_MODE_RELATIVE;
      if (sleepacc_run_stats(&run, scratch, &row->stats) != 0) continue;
      row->cpu_percent = run.wall_ns > 0 && run.cpu_ns >= 0
                             ? 100.0 * (double)run.cpu_ns / (double)run.wall_ns
                             : -1.0;
      if (strcmp(m->name, "clock") == 0 && reqs[r] == 0) clock_median = row->stats.median;
      nrows++;
    }
  }

  size_t need = 0;
  char probe[1];
  int len = sleepacc_table_wide(rows, nrows, probe, sizeof probe, &need);
  char *text = malloc(need > 0 ? need : 1);
  if (len == -ENOSPC && text) len = sleepacc_table_wide(rows, nrows, text, need, NULL);
  if (len < 0 || !text) {
    fprintf(stderr, "table: %s\n", sleepacc_strerror(len));
    return 1;
  }
  fputs(text, stdout);

  sleepacc_clock_info ci;
  sleepacc_clock_info_get(SLEEPACC_CLOCK_MONOTONIC, 10000, &ci);
  printf("\nharness floor: `clock` method median %lld ns; one back-to-back "
         "CLOCK_MONOTONIC read %lld ns (resolution %lld ns)\n",
         (long long)clock_median, (long long)ci.read_cost_ns, (long long)ci.resolution_ns);
  free(text);
  free(rows);
  free(buf);
  free(scratch);
  return 0;
}
