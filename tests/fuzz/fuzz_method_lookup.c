/*
 * fuzz_method_lookup.c -- every by-name lookup of the core fed arbitrary
 * bytes: methods, strategies, policies, modes, missed-tick policies, and
 * the name/message tables fed arbitrary integers.
 *
 * Invariants: a lookup either finds the one row whose name is exactly the
 * input or reports "unknown"; every name function returns a valid string
 * or NULL for out-of-range values and round-trips; errno names/messages
 * are never NULL.
 */
#include "fuzz.h"

static void check_names(int32_t v) {
  const char *s;
  FUZZ_CHECK(sleepacc_strerror(v) != NULL, "strerror(%d)", v);
  FUZZ_CHECK(sleepacc_errname(v) != NULL, "errname(%d)", v);
  FUZZ_CHECK(sleepacc_family_name((sleepacc_family)v) != NULL || v < 0 || v > 3,
             "family_name(%d)", v);
  s = sleepacc_family_name((sleepacc_family)v);
  if (v >= 0 && v <= 3) FUZZ_CHECK(s && *s, "family_name(%d) empty", v);
  s = sleepacc_tristate_name((sleepacc_tristate)v);
  if (v >= 0 && v <= 2) FUZZ_CHECK(s && *s, "tristate_name(%d) empty", v);
  if ((s = sleepacc_policy_name(v)) != NULL)
    FUZZ_CHECK(sleepacc_policy_from_name(s) == v, "policy %d -> %s", v, s);
  if ((s = sleepacc_mode_name(v)) != NULL)
    FUZZ_CHECK(sleepacc_mode_from_name(s) == v, "mode %d -> %s", v, s);
  if ((s = sleepacc_missed_name(v)) != NULL)
    FUZZ_CHECK(sleepacc_missed_from_name(s) == v, "missed %d -> %s", v, s);
  {
    int64_t t = 0;
    int rc = sleepacc_clock_read(v, &t);
    FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ENOSYS, "clock_read(%d) = %d", v, rc);
    if (v < 0 || v >= SLEEPACC_CLOCK_COUNT) FUZZ_CHECK(rc != 0, "clock_read(%d) accepted", v);
  }
}

static void check_lookup(const char *name) {
  size_t count = sleepacc_method_count();
  const sleepacc_method *m = sleepacc_method_find(name), *kernel = (const sleepacc_method *)1;
  size_t matches = 0;
  int rc;
  for (size_t i = 0; i < count; i++) {
    const sleepacc_method *row = sleepacc_method_at(i);
    FUZZ_CHECK(row && row->name, "row %zu", i);
    if (strcmp(row->name, name) == 0) {
      matches++;
      FUZZ_CHECK(m == row, "find(%s) is not row %zu", name, i);
    }
  }
  FUZZ_CHECK(sleepacc_method_at(count) == NULL, "method_at(count)");
  FUZZ_CHECK(sleepacc_method_at((size_t)-1) == NULL, "method_at(SIZE_MAX)");
  FUZZ_CHECK(matches <= 1, "%zu rows named %s", matches, name);
  FUZZ_CHECK((m != NULL) == (matches == 1), "find(%s) = %p with %zu matches", name, (void *)m,
             matches);
  if (m) {
    int a = sleepacc_method_available(m);
    FUZZ_CHECK(a == 0 || a == 1, "available(%s) = %d", name, a);
  }

  rc = sleepacc_strategy_from_name(name, &kernel);
  if (rc == SLEEPACC_STRATEGY_KERNEL) {
    FUZZ_CHECK(m && kernel == m && m->family == SLEEPACC_FAMILY_KERNEL, "strategy %s", name);
  } else if (rc >= 0) {
    FUZZ_CHECK(rc <= SLEEPACC_STRATEGY_KERNEL && kernel == NULL, "strategy %s = %d", name, rc);
  } else {
    FUZZ_CHECK(rc == -ENOENT || rc == -ENOTSUP || rc == -EINVAL, "strategy %s = %d", name, rc);
    FUZZ_CHECK(kernel == NULL, "strategy %s failed but set *kernel", name);
    if (rc == -ENOENT) FUZZ_CHECK(m == NULL, "strategy ENOENT for a row: %s", name);
  }

  rc = sleepacc_policy_from_name(name);
  FUZZ_CHECK(rc == -EINVAL || (sleepacc_policy_name(rc) && !strcmp(sleepacc_policy_name(rc), name)),
             "policy %s = %d", name, rc);
  rc = sleepacc_mode_from_name(name);
  FUZZ_CHECK(rc == -EINVAL || (sleepacc_mode_name(rc) && !strcmp(sleepacc_mode_name(rc), name)),
             "mode %s = %d", name, rc);
  rc = sleepacc_missed_from_name(name);
  FUZZ_CHECK(rc == -EINVAL || (sleepacc_missed_name(rc) && !strcmp(sleepacc_missed_name(rc), name)),
             "missed %s = %d", name, rc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* the whole input as one name (embedded NULs cut it, as C would) */
  char *name = malloc(size + 1);
  if (!name) abort();
  memcpy(name, data, size);
  name[size] = '\0';
  check_lookup(name);
  free(name);

  FUZZ_CHECK(sleepacc_method_find(NULL) == NULL, "find(NULL)");
  FUZZ_CHECK(sleepacc_policy_from_name(NULL) == -EINVAL, "policy(NULL)");
  FUZZ_CHECK(sleepacc_mode_from_name(NULL) == -EINVAL, "mode(NULL)");
  FUZZ_CHECK(sleepacc_missed_from_name(NULL) == -EINVAL, "missed(NULL)");
  {
    fuzz_in in = {data, size};
    for (int i = 0; i < 4 && in.n > 0; i++) check_names(fuzz_i32(&in));
  }
  return 0;
}
