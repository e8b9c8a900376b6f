/*
 * names.c -- every name <-> enum table of the core, in one place: run modes,
 * scheduling policies, sleeper strategies, pacer missed-tick policies,
 * method families and tristates, and table styles.  Each table's index is
 * the enum's value, so a name and its value cannot drift apart, and the
 * files that use the names (what a run is, the engine, the environment, the
 * sleeper and pacer, the readers of options and records) depend on this one
 * file rather than on each other.
 *
 * Owns: sleepacc_mode_name/_from_name, sleepacc_policy_name/_from_name,
 * sleepacc_strategy_name/_from_name, sleepacc_missed_name/_from_name,
 * sleepacc_family_name, sleepacc_tristate_name, sleepacc_table_style_name.
 * The registries whose names come with more than a value (methods.c's
 * method rows, clock.c's clocks with their OS ids) keep their names there.
 */
#include "sleepacc_int.h"

#include <string.h>

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The value of name in names[0..n), or -EINVAL (name NULL or unknown). */
static int value_of(const char *const *names, int n, const char *name) {
  if (!name) return -EINVAL;
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return i;
  return -EINVAL;
}

/* names[v], or NULL out of range. */
static const char *name_of(const char *const *names, int n, int v) {
  return v >= 0 && v < n ? names[v] : NULL;
}

/* index = sleepacc_mode */
static const char *const modes[] = {"relative", "periodic"};

const char *sleepacc_mode_name(int mode) { return name_of(modes, COUNT(modes), mode); }

int sleepacc_mode_from_name(const char *name) { return value_of(modes, COUNT(modes), name); }

/* index = sleepacc_policy (SLEEPACC_POLICY_KEEP, -1, has no name) */
static const char *const policies[] = {"other", "batch", "idle", "fifo", "rr"};

const char *sleepacc_policy_name(int policy) { return name_of(policies, COUNT(policies), policy); }

int sleepacc_policy_from_name(const char *name) { return value_of(policies, COUNT(policies), name); }

/* index = sleepacc_strategy; "kernel" is what a kernel method's strategy
 * is called, never a name a caller gives (they give the method's). */
static const char *const strategies[] = {"auto", "spin", "hybrid", "comp", "kernel"};

const char *sleepacc_strategy_name(int strategy) {
  return name_of(strategies, COUNT(strategies), strategy);
}

/* A strategy by name; a registry row of the kernel family gives
 * SLEEPACC_STRATEGY_KERNEL with *kernel set.  -EINVAL for NULL, -ENOENT for
 * an unknown name, -ENOTSUP for a registered non-kernel row (e.g. "clock"). */
int sleepacc_strategy_from_name(const char *name, const sleepacc_method **kernel) {
  const sleepacc_method *m;
  if (kernel) *kernel = NULL;
  if (!name) return -EINVAL;
  for (int i = 0; i < SLEEPACC_STRATEGY_KERNEL; i++)
    if (strcmp(name, strategies[i]) == 0) return i;
  m = sleepacc_method_find(name);
  if (!m) return -ENOENT;
  if (m->family != SLEEPACC_FAMILY_KERNEL) return -ENOTSUP;
  if (kernel) *kernel = m;
  return SLEEPACC_STRATEGY_KERNEL;
}

/* index = sleepacc_missed */
static const char *const missed[] = {"skip", "burst", "delay"};

const char *sleepacc_missed_name(int policy) { return name_of(missed, COUNT(missed), policy); }

int sleepacc_missed_from_name(const char *name) { return value_of(missed, COUNT(missed), name); }

/* index = sleepacc_family, sleepacc_tristate; "unknown" out of range */
static const char *const families[] = {"kernel", "spin", "hybrid", "baseline"};
static const char *const tristates[] = {"no", "yes", "unknown"};

const char *sleepacc_family_name(sleepacc_family f) {
  const char *s = name_of(families, COUNT(families), (int)f);
  return s ? s : "unknown";
}

const char *sleepacc_tristate_name(sleepacc_tristate t) {
  const char *s = name_of(tristates, COUNT(tristates), (int)t);
  return s ? s : "unknown";
}

/* The table styles, in the order of table.c's renderers. */
static const char *const styles[] = {"irtt", "wide"};

const char *sleepacc_table_style_name(int i) { return name_of(styles, COUNT(styles), i); }
