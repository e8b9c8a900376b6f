/*
 * convert.c -- the conversions of the CPython binding (see binding.h): one
 * seconds converter, one name converter, one loop each way over the core's
 * field tables, one error mapper and one chunked runner.
 */
#include "binding.h"

#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
int sleepacc_py_addobjectref(PyObject *m, const char *name, PyObject *v) {
  Py_INCREF(v);
  if (PyModule_AddObject(m, name, v) < 0) {
    Py_DECREF(v);
    return -1;
  }
  return 0;
}
#endif

static int py_not_seconds(PyObject *obj, const char *name) {
  PyErr_Format(PyExc_TypeError, "%s: must be a number of seconds (int or float), got %s", name,
               obj ? Py_TYPE(obj)->tp_name : "NULL");
  return -1;
}

int sleepacc_py_seconds_ns(PyObject *obj, const char *name, int64_t *out) {
  const char *msg = NULL;
  int overflow = 0, real = obj && !PyLong_Check(obj);
  long long whole = 0;
  double s = 0.0;
  if (obj == NULL || PyBool_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
      obj == Py_None || PyComplex_Check(obj))
    return py_not_seconds(obj, name);
  if (!real && (whole = PyLong_AsLongLongAndOverflow(obj, &overflow)) == -1 && PyErr_Occurred())
    return -1;
  if (real && (s = PyFloat_AsDouble(obj)) == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
    PyErr_Clear();
    return py_not_seconds(obj, name);
  }
  /* exact for an int (beyond int64 saturates), rounded for a float; the range */
  if (sleepacc_seconds_check(real, s, (int64_t)whole, overflow, out, &msg) < 0) {
    PyErr_Format(PyExc_ValueError, "%s: %s, got %R", name, msg, obj);
    return -1;
  }
  return 0;
}

const char *sleepacc_py_name(PyObject *obj, const char *arg) {
  Py_ssize_t len;
  const char *s;
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: must be a str, got %s", arg, Py_TYPE(obj)->tp_name);
    return NULL;
  }
  if ((s = PyUnicode_AsUTF8AndSize(obj, &len)) == NULL) return NULL;
  if (sleepacc_name_check(s, (size_t)len) < 0) {
    PyErr_Format(PyExc_ValueError, "%s: must not contain a NUL byte, got %R", arg, obj);
    return NULL;
  }
  return s;
}

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
  default: return *omit ? NULL : Py_NewRef(Py_None);
  }
}

PyObject *sleepacc_py_from_fields(const sleepacc_field *table, const void *base) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (const sleepacc_field *f = table; f->name != NULL; f++) {
    int omit;
    PyObject *v = py_field_value(f, base, &omit);
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

/* The object v (the value of key) as a core value: None, a str (its UTF-8,
 * borrowed from v), an int (bool included), or anything float() takes.
 * 0 or -1. */
static int py_value(PyObject *v, const char *key, sleepacc_value *out) {
  int overflow = 0;
  memset(out, 0, sizeof *out);
  if (v == Py_None) return 0;
  if (PyUnicode_Check(v)) {
    out->kind = SLEEPACC_VALUE_TEXT;
    return (out->s = sleepacc_py_name(v, key)) != NULL ? 0 : -1;
  }
  if (PyLong_Check(v)) {
    out->kind = SLEEPACC_VALUE_INT;
    out->i = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow) PyErr_Format(PyExc_ValueError, "%s: out of range, got %R", key, v);
    return overflow || (out->i == -1 && PyErr_Occurred()) ? -1 : 0;
  }
  out->kind = SLEEPACC_VALUE_REAL;
  if ((out->d = PyFloat_AsDouble(v)) != -1.0 || !PyErr_Occurred()) return 0;
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
  PyErr_Clear();
  PyErr_Format(PyExc_TypeError, "%s: cannot be set from %s", key, Py_TYPE(v)->tp_name);
  return -1;
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
    else if ((rc = py_value(v, f->name, &val)) == 0)
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

PyObject *sleepacc_py_raise(int err, const char *what) {
  PyObject *type;
  if (err < 0) err = -err;
  switch (err) {
  case EINVAL: case ERANGE: case EOVERFLOW: case ENOENT: type = PyExc_ValueError; break;
  case ENOMEM: type = PyExc_MemoryError; break;
  default: type = NULL; break;
  }
  if (type != NULL) {
    PyErr_Format(type, "%s: %s: %s", what, sleepacc_errname(-err), sleepacc_strerror(-err));
    return NULL;
  }
  /* OSError's constructor picks the subclass (PermissionError, ...) */
  PyObject *args = Py_BuildValue("(iN)", err, PyUnicode_FromFormat("%s: %s: %s", what,
                                 sleepacc_errname(-err), sleepacc_strerror(-err)));
  if (args != NULL) {
    PyErr_SetObject(PyExc_OSError, args);
    Py_DECREF(args);
  }
  return NULL;
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
