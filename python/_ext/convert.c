/*
 * convert.c -- the conversions of the CPython binding (see binding.h): one
 * seconds converter, one name converter, one loop each way over the core's
 * field tables, one error mapper and one chunked runner.
 */
#include "binding.h"

#include <math.h>
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
  int64_t ns;
  if (obj == NULL || PyBool_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
      obj == Py_None || PyComplex_Check(obj))
    return py_not_seconds(obj, name);
  if (PyLong_Check(obj)) { /* exact; beyond int64 saturates (the core refuses it) */
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (overflow || s > INT64_MAX / 1000000000LL || s < INT64_MIN / 1000000000LL)
      ns = (overflow ? overflow < 0 : s < 0) ? -1 : INT64_MAX;
    else
      ns = (int64_t)s * 1000000000LL;
  } else {
    double s = PyFloat_AsDouble(obj);
    if (s == -1.0 && PyErr_Occurred()) {
      if (!PyErr_ExceptionMatches(PyExc_TypeError)) return -1;
      PyErr_Clear();
      return py_not_seconds(obj, name);
    }
    if (sleepacc_seconds_to_ns(s, &ns) < 0) { /* the core's rounding and saturation */
      PyErr_Format(PyExc_ValueError, "%s: must be finite, got %R", name, obj);
      return -1;
    }
  }
  if (sleepacc_duration_check(ns, &msg) < 0) {
    PyErr_Format(PyExc_ValueError, "%s: %s, got %R", name, msg, obj);
    return -1;
  }
  *out = ns;
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

/* One value of row f at p as a new object (NULL: an exception, or with
 * *omit set, nothing to add). */
static PyObject *py_field_value(const sleepacc_field *f, const char *p, int *omit) {
  *omit = 0;
  switch (f->type) {
  case SLEEPACC_FIELD_DOUBLE: return PyFloat_FromDouble(*(const double *)p);
  case SLEEPACC_FIELD_BOOL: return PyBool_FromLong(*(const int *)p);
  case SLEEPACC_FIELD_INT: return PyLong_FromLong(*(const int *)p);
  case SLEEPACC_FIELD_NESTED: return sleepacc_py_from_fields(f->sub, p);
  case SLEEPACC_FIELD_PAIRS: return py_pairs((const sleepacc_pairs *)(const void *)p);
  case SLEEPACC_FIELD_STRING:
    if (*(const char *const *)p) return PyUnicode_FromString(*(const char *const *)p);
    break;
  case SLEEPACC_FIELD_METHOD:
    if (*(const sleepacc_method *const *)p)
      return PyUnicode_FromString((*(const sleepacc_method *const *)p)->name);
    break;
  case SLEEPACC_FIELD_OPT_INT64:
    if (*(const int64_t *)p >= 0) return PyLong_FromLongLong(*(const int64_t *)p);
    break;
  default: return PyLong_FromLongLong(*(const int64_t *)p);
  }
  if (f->flags & SLEEPACC_FIELD_OMIT_NULL) {
    *omit = 1;
    return NULL;
  }
  return Py_NewRef(Py_None);
}

PyObject *sleepacc_py_from_fields(const sleepacc_field *table, const void *base) {
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (const sleepacc_field *f = table; f->name != NULL; f++) {
    int omit;
    PyObject *v = py_field_value(f, (const char *)base + f->offset, &omit);
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

int sleepacc_py_to_fields(const sleepacc_field *table, PyObject *m, void *base) {
  for (const sleepacc_field *f = table; f->name != NULL; f++) {
    char *p = (char *)base + f->offset;
    PyObject *v = PyMapping_GetItemString(m, f->name);
    int ok = 1;
    if (v == NULL) { /* absent: keep the value */
      if (!PyErr_ExceptionMatches(PyExc_KeyError)) return -1;
      PyErr_Clear();
      continue;
    }
    if (f->type == SLEEPACC_FIELD_NESTED) {
      ok = sleepacc_py_to_fields(f->sub, v, p) == 0;
    } else if (f->type == SLEEPACC_FIELD_METHOD) {
      const char *name = v == Py_None ? NULL : sleepacc_py_name(v, f->name);
      const sleepacc_method *row = name ? sleepacc_method_find(name) : NULL;
      ok = v == Py_None || row != NULL;
      if (name && !row) PyErr_Format(PyExc_ValueError, "%s: unknown method %R", f->name, v);
      if (ok) *(const sleepacc_method **)p = row;
    } else if (f->type == SLEEPACC_FIELD_STRING) { /* borrowed: the dict m holds v */
      const char *name = NULL;
      if (!PyDict_Check(m)) PyErr_Format(PyExc_TypeError, "%s: a str needs a dict", f->name);
      ok = PyDict_Check(m) && (name = sleepacc_py_name(v, f->name)) != NULL;
      if (ok) *(const char **)p = name;
    } else if (f->type == SLEEPACC_FIELD_DOUBLE) {
      double x = PyFloat_AsDouble(v);
      ok = !(x == -1.0 && PyErr_Occurred());
      if (ok) *(double *)p = x;
    } else if (!PyLong_Check(v)) {
      PyErr_Format(PyExc_TypeError, "%s: cannot be set from %s", f->name, Py_TYPE(v)->tp_name);
      ok = 0;
    } else {
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
      int narrow = f->type == SLEEPACC_FIELD_INT || f->type == SLEEPACC_FIELD_BOOL;
      ok = !(x == -1 && PyErr_Occurred());
      if (ok && (overflow || (narrow && (x < INT32_MIN || x > INT32_MAX)))) {
        PyErr_Format(PyExc_ValueError, "%s: out of range, got %R", f->name, v);
        ok = 0;
      }
      if (ok && narrow) *(int *)p = (int)x;
      else if (ok) *(int64_t *)p = (int64_t)x;
    }
    Py_DECREF(v);
    if (!ok) return -1;
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
