/*
 * precise.c -- the precise handle: a sleeper or a pacer with the lifecycle
 * both bindings share (see sleepacc_binding.h, "The precise handle").
 *
 * What a binding used to keep beside the core object lives here: open and
 * closed, the claim (one sleeping thread at a time, by the caller's thread
 * identity; a claim from before a fork() is void in the child, whose only
 * thread is not the one that made it), the re-entered call's own sleeper,
 * and the pacer's tick tokens: which caller's wait got the last tick (so
 * an exception that kept it from that caller offers it again).  A poll of
 * a handed-off wait that finds no tick pending was robbed of it by another
 * wait in between (a signal handler's, which may have been handed off
 * itself): SLEEPACC_PRECISE_TAKEN, so that caller goes on to the next tick.
 * Allocates nothing: the handle, the call and a
 * re-entered call's own sleeper are the caller's memory.
 */
#include "sleepacc_int.h"

#include <stdio.h>
#include <string.h>

/* A claim of this process (one from before a fork() is void). */
static int sleepacc__held(const sleepacc_precise *h) {
  return h->busy && h->busy_gen == sleepacc_fork_generation();
}

/* The handle's sleeper (a pacer's own). */
static sleepacc_sleeper *sleepacc__own_like(sleepacc_precise *h) {
  return h->kind == SLEEPACC_PRECISE_PACER ? sleepacc_pacer_sleeper(&h->u.p) : &h->u.s;
}

/* Claim h for thread: 0 claimed, 1 thread holds it already (re-entered),
 * -EBADF closed, -EBUSY another identity holds it. */
static int sleepacc__claim(sleepacc_precise *h, uint64_t thread) {
  if (!h || !h->open) return -EBADF;
  if (sleepacc__held(h)) return h->busy_thread == thread ? 1 : -EBUSY;
  h->busy = 1;
  h->busy_gen = sleepacc_fork_generation();
  h->busy_thread = thread;
  return 0;
}

int sleepacc_precise_open(sleepacc_precise *h, int kind, const sleepacc_sleeper_config *c,
                          const char **field) {
  int rc;
  if (field) *field = NULL;
  if (!h || !c || (kind != SLEEPACC_PRECISE_SLEEPER && kind != SLEEPACC_PRECISE_PACER))
    return -EINVAL;
  if (sleepacc_precise_close(h) < 0) return -EBUSY;
  h->kind = kind;
  h->busy = 0;
  h->delivered_tok = 0;
  rc = kind == SLEEPACC_PRECISE_PACER ? sleepacc_pacer_open_config(&h->u.p, c, field)
                                      : sleepacc_sleeper_open_config(&h->u.s, c, field);
  h->open = rc == 0;
  return rc;
}

int sleepacc_precise_is_open(const sleepacc_precise *h) { return h && h->open; }

/* What sleepacc_precise_message says after the handle kind's name. */
const char *sleepacc_precise_words(int err) {
  if (err > 0) err = -err;
  return err == -EBADF ? "is closed" : err == -EBUSY ? "is sleeping in another thread" : NULL;
}

/* The one wording of a handle's failure, both bindings' (see
 * sleepacc_binding.h). */
int sleepacc_precise_message(const sleepacc_precise *h, int err, const char *field, int at, char *buf,
                             size_t cap) {
  int pacer = h && h->kind == SLEEPACC_PRECISE_PACER;
  /* a refusal is the handle's own (no field): an open's EBUSY is its method's signal */
  const char *name = pacer ? "Pacer" : "Sleeper", *refusal = field ? NULL : sleepacc_precise_words(err);
  size_t k;
  if (!buf || !cap) return refusal != NULL;
  if (refusal) snprintf(buf, cap, "%s %s", name, refusal);
  else if (field && !strcmp(field, "method") && (err == -EBUSY || err == EBUSY) &&
           (k = (size_t)snprintf(buf, cap, "method (")) < cap && sleepacc_signal_words(buf + k, cap - k)) {
    if ((k = strlen(buf)) + 1 < cap) buf[k] = ')', buf[k + 1] = '\0';
  }
  else if (field && !strcmp(field, "dma_latency_us")) /* the option and the device it holds open */
    snprintf(buf, cap, "dma_latency (/dev/cpu_dma_latency)");
  else if (field) snprintf(buf, cap, "%s", sleepacc_option_of_field(field));
  else if (at == SLEEPACC_PRECISE_AT_CALL) snprintf(buf, cap, "%s.%s", name, pacer ? "wait" : "sleep");
  else if (err == -EMFILE || err == EMFILE) /* an open short of a resource: which */
    snprintf(buf, cap, "%s (its kernel wait's descriptor is past the process's limit, RLIMIT_NOFILE)", name);
  else if (err == -EAGAIN || err == EAGAIN)
    snprintf(buf, cap, "%s (no POSIX timer could be made: the queued-signal limit RLIMIT_SIGPENDING, "
             "or the system's timers, used up)", name);
  else snprintf(buf, cap, "%s", name);
  return refusal != NULL;
}

int sleepacc_precise_close(sleepacc_precise *h) {
  if (!h || !h->open) return 0;
  if (sleepacc__held(h)) return -EBUSY;
  if (h->kind == SLEEPACC_PRECISE_PACER) sleepacc_pacer_close(&h->u.p);
  else sleepacc_sleeper_close(&h->u.s);
  h->open = 0;
  return 0;
}

int sleepacc_precise_reentered(const sleepacc_precise *h, uint64_t thread) {
  return h && h->open && sleepacc__held(h) && h->busy_thread == thread;
}

/* ------------------------------------------------------------ a call */

int sleepacc_precise_begin(sleepacc_precise_call *c, sleepacc_precise *h, uint64_t thread,
                           int64_t deadline_ns, int64_t token, sleepacc_sleeper *own) {
  int rc;
  if (!c) return -EINVAL;
  memset(c, 0, sizeof *c);
  c->deadline_ns = deadline_ns;
  c->token = token;
  if ((rc = sleepacc__claim(h, thread)) < 0) return rc;
  if (rc == 1) { /* re-entered: a sleeper of its own, like the handle's */
    if (!own) return -ENOMEM;
    if ((rc = sleepacc_sleeper_open_like(own, sleepacc__own_like(h))) < 0) return rc;
    c->own = own;
  }
  c->h = h;
  return 0;
}

int sleepacc_precise_step(void *call) {
  sleepacc_precise_call *c = (sleepacc_precise_call *)call;
  sleepacc_precise *h = c->h;
  if (!h) return -EINVAL;
  if (h->kind == SLEEPACC_PRECISE_SLEEPER)
    c->last = sleepacc_sleeper_until(c->own ? c->own : &h->u.s, c->deadline_ns, SLEEPACC_CHUNK_NS);
  else if (c->own)
    c->last = sleepacc_pacer_wait_with(&h->u.p, c->own, SLEEPACC_CHUNK_NS, &c->deadline_ns);
  else
    c->last = sleepacc_pacer_wait(&h->u.p, SLEEPACC_CHUNK_NS, &c->deadline_ns);
  if (c->last == 1 && h->kind == SLEEPACC_PRECISE_PACER) c->delivered = 1;
  return c->last;
}

int sleepacc_precise_end(sleepacc_precise_call *c, int failed) {
  sleepacc_precise *h = c ? c->h : NULL;
  int near = !failed && c && c->last == SLEEPACC_NEAR;
  if (!h) return 0;
  if (c->own) sleepacc_sleeper_close(c->own); /* the claim is the interrupted call's */
  else h->busy = 0;
  if (h->kind == SLEEPACC_PRECISE_PACER) {
    if (failed && c->delivered) {
      sleepacc_pacer_unwait(&h->u.p, c->deadline_ns);
    } else if (!failed && !near) {
      h->delivered_tok = c->token;
      h->delivered_dl = c->deadline_ns;
    }
  }
  c->h = NULL;
  return near;
}

int sleepacc_precise_poll(sleepacc_precise *h, uint64_t thread, int64_t deadline_ns,
                          int64_t token) {
  int64_t dl = 0;
  int pacer, rc = sleepacc__claim(h, thread);
  if (rc != 0) return rc; /* 1: re-entered, its own sleep already ran to the end */
  pacer = h->kind == SLEEPACC_PRECISE_PACER;
  rc = pacer ? sleepacc_pacer_poll(&h->u.p, &dl) : sleepacc_sleeper_poll(&h->u.s, deadline_ns);
  h->busy = 0;
  if (rc == -EINTR) return 0;
  /* no tick pending: another wait took the one handed to this call */
  if (rc == -EINVAL && pacer && token != 0) return SLEEPACC_PRECISE_TAKEN;
  if (rc == 1 && pacer) {
    h->delivered_tok = token;
    h->delivered_dl = dl;
  }
  return rc;
}

int sleepacc_precise_unwait(sleepacc_precise *h, int64_t token) {
  if (!h || h->kind != SLEEPACC_PRECISE_PACER || !h->open || token == 0 ||
      h->delivered_tok != token || sleepacc__held(h))
    return -EINVAL;
  h->delivered_tok = 0;
  return sleepacc_pacer_unwait(&h->u.p, h->delivered_dl);
}

/* ------------------------------------------------------------ stats */

int sleepacc_precise_stats_get(const sleepacc_precise *h, uint64_t thread,
                               sleepacc_precise_stats *out, const sleepacc_field **fields) {
  int pacer;
  if (!h || !out) return -EINVAL;
  if (sleepacc__held(h) && h->busy_thread != thread) return -EBUSY;
  pacer = h->kind == SLEEPACC_PRECISE_PACER;
  if (pacer) sleepacc_pacer_stats_get(&h->u.p, &out->pacer);
  else sleepacc_sleeper_stats_get(&h->u.s, &out->sleeper);
  if (fields) *fields = pacer ? sleepacc_pacer_stats_fields : sleepacc_sleeper_stats_fields;
  return 0;
}
