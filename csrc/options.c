/*
 * options.c -- the options a binding takes for a run, the one list of them:
 * each option's public name (measure(duration=...), sa.measure{slack=...}),
 * its kind (how a value is converted) and the sleepacc_config field it
 * fills, so every binding converts by one loop and names a bad core field
 * (sleepacc_config_explain's "env.dma_latency_us") by its option
 * ("dma_latency"); and the seconds -> ns conversion both bindings share.
 *
 * The rules of the options themselves live here too: the names a MODE or
 * POLICY option knows, and the defaults that depend on another option.
 *
 * Owns: sleepacc_options, sleepacc_sleeper_options, sleepacc_option_of_field,
 * sleepacc_seconds_to_ns, sleepacc_whole_seconds_to_ns, sleepacc_method_info_get (and
 * its field table), sleepacc_options_complete, sleepacc_option_choice,
 * sleepacc_option_find, sleepacc_method_names, sleepacc_config_privileged,
 * sleepacc_privilege_explain (what a refused privileged option needs),
 * sleepacc_config_words (the config check's words, the available methods named),
 * sleepacc_option_set (one option from a script's value: every kind's rule).
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
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
    SOPT("period", SECONDS, period_ns, 0),
    SOPT("missed", NAME, missed, 0),
    {NULL, 0, NULL, 0, 0},
};

const char *sleepacc_option_of_field(const char *field) {
  if (!field) return NULL;
  for (const sleepacc_option *o = sleepacc_options; o->name; o++)
    if (!strcmp(o->field, field)) return o->name;
  for (const sleepacc_option *o = sleepacc_sleeper_options; o->name; o++)
    if (!strcmp(o->field, field)) return o->name;
  return field;
}

int sleepacc_seconds_to_ns(double s, int64_t *ns) {
  if (!ns) return -EINVAL;
  if (!isfinite(s)) return -EDOM;
  s *= 1e9; /* beyond int64 saturates; any negative stays negative */
  *ns = s >= 9.2e18 ? INT64_MAX : s <= -9.2e18 ? -1 : (int64_t)llround(s);
  if (s < 0 && *ns >= 0) *ns = -1;
  return 0;
}

int64_t sleepacc_whole_seconds_to_ns(int64_t s, int overflow) {
  if (overflow > 0 || (!overflow && s > INT64_MAX / 1000000000LL)) return INT64_MAX;
  if (overflow < 0 || (!overflow && s < INT64_MIN / 1000000000LL)) return -1;
  return s * 1000000000LL;
}

#define MF(f, t) {#f, offsetof(sleepacc_method_info, f), SLEEPACC_FIELD_##t == SLEEPACC_FIELD_DOUBLE, \
                  SLEEPACC_FIELD_##t, NULL, 0}
const sleepacc_field sleepacc_method_info_fields[] = {
    MF(name, STRING),           MF(family, STRING), MF(description, STRING),
    MF(granularity_ns, INT64),  MF(honours_slack, STRING), MF(absolute, BOOL),
    MF(available, BOOL),        {NULL, 0, 0, 0, NULL, 0},
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
  return -EINVAL;
}

const sleepacc_option *sleepacc_option_find(const sleepacc_option *list, const char *name) {
  for (; list && name && list->name; list++)
    if (!strcmp(list->name, name)) return list;
  return NULL;
}

void sleepacc_method_names(char *buf, size_t cap) {
  size_t len = 0;
  if (!buf || !cap) return;
  buf[0] = '\0';
  for (size_t i = 0; i < sleepacc_method_count() && len < cap; i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (sleepacc_method_available(m))
      len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", m->name);
  }
}

const char *sleepacc_config_privileged(const sleepacc_config *c, char *buf, size_t cap) {
  if (!c || !buf || !cap) return NULL;
  snprintf(buf, cap, "%s%s%s", c->env.policy != SLEEPACC_POLICY_KEEP ? "policy " : "",
           c->env.lock_memory ? "lock_memory " : "", c->env.dma_latency_us >= 0 ? "dma_latency " : "");
  if (*buf) buf[strlen(buf) - 1] = '\0';
  return *buf ? buf : NULL;
}

/* perm12: the one explanation of a refused run, in the words the Python API
 * has always used, the values as the core holds them. */
const char *sleepacc_privilege_explain(const sleepacc_config *c, int err, char *buf, size_t cap) {
  size_t len = 0;
  if (err > 0) err = -err;
  if (!c || !buf || !cap || (err != -EPERM && err != -EACCES && !(err == -ENOMEM && c->env.lock_memory)))
    return NULL;
  buf[0] = '\0';
  if (c->env.policy != SLEEPACC_POLICY_KEEP)
    len += (size_t)snprintf(buf, cap, "policy='%s' (priority %d) needs CAP_SYS_NICE or an "
                            "RLIMIT_RTPRIO/RLIMIT_NICE allowance", sleepacc_policy_name(c->env.policy),
                            c->env.priority);
  if (c->env.lock_memory && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%slock_memory=True needs CAP_IPC_LOCK or a large "
                            "enough RLIMIT_MEMLOCK", len ? "; " : "");
  if (c->env.dma_latency_us >= 0 && len < cap)
    len += (size_t)snprintf(buf + len, cap - len, "%sdma_latency=%d needs write access to "
                            "/dev/cpu_dma_latency (root)", len ? "; " : "", c->env.dma_latency_us);
  if (!len) snprintf(buf, cap, "the requested environment needs privileges");
  return buf;
}

/* The words of a MODE or POLICY option's rule, from the names the core
 * gives its values 0, 1, ...: "must be 'a' or 'b'" or "must be one of 'a',
 * 'b', 'c'" (as the Python API has always worded it). */
static void choices_rule(const sleepacc_option *o, char *msg, size_t cap) {
  const char *(*name)(int) = o->kind == SLEEPACC_OPT_MODE ? sleepacc_mode_name : sleepacc_policy_name;
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

int sleepacc_option_set(const sleepacc_option *o, void *base, const sleepacc_value *v, char *msg,
                        size_t cap) {
  char *p = base && o ? (char *)base + o->offset : NULL;
  int whole = v && v->kind == SLEEPACC_VALUE_INT, text = v && v->kind == SLEEPACC_VALUE_TEXT && v->s;
  const char *words = NULL;
  int64_t ns = 0;
  int x;
  if (msg && cap) msg[0] = '\0';
  if (!p || !v) return -EFAULT;
  switch (o->kind) {
  case SLEEPACC_OPT_BUDGET: /* none (NULL) or false: no budget, only n stops the run */
    if (v->kind == SLEEPACC_VALUE_NULL || (v->kind == SLEEPACC_VALUE_BOOL && !v->i)) {
      *(int64_t *)(void *)p = 0;
      return 0;
    }
    /* fall through */
  case SLEEPACC_OPT_SECONDS:
    if (!whole && v->kind != SLEEPACC_VALUE_REAL) break;
    if (sleepacc_seconds_check(!whole, v->d, v->i, 0, &ns, &words) < 0)
      return option_broken(msg, cap, words);
    if (o->kind == SLEEPACC_OPT_BUDGET && ns <= 0) /* 0 is the core's "none": none says that */
      return option_broken(msg, cap, "must be positive (or none: only n stops the run)");
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

int sleepacc_config_words(const sleepacc_config *c, const char **field, char *buf, size_t cap) {
  const char *msg = NULL;
  int rc = sleepacc_config_explain(c, field, &msg), len;
  if (rc == 0 || !buf || !cap) return rc;
  len = snprintf(buf, cap, rc == -ENOSYS ? "%s; available methods: " : "%s", msg ? msg : "");
  if (rc == -ENOSYS && len > 0 && (size_t)len < cap) /* not available here: name those that are */
    sleepacc_method_names(buf + len, cap - (size_t)len);
  return rc;
}
