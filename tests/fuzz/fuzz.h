/*
 * fuzz.h -- shared helpers of the libFuzzer targets in tests/fuzz/.
 *
 * Each target defines LLVMFuzzerTestOneInput.  Built with clang
 * -fsanitize=fuzzer,address,undefined by `make fuzz`, or linked with
 * replay.c (a standalone driver, any compiler) by `make test-reliability`
 * to replay tests/fuzz/corpus/<target>/ and the kept crash inputs.
 *
 * A failed invariant calls FUZZ_CHECK's abort(), which libFuzzer reports
 * as a crash and keeps as crash-<sha1>; the replay driver exits non-zero.
 */
#ifndef SLEEPACC_FUZZ_H
#define SLEEPACC_FUZZ_H

#include "sleepacc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                      \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: invariant failed: %s: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                                \
      fputc('\n', stderr);                                                         \
      abort();                                                                     \
    }                                                                              \
  } while (0)

/* A cursor over the input; reads past the end yield zeros. */
typedef struct fuzz_in {
  const uint8_t *p;
  size_t n;
} fuzz_in;

static inline uint64_t fuzz_u64(fuzz_in *in, size_t bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < bytes; i++) {
    uint8_t b = 0;
    if (in->n > 0) {
      b = *in->p++;
      in->n--;
    }
    v |= (uint64_t)b << (8 * i);
  }
  return v;
}
static inline uint8_t fuzz_u8(fuzz_in *in) { return (uint8_t)fuzz_u64(in, 1); }
static inline int64_t fuzz_i64(fuzz_in *in) { return (int64_t)fuzz_u64(in, 8); }
static inline int32_t fuzz_i32(fuzz_in *in) { return (int32_t)(uint32_t)fuzz_u64(in, 4); }
static inline double fuzz_double(fuzz_in *in) {
  uint64_t bits = fuzz_u64(in, 8);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d; /* any bit pattern: NaN, inf, denormals */
}
/* A NUL-terminated copy of up to max bytes (length from the input). */
static inline char *fuzz_str(fuzz_in *in, size_t max) {
  size_t len = fuzz_u8(in) % (max + 1);
  if (len > in->n) len = in->n;
  char *s = malloc(len + 1);
  if (!s) abort();
  memcpy(s, in->p, len);
  s[len] = '\0';
  in->p += len;
  in->n -= len;
  return s;
}

/* Stats are ordered: min <= median <= p90 <= p99 <= p999 <= max. */
static inline int fuzz_stats_ordered(const sleepacc_stats *s) {
  return s->min <= s->median && s->median <= s->p90 && s->p90 <= s->p99 &&
         s->p99 <= s->p999 && s->p999 <= s->max;
}

#endif
