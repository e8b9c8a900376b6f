/*
 * convert.c -- the conversions of the CPython binding (see binding.h): one
 * getter the core reads a call's options through (sleepacc_getter; every
 * option's rule, the lists and the config check are the core's), one
 * fault mapper (the sentence is the core's), a dict built as the core's walk
 * of a field table says, one error mapper and one chunked runner.
 */
#include "binding.h"

#include <stdio.h>
#include <string.h>

/* The stack the core's walk of a field table builds a dict on
 * (sleepacc_fields_walk): new references, the first the dict. */
typedef struct py_stack {
  PyObject *at[SLEEPACC_FIELDS_DEPTH];
  int n;
} py_stack;

/* sleepacc_field_sink.push: the value, or an empty dict or list, as a new
 * object on the stack. */
static int py_push(void *ctx, const sleepacc_value *v) {
  py_stack *s = (py_stack *)ctx;
  PyObject *o;
  switch (v->kind) {
  case SLEEPACC_VALUE_INT: o = PyLong_FromLongLong(v->i); break;
  case SLEEPACC_VALUE_REAL: o = PyFloat_FromDouble(v->d); break;
  case SLEEPACC_VALUE_BOOL: o = PyBool_FromLong((long)v->i); break;
  case SLEEPACC_VALUE_TEXT: o = PyUnicode_DecodeUTF8(v->s, (Py_ssize_t)strlen(v->s), "replace"); break;
  case SLEEPACC_VALUE_NESTED: o = PyDict_New(); break;
  case SLEEPACC_VALUE_ITEMS: o = PyList_New(0); break;
  default: o = Py_NewRef(Py_None);
  }
  if (o == NULL) return -1;
  s->at[s->n++] = o;
  return 0;
}

/* sleepacc_field_sink.put: the top object into the one below: a dict's
 * key, a list's next element, or a dict's int key index (PAIRS). */
static int py_put(void *ctx, const char *key, int64_t index) {
  py_stack *s = (py_stack *)ctx;
  PyObject *v = s->at[--s->n], *to = s->at[s->n - 1], *k = NULL;
  int rc;
  if (key) rc = PyDict_SetItemString(to, key, v);
  else if (PyList_Check(to)) rc = PyList_Append(to, v);
  else rc = (k = PyLong_FromLongLong(index)) != NULL ? PyDict_SetItem(to, k, v) : -1;
  Py_XDECREF(k);
  Py_DECREF(v);
  return rc;
}

PyObject *sleepacc_py_from_fields(const sleepacc_field *table, const void *base, int one) {
  py_stack s = {{NULL}, 0};
  sleepacc_field_sink sink = {py_push, py_put, &s, SLEEPACC_BINDING_PYTHON};
  int rc = one ? sleepacc_field_walk(table, base, &sink) : sleepacc_fields_walk(table, base, &sink);
  if (rc >= 0) return s.n ? s.at[0] : Py_NewRef(Py_None); /* one row's value left out: None */
  while (s.n > 0) Py_DECREF(s.at[--s.n]);
  return PyErr_Occurred() ? NULL : sleepacc_py_raise(rc, "fields");
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
 * in src (the dict entered last, else the one value or the dict), borrowed,
 * or NULL when absent. */
static PyObject *py_lookup(sleepacc_py_source *src, const char *name, int64_t index) {
  PyObject *v = src->depth ? PyDict_GetItemString(src->at[src->depth - 1], name)
                : src->value ? src->value : PyDict_GetItemString(src->options, name);
  if (v == NULL || index < 0) return v;
  if (!(PyList_Check(v) || PyTuple_Check(v)) || index >= PySequence_Fast_GET_SIZE(v)) return NULL;
  return PySequence_Fast_GET_ITEM(v, (Py_ssize_t)index);
}

/* v held until the read ends: a conversion may run Python (__index__,
 * __float__) that drops the last reference to what the core already holds
 * (a str's UTF-8, an entered dict).  0 or -1. */
static int py_hold(sleepacc_py_source *src, PyObject *v) {
  return (src->hold || (src->hold = PyList_New(0))) ? PyList_Append(src->hold, v) : -1;
}

void sleepacc_py_done(sleepacc_py_source *src) {
  Py_CLEAR(src->hold);
  PyMem_Free(src->room[0]), PyMem_Free(src->room[1]);
  src->room[0] = src->room[1] = NULL;
}

/* The core's getter (sleepacc_getter.get) over src: the dict's keys, and
 * each value by py_value. */
static int py_get(void *ctx, const char *name, int64_t index, sleepacc_value *out) {
  sleepacc_py_source *src = (sleepacc_py_source *)ctx;
  PyObject *v, *key;
  Py_ssize_t len;
  memset(out, 0, sizeof *out);
  if (name == NULL) { /* the next key */
    if (!PyDict_Next(src->options, &src->pos, &key, NULL)) return 0;
    src->keytype = Py_TYPE(key)->tp_name;
    out->kind = PyUnicode_Check(key) ? SLEEPACC_VALUE_TEXT : SLEEPACC_VALUE_NESTED;
    if (out->kind == SLEEPACC_VALUE_NESTED) return 1;
    return (out->s = PyUnicode_AsUTF8AndSize(key, &len)) != NULL ? (out->i = (int64_t)len, 1) : -1;
  }
  if ((v = py_lookup(src, name, index)) == NULL) return 0;
  return py_hold(src, v) < 0 || py_value(v, out) < 0 ? -1 : 1;
}

/* sleepacc_getter.room: at most twice (a table's rows, then its text). */
static void *py_room(void *ctx, size_t bytes) {
  sleepacc_py_source *src = (sleepacc_py_source *)ctx;
  int k = src->room[0] != NULL;
  return src->room[k] ? NULL : (src->room[k] = PyMem_Malloc(bytes));
}

/* sleepacc_getter.enter: the dict of option name (element index) read
 * from until left (name NULL). */
static int py_enter(void *ctx, const char *name, int64_t index) {
  sleepacc_py_source *src = (sleepacc_py_source *)ctx;
  PyObject *v;
  if (name == NULL) return src->depth > 0 ? (src->depth--, 1) : 0;
  v = py_lookup(src, name, index);
  if (v == NULL || !PyDict_Check(v) || src->depth >= SLEEPACC_GETTER_DEPTH) return 0;
  if (py_hold(src, v) < 0) return -1;
  src->at[src->depth++] = v;
  return 1;
}

sleepacc_getter sleepacc_py_getter(sleepacc_py_source *src, PyObject *options) {
  sleepacc_getter g = {py_get, py_room, src, NULL, 0, NULL, py_enter};
  memset(src, 0, sizeof *src);
  src->options = options;
  return g;
}

PyObject *sleepacc_py_fault(sleepacc_py_source *src, int rc, const sleepacc_fault *f) {
  char text[SLEEPACC_FAULT_TEXT_MAX];
  const char *type = src->keytype;
  PyObject *v, *repr = NULL;
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
  sleepacc_py_source src = {.value = obj}; /* a fault's source: the one value */
  sleepacc_value v;
  sleepacc_fault f;
  int rc;
  if (py_value(obj, &v) < 0) return -1;
  if ((rc = sleepacc_value_read(o, name, base, &v, &f)) < 0) sleepacc_py_fault(&src, rc, &f);
  return rc < 0 ? -1 : 0;
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

/* sleepacc_chunks' step and checkpoint: the step with the GIL released;
 * the signals checked (an exception set) with it held. */
typedef struct py_chunk {
  sleepacc_py_step_fn step;
  void *arg;
} py_chunk;

static int py_step(void *chunk) {
  py_chunk *c = (py_chunk *)chunk;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = c->step(c->arg);
  Py_END_ALLOW_THREADS
  return rc;
}

static int py_signals(void *ctx) { return (void)ctx, PyErr_CheckSignals() < 0; }

int sleepacc_py_run_chunks(sleepacc_py_step_fn step, void *arg, const char *what) {
  py_chunk c = {step, arg};
  int rc = sleepacc_chunks(py_step, &c, py_signals, NULL);
  if (rc == -ECANCELED) return -1; /* the signal handler's exception */
  if (rc < 0) return sleepacc_py_raise(rc, what), -1;
  return rc == SLEEPACC_NEAR;
}
