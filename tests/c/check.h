/* check.h -- a tiny test harness for the C tests: CHECK() records failures,
 * TEST() runs a function, and check_summary() prints "N passed, N failed". */
#ifndef SLEEPACC_CHECK_H
#define SLEEPACC_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int check__passed, check__failed, check__cur_failed;

#define CHECK(cond) do { if (!(cond)) { check__cur_failed = 1; \
  fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECKF(cond, ...) do { if (!(cond)) { check__cur_failed = 1; \
  fprintf(stderr, "  FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
#define TEST(fn) do { check__cur_failed = 0; fn(); \
  if (check__cur_failed) { check__failed++; fprintf(stderr, "not ok %s\n", #fn); } \
  else { check__passed++; printf("ok %s\n", #fn); } } while (0)

static int check_summary(void) {
  printf("%d passed, %d failed\n", check__passed, check__failed);
  return check__failed ? 1 : 0;
}
#endif
