/*
 * errors.c -- errno names and messages, from the one SLEEPACC_ERRNO_MAP table.
 */
#include "sleepacc_int.h"

#include <limits.h>
#include <string.h>

typedef struct sleepacc__errent {
  int code;          /* positive errno value */
  const char *name;  /* "EINVAL" */
  const char *msg;   /* human message */
} sleepacc__errent;

#define SLEEPACC__ERRENT(e, m) {e, #e, m},
static const sleepacc__errent sleepacc__errtab[] = {SLEEPACC_ERRNO_MAP(SLEEPACC__ERRENT)};
#undef SLEEPACC__ERRENT

/* The table row for err (sign ignored), or NULL. */
static const sleepacc__errent *sleepacc__errfind(int err) {
  int code;
  if (err == INT_MIN) return NULL; /* -INT_MIN is not an int */
  code = err < 0 ? -err : err;
  for (size_t i = 0; i < sizeof sleepacc__errtab / sizeof sleepacc__errtab[0]; i++)
    if (sleepacc__errtab[i].code == code) return &sleepacc__errtab[i];
  return NULL;
}

/* Message for err; "success" for 0, "unknown error" when not in the table. */
const char *sleepacc_strerror(int err) {
  const sleepacc__errent *e;
  if (err == 0) return "success";
  e = sleepacc__errfind(err);
  return e ? e->msg : "unknown error";
}

/* Symbolic name for err; "OK" for 0, "EUNKNOWN" when not in the table. */
const char *sleepacc_errname(int err) {
  const sleepacc__errent *e;
  if (err == 0) return "OK";
  e = sleepacc__errfind(err);
  return e ? e->name : "EUNKNOWN";
}
