/*
 * measure.c -- one run as a binding measures it: the one
 * block of memory the run needs, its lifecycle (open, chunks, close) and the
 * words of its failure, so both bindings' measure is: convert the config,
 * allocate what sleepacc_run_memory states, open, run the chunks between
 * their Ctrl-C checks, close, convert the record, map the error.
 *
 * The block, in int64 values, cap = sleepacc_config_capacity(cfg):
 *   [0, cap)            the samples (the engine writes them in order);
 *   [cap, 2 cap)        with SLEEPACC_RUN_STARTS, each sample's start time;
 *   then cap values     the scratch the exact statistics sort in.
 * Close computes the record, then moves the n start times right after the
 * n samples, so the front of the block is all a binding keeps.
 *
 * A run fails at most once: the first failure (where, and its errno) is
 * kept in the run, close returns it and sleepacc_run_words explains it.
 *
 * Owns: sleepacc_run_memory, sleepacc_run_open, sleepacc_run_chunk,
 * sleepacc_chunks, sleepacc_run_close, sleepacc_run_words.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Where a run failed (sleepacc_run.err_at). */
enum { AT_NONE, AT_MEMORY, AT_OPEN, AT_STEP, AT_CLOSE, AT_RESULT };

/* Keep err as r's failure unless it has one; return the one kept. */
static int fail(sleepacc_run *r, int err, int at) {
  if (!r->err) r->err = err, r->err_at = at;
  return r->err;
}

/* The bytes of a run of the checked cfg: its samples, their scratch and
 * (SLEEPACC_RUN_STARTS) their start times. */
static size_t run_bytes(const sleepacc_config *cfg, int flags) {
  return (size_t)sleepacc_config_capacity(cfg) * sizeof(int64_t) * (flags & SLEEPACC_RUN_STARTS ? 3 : 2);
}

size_t sleepacc_run_memory(const sleepacc_config *cfg, int flags) {
  return sleepacc_config_check(cfg, NULL) != 0 ? 0 : run_bytes(cfg, flags);
}

int sleepacc_run_open(sleepacc_run *r, const sleepacc_config *cfg, void *mem, size_t size, int flags) {
  int broken = cfg ? sleepacc_config_check(cfg, NULL) : -EINVAL; /* the run's one walk of its rules */
  size_t need = broken ? 0 : run_bytes(cfg, flags);
  int64_t cap = need ? sleepacc_config_capacity(cfg) : 0, *samples = (int64_t *)mem;
  int rc;
  if (!r) return -EINVAL;
  if (!cfg || (need && (!mem || size < need))) { /* nothing opened: a run finish treats as such */
    memset(r, 0, sizeof *r);
    if (!cfg) return fail(r, -EINVAL, AT_OPEN);
    r->cfg = *cfg;
    return fail(r, mem ? -EINVAL : -ENOMEM, AT_MEMORY); /* a block too small, or none allocated */
  }
  rc = broken ? sleepacc_run_start(r, cfg, NULL, 0) /* the rule's errno, r left closed */
              : sleepacc__run_begin(r, cfg, need ? samples : NULL, (size_t)cap);
  if (rc == 0 && need && (flags & SLEEPACC_RUN_STARTS)) rc = sleepacc_run_set_starts(r, samples + cap);
  if (rc == 0) return 0;
  sleepacc_run_finish(r); /* a failed start left nothing changed; a failed set_starts is undone */
  r->cfg = *cfg;          /* for the words (a start that broke a rule copied nothing) */
  return fail(r, rc, AT_OPEN);
}

int sleepacc_run_chunk(void *run) {
  sleepacc_run *r = (sleepacc_run *)run;
  int rc;
  if (!r || r->err) return 1;
  rc = sleepacc_run_step(r);
  if (rc == -EINTR) return 0; /* the interrupted sleep resumes toward its deadline */
  if (rc < 0) fail(r, rc, AT_STEP);
  return rc < 0 ? 1 : rc;
}

int sleepacc_chunks(int (*step)(void *), void *arg, int (*checkpoint)(void *), void *ctx) {
  if (!step) return -EINVAL;
  for (;;) {
    int rc = step(arg);
    if (rc == 1) return 0;
    if (rc == SLEEPACC_NEAR) return SLEEPACC_NEAR;
    if (rc < 0 && rc != -EINTR) return rc;
    if (rc > 0) return -EINVAL;
    if (checkpoint && checkpoint(ctx)) return -ECANCELED;
  }
}

int sleepacc_run_close(sleepacc_run *r, sleepacc_result *out, size_t *used) {
  int64_t n, *scratch;
  int rc;
  if (used) *used = 0;
  if (!r || !out) return -EINVAL;
  memset(out, 0, sizeof *out);
  if ((rc = sleepacc_run_finish(r)) < 0) fail(r, rc, AT_CLOSE);
  if (r->err) return r->err;
  n = sleepacc_run_count(r);
  scratch = r->samples ? r->samples + r->capacity * (r->starts ? 2 : 1) : NULL;
  if ((rc = sleepacc_run_result(r, scratch, out)) < 0) return fail(r, rc, AT_RESULT);
  if (r->starts && r->starts != r->samples + n) { /* the start times right after the samples */
    memmove(r->samples + n, r->starts, (size_t)n * sizeof *r->starts);
    r->starts = r->samples + n;
  }
  if (used && r->samples) *used = (size_t)n * sizeof(int64_t) * (r->starts ? 2 : 1);
  return 0;
}

/* What failed at open, into buf; 1 when it was a refusal for privileges. */
static int open_words(const sleepacc_run *r, char *buf, size_t cap) {
  const sleepacc_config *c = &r->cfg;
  const char *field, *why, *msg = NULL;
  char env_field[32];
  sleepacc_run_refusal(r, &field, &why); /* the environment step's blame */
  snprintf(env_field, sizeof env_field, "env.%s", field ? field : "");
  if (field && why) { /* refused up front: nothing was changed */
    snprintf(buf, cap, "%s: %s; asked: policy='%s', priority %d", sleepacc_option_of_field(env_field),
             why, sleepacc_policy_name(c->env.policy), c->env.priority);
    return 1;
  }
  if (field && sleepacc_privilege_explain(c, r->err, buf, cap)) return 1;
  if (field) snprintf(buf, cap, "%s", sleepacc_option_of_field(env_field));
  else if (sleepacc_config_explain(c, &field, &msg) != 0)
    snprintf(buf, cap, "%s: %s", sleepacc_option_of_field(field), msg);
  else if (r->err == -EBUSY && snprintf(buf, cap, "opening the method: ") < (int)cap &&
           sleepacc_signal_words(buf + strlen(buf), cap - strlen(buf)))
    ; /* a signal method without a free real-time signal: which are blocked */
  else if (r->err == -EAGAIN && c->method && !strcmp(c->method->name, "timer_signal"))
    snprintf(buf, cap, "opening the method: no POSIX timer could be made (the queued-signal limit "
             "RLIMIT_SIGPENDING, or the system's timers, used up)");
  else snprintf(buf, cap, "opening the method");
  return 0;
}

int sleepacc_run_words(const sleepacc_run *r, int flags, char *buf, size_t cap) {
  char what[SLEEPACC_PRIVILEGE_MESSAGE_MAX + 256], point[96] = "";
  const sleepacc_method *m;
  int privileged = 0;
  if (!buf || !cap) return 0;
  buf[0] = '\0';
  if (!r || !r->err) return 0;
  switch (r->err_at) {
  case AT_MEMORY:
    snprintf(what, sizeof what, r->err == -ENOMEM ? "allocating the block of the samples"
                                                  : "the block is smaller than sleepacc_run_memory");
    break;
  case AT_OPEN: privileged = open_words(r, what, sizeof what); break;
  case AT_STEP: snprintf(what, sizeof what, "measuring"); break;
  case AT_RESULT: snprintf(what, sizeof what, "computing the record"); break;
  default: snprintf(what, sizeof what, "restoring the thread"); break;
  }
  m = r->cfg.method;
  if (flags & SLEEPACC_RUN_POINT)
    snprintf(point, sizeof point, ", method %s, duration %lld ns", m ? m->name : "none",
             (long long)r->cfg.duration_ns);
  snprintf(buf, cap, "%s: %s (%s%s)", sleepacc_errname(r->err),
           /* a group without RT time refuses root too: not "needs CAP_SYS_NICE or root" */
           r->err == -EPERM && strstr(what, "cpu.rt_runtime_us 0") ? "operation not permitted"
                                                                  : sleepacc_strerror(r->err),
           what, point);
  return privileged;
}
