/*
 * fields.c -- reading and setting one row of a field table (a struct
 * described as data, sleepacc_field): the core knows every field type, so
 * each binding's converter handles only the few value kinds a script
 * language has (sleepacc_value_kind).
 *
 * Owns: sleepacc_field_get, sleepacc_field_set, and the walk of a whole
 * table, sleepacc_fields_walk and sleepacc_field_walk (each binding's
 * object built by its rules of null, NULL_KEYS and PAIRS), and the read
 * back from a script's table through the getter, sleepacc_fields_read.
 */
#include "sleepacc_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
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
  case SLEEPACC_FIELD_LIST: /* a sequence, each element by .sub[0] */
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

void sleepacc_value_number(sleepacc_value *out, double d) {
  memset(out, 0, sizeof *out);
  out->kind = SLEEPACC_VALUE_REAL, out->d = d;
  if (!isfinite(d) || d != floor(d)) return;
  out->kind = SLEEPACC_VALUE_INT;
  if (d >= 9223372036854775808.0) out->overflow = 1, out->i = INT64_MAX;
  else if (d < -9223372036854775808.0) out->overflow = -1, out->i = INT64_MIN;
  else out->i = (int64_t)d;
}

/* Text a reader takes as a name: non-empty, no control character. */
static int printable_name(const char *s)
{
  if (!*s)
    return 0;
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

int sleepacc_field_set(const sleepacc_field *f, void *base, const sleepacc_value *v,
                       const char **message)
{
  char *p = (char *)base + f->offset;
  int whole = v->kind == SLEEPACC_VALUE_INT || v->kind == SLEEPACC_VALUE_BOOL;
  int text = v->kind == SLEEPACC_VALUE_TEXT;
  if (v->kind == SLEEPACC_VALUE_INT && v->overflow) /* an integer beyond int64 is refused */
    return field_fail(message, "out of range", -ERANGE);
  if (text && sleepacc_text_words(v->s, v->i > 0 ? (size_t)v->i : 0))
    return field_fail(message, sleepacc_text_words(v->s, (size_t)v->i), -ERANGE);
  if ((f->flags & SLEEPACC_FIELD_NONNEG) && v->kind == SLEEPACC_VALUE_INT && v->i < 0)
    return field_fail(message, "must be >= 0", -ERANGE);
  if ((f->flags & SLEEPACC_FIELD_NAME) && text && !printable_name(v->s))
    return field_fail(message, "must be a method name (printable text)", -ERANGE);
  if ((f->flags & SLEEPACC_FIELD_MODE_NAME) && text && sleepacc_mode_from_name(v->s) < 0)
    return field_fail(message, "must be 'relative' or 'periodic'", -ERANGE);
  switch (f->type) {
  case SLEEPACC_FIELD_INT64:
  case SLEEPACC_FIELD_OPT_INT64:
    if (f->type == SLEEPACC_FIELD_OPT_INT64 && v->kind == SLEEPACC_VALUE_NULL) {
      *(int64_t *)(void *)p = -1; /* null, as field_get reads it back */
      return 0;
    }
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
  case SLEEPACC_FIELD_SAMPLES: /* values the binding lent (a record's kept samples) */
    if (v->kind != SLEEPACC_VALUE_SAMPLES)
      break;
    ((sleepacc_samples *)(void *)p)->at = (const int64_t *)v->base;
    ((sleepacc_samples *)(void *)p)->n = v->i > 0 ? (size_t)v->i : 0;
    return 0;
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

/* ------------------------------------------------------------------------
 * The walk of a field table: the object's shape by the
 * binding's rules (sleepacc_field_sink), one value at a time through it.
 * ---------------------------------------------------------------------- */

static int walk_value(const sleepacc_field *f, const void *base, const sleepacc_field_sink *s, int depth);

/* Push an empty container of kind (NESTED an object, ITEMS an array of n). */
static int push_container(const sleepacc_field_sink *s, int kind, int64_t n, int depth)
{
  sleepacc_value v;
  if (depth >= SLEEPACC_FIELDS_DEPTH)
    return -E2BIG;
  memset(&v, 0, sizeof v);
  v.kind = kind, v.i = n;
  return s->push(s->ctx, &v);
}

/* Push the object of table over base: each row's value under its name. */
static int walk_object(const sleepacc_field *table, const void *base, const sleepacc_field_sink *s,
                       int depth)
{
  int rc = push_container(s, SLEEPACC_VALUE_NESTED, 0, depth);
  for (const sleepacc_field *f = table; rc >= 0 && f->name; f++) {
    if ((f->flags & SLEEPACC_FIELD_NULL_KEYS) && s->binding == SLEEPACC_BINDING_PYTHON)
      continue; /* a dict holds None: the list of null keys is Lua's */
    if ((rc = walk_value(f, base, s, depth + 1)) == 1)
      rc = s->put(s->ctx, f->name, -1);
  }
  return rc < 0 ? rc : 0;
}

/* Push a list: an array, element k by the row `row` (a null one left out:
 * a hole in Lua). */
static int walk_items(const sleepacc_list *l, const sleepacc_field *row, const sleepacc_field_sink *s,
                      int depth)
{
  int rc = push_container(s, SLEEPACC_VALUE_ITEMS, (int64_t)l->n, depth);
  for (size_t k = 0; rc >= 0 && k < l->n; k++)
    if ((rc = walk_value(row, (const char *)l->at + k * l->stride, s, depth + 1)) == 1)
      rc = s->put(s->ctx, NULL, (int64_t)k);
  return rc < 0 ? rc : 0;
}

/* Push pairs: Python a dict {key: value}; Lua an array of one object per
 * pair by the rows `sub`. */
static int walk_pairs(const sleepacc_pairs *p, const sleepacc_field *sub, const sleepacc_field_sink *s,
                      int depth)
{
  int lua = s->binding == SLEEPACC_BINDING_LUA;
  int rc = push_container(s, lua ? SLEEPACC_VALUE_ITEMS : SLEEPACC_VALUE_NESTED, p->n, depth);
  for (int64_t i = 0; rc >= 0 && i < p->n && i < SLEEPACC_PAIRS_MAX; i++) {
    sleepacc_value v;
    memset(&v, 0, sizeof v);
    v.kind = SLEEPACC_VALUE_INT, v.i = p->at[i].value;
    if (lua)
      rc = walk_object(sub, &p->at[i], s, depth + 1);
    else
      rc = depth + 1 >= SLEEPACC_FIELDS_DEPTH ? -E2BIG : s->push(s->ctx, &v);
    if (rc >= 0)
      rc = s->put(s->ctx, NULL, lua ? i : p->at[i].key);
  }
  return rc < 0 ? rc : 0;
}

/* Push row f's value: 1 pushed, 0 nothing (a null left out), or negative. */
static int walk_value(const sleepacc_field *f, const void *base, const sleepacc_field_sink *s, int depth)
{
  sleepacc_value v;
  int rc;
  sleepacc_field_get(f, base, &v);
  if (v.kind == SLEEPACC_VALUE_NESTED)
    rc = walk_object(v.sub, v.base, s, depth);
  else if (v.kind == SLEEPACC_VALUE_PAIRS)
    rc = walk_pairs((const sleepacc_pairs *)v.base, v.sub, s, depth);
  else if (v.kind == SLEEPACC_VALUE_ITEMS)
    rc = walk_items((const sleepacc_list *)v.base, v.sub, s, depth);
  else if (v.kind == SLEEPACC_VALUE_NULL &&
           ((f->flags & SLEEPACC_FIELD_OMIT_NULL) || s->binding != SLEEPACC_BINDING_PYTHON))
    return 0; /* left out (Lua's objects hold no null) */
  else
    rc = depth >= SLEEPACC_FIELDS_DEPTH ? -E2BIG : s->push(s->ctx, &v);
  return rc < 0 ? rc : 1;
}

int sleepacc_fields_walk(const sleepacc_field *table, const void *base, const sleepacc_field_sink *s)
{
  if (!table || !base || !s || !s->push || !s->put)
    return -EFAULT;
  return walk_object(table, base, s, 0);
}

int sleepacc_field_walk(const sleepacc_field *f, const void *base, const sleepacc_field_sink *s)
{
  if (!f || !base || !s || !s->push || !s->put)
    return -EFAULT;
  return walk_value(f, base, s, 0);
}

/* ------------------------------------------------------------------------
 * The read back: a struct from a script's table by its
 * field table, through the binding's getter; its fault names the way to
 * the value ("results[2].stats.median").
 * ---------------------------------------------------------------------- */

typedef struct reader {
  const sleepacc_getter *g;
  sleepacc_fault *f;
  int depth; /* the tables entered, at[0..depth) */
  struct {
    const char *name;
    int64_t index;
  } at[SLEEPACC_GETTER_DEPTH];
} reader;

/* The option kind whose words say what a row of type takes. */
static int row_takes(int type)
{
  switch (type) {
  case SLEEPACC_FIELD_INT64:
  case SLEEPACC_FIELD_OPT_INT64: return SLEEPACC_OPT_INT64;
  case SLEEPACC_FIELD_INT: return SLEEPACC_OPT_INT;
  case SLEEPACC_FIELD_BOOL: return SLEEPACC_OPT_BOOL;
  case SLEEPACC_FIELD_DOUBLE: return SLEEPACC_OPT_NUMBER;
  case SLEEPACC_FIELD_NESTED: return SLEEPACC_OPT_RECORD;
  case SLEEPACC_FIELD_SAMPLES: return SLEEPACC_OPT_VALUES;
  default: return SLEEPACC_OPT_NAME; /* STRING, METHOD, MODE: a name */
  }
}

/* The fault of the value name[index] where r stands (kind NONE: the
 * getter's own failure rc), the way there copied into it. */
static int read_fault(reader *r, int rc, int kind, const char *name, int64_t index, int takes,
                      const char *words)
{
  sleepacc__fault_set(r->f, rc, kind, name, index, takes, kind == SLEEPACC_FAULT_RULE, words);
  r->f->depth = kind == SLEEPACC_FAULT_NONE ? 0 : r->depth;
  for (int d = 0; d < r->f->depth; d++) {
    snprintf(r->f->at[d].name, sizeof r->f->at[d].name, "%s", r->at[d].name);
    r->f->at[d].index = r->at[d].index;
  }
  return rc;
}

/* Enter the table name[index] holds: 1, 0 absent or no table, or the
 * getter's failure. */
static int read_enter(reader *r, const char *name, int64_t index)
{
  int rc;
  if (r->depth >= SLEEPACC_GETTER_DEPTH)
    return -E2BIG;
  if ((rc = r->g->enter(r->g->ctx, name, index)) != 1)
    return rc;
  r->at[r->depth].name = name;
  r->at[r->depth].index = index;
  r->depth++;
  return 1;
}

static void read_leave(reader *r)
{
  r->g->enter(r->g->ctx, NULL, 0);
  r->depth--;
}

/* The rows of t into the struct at base from the table r stands in
 * (complete: every row is required but a LATER one). */
static int read_rows(reader *r, const sleepacc_field *t, void *base, int complete)
{
  for (const sleepacc_field *f = t; f->name; f++) {
    int required = (f->flags & SLEEPACC_FIELD_REQUIRED) || (complete && !(f->flags & SLEEPACC_FIELD_LATER));
    int rc = 0;
    const char *msg = NULL;
    sleepacc_value v;
    if (f->type == SLEEPACC_FIELD_NESTED && (rc = read_enter(r, f->name, -1)) == 1) {
      if ((rc = read_rows(r, f->sub, (char *)base + f->offset, (f->flags & SLEEPACC_FIELD_COMPLETE) != 0)) < 0)
        return rc;
      read_leave(r);
      continue;
    }
    if (f->type == SLEEPACC_FIELD_NESTED && rc < 0)
      return read_fault(r, rc, SLEEPACC_FAULT_NONE, NULL, -1, 0, NULL);
    if ((rc = r->g->get(r->g->ctx, f->name, -1, &v)) < 0)
      return read_fault(r, rc, SLEEPACC_FAULT_NONE, NULL, -1, 0, NULL);
    if (rc == 0 && !required && f->type == SLEEPACC_FIELD_OPT_INT64)
      *(int64_t *)(void *)((char *)base + f->offset) = -1; /* absent: null (Lua leaves nulls out) */
    if (rc == 0 && !required)
      continue; /* absent: the struct's value stays */
    if (rc == 0 || f->type == SLEEPACC_FIELD_NESTED) /* an absent required key, or no table */
      return read_fault(r, -EINVAL, SLEEPACC_FAULT_TYPE, f->name, -1, row_takes(f->type), NULL);
    if ((rc = sleepacc_field_set(f, base, &v, &msg)) == -EINVAL)
      return read_fault(r, rc, SLEEPACC_FAULT_TYPE, f->name, -1, row_takes(f->type), NULL);
    if (rc < 0)
      return read_fault(r, rc, SLEEPACC_FAULT_RULE, f->name, -1, 0, msg);
  }
  return 0;
}

int sleepacc_fields_read(const sleepacc_field *t, const sleepacc_getter *g, const char *name,
                         int64_t index, void *base, sleepacc_fault *f)
{
  reader r;
  int rc;
  if (!t || !g || !g->get || !base || !f)
    return -EFAULT;
  memset(&r, 0, sizeof r);
  r.g = g, r.f = f;
  read_fault(&r, 0, SLEEPACC_FAULT_NONE, NULL, -1, 0, NULL);
  if (!g->enter)
    return -ENOTSUP;
  if (name && (rc = read_enter(&r, name, index)) != 1) /* the record itself: no table */
    return rc < 0 ? read_fault(&r, rc, SLEEPACC_FAULT_NONE, NULL, -1, 0, NULL)
                  : read_fault(&r, -EINVAL, SLEEPACC_FAULT_TYPE, name, index, SLEEPACC_OPT_RECORD, NULL);
  if ((rc = read_rows(&r, t, base, 0)) == 0 && name)
    read_leave(&r);
  return rc;
}
