/*
 * convert.c -- the conversions of the CPython binding (see binding.h): one
 * getter the core reads a call's options through (sleepacc_getter; every
 * option's rule, the lists and the config check are the core's), one
 * fault mapper, one loop each way over the core's field
 * tables, one error mapper and one chunked runner.
 */
#include "binding.h"

#include <stdio.h>
#include <string.h>

/* A sleepacc_pairs as a dict {key: value}, in order. */
static PyObject *py_pairs(const sleepacc_pairs *pairs) {
  PyObject *d = PyDict_New();
  for (int64_t i = 0; d && i < pairs->n && i < SLEEPACC_PAIRS_MAX; i++) {
    PyObject *k = PyLong_FromLongLong(pairs->at[i].key), *v = PyLong_FromLongLong(pairs->at[i].value);
    if (!k || !v || PyDict_SetItem(d, k, v) < 0) Py_CLEAR(d);
    Py_XDECREF(k);
    Py_XDECREF(v);
  }
  return d;
}

static PyObject *py_field_value(const sleepacc_field *f, const void *base, int *omit);

/* A sleepacc_list as a list, each element by the row `row`. */
static PyObject *py_list(const sleepacc_list *l, const sleepacc_field *row) {
  PyObject *list = PyList_New((Py_ssize_t)l->n);
  for (size_t k = 0; list && k < l->n; k++) {
    int omit;
    PyObject *v = py_field_value(row, (const char *)l->at + k * l->stride, &omit);
    if (v) PyList_SET_ITEM(list, (Py_ssize_t)k, v);
    else Py_CLEAR(list);
  }
  return list;
}

/* Row f of the struct at base as a new object, by the core's reading of it
 * (NULL: an exception, or with *omit set, nothing to add). */
static PyObject *py_field_value(const sleepacc_field *f, const void *base, int *omit) {
  sleepacc_value v;
  sleepacc_field_get(f, base, &v);
  *omit = v.kind == SLEEPACC_VALUE_NULL && (f->flags & SLEEPACC_FIELD_OMIT_NULL);
  switch (v.kind) {
  case SLEEPACC_VALUE_INT: return PyLong_FromLongLong(v.i);
  case SLEEPACC_VALUE_REAL: return PyFloat_FromDouble(v.d);
  case SLEEPACC_VALUE_BOOL: return PyBool_FromLong((long)v.i);
  case SLEEPACC_VALUE_TEXT: return PyUnicode_DecodeUTF8(v.s, (Py_ssize_t)strlen(v.s), "replace");
  case SLEEPACC_VALUE_NESTED: return sleepacc_py_from_fields(v.sub, v.base);
  case SLEEPACC_VALUE_PAIRS: return py_pairs((const sleepacc_pairs *)v.base);
  case SLEEPACC_VALUE_ITEMS: return py_list((const sleepacc_list *)v.base, v.sub);
  default: return *omit ? NULL : Py_NewRef(Py_None);
  }
}

PyObject *sleepacc_py_from_fields(const sleepacc_field *table, const void *base) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (const sleepacc_field *f = table; f->name != NULL; f++) {
    int omit;
    PyObject *v;
    if (f->flags & SLEEPACC_FIELD_NULL_KEYS) continue; /* a dict holds None: the list is Lua's */
    v = py_field_value(f, base, &omit);
    if (omit) continue;
    if (v == NULL || PyDict_SetItemString(d, f->name, v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(v);
  }
  return d;
}

/* The object v as a core value: None NULL; a bool or a numpy bool BOOL; a
 * str TEXT (its UTF-8, borrowed from v, and its length: a NUL byte is the
 * core's rule); a list or tuple LIST (its length); an int (or what operator.index() takes) INT, beyond int64
 * saturated with .overflow its sign (the core refuses it); a real number (PyFloat_AsDouble: not
 * bytes or complex) REAL; the rest NESTED, a kind no option or plain field
 * takes (the caller's TypeError).  0 or -1. */
static int py_value(PyObject *v, sleepacc_value *out) {
  const char *type = Py_TYPE(v)->tp_name;
  memset(out, 0, sizeof *out);
  if (v == Py_None) return 0;
  if (PyBool_Check(v) || !strcmp(type, "numpy.bool") || !strcmp(type, "numpy.bool_")) {
    out->kind = SLEEPACC_VALUE_BOOL;
    return (out->i = PyObject_IsTrue(v)) < 0 ? -1 : 0;
  }
  if (PyUnicode_Check(v)) {
    Py_ssize_t len;
    out->kind = SLEEPACC_VALUE_TEXT;
    out->i = (out->s = PyUnicode_AsUTF8AndSize(v, &len)) != NULL ? (int64_t)len : 0;
    return out->s != NULL ? 0 : -1;
  }
  if (PyList_Check(v) || PyTuple_Check(v)) { /* a list option's value; no field takes it */
    out->kind = SLEEPACC_VALUE_LIST, out->i = PySequence_Fast_GET_SIZE(v);
    return 0;
  }
  if (PyIndex_Check(v)) {
    PyObject *i = PyNumber_Index(v);
    if (i == NULL) return -1;
    out->kind = SLEEPACC_VALUE_INT;
    out->i = PyLong_AsLongLongAndOverflow(i, &out->overflow);
    Py_DECREF(i);
    if (out->overflow) out->i = out->overflow > 0 ? INT64_MAX : INT64_MIN;
    return out->i == -1 && PyErr_Occurred() ? -1 : 0;
  }
  out->kind = SLEEPACC_VALUE_REAL; /* what float() takes, but str (above), bytes and complex */
  if ((out->d = PyFloat_AsDouble(v)) != -1.0 || !PyErr_Occurred()) return 0;
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
  PyErr_Clear();
  out->kind = SLEEPACC_VALUE_NESTED;
  return 0;
}

/* The object of option name (its element index, >= 0, of a list or tuple)
 * in src, borrowed, or NULL when absent. */
static PyObject *py_lookup(sleepacc_py_source *src, const char *name, int64_t index) {
  PyObject *v = src->value ? src->value : PyDict_GetItemString(src->options, name);
  if (v == NULL || index < 0) return v;
  if (!(PyList_Check(v) || PyTuple_Check(v)) || index >= PySequence_Fast_GET_SIZE(v)) return NULL;
  return PySequence_Fast_GET_ITEM(v, (Py_ssize_t)index);
}

/* The core's getter (sleepacc_getter.get) over src: the dict's keys, and
 * each value by py_value. */
static int py_get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  sleepacc_py_source *src = (sleepacc_py_source *)ctx;
  PyObject *v, *key;
  memset(out, 0, sizeof *out);
  if (name == NULL) { /* the next key */
    if (!PyDict_Next(src->options, &src->pos, &key, NULL)) return 0;
    src->keytype = Py_TYPE(key)->tp_name;
    out->kind = PyUnicode_Check(key) ? SLEEPACC_VALUE_TEXT : SLEEPACC_VALUE_NESTED;
    return out->kind == SLEEPACC_VALUE_NESTED || (out->s = PyUnicode_AsUTF8(key)) != NULL ? 1 : -1;
  }
  if ((v = py_lookup(src, name, index)) == NULL) return 0;
  return py_value(v, out) < 0 ? -1 : 1;
}

static void *py_room(void *ctx, size_t bytes) {
  return ((sleepacc_py_source *)ctx)->room = PyMem_Malloc(bytes);
}

sleepacc_getter sleepacc_py_getter(sleepacc_py_source *src, PyObject *options) {
  sleepacc_getter g = {py_get, py_room, src, NULL, 0, NULL};
  memset(src, 0, sizeof *src);
  src->options = options;
  return g;
}

PyObject *sleepacc_py_fault(sleepacc_py_source *src, int rc, const sleepacc_fault *f) {
  char text[SLEEPACC_FAULT_TEXT_MAX];
  const char *type = src->keytype;
  PyObject *v, *repr = NULL;
  PyMem_Free(src->room);
  src->room = NULL;
  if (f->kind == SLEEPACC_FAULT_NONE) return PyErr_Occurred() ? NULL : sleepacc_py_raise(rc, "options");
  if (f->kind != SLEEPACC_FAULT_KEY) { /* the value: its type, and its repr() for a rule */
    if ((v = py_lookup(src, f->option, f->index)) == NULL) v = Py_None; /* not given */
    type = Py_TYPE(v)->tp_name;
    if (f->kind == SLEEPACC_FAULT_RULE && f->show && (repr = PyObject_Repr(v)) == NULL) return NULL;
  }
  sleepacc_fault_text(f, SLEEPACC_BINDING_PYTHON, NULL, type, repr ? PyUnicode_AsUTF8(repr) : NULL, text,
                      sizeof text);
  Py_XDECREF(repr);
  return PyErr_Format(f->kind == SLEEPACC_FAULT_RULE ? PyExc_ValueError : PyExc_TypeError, "%s", text);
}

int sleepacc_py_value(const sleepacc_option *o, const char *name, void *base, PyObject *obj) {
  sleepacc_py_source src = {NULL, obj, 0, NULL, NULL};
  sleepacc_value v;
  sleepacc_fault f;
  int rc;
  if (py_value(obj, &v) < 0) return -1;
  if ((rc = sleepacc_value_read(o, name, base, &v, &f)) < 0) sleepacc_py_fault(&src, rc, &f);
  return rc < 0 ? -1 : 0;
}

int sleepacc_py_to_fields(const sleepacc_field *table, PyObject *m, void *base) {
  for (const sleepacc_field *f = table; f->name != NULL; f++) {
    PyObject *v = PyMapping_GetItemString(m, f->name);
    sleepacc_value val;
    const char *msg = NULL;
    int rc;
    if (v == NULL) { /* absent: keep the value (a required key: the KeyError) */
      if (!PyErr_ExceptionMatches(PyExc_KeyError) || (f->flags & SLEEPACC_FIELD_REQUIRED)) return -1;
      PyErr_Clear();
      continue;
    }
    if (f->type == SLEEPACC_FIELD_NESTED)
      rc = sleepacc_py_to_fields(f->sub, v, (char *)base + f->offset);
    else if ((rc = py_value(v, &val)) == 0)
      rc = sleepacc_field_set(f, base, &val, &msg);
    if (rc == -EINVAL && msg)
      PyErr_Format(PyExc_TypeError, "%s: %s %s", f->name, msg, Py_TYPE(v)->tp_name);
    else if (rc < -1)
      PyErr_Format(PyExc_ValueError, rc == -ERANGE ? "%s: %s, got %R" : "%s: %s %R", f->name, msg, v);
    else if (rc == 1 && !PyDict_Check(m)) { /* the struct points at v's text: m must hold v */
      PyErr_Format(PyExc_TypeError, "%s: a str needs a dict", f->name);
      rc = -1;
    }
    Py_DECREF(v);
    if (rc < 0) return -1;
  }
  return 0;
}

/* The exception of core error err (negative errno) with the text msg:
 * PermissionError when privileged, else the type sleepacc_py_raise states
 * (an OSError with .errno, its subclass picked by OSError's constructor).
 * Returns NULL. */
static PyObject *raise_text(int err, int privileged, const char *msg) {
  PyObject *type = privileged ? PyExc_PermissionError : PyExc_OSError, *args;
  if (err < 0) err = -err;
  if (!privileged && (err == EINVAL || err == ERANGE || err == EOVERFLOW || err == ENOENT))
    return PyErr_Format(PyExc_ValueError, "%s", msg);
  if (!privileged && err == ENOMEM) return PyErr_Format(PyExc_MemoryError, "%s", msg);
  if ((args = Py_BuildValue("(is)", err, msg)) != NULL) {
    PyErr_SetObject(type, args);
    Py_DECREF(args);
  }
  return NULL;
}

PyObject *sleepacc_py_raise(int err, const char *what) {
  char msg[512];
  snprintf(msg, sizeof msg, "%s: %s: %s", what, sleepacc_errname(err), sleepacc_strerror(err));
  return raise_text(err, 0, msg);
}

PyObject *sleepacc_py_raise_run(const sleepacc_run *run, int err, int flags) {
  char words[SLEEPACC_RUN_WORDS_MAX];
  return raise_text(err, sleepacc_run_words(run, flags, words, sizeof words), words);
}

int sleepacc_py_run_chunks(sleepacc_py_step_fn step, void *arg, const char *what) {
  for (;;) {
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = step(arg);
    Py_END_ALLOW_THREADS
    if (PyErr_CheckSignals() < 0) return -1;
    if (rc == 1) return 0;
    if (rc == SLEEPACC_NEAR) return 1;
    if (rc == 0 || rc == -EINTR) continue;
    sleepacc_py_raise(rc, what);
    return -1;
  }
}
