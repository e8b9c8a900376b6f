/*
 * pacer_60hz.c -- a frame loop paced by the core's pacer: N ticks at a
 * period (default 60 ticks of 1/60 s), then the lateness the pacer saw.
 *
 *   build/examples/pacer_60hz [ticks [period_us]]
 *
 * Built against an installed libsleepacc with
 *   cc pacer_60hz.c $(pkg-config --cflags --libs sleepacc)
 */
#include "sleepacc.h"

#include <stdio.h>
#include <stdlib.h>

static sleepacc_pacer pacer; /* caller-owned; embeds its sleeper */

int main(int argc, char **argv) {
  long ticks = argc > 1 ? atol(argv[1]) : 60;
  long period_us = argc > 2 ? atol(argv[2]) : 16667;
  sleepacc_pacer_stats st;
  int rc;
  if (ticks <= 0 || period_us <= 0) {
    fprintf(stderr, "usage: %s [ticks>0 [period_us>0]]\n", argv[0]);
    return 2;
  }
  rc = sleepacc_pacer_open(&pacer, period_us * 1000LL, "auto", SLEEPACC_MISSED_SKIP);
  if (rc < 0) {
    fprintf(stderr, "pacer: %s: %s\n", sleepacc_errname(rc), sleepacc_strerror(rc));
    return 1;
  }
  for (long i = 0; i < ticks;) {
    int64_t deadline = 0;
    rc = sleepacc_pacer_wait(&pacer, SLEEPACC_CHUNK_NS, &deadline);
    if (rc == 1) i++;                /* a tick: one frame's work would go here */
    else if (rc < 0 && rc != -EINTR) break;
  }
  sleepacc_pacer_stats_get(&pacer, &st);
  sleepacc_pacer_close(&pacer);
  if (rc < 0 && rc != -EINTR) {
    fprintf(stderr, "wait: %s\n", sleepacc_strerror(rc));
    return 1;
  }
  printf("sleepacc %s: %lld ticks of %ld us, %lld missed; lateness median %lld ns, "
         "p99 %lld ns, max %lld ns\n",
         SLEEPACC_VERSION, (long long)st.count, period_us, (long long)st.misses,
         (long long)st.lateness.median, (long long)st.lateness.p99, (long long)st.lateness.max);
  return 0;
}
