/*
 * options.c -- the options a binding takes for a run, the one list of them:
 * each option's public name (measure(duration=...), sa.measure{slack=...}),
 * its kind (how a value is converted) and the sleepacc_config field it
 * fills, so every binding converts by one loop and names a bad core field
 * (sleepacc_config_explain's "env.dma_latency_us") by its option
 * ("dma_latency").
 *
 * The rules of the options themselves live here too: the names a MODE or
 * POLICY option knows, and the defaults that depend on another option.
 *
 * Owns: sleepacc_options, sleepacc_sleeper_options, sleepacc_precise_takes,
 * sleepacc_option_of_field, sleepacc_method_info_get (and its field table),
 * sleepacc_options_complete, sleepacc_option_choice, sleepacc_option_find,
 * sleepacc_option_set (one option from a script's value: every kind's
 * rule), sleepacc_value_read, the whole-table readers sleepacc_config_read,
 * sleepacc_sleeper_read and sleepacc_sweep_read (through the binding's
 * getter), the rows of arguments that are no run option
 * (sleepacc_sweep_lists, sleepacc_deadline_option, sleepacc_seconds_option,
 * sleepacc_sleep_option, sleepacc_text_option).  The words of a fault are
 * words.c's; a script's seconds as ns are clock.c's.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>

#define OPT(name, kind, field, lo) {name, SLEEPACC_OPT_##kind, #field, offsetof(sleepacc_config, field), lo}

const sleepacc_option sleepacc_options[] = {
    OPT("method", METHOD, method, 0),
    OPT("duration", SECONDS, duration_ns, 0),
    OPT("n", INT64, n, 1),
    OPT("budget", BUDGET, budget_ns, 0),
    OPT("mode", MODE, mode, 0),
    OPT("warmup", INT64, warmup, 0),
    OPT("keep_samples", BOOL, keep_samples, 0),
    OPT("margin", SECONDS, margin_ns, 0),
    OPT("slack", INT64, env.slack_ns, 0),
    OPT("policy", POLICY, env.policy, 0),
    OPT("priority", INT, env.priority, 0),
    OPT("cpu", INT, env.cpu, 0),
    OPT("lock_memory", BOOL, env.lock_memory, 0),
    OPT("dma_latency", INT, env.dma_latency_us, 0),
    {NULL, 0, NULL, 0, 0},
};

_Static_assert(sizeof sleepacc_options / sizeof sleepacc_options[0] == SLEEPACC_OPTION_COUNT + 1,
               "SLEEPACC_OPTION_COUNT counts the rows");

#define SOPT(name, kind, field, lo) \
  {name, SLEEPACC_OPT_##kind, #field, offsetof(sleepacc_sleeper_config, field), lo}

const sleepacc_option sleepacc_sleeper_options[] = {
    SOPT("method", NAME, method, 0),
    SOPT("quantile", NUMBER, quantile, 0),
    SOPT("margin", SECONDS, margin_ns, 0),
    SOPT("handoff", SECONDS, handoff_ns, 0),
    SOPT("dma_latency", INT64, dma_latency_us, 0),
    SOPT("period", SECONDS, period_ns, 1), /* lo 1: > 0 */
    SOPT("missed", NAME, missed, 0),
    SOPT("rt_priority", INT64, rt_priority, 0),
    SOPT("slice", SECONDS, slice_ns, 0),
    {NULL, 0, NULL, 0, 0},
};

/* What each handle kind takes (sleepacc_precise_kind), in the order the
 * bindings take them: the first one positional (a sleeper's method, a
 * pacer's period), the rest by name; Python's Sleeper/Pacer signatures and
 * Lua's sa.sleeper/sa.pacer option tables are these. */
const char *const sleepacc_precise_takes[2][8] = {
    {"method", "quantile", "margin", "handoff", "dma_latency", "rt_priority", "slice", NULL},
    {"period", "method", "missed", "handoff", "dma_latency", "rt_priority", "slice", NULL},
};

const char *sleepacc_option_of_field(const char *field) {
  if (!field) return NULL;
  for (const sleepacc_option *o = sleepacc_options; o->name; o++)
    if (!strcmp(o->field, field)) return o->name;
  for (const sleepacc_option *o = sleepacc_sleeper_options; o->name; o++)
    if (!strcmp(o->field, field)) return o->name;
  return field;
}

#define MF(f, t) {#f, offsetof(sleepacc_method_info, f), SLEEPACC_FIELD_##t, NULL, 0}
const sleepacc_field sleepacc_method_info_fields[] = {
    MF(name, STRING),           MF(family, STRING), MF(description, STRING),
    MF(granularity_ns, INT64),  MF(honours_slack, STRING), MF(absolute, BOOL),
    MF(available, BOOL),        {NULL, 0, 0, NULL, 0},
};

int sleepacc_method_info_get(const sleepacc_method *m, sleepacc_method_info *out) {
  if (!m || !out) return -EINVAL;
  out->name = m->name;
  out->family = sleepacc_family_name(m->family);
  out->description = m->description ? m->description : "";
  out->granularity_ns = m->granularity_ns;
  out->honours_slack = sleepacc_tristate_name(m->honours_slack);
  out->absolute = m->absolute;
  out->available = sleepacc_method_available(m);
  return 0;
}

_Static_assert(SLEEPACC_OPTION_COUNT <= 32, "a given-set of sleepacc_options fits a uint32_t");

void sleepacc_options_complete(sleepacc_config *c, uint32_t given, int sweep) {
  uint32_t priority = 0, n = 0; /* the bits of the priority's and n's rows */
  if (!c) return;
  for (size_t i = 0; sleepacc_options[i].name; i++) {
    if (sleepacc_options[i].offset == offsetof(sleepacc_config, env.priority)) priority = 1u << i;
    if (sleepacc_options[i].offset == offsetof(sleepacc_config, n)) n = 1u << i;
  }
  if ((c->env.policy == SLEEPACC_POLICY_FIFO || c->env.policy == SLEEPACC_POLICY_RR) && !(given & priority))
    c->env.priority = 1;
  if (sweep && c->budget_ns > 0 && !(given & n)) c->n = SLEEPACC_MAX_SAMPLES;
}

int sleepacc_option_choice(const sleepacc_option *o, const char *name) {
  if (!o || !name) return -EINVAL;
  if (o->kind == SLEEPACC_OPT_MODE) return sleepacc_mode_from_name(name);
  if (o->kind == SLEEPACC_OPT_POLICY) return sleepacc_policy_from_name(name);
  for (int i = 0; o->kind == SLEEPACC_OPT_STYLE && sleepacc_table_style_name(i); i++)
    if (!strcmp(name, sleepacc_table_style_name(i))) return i;
  return -EINVAL;
}

const sleepacc_option *sleepacc_option_find(const sleepacc_option *list, const char *name) {
  for (; list && name && list->name; list++)
    if (!strcmp(list->name, name)) return list;
  return NULL;
}

/* The words of a MODE, POLICY or STYLE option's rule, from the names the
 * core gives its values 0, 1, ...: "must be 'a' or 'b'" or "must be one of
 * 'a', 'b', 'c'" (as the Python API has always worded it). */
static void choices_rule(const sleepacc_option *o, char *msg, size_t cap) {
  const char *(*name)(int) = o->kind == SLEEPACC_OPT_MODE     ? sleepacc_mode_name
                             : o->kind == SLEEPACC_OPT_POLICY ? sleepacc_policy_name
                                                              : sleepacc_table_style_name;
  int count = 0;
  size_t len;
  while (name(count)) count++;
  len = (size_t)snprintf(msg, cap, "must be %s", count > 2 ? "one of " : "");
  for (int i = 0; i < count && len < cap; i++)
    len += (size_t)snprintf(msg + len, cap - len, "%s'%s'",
                            i == 0 ? "" : count == 2 ? " or " : ", ", name(i));
}

static int option_broken(char *msg, size_t cap, const char *words) {
  if (msg && cap) snprintf(msg, cap, "%s", words);
  return -ERANGE;
}

#define BUDGET_POSITIVE "must be positive (or none: only n stops the run)"

int sleepacc_option_set(const sleepacc_option *o, void *base, const sleepacc_value *v, char *msg,
                        size_t cap) {
  char *p = base && o ? (char *)base + o->offset : NULL;
  int whole = v && v->kind == SLEEPACC_VALUE_INT, text = v && v->kind == SLEEPACC_VALUE_TEXT && v->s;
  const char *words = NULL, *positive;
  int64_t ns = 0;
  int x;
  if (msg && cap) msg[0] = '\0';
  if (!p || !v) return -EFAULT;
  if (v->kind == SLEEPACC_VALUE_TEXT && sleepacc_text_words(v->s, v->i > 0 ? (size_t)v->i : 0))
    return option_broken(msg, cap, sleepacc_text_words(v->s, (size_t)v->i)); /* every kind: no NUL byte */
  switch (o->kind) {
  case SLEEPACC_OPT_BUDGET: /* none (NULL) or false: no budget, only n stops the run */
    if (v->kind == SLEEPACC_VALUE_NULL || (v->kind == SLEEPACC_VALUE_BOOL && !v->i)) {
      *(int64_t *)(void *)p = 0;
      return 0;
    }
    /* fall through */
  case SLEEPACC_OPT_SECONDS:
    if (!whole && v->kind != SLEEPACC_VALUE_REAL) break;
    /* a budget (0 is the core's "none": none says that) or a row with lo > 0
     * (a period) <= 0 is one rule, negative or not, below 1 ns too */
    positive = o->kind == SLEEPACC_OPT_BUDGET ? BUDGET_POSITIVE : o->lo > 0 ? "must be positive" : NULL;
    if (positive && (whole ? v->i <= 0 : v->d <= 0)) return option_broken(msg, cap, positive);
    if (sleepacc_seconds_check(!whole, v->d, v->i, whole ? v->overflow : 0, &ns, &words) < 0)
      return option_broken(msg, cap, words);
    if (positive && ns == 0) return option_broken(msg, cap, positive);
    *(int64_t *)(void *)p = ns;
    return 0;
  case SLEEPACC_OPT_SLEEP: /* a sleep's seconds, its deadline from now (no day cap) */
    if (!whole && v->kind != SLEEPACC_VALUE_REAL) break;
    if (sleepacc_sleep_check(!whole, v->d, v->i, whole ? v->overflow : 0, sleepacc_now_ns(), &ns, &words) < 0)
      return option_broken(msg, cap, words);
    *(int64_t *)(void *)p = ns;
    return 0;
  case SLEEPACC_OPT_INT64:
  case SLEEPACC_OPT_INT:
    if (!whole) break;
    if (v->i < o->lo || (o->kind == SLEEPACC_OPT_INT && v->i > INT_MAX)) {
      if (msg && cap)
        snprintf(msg, cap, v->i < o->lo ? "must be >= %lld" : "must be <= %lld",
                 v->i < o->lo ? (long long)o->lo : (long long)INT_MAX);
      return -ERANGE;
    }
    if (o->kind == SLEEPACC_OPT_INT) *(int *)(void *)p = (int)v->i;
    else *(int64_t *)(void *)p = v->i;
    return 0;
  case SLEEPACC_OPT_BOOL:
    if (v->kind != SLEEPACC_VALUE_BOOL) break;
    *(int *)(void *)p = v->i != 0;
    return 0;
  case SLEEPACC_OPT_MODE:
  case SLEEPACC_OPT_POLICY:
  case SLEEPACC_OPT_STYLE:
    if (!text) break;
    if ((x = sleepacc_option_choice(o, v->s)) < 0) {
      if (msg && cap) choices_rule(o, msg, cap);
      return -ERANGE;
    }
    *(int *)(void *)p = x;
    return 0;
  case SLEEPACC_OPT_METHOD:
    if (!text) break;
    if (!sleepacc_method_find(v->s)) {
      if (msg && cap) {
        int len = snprintf(msg, cap, "must be an available method (");
        if (len > 0 && (size_t)len + 1 < cap) sleepacc_method_names(msg + len, cap - (size_t)len - 1);
        len = (int)strlen(msg);
        if ((size_t)len + 1 < cap) msg[len] = ')', msg[len + 1] = '\0';
      }
      return -ERANGE;
    }
    *(const sleepacc_method **)(void *)p = sleepacc_method_find(v->s);
    return 0;
  case SLEEPACC_OPT_NAME:
    if (!text) break;
    if (o->lo > 0 && !v->s[0]) return option_broken(msg, cap, "must not be empty"); /* a path */
    *(const char **)(void *)p = v->s;
    return 0;
  case SLEEPACC_OPT_NUMBER:
    if (!whole && v->kind != SLEEPACC_VALUE_REAL) break;
    *(double *)(void *)p = whole ? (double)v->i : v->d;
    return 0;
  default: return -EINVAL;
  }
  return -EINVAL;
}

/* ------------------------------------------------------------------------
 * A whole options table read through the binding's getter
 * (sleepacc_getter), its faults in one struct (sleepacc_fault).
 * ---------------------------------------------------------------------- */

#define LOPT(name, kind, count) \
  {name, SLEEPACC_OPT_##kind, name, offsetof(sleepacc_sweep_args, count), 0}
const sleepacc_option sleepacc_sweep_lists[] = {
    LOPT("methods", METHODS, nm),
    LOPT("durations", DURATIONS, nd),
    {NULL, 0, NULL, 0, 0},
};

const sleepacc_option sleepacc_deadline_option[] = {
    {"deadline_ns", SLEEPACC_OPT_DEADLINE, "deadline_ns", 0, 0},
    {NULL, 0, NULL, 0, 0},
};

const sleepacc_option sleepacc_seconds_option[] = {
    {"seconds", SLEEPACC_OPT_SECONDS, "seconds", 0, 0},
    {NULL, 0, NULL, 0, 0},
};

const sleepacc_option sleepacc_sleep_option[] = {
    {"seconds", SLEEPACC_OPT_SLEEP, "seconds", 0, 0},
    {NULL, 0, NULL, 0, 0},
};

/* The rule of an INT64 option given an integer beyond
 * int64 (the binding's .overflow), on the side it went past. */
static void beyond_words(const sleepacc_option *o, int sign, char *msg, size_t cap) {
  snprintf(msg, cap, sign > 0 ? "must be <= %lld" : "must be >= %lld",
           sign > 0 ? (long long)INT64_MAX : (long long)o->lo);
}

/* sleepacc_value_read; defer: an INT64 option beyond int64 is taken
 * saturated (its refusal is the reader's, after the rules that may word it
 * better: beyond_fault). */
static int value_read(const sleepacc_option *o, const char *name, void *base, const sleepacc_value *v,
                      int defer, sleepacc_fault *f) {
  static const sleepacc_value absent = {SLEEPACC_VALUE_NULL, 0, 0.0, NULL, NULL, NULL, 0};
  char msg[SLEEPACC_OPTION_MESSAGE_MAX];
  const char *words = NULL;
  int rc;
  sleepacc__fault_set(f, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (!o || !base) return -EFAULT;
  if (!name) name = o->name;
  if (!v) v = &absent;
  if (o->kind == SLEEPACC_OPT_INT64 && v->kind == SLEEPACC_VALUE_INT && v->overflow && !defer) {
    beyond_words(o, v->overflow, msg, sizeof msg), rc = -ERANGE;
  } else if (o->kind != SLEEPACC_OPT_DEADLINE) {
    rc = sleepacc_option_set(o, base, v, msg, sizeof msg);
  } else if (v->kind != SLEEPACC_VALUE_INT) { /* a deadline is whole ns */
    rc = -EINVAL;
  } else if ((rc = sleepacc_deadline_check(v->i, &words)) < 0) {
    snprintf(msg, sizeof msg, "%s", words), rc = -ERANGE;
  } else {
    *(int64_t *)(void *)((char *)base + o->offset) = v->i;
  }
  if (rc == -EINVAL) return sleepacc__fault_set(f, rc, SLEEPACC_FAULT_TYPE, name, -1, o->kind, 0, NULL);
  if (rc == -ERANGE) return sleepacc__fault_set(f, rc, SLEEPACC_FAULT_RULE, name, -1, o->kind, 1, msg);
  return rc;
}

int sleepacc_value_read(const sleepacc_option *o, const char *name, void *base, const sleepacc_value *v,
                        sleepacc_fault *f) {
  return value_read(o, name, base, v, 0, f);
}

/* Whether name is an option the call takes (g->take; NULL: every one), and
 * whether it is one of the call's arguments rather than a key. */
static int takes(const sleepacc_getter *g, const char *name, int *arg) {
  *arg = 0;
  for (int i = 0; g->take && g->take[i]; i++)
    if (!strcmp(g->take[i], name)) return *arg = i < g->args, 1;
  return g->take == NULL;
}

/* The rows of a read: lists of rows (a NULL-name row ends each) and the
 * struct each fills. */
typedef struct part {
  const sleepacc_option *rows;
  void *base;
} part;

/* The keys a table of this read may hold, ", "-joined into buf: the
 * options it takes (not its arguments), in the order taken, then g->own. */
static void known_keys(const part *parts, size_t np, const sleepacc_getter *g, char *buf, size_t cap) {
  size_t len = 0;
  int arg;
  buf[0] = '\0';
  for (int i = 0; g->take && g->take[i] && len < cap; i++)
    if (i >= g->args) len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", g->take[i]);
  for (size_t p = 0; !g->take && p < np; p++)
    for (const sleepacc_option *o = parts[p].rows; o->name && len < cap; o++)
      if (takes(g, o->name, &arg) && !arg)
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", o->name);
  for (const char *const *k = g->own; k && *k && len < cap; k++)
    len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", *k);
}

/* Whether key is one a table of this read may hold. */
static int known_key(const part *parts, size_t np, const sleepacc_getter *g, const char *key) {
  int arg;
  for (const char *const *k = g->own; k && *k; k++)
    if (!strcmp(*k, key)) return 1;
  for (size_t p = 0; p < np; p++)
    if (sleepacc_option_find(parts[p].rows, key) && takes(g, key, &arg) && !arg) return 1;
  return 0;
}

/* Every key of the table names an option of the read (or one of g->own). */
static int read_keys(const part *parts, size_t np, const sleepacc_getter *g, sleepacc_fault *f) {
  char known[SLEEPACC_FAULT_WORDS_MAX];
  sleepacc_value key;
  int rc;
  for (int64_t i = 0; (rc = g->get(g->ctx, NULL, i, &key)) == 1; i++) {
    int text = key.kind == SLEEPACC_VALUE_TEXT && key.s;
    char shown[sizeof f->option];
    if (text && (key.i <= 0 || (size_t)key.i == strlen(key.s)) && known_key(parts, np, g, key.s)) continue;
    known_keys(parts, np, g, known, sizeof known);
    if (text) sleepacc__escaped(key.s, key.i > 0 ? key.i : -1, 40, 0, shown, sizeof shown); /* "n\0": no "n" */
    return sleepacc__fault_set(f, -EINVAL, SLEEPACC_FAULT_KEY, text ? shown : NULL, i, 0, text, known);
  }
  return rc < 0 ? sleepacc__fault_set(f, rc, 0, NULL, -1, 0, 0, NULL) : 0;
}

/* Each row of p the call takes, from the getter (the list rows: their
 * length into their count field); required: bits of rows that must be
 * given.  *given: bit i for p->rows[i]; *over: those given beyond int64
 * (taken saturated).  0 or -errno with *f. */
static int read_rows(const part *p, const sleepacc_getter *g, uint32_t required, uint32_t *given,
                     uint32_t *over, sleepacc_fault *f) {
  const sleepacc_option *order[SLEEPACC_OPTION_COUNT + 1];
  size_t n = 0;
  int arg, rc;
  for (int i = 0; g->take && g->take[i] && n < SLEEPACC_OPTION_COUNT; i++) /* the order taken */
    if ((order[n] = sleepacc_option_find(p->rows, g->take[i])) != NULL) n++;
  for (const sleepacc_option *o = p->rows; !g->take && o->name && n < SLEEPACC_OPTION_COUNT; o++)
    order[n++] = o;
  for (size_t k = 0; k < n; k++) {
    const sleepacc_option *o = order[k];
    uint32_t bit = 1u << (o - p->rows);
    sleepacc_value v;
    if (!takes(g, o->name, &arg)) continue;
    if ((rc = g->get(g->ctx, o->name, -1, &v)) < 0)
      return sleepacc__fault_set(f, rc, 0, NULL, -1, 0, 0, NULL);
    if (rc == 0 && !(required & bit)) continue; /* absent: the default */
    if (o->kind == SLEEPACC_OPT_METHODS || o->kind == SLEEPACC_OPT_DURATIONS) {
      if (rc == 0 || v.kind != SLEEPACC_VALUE_LIST || v.i < 0)
        return sleepacc__fault_set(f, -EINVAL, SLEEPACC_FAULT_TYPE, o->name, -1, o->kind, 0, NULL);
      *(size_t *)(void *)((char *)p->base + o->offset) = (size_t)v.i;
    } else if ((rc = value_read(o, NULL, p->base, rc ? &v : NULL, 1, f)) < 0) {
      return rc;
    }
    *given |= bit;
    if (o->kind == SLEEPACC_OPT_INT64 && v.kind == SLEEPACC_VALUE_INT && v.overflow) *over |= bit;
  }
  return 0;
}

/* A read of parts: the keys, then each part's rows (required: part 0's). */
static int read_parts(const part *parts, size_t np, const sleepacc_getter *g, uint32_t required,
                      uint32_t *given, uint32_t *over, sleepacc_fault *f) {
  int rc = read_keys(parts, np, g, f);
  for (size_t i = 0; rc == 0 && i < np; i++) {
    given[i] = over[i] = 0;
    rc = read_rows(&parts[i], g, i ? 0 : required, &given[i], &over[i], f);
  }
  return rc;
}

/* The first option of parts given beyond int64 (over)
 * other than skip (the option a rule of the whole config already refuses,
 * in better words: "slack: must be 1 ns .. 1 s"), refused by the bound it
 * went past; 0 when there is none. */
static int beyond_fault(const part *parts, size_t np, const uint32_t *over, const char *skip,
                        sleepacc_fault *f) {
  char msg[64];
  if (skip && !strcmp(skip, "warmup")) /* no rule bounds warmup itself (n + warmup is a sum) */
    skip = NULL;
  for (size_t p = 0; p < np; p++)
    for (const sleepacc_option *o = parts[p].rows; o->name; o++) {
      const char *at = (const char *)parts[p].base + o->offset;
      if (!(over[p] & (1u << (o - parts[p].rows))) || (skip && !strcmp(skip, o->name))) continue;
      beyond_words(o, *(const int64_t *)(const void *)at > 0 ? 1 : -1, msg, sizeof msg);
      return sleepacc__fault_set(f, -ERANGE, SLEEPACC_FAULT_RULE, o->name, -1, o->kind, 1, msg);
    }
  return 0;
}

/* A rule of the whole config broken: its field named by its option. */
static int rule_fault(sleepacc_fault *f, int rc, const char *field, const char *words, int show) {
  return sleepacc__fault_set(f, rc, SLEEPACC_FAULT_RULE, sleepacc_option_of_field(field), -1, 0, show, words);
}

/* The bit of row name of sleepacc_options. */
static uint32_t option_bit(const char *name) {
  return 1u << (sleepacc_option_find(sleepacc_options, name) - sleepacc_options);
}

/* A margin given where no method measured has one (only the hybrid family
 * spins a margin): refused, not silently ignored.  A sweep's point is
 * exempt (its sweep was checked: some method of it has one). */
#define MARGIN_UNUSED "only the hybrid family has a margin, and no method measured here is one"
static int any_hybrid(const sleepacc_point *pts, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (pts[i].method && pts[i].method->family == SLEEPACC_FAMILY_HYBRID) return 1;
  return 0;
}

int sleepacc_config_read(sleepacc_config *c, const sleepacc_getter *g, int point, sleepacc_fault *f) {
  char words[SLEEPACC_FAULT_WORDS_MAX];
  const char *field = NULL;
  part p = {sleepacc_options, c};
  uint32_t given, over;
  int rc;
  sleepacc__fault_set(f, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (!c || !g || !g->get) return -EFAULT;
  sleepacc_config_default(c);
  rc = read_parts(&p, 1, g, option_bit("method") | option_bit("duration"), &given, &over, f);
  if (rc < 0) return rc;
  sleepacc_options_complete(c, given, point);
  rc = sleepacc_config_words(c, &field, words, sizeof words);
  if (over && beyond_fault(&p, 1, &over, rc < 0 ? sleepacc_option_of_field(field) : NULL, f) < 0)
    return -ERANGE;
  if (rc < 0) return rule_fault(f, rc, field, words, 1);
  if (!point && (given & option_bit("margin")) && !any_hybrid(&(sleepacc_point){c->method, 0}, 1))
    return rule_fault(f, -EINVAL, "margin_ns", MARGIN_UNUSED, 1);
  return 0;
}

int sleepacc__env_read(sleepacc_env *env, const sleepacc_getter *g, sleepacc_fault *f) {
  static const char *const thread_options[] = {"slack", "policy", "priority", "cpu", NULL};
  const char *field = NULL, *msg = NULL;
  sleepacc_getter only;
  sleepacc_config c;
  part p = {sleepacc_options, &c};
  uint32_t given, over;
  int rc;
  sleepacc__fault_set(f, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (!env || !g || !g->get) return -EFAULT;
  only = *g, only.take = thread_options, only.args = 0;
  sleepacc_config_default(&c);
  if ((rc = read_parts(&p, 1, &only, 0, &given, &over, f)) < 0) return rc;
  sleepacc_options_complete(&c, given, 0);
  rc = sleepacc__env_explain(&c.env, &field, &msg);
  if (over && beyond_fault(&p, 1, &over, rc < 0 ? sleepacc_option_of_field(field) : NULL, f) < 0)
    return -ERANGE;
  if (rc < 0) return rule_fault(f, rc, field, msg, 1);
  *env = c.env;
  return 0;
}

int sleepacc_sleeper_read(sleepacc_sleeper_config *c, int pacer, const sleepacc_getter *g,
                          sleepacc_fault *f) {
  const char *field = NULL, *msg = NULL;
  part p = {sleepacc_sleeper_options, c};
  uint32_t given, over, period = 1u << (sleepacc_option_find(sleepacc_sleeper_options, "period") -
                                        sleepacc_sleeper_options);
  int rc;
  sleepacc__fault_set(f, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (!c || !g || !g->get) return -EFAULT;
  sleepacc_sleeper_config_default(c);
  if ((rc = read_parts(&p, 1, g, pacer ? period : 0, &given, &over, f)) < 0) return rc;
  rc = sleepacc_sleeper_config_explain(c, pacer, &field, &msg);
  if (over && beyond_fault(&p, 1, &over, rc < 0 ? sleepacc_option_of_field(field) : NULL, f) < 0)
    return -ERANGE;
  if (rc < 0) return rule_fault(f, rc, field, msg, 1);
  return 0;
}

/* The elements of list option o (s's count field holds its length) into
 * out: each by the rule of the option one is (a method, a duration),
 * named o->name index i. */
static int read_elements(const sleepacc_option *o, size_t n, void *out, const sleepacc_getter *g,
                         sleepacc_fault *f) {
  const sleepacc_option *one = sleepacc_option_find(sleepacc_options,
                                                    o->kind == SLEEPACC_OPT_METHODS ? "method" : "duration");
  sleepacc_config c;
  sleepacc_value v;
  for (size_t i = 0; i < n; i++) {
    int rc = g->get(g->ctx, o->name, (int64_t)i, &v);
    if (rc < 0) return sleepacc__fault_set(f, rc, 0, NULL, -1, 0, 0, NULL);
    if ((rc = sleepacc_value_read(one, o->name, &c, rc ? &v : NULL, f)) < 0)
      return f ? (f->index = (int64_t)i, rc) : rc;
    if (o->kind == SLEEPACC_OPT_METHODS) ((const sleepacc_method **)out)[i] = c.method;
    else ((int64_t *)out)[i] = c.duration_ns;
  }
  return 0;
}

/* A sweep's fault from sleepacc_sweep_plan/check's: a list's entry, or a
 * config field named by its option; an errno no rule explains is NONE. */
static int sweep_fault(sleepacc_fault *f, int rc, const sleepacc_sweep_fault *sf, int show) {
  char words[SLEEPACC_FAULT_WORDS_MAX];
  if (!sf->message) return sleepacc__fault_set(f, rc, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (sf->subject) snprintf(words, sizeof words, "'%s' %s", sf->subject->name, sf->message);
  else snprintf(words, sizeof words, "%s", sf->message);
  rule_fault(f, rc, sf->field, words, show);
  if (f) f->index = sf->index == (size_t)-1 ? -1 : (int64_t)sf->index;
  return rc;
}

int sleepacc_sweep_read(sleepacc_sweep_args *s, const sleepacc_getter *g, int check, sleepacc_fault *f) {
  static const char *const plan_only[] = {"methods", "durations", "mode", "margin", NULL};
  part parts[2];
  sleepacc_getter plan = g ? *g : (sleepacc_getter){0};
  sleepacc_sweep_fault sf;
  uint32_t given[2], over[2];
  size_t nm, nd, cap;
  char *room;
  int rc, n;
  sleepacc__fault_set(f, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, 0, NULL);
  if (!s || !g || !g->get || !g->room) return -EFAULT;
  memset(s, 0, sizeof *s);
  sleepacc_config_default(&s->config);
  s->config.budget_ns = SLEEPACC_SWEEP_BUDGET_NS;
  parts[0] = (part){sleepacc_sweep_lists, s};
  parts[1] = (part){check ? sleepacc_options + 2 : sleepacc_options, &s->config};
  if (!check && !plan.take) plan.take = plan_only; /* a plan takes its mode, no run's options */
  if ((rc = read_parts(parts, 2, &plan, 0, given, over, f)) < 0) return rc;
  nm = s->nm, nd = s->nd;
  cap = (given[0] & 1 ? nm : sleepacc_method_count()) * (given[0] & 2 ? nd : SLEEPACC_DEFAULT_DURATION_COUNT);
  if (nm > ((size_t)1 << 32) || nd > ((size_t)1 << 24) || cap > ((size_t)1 << 32)) return -E2BIG;
  room = (char *)g->room(g->ctx, cap * sizeof *s->points + nd * sizeof(int64_t) + nm * sizeof(void *) + 8);
  if (!room) return -ENOMEM;
  s->points = (sleepacc_point *)(void *)room; /* each part 8-byte aligned: points, durations, methods */
  if (given[0] & 2) s->durations = (int64_t *)(void *)(room + cap * sizeof *s->points);
  if (given[0] & 1)
    s->methods = (const sleepacc_method **)(void *)(room + cap * sizeof *s->points + nd * sizeof(int64_t));
  if ((rc = read_elements(&sleepacc_sweep_lists[0], nm, s->methods, g, f)) < 0 ||
      (rc = read_elements(&sleepacc_sweep_lists[1], nd, s->durations, g, f)) < 0)
    return rc;
  if (check) sleepacc_options_complete(&s->config, given[1] << 2, 1);
  n = sleepacc_sweep_plan(s->methods, nm, s->durations, nd, s->config.mode, s->points, cap, &sf);
  if (n < 0) return sweep_fault(f, n, &sf, 0);
  if (check)
    n = sleepacc_sweep_check(&s->config, s->methods, nm, s->durations, nd, s->points, cap, &sf);
  if ((over[0] | over[1]) &&
      beyond_fault(parts, 2, over, n < 0 && sf.message ? sleepacc_option_of_field(sf.field) : NULL, f) < 0)
    return -ERANGE;
  if (n < 0)
    return sweep_fault(f, n, &sf, 1);
  if ((given[1] & (option_bit("margin") >> (check ? 2 : 0))) &&
      !any_hybrid(s->points, (size_t)n < cap ? (size_t)n : cap))
    return rule_fault(f, -EINVAL, "margin_ns", MARGIN_UNUSED, 1);
  s->count = (size_t)n;
  return n;
}

/* The row of a string argument that is no option (a path, a style, an
 * output): its wrong type and its NUL byte read as a string option's. */
const sleepacc_option sleepacc_text_option[] = {
    {"text", SLEEPACC_OPT_NAME, "text", 0, 1}, /* a path (sa.sweep's output): not empty */
    {NULL, 0, NULL, 0, 0},
};