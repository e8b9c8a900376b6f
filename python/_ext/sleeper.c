/*
 * sleeper.c -- sleepacc._core.Sleeper and sleepacc._core.Pacer over the
 * core's sleepacc_sleeper / sleepacc_pacer.
 *
 * Both types share one object layout and one lifecycle: open (init, with
 * the dma latency held for the object's life), claim (one sleeping thread
 * at a time: a second gets RuntimeError instead of a data race), close
 * (close(), __exit__ or dealloc; twice is fine).  Sleeps run in chunks with
 * the GIL released and PyErr_CheckSignals() between them; statistics come
 * from the core's stats structs by their field tables.  No private field
 * of the core structs is read here.
 */
#include "binding.h"

#include <string.h>

typedef struct {
  PyObject_HEAD
  int open;          /* 1 between a successful __init__ and close() */
  int busy;          /* 1 while a thread sleeps on it */
  uint64_t busy_gen; /* sleepacc_fork_generation() when busy was set: a mark set
                        before a fork() belongs to a thread the child lacks */
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

/* Open and idle: claim it (0), or -1 with an exception. */
static int precise_claim(PreciseObject *o) {
  if (!o->open) {
    PyErr_Format(PyExc_ValueError, "%s is closed", precise_what(o));
    return -1;
  }
  if (precise_idle(o) < 0) return -1;
  o->busy = 1;
  o->busy_gen = sleepacc_fork_generation();
  return 0;
}

/* Python argument of a sleeper config field, and the object given for it. */
static const char *const precise_args[][2] = {
  {"method", "method"}, {"quantile", "quantile"}, {"margin_ns", "margin"},
  {"handoff_ns", "handoff"}, {"dma_latency_us", "dma_latency"}, {"period_ns", "period"},
  {"missed", "missed"}};
#define PRECISE_NARGS (sizeof precise_args / sizeof precise_args[0])

/* Fill c from the arguments (objs[i] for precise_args[i], NULL: not given):
 * conversions only (str, float, seconds, int); every rule is the core's
 * (sleepacc_sleeper_config_explain), reported as "<argument>: <message>". */
static int precise_config(PyObject *const objs[PRECISE_NARGS], int pacer,
                          sleepacc_sleeper_config *c) {
  const char *field = NULL, *msg = NULL;
  PyObject *q = objs[1], *d = objs[4];
  sleepacc_sleeper_config_default(c);
  if ((objs[0] && !(c->method = sleepacc_py_name(objs[0], "method"))) ||
      (objs[6] && !(c->missed = sleepacc_py_name(objs[6], "missed"))))
    return -1;
  if (q && (PyBool_Check(q) || !(PyFloat_Check(q) || PyLong_Check(q)))) {
    PyErr_Format(PyExc_TypeError, "quantile: must be a float in (0, 1), got %s", Py_TYPE(q)->tp_name);
    return -1;
  }
  if (q && (c->quantile = PyFloat_AsDouble(q)) == -1.0 && PyErr_Occurred()) return -1;
  if ((objs[2] && objs[2] != Py_None && sleepacc_py_seconds_ns(objs[2], "margin", &c->margin_ns) < 0) ||
      (objs[3] && objs[3] != Py_None && sleepacc_py_seconds_ns(objs[3], "handoff", &c->handoff_ns) < 0) ||
      (objs[5] && sleepacc_py_seconds_ns(objs[5], "period", &c->period_ns) < 0))
    return -1;
  if (d && d != Py_None) {
    int overflow = 0;
    if (PyBool_Check(d) || !PyLong_Check(d)) {
      PyErr_Format(PyExc_TypeError, "dma_latency: must be an int (us) or None, got %s",
                   Py_TYPE(d)->tp_name);
      return -1;
    }
    c->dma_latency_us = PyLong_AsLongLongAndOverflow(d, &overflow);
    if (overflow || c->dma_latency_us < 0) c->dma_latency_us = overflow < 0 ? -2 : INT64_MAX;
  }
  if (sleepacc_sleeper_config_explain(c, pacer, &field, &msg) == 0) return 0;
  for (size_t i = 0; i < PRECISE_NARGS; i++)
    if (strcmp(field, precise_args[i][0]) == 0)
      PyErr_Format(PyExc_ValueError, "%s: %s, got %R", precise_args[i][1], msg,
                   objs[i] ? objs[i] : Py_None);
  return -1;
}

/* Open the core object from the arguments; 0 or -1 with an exception. */
static int precise_open(PreciseObject *self, PyObject *const objs[PRECISE_NARGS], int pacer) {
  sleepacc_sleeper_config c;
  const char *field = NULL;
  PyObject *name;
  int rc;
  if (precise_idle(self) < 0 || precise_config(objs, pacer, &c) < 0) return -1;
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

static int Sleeper_init(PreciseObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"method", "quantile", "margin", "handoff", "dma_latency", NULL};
  PyObject *o[PRECISE_NARGS] = {NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOOOO:Sleeper", kwlist, &o[0], &o[1], &o[2],
                                   &o[3], &o[4]))
    return -1;
  return precise_open(self, o, 0);
}

static int Pacer_init(PreciseObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"period", "method", "missed", "handoff", "dma_latency", NULL};
  PyObject *o[PRECISE_NARGS] = {NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOO:Pacer", kwlist, &o[5], &o[0], &o[6],
                                   &o[3], &o[4]))
    return -1;
  return precise_open(self, o, 1);
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

static PyObject *Precise_enter(PreciseObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *Precise_exit(PreciseObject *self, PyObject *args) {
  (void)args;
  return Precise_close(self, NULL);
}

/* ------------------------------------------------------------ sleeping */

typedef struct {
  PreciseObject *o;
  int64_t deadline;
} precise_step_arg;

static int precise_step(void *p) {
  precise_step_arg *a = p;
  if (a->o->is_pacer) return sleepacc_pacer_wait(&a->o->u.p, SLEEPACC_CHUNK_NS, &a->deadline);
  return sleepacc_sleeper_until(&a->o->u.s, a->deadline, SLEEPACC_CHUNK_NS);
}

/* Sleep (or wait for the next tick) toward *deadline.  finish=1: to the
 * end (a hand-off is finished here, GIL released); finish=0: up to the
 * hand-off.  1 handed off, 0 done, -1 with an exception. */
static int precise_run(PreciseObject *o, int64_t *deadline, int finish) {
  precise_step_arg a = {o, *deadline};
  int rc;
  if (precise_claim(o) < 0) return -1;
  do rc = sleepacc_py_run_chunks(precise_step, &a, o->is_pacer ? "Pacer.wait" : "Sleeper.sleep");
  while (finish && rc == 1);
  o->busy = 0;
  *deadline = a.deadline;
  return rc;
}

/* One clock read of a handed-off sleep: True once it is done. */
static PyObject *precise_poll(PreciseObject *o, int64_t deadline) {
  int rc;
  if (precise_claim(o) < 0) return NULL;
  rc = o->is_pacer ? sleepacc_pacer_poll(&o->u.p, NULL) : sleepacc_sleeper_poll(&o->u.s, deadline);
  o->busy = 0;
  if (rc == -EINTR) Py_RETURN_FALSE;
  if (rc < 0) return sleepacc_py_raise(rc, o->is_pacer ? "Pacer.wait" : "Sleeper.sleep");
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

/* Sleeper: seconds (relative=1) or monotonic_ns -> its deadline. */
static PyObject *Sleeper_go(PreciseObject *self, PyObject *arg, int relative, int finish) {
  int64_t d;
  int rc;
  if (relative ? sleepacc_py_seconds_ns(arg, "seconds", &d) < 0 : precise_deadline_arg(arg, &d) < 0)
    return NULL;
  if (relative) d += sleepacc_now_ns();
  if ((rc = precise_run(self, &d, finish)) < 0) return NULL;
  if (rc == 1) return PyLong_FromLongLong(d);
  Py_RETURN_NONE;
}

static PyObject *Sleeper_sleep(PreciseObject *s, PyObject *a) { return Sleeper_go(s, a, 1, 1); }
static PyObject *Sleeper_until(PreciseObject *s, PyObject *a) { return Sleeper_go(s, a, 0, 1); }
static PyObject *Sleeper_begin(PreciseObject *s, PyObject *a) { return Sleeper_go(s, a, 1, 0); }
static PyObject *Sleeper_begin_until(PreciseObject *s, PyObject *a) { return Sleeper_go(s, a, 0, 0); }

static PyObject *Sleeper_poll(PreciseObject *self, PyObject *arg) {
  int64_t dl;
  if (precise_deadline_arg(arg, &dl) < 0) return NULL;
  return precise_poll(self, dl);
}

static PyObject *Pacer_wait(PreciseObject *self, PyObject *unused) {
  int64_t dl = 0;
  (void)unused;
  if (precise_run(self, &dl, 1) < 0) return NULL;
  return PyLong_FromLongLong(dl);
}

/* wait() up to the hand-off: (deadline, near); near: finish with _poll(). */
static PyObject *Pacer_begin(PreciseObject *self, PyObject *unused) {
  int64_t dl = 0;
  int rc;
  (void)unused;
  if ((rc = precise_run(self, &dl, 0)) < 0) return NULL;
  return Py_BuildValue("(LO)", (long long)dl, rc == 1 ? Py_True : Py_False);
}

static PyObject *Pacer_poll(PreciseObject *self, PyObject *unused) {
  (void)unused;
  return precise_poll(self, 0);
}

static PyObject *Pacer_iter(PreciseObject *self) { return Py_NewRef(self); }
static PyObject *Pacer_next(PreciseObject *self) { return Pacer_wait(self, NULL); }

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

/* One top-level stats key (the closure) as an attribute. */
static PyObject *Precise_get_stat(PreciseObject *self, void *closure) {
  PyObject *d = precise_stats(self), *v;
  if (d == NULL) return NULL;
  v = PyDict_GetItemString(d, (const char *)closure);
  Py_XINCREF(v);
  Py_DECREF(d);
  if (v == NULL) PyErr_SetString(PyExc_AttributeError, (const char *)closure);
  return v;
}

static PyObject *Precise_get_method(PreciseObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->method ? self->method : Py_None);
}

static PyObject *Precise_repr(PreciseObject *self) {
  PyObject *d = precise_stats(self), *r;
  if (d == NULL) return NULL;
  r = PyUnicode_FromFormat("<sleepacc.%s method=%R count=%S%s>", precise_what(self),
                           self->method ? self->method : Py_None, PyDict_GetItemString(d, "count"),
                           self->open ? "" : " closed");
  Py_DECREF(d);
  return r;
}

/* ---------------------------------------------------------------- types */

#define PRECISE_COMMON_METHODS                                                                  \
  {"close", (PyCFunction)Precise_close, METH_NOARGS, "close()\n--\n\nRelease the kernel wait " \
   "and the dma latency request (twice is fine)."},                                            \
  {"__enter__", (PyCFunction)Precise_enter, METH_NOARGS, NULL},                                \
  {"__exit__", (PyCFunction)Precise_exit, METH_VARARGS, NULL},                                 \
  {NULL, NULL, 0, NULL}
#define PRECISE_STAT(name, doc) {name, (getter)Precise_get_stat, NULL, doc, (void *)name}
#define PRECISE_COMMON_GETSET                                                                   \
  {"stats", (getter)Precise_get_stats, NULL, "dict: the core's stats, by its field table.",    \
   NULL},                                                                                      \
  {"method", (getter)Precise_get_method, NULL, "str: the method it was opened with.", NULL},   \
  {NULL, NULL, NULL, NULL, NULL}

static PyMethodDef Sleeper_methods[] = {
  {"sleep", (PyCFunction)Sleeper_sleep, METH_O,
   "sleep(seconds)\n--\n\nSleep toward now + seconds (0..86400); never returns before it.\n"
   "The GIL is released; Ctrl-C raises KeyboardInterrupt within one 50 ms chunk."},
  {"sleep_until", (PyCFunction)Sleeper_until, METH_O,
   "sleep_until(monotonic_ns)\n--\n\nSleep until the CLOCK_MONOTONIC time monotonic_ns\n"
   "(time.monotonic_ns()); a past deadline returns at once, over a day ahead is a ValueError."},
  {"_begin", (PyCFunction)Sleeper_begin, METH_O,
   "_begin(seconds)\n--\n\nsleep() up to the hand-off: None when done, else the deadline to _poll."},
  {"_begin_until", (PyCFunction)Sleeper_begin_until, METH_O,
   "_begin_until(monotonic_ns)\n--\n\nsleep_until() up to the hand-off (see _begin)."},
  {"_poll", (PyCFunction)Sleeper_poll, METH_O,
   "_poll(deadline)\n--\n\nOne clock read of a handed-off sleep: True once deadline is reached."},
  PRECISE_COMMON_METHODS,
};

static PyGetSetDef Sleeper_getset[] = {
  PRECISE_STAT("last_wake_ns", "int: when the last completed sleep ended (CLOCK_MONOTONIC ns, "
               "the core's own clock read; 0 before the first)."),
  PRECISE_COMMON_GETSET,
};

static PyTypeObject Sleeper_Type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "sleepacc.Sleeper",
  .tp_basicsize = sizeof(PreciseObject),
  .tp_dealloc = (destructor)Precise_dealloc,
  .tp_repr = (reprfunc)Precise_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_doc = "Sleeper(method='auto', quantile=0.99, margin=None, handoff=0, dma_latency=None)\n"
            "--\n\nA precise sleep that learns this host (see sleepacc.Sleeper).",
  .tp_methods = Sleeper_methods,
  .tp_getset = Sleeper_getset,
  .tp_init = (initproc)Sleeper_init,
  .tp_new = PyType_GenericNew,
};

static PyMethodDef Pacer_methods[] = {
  {"wait", (PyCFunction)Pacer_wait, METH_NOARGS,
   "wait() -> int\n--\n\nWait for the next tick; its deadline (CLOCK_MONOTONIC ns). Never early."},
  {"_begin", (PyCFunction)Pacer_begin, METH_NOARGS,
   "_begin()\n--\n\nwait() up to the hand-off: (deadline, near); near: finish with _poll()."},
  {"_poll", (PyCFunction)Pacer_poll, METH_NOARGS,
   "_poll()\n--\n\nOne clock read of a handed-off tick: True once it is delivered."},
  PRECISE_COMMON_METHODS,
};

static PyGetSetDef Pacer_getset[] = {
  PRECISE_STAT("period_ns", "int: the period (ns)."),
  PRECISE_STAT("start_ns", "int: origin of the schedule (CLOCK_MONOTONIC ns); tick k is due at "
               "start_ns + k * period_ns; 'delay' moves it."),
  PRECISE_STAT("last_deadline_ns", "int: deadline of the last tick delivered (0 before the first)."),
  PRECISE_STAT("missed", "str: the missed-tick policy."),
  PRECISE_COMMON_GETSET,
};

static PyTypeObject Pacer_Type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "sleepacc.Pacer",
  .tp_basicsize = sizeof(PreciseObject),
  .tp_dealloc = (destructor)Precise_dealloc,
  .tp_repr = (reprfunc)Precise_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_doc = "Pacer(period, method='auto', missed='skip', handoff=0, dma_latency=None)\n--\n\n"
            "Periodic ticks at start_ns + k * period (see sleepacc.Pacer).",
  .tp_iter = (getiterfunc)Pacer_iter,
  .tp_iternext = (iternextfunc)Pacer_next,
  .tp_methods = Pacer_methods,
  .tp_getset = Pacer_getset,
  .tp_init = (initproc)Pacer_init,
  .tp_new = PyType_GenericNew,
};

/* Add Sleeper and Pacer to sleepacc._core (sleepacc.sleep is Python, in
 * sleepacc/precise.py: one Sleeper per thread and method). */
int sleepacc_py_init_precise(PyObject *module) {
  if (PyType_Ready(&Sleeper_Type) < 0 || PyType_Ready(&Pacer_Type) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Sleeper", (PyObject *)&Sleeper_Type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Pacer", (PyObject *)&Pacer_Type);
}
