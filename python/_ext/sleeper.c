/*
 * sleeper.c -- sleepacc._core.Sleeper and sleepacc._core.Pacer: one object
 * layout around the core's precise handle (sleepacc_precise, csrc/precise.c),
 * which owns their lifecycle (open, the one-thread claim, re-entry, the tick
 * tokens, close, stats).  Here: the arguments converted, the claim's
 * identity (PyThread_get_thread_ident()), a re-entered call's own sleeper
 * allocated, the core's step run in chunks with the GIL released and
 * PyErr_CheckSignals() between them, the stats by the table the core names,
 * and errors mapped (the core's words, sleepacc_precise_message: -EBUSY
 * RuntimeError, -EBADF ValueError).
 */
#include "binding.h"

#include <stddef.h>

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  PyObject *method;   /* the method name (str) */
  char what[SLEEPACC_PRECISE_WORDS_MAX]; /* its call in the core's words, a step's error names it */
  sleepacc_precise h; /* the core's handle (embedded: nothing allocated behind Python) */
} PreciseObject;

static PyTypeObject Pacer_Type;

static int is_pacer(PreciseObject *o) { return PyObject_TypeCheck(o, &Pacer_Type); }

static uint64_t precise_me(void) { return (uint64_t)PyThread_get_thread_ident(); }

/* A handle's error rc as an exception, in the core's words
 * (sleepacc_precise_message; field, at: where it failed); NULL. */
static PyObject *precise_raise(PreciseObject *o, int rc, const char *field, int at) {
  char words[SLEEPACC_PRECISE_WORDS_MAX];
  if (!sleepacc_precise_message(&o->h, rc, field, at, words, sizeof words))
    return sleepacc_py_raise(rc, words);
  return PyErr_Format(rc == -EBUSY ? PyExc_RuntimeError : PyExc_ValueError, "%s", words); /* refused */
}

/* __init__(options): options, a dict {option: value} of
 * sleepacc_sleeper_options names, read by the core (sleepacc_sleeper_read:
 * the defaults, each option by its kind's rule, a pacer's period required,
 * every rule of the config; its fault the exception, sleepacc_py_fault),
 * then the core handle opened; 0 or -1 with an exception. */
static int Precise_init(PreciseObject *self, PyObject *args, PyObject *kwds) {
  sleepacc_sleeper_config c;
  const char *field = NULL;
  sleepacc_py_source src;
  sleepacc_getter g;
  sleepacc_fault f;
  PyObject *m, *name;
  int rc;
  (void)kwds;
  if (!PyArg_ParseTuple(args, "O!:__init__", &PyDict_Type, &m)) return -1;
  g = sleepacc_py_getter(&src, m);
  g.take = sleepacc_precise_takes[is_pacer(self)]; /* what the kind takes, all by name */
  if ((rc = sleepacc_sleeper_read(&c, is_pacer(self), &g, &f)) < 0) {
    sleepacc_py_fault(&src, rc, &f);
    return sleepacc_py_done(&src), -1;
  }
  name = PyUnicode_FromString(c.method); /* c's names are the dict's text, held until done */
  rc = name ? sleepacc_precise_open(&self->h, is_pacer(self) ? SLEEPACC_PRECISE_PACER : SLEEPACC_PRECISE_SLEEPER,
                                    &c, &field) : -1;
  sleepacc_py_done(&src);
  if (name == NULL) return -1;
  if (rc < 0) {
    Py_DECREF(name);
    precise_raise(self, rc, field, SLEEPACC_PRECISE_AT_HANDLE);
    return -1;
  }
  Py_XSETREF(self->method, name);
  sleepacc_precise_message(&self->h, 0, NULL, SLEEPACC_PRECISE_AT_CALL, self->what, sizeof self->what);
  return 0;
}

static void Precise_dealloc(PreciseObject *self) {
  sleepacc_precise_close(&self->h);
  Py_XDECREF(self->method);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Precise_close(PreciseObject *self, PyObject *unused) {
  int rc = sleepacc_precise_close(&self->h);
  (void)unused;
  if (rc < 0) return precise_raise(self, rc, NULL, SLEEPACC_PRECISE_AT_HANDLE);
  Py_RETURN_NONE;
}

/* _begin(x[, seconds]): the sleep toward x = monotonic_ns (Sleeper; by the
 * core's deadline option) or, seconds true, the sleep of x seconds (its
 * deadline by the core's sleep option), or the wait for the next tick of
 * the wait() with token x (Pacer), up to the hand-off: (deadline, near);
 * near: finish it with _poll().  A call re-entered from a signal handler on
 * the thread that holds the object runs to the end with a sleeper of its
 * own, allocated here. */
static PyObject *Precise_begin(PreciseObject *self, PyObject *args) {
  int pacer = is_pacer(self), rc, near = 0, secs = 0;
  uint64_t me = precise_me();
  sleepacc_sleeper *own = NULL;
  sleepacc_precise_call c;
  PyObject *x = NULL;
  int64_t dl = 0;
  long long tok = 0;
  if (!PyArg_ParseTuple(args, pacer ? "|L:_begin" : "O|p:_begin", pacer ? (void *)&tok : (void *)&x, &secs))
    return NULL;
  if (x && sleepacc_py_value(secs ? sleepacc_sleep_option : sleepacc_deadline_option,
                             secs ? NULL : "monotonic_ns", &dl, x) < 0)
    return NULL;
  if (sleepacc_precise_reentered(&self->h, me))
    own = PyMem_Malloc(sizeof *own); /* NULL: the core's -ENOMEM */
  if ((rc = sleepacc_precise_begin(&c, &self->h, me, dl, tok, own)) == 0) {
    rc = sleepacc_py_run_chunks(sleepacc_precise_step, &c, self->what); /* -1: raised */
    near = sleepacc_precise_end(&c, rc < 0);
  } else {
    precise_raise(self, rc, NULL, SLEEPACC_PRECISE_AT_CALL);
  }
  PyMem_Free(own);
  if (rc < 0) return NULL;
  return Py_BuildValue("(LO)", (long long)c.deadline_ns, near ? Py_True : Py_False);
}

/* _poll(x): one clock read of a handed-off sleep (x = its deadline) or tick
 * (x = the token): True done, False not yet, None (Pacer) when a re-entrant
 * wait took the tick handed to that wait() (it goes on to the next). */
static PyObject *Precise_poll(PreciseObject *self, PyObject *args) {
  int pacer = is_pacer(self);
  long long x = 0;
  int rc;
  if (!PyArg_ParseTuple(args, "|L:_poll", &x)) return NULL;
  rc = sleepacc_precise_poll(&self->h, precise_me(), pacer ? 0 : x, pacer ? x : 0);
  if (rc == SLEEPACC_PRECISE_TAKEN) Py_RETURN_NONE;
  if (rc < 0) return precise_raise(self, rc, NULL, SLEEPACC_PRECISE_AT_CALL);
  return PyBool_FromLong(rc == 1);
}

/* The Python wait() with token `tok` could not return its tick (an
 * exception landed after the core delivered it): the next wait returns it. */
static PyObject *Precise_unwait(PreciseObject *self, PyObject *arg) {
  long long tok = PyLong_AsLongLong(arg);
  if (tok == -1 && PyErr_Occurred()) return NULL;
  sleepacc_precise_unwait(&self->h, tok); /* -EINVAL: nothing to offer again */
  Py_RETURN_NONE;
}

/* The stats dict, by the table the core names for the handle's kind. */
static PyObject *Precise_get_stats(PreciseObject *self, void *closure) {
  sleepacc_precise_stats st;
  const sleepacc_field *fields;
  int rc = sleepacc_precise_stats_get(&self->h, precise_me(), &st, &fields);
  (void)closure;
  if (rc < 0) return precise_raise(self, rc, NULL, SLEEPACC_PRECISE_AT_HANDLE);
  return sleepacc_py_from_fields(fields, &st, 0);
}

static PyObject *Precise_get_open(PreciseObject *self, void *closure) {
  (void)closure;
  return PyLong_FromLong(sleepacc_precise_is_open(&self->h));
}

/* One method and attribute table for both types (x: the deadline for a
 * Sleeper, the wait() token for a Pacer); the public methods, names and
 * meaning are Python's (sleepacc/precise.py). */
static PyMethodDef Precise_methods[] = {
  {"_begin", (PyCFunction)Precise_begin, METH_VARARGS, "_begin(x, seconds=False) -> (deadline, near)"},
  {"_poll", (PyCFunction)Precise_poll, METH_VARARGS, "_poll(x=0) -> True, False or None"},
  {"_unwait", (PyCFunction)Precise_unwait, METH_O, "_unwait(token): offer the tick again"},
  {"close", (PyCFunction)Precise_close, METH_NOARGS, "close(): release it (twice is fine)"},
  {NULL, NULL, 0, NULL},
};

static PyMemberDef Precise_members[] = {
  {"method", T_OBJECT, offsetof(PreciseObject, method), READONLY, "the method name"},
  {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Precise_getset[] = {
  {"stats", (getter)Precise_get_stats, NULL, "the core's stats, by its field table", NULL},
  {"_open", (getter)Precise_get_open, NULL, "1 until close()", NULL},
  {NULL, NULL, NULL, NULL, NULL},
};

#define PRECISE_TYPE(name)                                                          \
  {PyVarObject_HEAD_INIT(NULL, 0)                                                   \
   .tp_name = "sleepacc." name,                                                     \
   .tp_basicsize = sizeof(PreciseObject),                                           \
   .tp_dealloc = (destructor)Precise_dealloc,                                       \
   .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,                            \
   .tp_doc = "The core's " name " (sleepacc." name " gives it names and meaning).", \
   .tp_methods = Precise_methods,                                                   \
   .tp_members = Precise_members,                                                   \
   .tp_getset = Precise_getset,                                                     \
   .tp_init = (initproc)Precise_init,                                               \
   .tp_new = PyType_GenericNew}
static PyTypeObject Sleeper_Type = PRECISE_TYPE("Sleeper");
static PyTypeObject Pacer_Type = PRECISE_TYPE("Pacer");

/* Add Sleeper and Pacer to sleepacc._core (sleepacc.sleep is Python, in
 * sleepacc/precise.py: one Sleeper per thread and method). */
int sleepacc_py_init_precise(PyObject *module) {
  if (PyType_Ready(&Sleeper_Type) < 0 || PyType_Ready(&Pacer_Type) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Sleeper", (PyObject *)&Sleeper_Type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Pacer", (PyObject *)&Pacer_Type);
}
