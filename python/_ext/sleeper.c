/*
 * sleeper.c -- sleepacc._core.Sleeper and sleepacc._core.Pacer over the
 * core's sleepacc_sleeper / sleepacc_pacer.
 *
 * Both types share one object layout and one lifecycle: open (init, with
 * the dma latency held for the object's life), claim (one sleeping thread
 * at a time: a second gets RuntimeError instead of a data race), close
 * (close(), __exit__ or dealloc; twice is fine).  A call re-entered from a
 * signal handler on the thread that holds the object gets a sleeper of its
 * own (issue 16.5), and a tick an exception kept from its caller is offered
 * again by the core (sleepacc_pacer_unwait, 16.6).  Sleeps run in chunks with
 * the GIL released and PyErr_CheckSignals() between them; statistics come
 * from the core's stats structs by their field tables.  No private field
 * of the core structs is read here.
 */
#include "binding.h"

#include <stddef.h>
#include <string.h>

#include <structmember.h>

typedef struct {
  PyObject_HEAD
  int open;          /* 1 between a successful __init__ and close() */
  int busy;          /* 1 while a thread sleeps on it */
  uint64_t busy_gen; /* sleepacc_fork_generation() when busy was set: a mark set
                        before a fork() belongs to a thread the child lacks */
  unsigned long busy_thread; /* the thread that set busy (re-entry: the same one) */
  long long delivered_tok;  /* token of the Python wait() that got the last tick, 0: none */
  int64_t delivered_dl;     /* that tick's deadline */
  long long handed_tok;     /* token of the Python wait() whose tick is in its hand-off */
  int is_pacer;      /* which member of u */
  PyObject *method;  /* the method name (str) */
  union {
    sleepacc_sleeper s;
    sleepacc_pacer p;
  } u;               /* the core object (embedded: nothing allocated behind Python) */
} PreciseObject;

static const char *precise_what(PreciseObject *o) { return o->is_pacer ? "Pacer" : "Sleeper"; }

static sleepacc_sleeper *precise_sleeper(PreciseObject *o) {
  return o->is_pacer ? sleepacc_pacer_sleeper(&o->u.p) : &o->u.s;
}

/* ----------------------------------------------------------- lifecycle */

static void precise_shut(PreciseObject *o) {
  if (!o->open) return;
  if (o->is_pacer) sleepacc_pacer_close(&o->u.p);
  else sleepacc_sleeper_close(&o->u.s);
  o->open = 0;
}

/* Not sleeping in another thread: 0, or -1 with RuntimeError. */
static int precise_idle(PreciseObject *o) {
  if (!o->busy || o->busy_gen != sleepacc_fork_generation()) return 0;
  PyErr_Format(PyExc_RuntimeError, "%s is sleeping in another thread", precise_what(o));
  return -1;
}

/* Open and idle: claim it (0); 1 when this very thread holds it (a signal
 * handler called it while it sleeps: the caller uses a sleeper of its own);
 * or -1 with an exception. */
static int precise_claim(PreciseObject *o) {
  if (!o->open) {
    PyErr_Format(PyExc_ValueError, "%s is closed", precise_what(o));
    return -1;
  }
  if (o->busy && o->busy_gen == sleepacc_fork_generation() &&
      o->busy_thread == PyThread_get_thread_ident())
    return 1;
  if (precise_idle(o) < 0) return -1;
  o->busy = 1;
  o->busy_gen = sleepacc_fork_generation();
  o->busy_thread = PyThread_get_thread_ident();
  return 0;
}

static PyTypeObject Pacer_Type;

/* A sleeper config from a dict of sleepacc_sleeper_config_fields over the
 * defaults (Python converts the arguments' types and units); 0 or -1. */
static int precise_config(PyObject *m, sleepacc_sleeper_config *c) {
  sleepacc_sleeper_config_default(c);
  if (PyDict_Check(m)) return sleepacc_py_to_fields(sleepacc_sleeper_config_fields, m, c);
  PyErr_Format(PyExc_TypeError, "config must be a dict, got %s", Py_TYPE(m)->tp_name);
  return -1;
}

/* _check(config) (a class method): None, or (field, message) of the first
 * rule of the core's sleepacc_sleeper_config_explain that config breaks. */
static PyObject *Precise_check(PyObject *cls, PyObject *m) {
  sleepacc_sleeper_config c;
  const char *field = NULL, *msg = NULL;
  int pacer = PyType_IsSubtype((PyTypeObject *)cls, &Pacer_Type);
  if (precise_config(m, &c) < 0) return NULL;
  if (sleepacc_sleeper_config_explain(&c, pacer, &field, &msg) == 0) Py_RETURN_NONE;
  return Py_BuildValue("(ss)", field, msg);
}

/* __init__(config): open the core object; 0 or -1 with an exception. */
static int Precise_init(PreciseObject *self, PyObject *args, PyObject *kwds) {
  sleepacc_sleeper_config c;
  const char *field = NULL;
  PyObject *m, *name;
  int rc, pacer = PyObject_TypeCheck(self, &Pacer_Type);
  (void)kwds;
  if (!PyArg_ParseTuple(args, "O:__init__", &m) || precise_idle(self) < 0 ||
      precise_config(m, &c) < 0)
    return -1;
  if ((name = PyUnicode_FromString(c.method)) == NULL) return -1;
  precise_shut(self);
  self->is_pacer = pacer;
  rc = pacer ? sleepacc_pacer_open_config(&self->u.p, &c, &field)
             : sleepacc_sleeper_open_config(&self->u.s, &c, &field);
  self->open = rc == 0;
  if (rc < 0) {
    Py_DECREF(name);
    sleepacc_py_raise(rc, field && strcmp(field, "dma_latency_us") == 0
                              ? "dma_latency (/dev/cpu_dma_latency)" : precise_what(self));
    return -1;
  }
  Py_XSETREF(self->method, name);
  return 0;
}

static void Precise_dealloc(PreciseObject *self) {
  precise_shut(self);
  Py_XDECREF(self->method);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Precise_close(PreciseObject *self, PyObject *unused) {
  (void)unused;
  if (precise_idle(self) < 0) return NULL;
  precise_shut(self);
  Py_RETURN_NONE;
}

/* ------------------------------------------------------------ sleeping */

typedef struct {
  PreciseObject *o;
  int64_t deadline;
  sleepacc_sleeper *own; /* a re-entrant call's own sleeper, else NULL */
  int delivered;         /* pacer: 1 once the core delivered the tick */
} precise_step_arg;

static int precise_step(void *p) {
  precise_step_arg *a = p;
  int rc;
  if (!a->o->is_pacer)
    return sleepacc_sleeper_until(a->own ? a->own : &a->o->u.s, a->deadline, SLEEPACC_CHUNK_NS);
  rc = a->own ? sleepacc_pacer_wait_with(&a->o->u.p, a->own, SLEEPACC_CHUNK_NS, &a->deadline)
              : sleepacc_pacer_wait(&a->o->u.p, SLEEPACC_CHUNK_NS, &a->deadline);
  if (rc == 1) a->delivered = 1;
  return rc;
}

/* Sleep (or wait for the next tick) toward *deadline, up to the hand-off:
 * 1 handed off, 0 done, -1 with an exception.  tok: the token of the
 * Python-level wait() (0 for none).
 *   - Re-entered from a signal handler on the thread holding the object:
 *     a sleeper of its own (like the object's, no hand-off) runs to the end;
 *     for a Pacer it takes the pending tick, each tick being delivered once,
 *     and the interrupted wait goes on to the next.
 *   - A tick delivered when an exception lands (Ctrl-C, a handler's) is
 *     offered again: the next wait returns it. */
static int precise_run(PreciseObject *o, int64_t *deadline, long long tok) {
  precise_step_arg a = {o, *deadline, NULL, 0};
  const char *what = o->is_pacer ? "Pacer.wait" : "Sleeper.sleep";
  int rc = precise_claim(o), nested = rc == 1, finish = nested;
  if (rc < 0) return -1;
  if (nested) {
    a.own = PyMem_Calloc(1, sizeof *a.own);
    if (a.own == NULL) {
      PyErr_NoMemory();
      return -1;
    }
    if ((rc = sleepacc_sleeper_open_like(a.own, precise_sleeper(o))) < 0) {
      PyMem_Free(a.own);
      sleepacc_py_raise(rc, what);
      return -1;
    }
  }
  do rc = sleepacc_py_run_chunks(precise_step, &a, what);
  while (finish && rc == 1);
  if (nested) {
    sleepacc_sleeper_close(a.own);
    PyMem_Free(a.own);
  } else {
    o->busy = 0;
  }
  *deadline = a.deadline;
  if (rc < 0) {
    if (a.delivered) sleepacc_pacer_unwait(&o->u.p, a.deadline);
    return -1;
  }
  if (o->is_pacer && rc == 0) {
    o->delivered_tok = tok;
    o->delivered_dl = a.deadline;
  } else if (o->is_pacer) {
    o->handed_tok = tok;
  }
  return rc;
}

/* One clock read of a handed-off sleep: True once it is done; for a Pacer
 * None when the tick handed to the wait() with token tok was taken by a
 * re-entrant wait (that wait() goes on to the next tick). */
static PyObject *precise_poll(PreciseObject *o, int64_t deadline, long long tok) {
  int64_t dl = 0;
  int rc = precise_claim(o);
  if (rc < 0) return NULL;
  if (rc == 1) Py_RETURN_TRUE; /* re-entered: its own sleep already ran to the end */
  rc = o->is_pacer ? sleepacc_pacer_poll(&o->u.p, &dl) : sleepacc_sleeper_poll(&o->u.s, deadline);
  o->busy = 0;
  if (rc == -EINTR) Py_RETURN_FALSE;
  if (rc == -EINVAL && o->is_pacer && tok != 0 && o->handed_tok == tok) Py_RETURN_NONE;
  if (rc < 0) return sleepacc_py_raise(rc, o->is_pacer ? "Pacer.wait" : "Sleeper.sleep");
  if (o->is_pacer && rc == 1) {
    o->delivered_tok = tok;
    o->delivered_dl = dl;
  }
  return PyBool_FromLong(rc == 1);
}

/* `monotonic_ns` as a deadline: an int, at most one day ahead. */
static int precise_deadline_arg(PyObject *arg, int64_t *out) {
  long long dl;
  int overflow = 0;
  const char *msg;
  if (!PyLong_Check(arg) || PyBool_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "monotonic_ns: must be an int (ns, as time.monotonic_ns()), "
                 "got %s", Py_TYPE(arg)->tp_name);
    return -1;
  }
  dl = PyLong_AsLongLongAndOverflow(arg, &overflow);
  if (dl == -1 && PyErr_Occurred()) return -1;
  if (overflow || dl < 0) {
    PyErr_Format(PyExc_ValueError, "monotonic_ns: must be a CLOCK_MONOTONIC time in ns, got %R", arg);
    return -1;
  }
  if (sleepacc_duration_check(dl - sleepacc_now_ns(), &msg) < 0 && dl > sleepacc_now_ns()) {
    PyErr_Format(PyExc_ValueError, "monotonic_ns: must be at most one day ahead, got %R", arg);
    return -1;
  }
  *out = (int64_t)dl;
  return 0;
}

/* _begin(x): the sleep (Sleeper, x = monotonic_ns) or the next tick
 * (Pacer, x = the wait() token) up to the hand-off: (deadline, near);
 * near: finish it with _poll(). */
static PyObject *Precise_begin(PreciseObject *self, PyObject *args) {
  PyObject *x = NULL;
  int64_t dl = 0;
  long long tok = 0;
  int rc;
  if (!PyArg_ParseTuple(args, self->is_pacer ? "|L:_begin" : "O:_begin",
                        self->is_pacer ? (void *)&tok : (void *)&x) ||
      (x && precise_deadline_arg(x, &dl) < 0) || (rc = precise_run(self, &dl, tok)) < 0)
    return NULL;
  return Py_BuildValue("(LO)", (long long)dl, rc == 1 ? Py_True : Py_False);
}

/* _poll(x): one clock read of a handed-off sleep (x = its deadline) or tick
 * (x = the token); see precise_poll. */
static PyObject *Precise_poll(PreciseObject *self, PyObject *args) {
  long long x = 0;
  if (!PyArg_ParseTuple(args, "|L:_poll", &x)) return NULL;
  return precise_poll(self, self->is_pacer ? 0 : x, self->is_pacer ? x : 0);
}

/* The Python wait() with token `tok` could not return its tick (an
 * exception landed after the core delivered it): the next wait returns it. */
static PyObject *Precise_unwait(PreciseObject *self, PyObject *arg) {
  long long tok = PyLong_AsLongLong(arg);
  if (tok == -1 && PyErr_Occurred()) return NULL;
  if (self->is_pacer && tok != 0 && self->delivered_tok == tok && self->open &&
      !(self->busy && self->busy_gen == sleepacc_fork_generation())) {
    sleepacc_pacer_unwait(&self->u.p, self->delivered_dl);
    self->delivered_tok = 0;
  }
  Py_RETURN_NONE;
}

/* --------------------------------------------------------------- stats */

/* auto's learned margins {band lower bound ns: margin ns} into d["margins"]. */
static int precise_add_margins(PyObject *d, const sleepacc_sleeper *s) {
  int64_t lo[SLEEPACC_SLEEPER_BANDS], m[SLEEPACC_SLEEPER_BANDS];
  int n = sleepacc_sleeper_margins(s, lo, m, SLEEPACC_SLEEPER_BANDS), rc = -1;
  PyObject *md = PyDict_New();
  for (int i = 0; md && i < n; i++) {
    PyObject *k = PyLong_FromLongLong(lo[i]), *v = PyLong_FromLongLong(m[i]);
    int bad = !k || !v || PyDict_SetItem(md, k, v) < 0;
    Py_XDECREF(k);
    Py_XDECREF(v);
    if (bad) Py_CLEAR(md);
  }
  if (md) rc = PyDict_SetItemString(d, "margins", md);
  Py_XDECREF(md);
  return rc;
}

/* The stats dict, by the core's tables (plus the sleeper's margins). */
static PyObject *precise_stats(PreciseObject *o) {
  PyObject *d, *sd;
  if (precise_idle(o) < 0) return NULL;
  if (o->is_pacer) {
    sleepacc_pacer_stats st;
    sleepacc_pacer_stats_get(&o->u.p, &st);
    d = sleepacc_py_from_fields(sleepacc_pacer_stats_fields, &st);
    sd = d ? PyDict_GetItemString(d, "sleeper") : NULL;
  } else {
    sleepacc_sleeper_stats st;
    sleepacc_sleeper_stats_get(&o->u.s, &st);
    sd = d = sleepacc_py_from_fields(sleepacc_sleeper_stats_fields, &st);
  }
  if (d && (!sd || precise_add_margins(sd, precise_sleeper(o)) < 0)) Py_CLEAR(d);
  return d;
}

static PyObject *Precise_get_stats(PreciseObject *self, void *closure) {
  (void)closure;
  return precise_stats(self);
}

/* ---------------------------------------------------------------- types */

/* One method and attribute table for both types (x: the deadline for a
 * Sleeper, the wait() token for a Pacer); the public methods, names and
 * meaning are Python's (sleepacc/precise.py). */
static PyMethodDef Precise_methods[] = {
  {"_begin", (PyCFunction)Precise_begin, METH_VARARGS, "_begin(x) -> (deadline, near)"},
  {"_poll", (PyCFunction)Precise_poll, METH_VARARGS, "_poll(x=0) -> True, False or None"},
  {"_unwait", (PyCFunction)Precise_unwait, METH_O, "_unwait(token): offer the tick again"},
  {"close", (PyCFunction)Precise_close, METH_NOARGS, "close(): release it (twice is fine)"},
  {"_check", (PyCFunction)Precise_check, METH_O | METH_CLASS, "_check(config) -> None or (field, message)"},
  {NULL, NULL, 0, NULL},
};

static PyMemberDef Precise_members[] = {
  {"method", T_OBJECT, offsetof(PreciseObject, method), READONLY, "the method name"},
  {"_open", T_INT, offsetof(PreciseObject, open), READONLY, "1 until close()"},
  {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Precise_getset[] = {
  {"stats", (getter)Precise_get_stats, NULL, "the core's stats, by its field table", NULL},
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
   .tp_init = (initproc)Precise_init,                                                      \
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
