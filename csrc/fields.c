/*
 * fields.c -- reading and setting one row of a field table (a struct
 * described as data, sleepacc_field): the core knows every field type, so
 * each binding's converter handles only the few value kinds a script
 * language has (sleepacc_value_kind).
 *
 * Owns: sleepacc_field_get, sleepacc_field_set.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

void sleepacc_field_get(const sleepacc_field *f, const void *base, sleepacc_value *out)
{
  const char *p = (const char *)base + f->offset;
  memset(out, 0, sizeof *out);
  switch (f->type) {
  case SLEEPACC_FIELD_INT64:
    out->kind = SLEEPACC_VALUE_INT;
    out->i = *(const int64_t *)(const void *)p;
    break;
  case SLEEPACC_FIELD_OPT_INT64:
    out->i = *(const int64_t *)(const void *)p;
    out->kind = out->i < 0 ? SLEEPACC_VALUE_NULL : SLEEPACC_VALUE_INT;
    break;
  case SLEEPACC_FIELD_INT:
  case SLEEPACC_FIELD_BOOL:
    out->kind = f->type == SLEEPACC_FIELD_INT ? SLEEPACC_VALUE_INT : SLEEPACC_VALUE_BOOL;
    out->i = *(const int *)(const void *)p;
    break;
  case SLEEPACC_FIELD_DOUBLE:
    out->kind = SLEEPACC_VALUE_REAL;
    out->d = *(const double *)(const void *)p;
    break;
  case SLEEPACC_FIELD_STRING:
    out->s = *(const char *const *)(const void *)p;
    break;
  case SLEEPACC_FIELD_TEXT:
    out->s = p;
    break;
  case SLEEPACC_FIELD_METHOD:
    if (*(const sleepacc_method *const *)(const void *)p)
      out->s = (*(const sleepacc_method *const *)(const void *)p)->name;
    break;
  case SLEEPACC_FIELD_MODE:
    out->s = sleepacc_mode_name(*(const int *)(const void *)p);
    break;
  case SLEEPACC_FIELD_NESTED:
  case SLEEPACC_FIELD_PAIRS:
    out->kind = f->type == SLEEPACC_FIELD_NESTED ? SLEEPACC_VALUE_NESTED : SLEEPACC_VALUE_PAIRS;
    out->sub = f->sub;
    out->base = p;
    break;
  case SLEEPACC_FIELD_LIST: /* calls (issue 12): a sequence, each element by .sub[0] */
    out->kind = SLEEPACC_VALUE_ITEMS;
    out->sub = f->sub;
    out->base = p;
    break;
  default: break;
  }
  if (out->s)
    out->kind = SLEEPACC_VALUE_TEXT;
}

static int field_fail(const char **message, const char *words, int err)
{
  if (message)
    *message = words;
  return err;
}

int sleepacc_field_set(const sleepacc_field *f, void *base, const sleepacc_value *v,
                       const char **message)
{
  char *p = (char *)base + f->offset;
  int whole = v->kind == SLEEPACC_VALUE_INT || v->kind == SLEEPACC_VALUE_BOOL;
  if (v->kind == SLEEPACC_VALUE_INT && v->overflow) /* beyond int64 (words, issue 12) */
    return field_fail(message, "out of range", -ERANGE);
  if (v->kind == SLEEPACC_VALUE_TEXT && sleepacc_text_words(v->s, v->i > 0 ? (size_t)v->i : 0))
    return field_fail(message, sleepacc_text_words(v->s, (size_t)v->i), -ERANGE);
  switch (f->type) {
  case SLEEPACC_FIELD_INT64:
  case SLEEPACC_FIELD_OPT_INT64:
    if (!whole)
      break;
    *(int64_t *)(void *)p = v->i;
    return 0;
  case SLEEPACC_FIELD_INT:
  case SLEEPACC_FIELD_BOOL:
    if (!whole)
      break;
    if (v->i < INT_MIN || v->i > INT_MAX)
      return field_fail(message, "out of range", -ERANGE);
    *(int *)(void *)p = (int)v->i;
    return 0;
  case SLEEPACC_FIELD_DOUBLE:
    if (!whole && v->kind != SLEEPACC_VALUE_REAL)
      break;
    *(double *)(void *)p = whole ? (double)v->i : v->d;
    return 0;
  case SLEEPACC_FIELD_STRING:
    if (v->kind != SLEEPACC_VALUE_TEXT && v->kind != SLEEPACC_VALUE_NULL)
      break;
    *(const char **)(void *)p = v->kind == SLEEPACC_VALUE_TEXT ? v->s : NULL;
    return v->kind == SLEEPACC_VALUE_TEXT;
  case SLEEPACC_FIELD_METHOD: {
    const sleepacc_method *m = v->kind == SLEEPACC_VALUE_TEXT ? sleepacc_method_find(v->s) : NULL;
    if (v->kind != SLEEPACC_VALUE_TEXT && v->kind != SLEEPACC_VALUE_NULL)
      break;
    if (v->kind == SLEEPACC_VALUE_TEXT && !m)
      return field_fail(message, "unknown method", -ENOENT);
    *(const sleepacc_method **)(void *)p = m;
    return 0;
  }
  case SLEEPACC_FIELD_MODE: {
    int mode = v->kind == SLEEPACC_VALUE_TEXT ? sleepacc_mode_from_name(v->s) : -EINVAL;
    if (v->kind != SLEEPACC_VALUE_TEXT)
      break;
    if (mode < 0)
      return field_fail(message, "unknown mode", -ENOENT);
    *(int *)(void *)p = mode;
    return 0;
  }
  default: break;
  }
  return field_fail(message, "cannot be set from", -EINVAL);
}
