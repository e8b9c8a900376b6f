/*
 * sleeper.c -- the precise-sleep binding: sleepacc._core.Sleeper and
 * sleepacc._core.Pacer over the core's sleepacc_sleeper / sleepacc_pacer.
 *
 * Thin, like the rest of the extension: arguments are converted and
 * checked, the core sleeps in chunks (SLEEPACC_CHUNK_NS) with the GIL
 * released, PyErr_CheckSignals() runs between chunks (Ctrl-C ends any sleep
 * within one chunk), and core errors are mapped by binding.h.  The objects
 * embed the core structs, so no memory is allocated behind Python's back.
 * One object must not sleep in two threads at once: a second thread gets
 * RuntimeError instead of a data race (sleepacc.sleep keeps one sleeper per
 * thread for that reason).
 */
#include "binding.h"

#include <structmember.h>

/* ------------------------------------------------------------- helpers */

/* Text of every valid method name, for error messages: "auto, spin, hybrid,
 * comp or a kernel method: select, poll, ...".  New reference or NULL. */
static PyObject *precise_method_names(void) {
  PyObject *parts = PyList_New(0), *sep = NULL, *joined = NULL, *msg = NULL;
  if (!parts) return NULL;
  for (size_t i = 0; i < sleepacc_method_count(); i++) {
    const sleepacc_method *m = sleepacc_method_at(i);
    if (m->family != SLEEPACC_FAMILY_KERNEL || !sleepacc_method_available(m)) continue;
    PyObject *s = PyUnicode_FromString(m->name);
    if (!s || PyList_Append(parts, s) < 0) {
      Py_XDECREF(s);
      goto done;
    }
    Py_DECREF(s);
  }
  sep = PyUnicode_FromString(", ");
  if (!sep) goto done;
  joined = PyUnicode_Join(sep, parts);
  if (!joined) goto done;
  msg = PyUnicode_FromFormat("'auto', 'spin', 'hybrid', 'comp' or a kernel method (%U)", joined);
done:
  Py_XDECREF(parts);
  Py_XDECREF(sep);
  Py_XDECREF(joined);
  return msg;
}

/* Check `obj` as a method name: a str naming a strategy or an available
 * kernel method.  Returns the UTF-8 name (borrowed from obj) or NULL with
 * TypeError/ValueError set, naming the argument. */
static const char *precise_method_arg(PyObject *obj) {
  const sleepacc_method *k = NULL;
  const char *name;
  int rc;
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "method must be a str, got %s", Py_TYPE(obj)->tp_name);
    return NULL;
  }
  name = PyUnicode_AsUTF8(obj);
  if (!name) return NULL;
  rc = sleepacc_strategy_from_name(name, &k);
  if (rc >= 0 && (!k || sleepacc_method_available(k))) return name;
  PyObject *names = precise_method_names();
  if (!names) return NULL;
  if (rc == -ENOTSUP)
    PyErr_Format(PyExc_ValueError, "method %R is not a kernel sleep; method must be %U", obj, names);
  else if (rc >= 0)
    PyErr_Format(PyExc_ValueError, "method %R is not available on this system; method must be %U",
                 obj, names);
  else
    PyErr_Format(PyExc_ValueError, "unknown method %R; method must be %U", obj, names);
  Py_DECREF(names);
  return NULL;
}

/* A sleepacc_stats as a dict, through the core's field table. */
static PyObject *precise_stats_dict(const sleepacc_stats *st) {
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  for (const sleepacc_field *f = sleepacc_stats_fields; f->name; f++) {
    const char *p = (const char *)st + f->offset;
    PyObject *v = f->is_double ? PyFloat_FromDouble(*(const double *)p)
                               : PyLong_FromLongLong(*(const int64_t *)p);
    if (!v || PyDict_SetItemString(d, f->name, v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(v);
  }
  return d;
}

/* Set d[key] = v (stealing v).  0 or -1. */
static int precise_set(PyObject *d, const char *key, PyObject *v) {
  int rc;
  if (!v) return -1;
  rc = PyDict_SetItemString(d, key, v);
  Py_DECREF(v);
  return rc;
}

/* The `handoff` argument (seconds, None = 0) as ns in [0, 1 ms]; 0 or -1. */
static int precise_handoff_arg(PyObject *obj, int64_t *out) {
  *out = 0;
  if (obj == Py_None) return 0;
  if (sleepacc_py_seconds_ns(obj, "handoff", out) < 0) return -1;
  if (*out > SLEEPACC_MAX_HANDOFF_NS) {
    PyErr_Format(PyExc_ValueError, "handoff must be at most 0.001 s, got %R", obj);
    return -1;
  }
  return 0;
}

/* The `dma_latency` argument (us, None = -1) as an int; 0 or -1. */
static int precise_dma_arg(PyObject *obj, int *out) {
  long long v;
  *out = -1;
  if (obj == Py_None) return 0;
  if (PyBool_Check(obj) || !PyLong_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "dma_latency must be an int (us) or None, got %s",
                 Py_TYPE(obj)->tp_name);
    return -1;
  }
  v = PyLong_AsLongLong(obj);
  if (v == -1 && PyErr_Occurred()) return -1;
  if (v < 0 || v > SLEEPACC_MAX_DMA_LATENCY_US) {
    PyErr_Format(PyExc_ValueError, "dma_latency must be in 0..%d us, got %R",
                 SLEEPACC_MAX_DMA_LATENCY_US, obj);
    return -1;
  }
  *out = (int)v;
  return 0;
}

/* Hold the dma latency for the object's life: 0, or -1 with PermissionError
 * (or OSError) naming dma_latency. */
static int precise_hold_dma(sleepacc_sleeper *s, int us) {
  int rc = us < 0 ? 0 : sleepacc_sleeper_hold_dma_latency(s, us);
  if (rc < 0) {
    sleepacc_py_raise(rc, "dma_latency (/dev/cpu_dma_latency)");
    return -1;
  }
  return 0;
}

/* busy as seen by this process: a mark set before a fork() belongs to a
 * thread the child does not have, so the child may use (and close) it. */
#define PRECISE_BUSY(busy, gen) ((busy) && (gen) == sleepacc_fork_generation())

/* ------------------------------------------------------------- Sleeper */

typedef struct {
  PyObject_HEAD
  int open;               /* 1 between a successful __init__ and close() */
  int busy;               /* 1 while a thread is sleeping on it */
  uint64_t busy_gen;      /* sleepacc_fork_generation() when busy was set */
  unsigned long busy_thread; /* the thread that set busy */
  PyObject *method;       /* the method name (str) */
  sleepacc_sleeper s;     /* the core object */
} SleeperObject;

/* Adapter for sleepacc_py_run_chunks. */
typedef struct {
  sleepacc_sleeper *s;
  int64_t deadline;
} precise_until_arg;

static int precise_until_step(void *p) {
  precise_until_arg *a = p;
  return sleepacc_sleeper_until(a->s, a->deadline, SLEEPACC_CHUNK_NS);
}

static int Sleeper_init(SleeperObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"method", "quantile", "margin", "handoff", "dma_latency", NULL};
  PyObject *method = NULL, *qobj = NULL, *mobj = Py_None, *hobj = Py_None, *dobj = Py_None;
  double q = 0.99;
  int64_t margin = -1, handoff = 0;
  const char *name = "auto";
  int rc, dma;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OOOOO:Sleeper", kwlist, &method, &qobj, &mobj,
                                   &hobj, &dobj))
    return -1;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Sleeper is sleeping in another thread");
    return -1;
  }
  if (method) {
    name = precise_method_arg(method);
    if (!name) return -1;
  }
  if (qobj) {
    if (PyBool_Check(qobj) || !(PyFloat_Check(qobj) || PyLong_Check(qobj))) {
      PyErr_Format(PyExc_TypeError, "quantile must be a float in (0, 1), got %s",
                   Py_TYPE(qobj)->tp_name);
      return -1;
    }
    q = PyFloat_AsDouble(qobj);
    if (q == -1.0 && PyErr_Occurred()) return -1;
    if (!(q > 0.0 && q < 1.0)) {
      PyErr_Format(PyExc_ValueError, "quantile must be in (0, 1), got %R", qobj);
      return -1;
    }
  }
  if (mobj != Py_None && sleepacc_py_seconds_ns(mobj, "margin", &margin) < 0) return -1;
  if (precise_handoff_arg(hobj, &handoff) < 0) return -1;
  if (precise_dma_arg(dobj, &dma) < 0) return -1;
  if (self->open) {
    sleepacc_sleeper_close(&self->s);
    self->open = 0;
  }
  rc = sleepacc_sleeper_open(&self->s, name, q, margin);
  if (rc == 0) rc = sleepacc_sleeper_set_handoff(&self->s, handoff);
  if (rc < 0) {
    sleepacc_sleeper_close(&self->s);
    sleepacc_py_raise(rc, "Sleeper");
    return -1;
  }
  if (precise_hold_dma(&self->s, dma) < 0) {
    sleepacc_sleeper_close(&self->s);
    return -1;
  }
  self->open = 1;
  Py_XSETREF(self->method, PyUnicode_FromString(name));
  return self->method ? 0 : -1;
}

static void Sleeper_dealloc(SleeperObject *self) {
  if (self->open) sleepacc_sleeper_close(&self->s);
  Py_XDECREF(self->method);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Check the object is usable and claim it; 0, or 1 when this very thread
 * holds it (a signal handler called it while it sleeps: the caller uses a
 * sleeper of its own), or -1 with an exception. */
#define precise_claim(open, busy, busy_gen, what) \
  precise_claim_(open, busy, busy_gen, &self->busy_thread, what)
static int precise_claim_(int open, int *busy, uint64_t *busy_gen, unsigned long *owner,
                          const char *what) {
  if (!open) {
    PyErr_Format(PyExc_ValueError, "%s is closed", what);
    return -1;
  }
  if (PRECISE_BUSY(*busy, *busy_gen)) {
    if (*owner == PyThread_get_thread_ident()) return 1;
    PyErr_Format(PyExc_RuntimeError, "%s is sleeping in another thread", what);
    return -1;
  }
  *busy = 1;
  *busy_gen = sleepacc_fork_generation();
  *owner = PyThread_get_thread_ident();
  return 0;
}

/* A sleeper of its own for a call re-entered from a signal handler, like
 * `kernel`'s (the same method name and parameters): NULL with an exception. */
static sleepacc_sleeper *precise_nested_open(PyObject *method, const sleepacc_sleeper *like) {
  const char *name = method ? PyUnicode_AsUTF8(method) : "auto";
  sleepacc_sleeper *n;
  int rc;
  if (!name) return NULL;
  n = PyMem_Calloc(1, sizeof *n);
  if (!n) return (sleepacc_sleeper *)PyErr_NoMemory();
  rc = sleepacc_sleeper_open(n, name, like->quantile, like->fixed_margin_ns);
  if (rc < 0) {
    PyMem_Free(n);
    sleepacc_py_raise(rc, "re-entrant sleep");
    return NULL;
  }
  return n;
}

static void precise_nested_close(sleepacc_sleeper *n) {
  sleepacc_sleeper_close(n);
  PyMem_Free(n);
}

/* Sleep toward `deadline`.  finish=1: to the deadline (a hand-off is
 * finished here, with the GIL released), None.  finish=0: up to the
 * hand-off, then the deadline (int) for _poll, or None when it is reached.
 * NULL with an exception. */
static PyObject *Sleeper_run(SleeperObject *self, int64_t deadline, int finish) {
  precise_until_arg a = {&self->s, deadline};
  int rc = precise_claim(self->open, &self->busy, &self->busy_gen, "Sleeper");
  if (rc < 0) return NULL;
  if (rc == 1) { /* re-entered from a signal handler: a sleeper of its own, to the end */
    if (!(a.s = precise_nested_open(self->method, &self->s))) return NULL;
    do rc = sleepacc_py_run_chunks(precise_until_step, &a, "Sleeper.sleep");
    while (rc == 1);
    precise_nested_close(a.s);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
  }
  do rc = sleepacc_py_run_chunks(precise_until_step, &a, "Sleeper.sleep");
  while (finish && rc == 1);
  self->busy = 0;
  if (rc < 0) return NULL;
  if (rc == 1) return PyLong_FromLongLong(deadline);
  Py_RETURN_NONE;
}

PyDoc_STRVAR(Sleeper_sleep_doc,
             "sleep(seconds)\n--\n\n"
             "Sleep `seconds` (int or float, 0 <= seconds <= 86400) toward the absolute\n"
             "deadline now + seconds; never returns before it.  The GIL is released;\n"
             "Ctrl-C raises KeyboardInterrupt within one 50 ms chunk.");

static PyObject *Sleeper_sleep(SleeperObject *self, PyObject *arg) {
  int64_t d;
  if (sleepacc_py_seconds_ns(arg, "seconds", &d) < 0) return NULL;
  return Sleeper_run(self, sleepacc_now_ns() + d, 1);
}

static PyObject *Sleeper_begin_sleep(SleeperObject *self, PyObject *arg) {
  int64_t d;
  if (sleepacc_py_seconds_ns(arg, "seconds", &d) < 0) return NULL;
  return Sleeper_run(self, sleepacc_now_ns() + d, 0);
}

PyDoc_STRVAR(Sleeper_sleep_until_doc,
             "sleep_until(monotonic_ns)\n--\n\n"
             "Sleep until the CLOCK_MONOTONIC time `monotonic_ns` (an int, the clock of\n"
             "time.monotonic_ns()).  A past deadline returns at once; one more than a\n"
             "day ahead is a ValueError.");

/* `monotonic_ns` as a deadline: 0 or -1 with TypeError/ValueError. */
static int precise_deadline_arg(PyObject *arg, int64_t *out) {
  long long dl;
  int overflow = 0;
  if (!PyLong_Check(arg) || PyBool_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "monotonic_ns must be an int (ns, as time.monotonic_ns()), got %s",
                 Py_TYPE(arg)->tp_name);
    return -1;
  }
  dl = PyLong_AsLongLongAndOverflow(arg, &overflow);
  if (dl == -1 && PyErr_Occurred()) return -1;
  if (overflow || dl < 0) {
    PyErr_Format(PyExc_ValueError, "monotonic_ns must be a CLOCK_MONOTONIC time in ns, got %R", arg);
    return -1;
  }
  if (dl - sleepacc_now_ns() > SLEEPACC_MAX_DURATION_NS) {
    PyErr_Format(PyExc_ValueError, "monotonic_ns must be at most one day ahead, got %R", arg);
    return -1;
  }
  *out = (int64_t)dl;
  return 0;
}

static PyObject *Sleeper_sleep_until(SleeperObject *self, PyObject *arg) {
  int64_t dl;
  if (precise_deadline_arg(arg, &dl) < 0) return NULL;
  return Sleeper_run(self, dl, 1);
}

static PyObject *Sleeper_begin_until(SleeperObject *self, PyObject *arg) {
  int64_t dl;
  if (precise_deadline_arg(arg, &dl) < 0) return NULL;
  return Sleeper_run(self, dl, 0);
}

/* One clock read of a handed-off sleep: True once `deadline` is reached. */
static PyObject *Sleeper_poll(SleeperObject *self, PyObject *arg) {
  int64_t dl;
  int rc;
  if (precise_deadline_arg(arg, &dl) < 0) return NULL;
  if ((rc = precise_claim(self->open, &self->busy, &self->busy_gen, "Sleeper")) < 0) return NULL;
  if (rc == 1) Py_RETURN_TRUE; /* re-entered: the nested sleep already ran to its end */
  rc = sleepacc_sleeper_poll(&self->s, dl);
  self->busy = 0;
  if (rc < 0) {
    if (rc == -EINTR) Py_RETURN_FALSE;
    sleepacc_py_raise(rc, "Sleeper.sleep");
    return NULL;
  }
  return PyBool_FromLong(rc == 1);
}

/* The learned margins as {band lower bound ns: margin ns}. */
static PyObject *precise_margins(const sleepacc_sleeper *s) {
  int64_t lo[SLEEPACC_SLEEPER_BANDS], m[SLEEPACC_SLEEPER_BANDS];
  int n = sleepacc_sleeper_margins(s, lo, m, SLEEPACC_SLEEPER_BANDS);
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  for (int i = 0; i < n; i++) {
    PyObject *k = PyLong_FromLongLong(lo[i]), *v = PyLong_FromLongLong(m[i]);
    if (!k || !v || PyDict_SetItem(d, k, v) < 0) {
      Py_XDECREF(k);
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(k);
    Py_DECREF(v);
  }
  return d;
}

static const char *const precise_strategy_names[] = {"auto", "spin", "hybrid", "comp", "kernel"};

/* The stats dict of a sleeper (shared by Sleeper.stats and Pacer.stats). */
static PyObject *precise_sleeper_stats(const sleepacc_sleeper *s) {
  sleepacc_sleeper_stats st;
  PyObject *d = PyDict_New();
  if (!d) return NULL;
  sleepacc_sleeper_stats_get(s, &st);
  if (precise_set(d, "count", PyLong_FromLongLong(st.count)) < 0 ||
      precise_set(d, "misses", PyLong_FromLongLong(st.misses)) < 0 ||
      precise_set(d, "spin_ns", PyLong_FromLongLong(st.spin_ns)) < 0 ||
      precise_set(d, "lateness", precise_stats_dict(&st.lateness)) < 0 ||
      precise_set(d, "margins", precise_margins(s)) < 0 ||
      precise_set(d, "strategy",
                  PyUnicode_FromString((unsigned)s->strategy < 5u
                                           ? precise_strategy_names[s->strategy]
                                           : "unknown")) < 0 ||
      precise_set(d, "kernel", PyUnicode_FromString(s->kernel ? s->kernel->name : "")) < 0 ||
      precise_set(d, "quantile", PyFloat_FromDouble(s->quantile)) < 0 ||
      precise_set(d, "margin_ns", PyLong_FromLongLong(s->fixed_margin_ns)) < 0 ||
      precise_set(d, "handoff_ns", PyLong_FromLongLong(s->handoff_ns)) < 0 ||
      precise_set(d, "clock_cost_ns", PyLong_FromLongLong(s->clock_cost_ns)) < 0 ||
      precise_set(d, "comp_ratio", PyFloat_FromDouble(s->comp_ratio)) < 0 ||
      precise_set(d, "kernel_waits", PyLong_FromLongLong(s->kernel_waits)) < 0 ||
      precise_set(d, "rt_fallbacks", PyLong_FromLongLong(s->rt_fallbacks)) < 0 ||
      precise_set(d, "preempted_spins", PyLong_FromLongLong(s->preempted_spins)) < 0 ||
      precise_set(d, "contended", PyBool_FromLong(s->contended)) < 0) {
    Py_DECREF(d);
    return NULL;
  }
  return d;
}

static PyObject *Sleeper_get_stats(SleeperObject *self, void *closure) {
  (void)closure;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Sleeper is sleeping in another thread");
    return NULL;
  }
  return precise_sleeper_stats(&self->s);
}

static PyObject *Sleeper_get_method(SleeperObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->method ? self->method : Py_None);
}

static PyObject *Sleeper_close(SleeperObject *self, PyObject *unused) {
  (void)unused;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Sleeper is sleeping in another thread");
    return NULL;
  }
  if (self->open) sleepacc_sleeper_close(&self->s);
  self->open = 0;
  Py_RETURN_NONE;
}

static PyObject *Sleeper_enter(SleeperObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *Sleeper_exit(SleeperObject *self, PyObject *args) {
  (void)args;
  return Sleeper_close(self, NULL);
}

static PyObject *Sleeper_repr(SleeperObject *self) {
  return PyUnicode_FromFormat("<sleepacc.Sleeper method=%R count=%lld%s>", self->method,
                              (long long)self->s.count, self->open ? "" : " closed");
}

static PyMethodDef Sleeper_methods[] = {
  {"sleep", (PyCFunction)Sleeper_sleep, METH_O, Sleeper_sleep_doc},
  {"sleep_until", (PyCFunction)Sleeper_sleep_until, METH_O, Sleeper_sleep_until_doc},
  {"_begin", (PyCFunction)Sleeper_begin_sleep, METH_O,
   "_begin(seconds)\n--\n\nsleep() up to the hand-off: None when done, else the deadline to _poll."},
  {"_begin_until", (PyCFunction)Sleeper_begin_until, METH_O,
   "_begin_until(monotonic_ns)\n--\n\nsleep_until() up to the hand-off (see _begin)."},
  {"_poll", (PyCFunction)Sleeper_poll, METH_O,
   "_poll(deadline)\n--\n\nOne clock read of a handed-off sleep: True once deadline is reached."},
  {"close", (PyCFunction)Sleeper_close, METH_NOARGS, "close()\n--\n\nRelease the kernel wait's descriptor."},
  {"__enter__", (PyCFunction)Sleeper_enter, METH_NOARGS, NULL},
  {"__exit__", (PyCFunction)Sleeper_exit, METH_VARARGS, NULL},
  {NULL, NULL, 0, NULL},
};

static PyMemberDef Sleeper_members[] = {
  {"last_wake_ns", T_LONGLONG, offsetof(SleeperObject, s.last_wake_ns), READONLY,
   "int: when the last completed sleep ended (CLOCK_MONOTONIC ns, the core's own clock read;\n"
   "0 before the first).  last_wake_ns - deadline is the lateness a C caller would see."},
  {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Sleeper_getset[] = {
  {"stats", (getter)Sleeper_get_stats, NULL,
   "dict: count, misses, spin_ns, lateness (ns stats of wake - deadline), margins\n"
   "({band lower bound ns: learned margin ns}, auto only), strategy, kernel, quantile,\n"
   "margin_ns, clock_cost_ns, comp_ratio, kernel_waits, rt_fallbacks, preempted_spins,\n"
   "contended (auto spins little while other threads compete for the CPU).",
   NULL},
  {"method", (getter)Sleeper_get_method, NULL, "str: the method this sleeper was opened with.",
   NULL},
  {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Sleeper_doc,
             "Sleeper(method='auto', quantile=0.99, margin=None)\n--\n\n"
             "A precise sleep that learns this host.  method: 'auto' (a kernel wait to\n"
             "the deadline minus a margin learned per duration band at `quantile` of the\n"
             "kernel's lateness, then a spin), 'hybrid' (fixed `margin`, default 125 us),\n"
             "'comp' (irtt's ratio compensation), 'spin', or any kernel method name.\n"
             "margin (seconds): hybrid's margin, auto's initial margin.  Every sleep aims\n"
             "at an absolute CLOCK_MONOTONIC deadline and never returns before it.");

static PyTypeObject Sleeper_Type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "sleepacc.Sleeper",
  .tp_basicsize = sizeof(SleeperObject),
  .tp_dealloc = (destructor)Sleeper_dealloc,
  .tp_repr = (reprfunc)Sleeper_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_doc = Sleeper_doc,
  .tp_methods = Sleeper_methods,
  .tp_members = Sleeper_members,
  .tp_getset = Sleeper_getset,
  .tp_init = (initproc)Sleeper_init,
  .tp_new = PyType_GenericNew,
};

/* --------------------------------------------------------------- Pacer */

typedef struct {
  PyObject_HEAD
  int open;
  int busy;
  uint64_t busy_gen;      /* sleepacc_fork_generation() when busy was set */
  unsigned long busy_thread; /* the thread that set busy */
  long long delivered_tok; /* token of the Python wait() that got the last tick, 0 none */
  int64_t delivered_dl;   /* that tick's deadline */
  long long handed_tok;   /* token of the Python wait() whose tick is in its hand-off */
  PyObject *method;
  sleepacc_pacer p;
} PacerObject;

typedef struct {
  sleepacc_pacer *p;
  int64_t deadline;
  sleepacc_sleeper *own; /* a re-entrant wait's sleeper, else NULL */
  int delivered;         /* 1 once the core delivered the tick */
} precise_pacer_arg;

static int precise_pacer_step(void *arg) {
  precise_pacer_arg *a = arg;
  int rc = a->own ? sleepacc_pacer_wait_with(a->p, a->own, SLEEPACC_CHUNK_NS, &a->deadline)
                  : sleepacc_pacer_wait(a->p, SLEEPACC_CHUNK_NS, &a->deadline);
  if (rc == 1) a->delivered = 1;
  return rc;
}

static int Pacer_init(PacerObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"period", "method", "missed", "handoff", "dma_latency", NULL};
  PyObject *pobj, *method = NULL, *missed = NULL, *hobj = Py_None, *dobj = Py_None;
  const char *name = "auto";
  int policy = SLEEPACC_MISSED_SKIP, rc, dma;
  int64_t period, handoff = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OOOO:Pacer", kwlist, &pobj, &method, &missed,
                                   &hobj, &dobj))
    return -1;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Pacer is sleeping in another thread");
    return -1;
  }
  if (sleepacc_py_seconds_ns(pobj, "period", &period) < 0) return -1;
  if (period <= 0) {
    PyErr_Format(PyExc_ValueError, "period must be positive, got %R", pobj);
    return -1;
  }
  if (method) {
    name = precise_method_arg(method);
    if (!name) return -1;
  }
  if (missed) {
    const char *m;
    if (!PyUnicode_Check(missed)) {
      PyErr_Format(PyExc_TypeError, "missed must be a str ('skip', 'burst' or 'delay'), got %s",
                   Py_TYPE(missed)->tp_name);
      return -1;
    }
    m = PyUnicode_AsUTF8(missed);
    if (!m) return -1;
    policy = sleepacc_missed_from_name(m);
    if (policy < 0) {
      PyErr_Format(PyExc_ValueError, "missed must be 'skip', 'burst' or 'delay', got %R", missed);
      return -1;
    }
  }
  if (precise_handoff_arg(hobj, &handoff) < 0) return -1;
  if (precise_dma_arg(dobj, &dma) < 0) return -1;
  if (self->open) {
    sleepacc_pacer_close(&self->p);
    self->open = 0;
  }
  rc = sleepacc_pacer_open(&self->p, period, name, policy);
  if (rc == 0) rc = sleepacc_sleeper_set_handoff(sleepacc_pacer_sleeper(&self->p), handoff);
  if (rc < 0) {
    sleepacc_pacer_close(&self->p);
    sleepacc_py_raise(rc, "Pacer");
    return -1;
  }
  if (precise_hold_dma(sleepacc_pacer_sleeper(&self->p), dma) < 0) {
    sleepacc_pacer_close(&self->p);
    return -1;
  }
  self->open = 1;
  Py_XSETREF(self->method, PyUnicode_FromString(name));
  return self->method ? 0 : -1;
}

static void Pacer_dealloc(PacerObject *self) {
  if (self->open) sleepacc_pacer_close(&self->p);
  Py_XDECREF(self->method);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

PyDoc_STRVAR(Pacer_wait_doc,
             "wait() -> int\n--\n\n"
             "Wait for the next tick and return its deadline (CLOCK_MONOTONIC ns, as\n"
             "time.monotonic_ns()).  Never returns before that deadline.");

/* Wait for the next tick: finish=1 to its deadline (a hand-off is finished
 * here, with the GIL released), finish=0 up to the hand-off.  0 with the
 * deadline in *deadline and *near set, or -1 with an exception. */
static int Pacer_run(PacerObject *self, int finish, int64_t *deadline, int *near,
                     long long tok) {
  precise_pacer_arg a = {&self->p, 0, NULL, 0};
  int rc = precise_claim(self->open, &self->busy, &self->busy_gen, "Pacer"), nested = rc == 1;
  if (rc < 0) return -1;
  if (nested) { /* re-entered from a signal handler: it takes the pending tick */
    if (!(a.own = precise_nested_open(self->method, &self->p.sleeper))) return -1;
    finish = 1;
  }
  do rc = sleepacc_py_run_chunks(precise_pacer_step, &a, "Pacer.wait");
  while (finish && rc == 1);
  if (nested) precise_nested_close(a.own);
  else self->busy = 0;
  if (rc < 0) {
    /* an exception (Ctrl-C, a handler's) landed after the tick was
     * delivered: the next wait returns it */
    if (a.delivered) sleepacc_pacer_unwait(&self->p, a.deadline);
    return -1;
  }
  *deadline = a.deadline;
  *near = rc == 1;
  if (!*near) {
    self->delivered_tok = tok;
    self->delivered_dl = a.deadline;
  } else {
    self->handed_tok = tok;
  }
  return 0;
}

/* The optional token of a Python-level wait(): 0 or -1. */
static int precise_tok_arg(PyObject *args, long long *tok) {
  *tok = 0;
  return PyArg_ParseTuple(args, "|L", tok) ? 0 : -1;
}

static PyObject *Pacer_wait(PacerObject *self, PyObject *unused) {
  int64_t dl;
  int near;
  (void)unused;
  if (Pacer_run(self, 1, &dl, &near, 0) < 0) return NULL;
  return PyLong_FromLongLong(dl);
}

/* wait() up to the hand-off: (deadline, near); near=True means the tick is
 * not delivered yet and _poll() finishes it. */
static PyObject *Pacer_begin(PacerObject *self, PyObject *args) {
  int64_t dl;
  int near;
  long long tok;
  if (precise_tok_arg(args, &tok) < 0 || Pacer_run(self, 0, &dl, &near, tok) < 0) return NULL;
  return Py_BuildValue("(LO)", (long long)dl, near ? Py_True : Py_False);
}

/* One clock read of a handed-off tick: True once it is delivered, None
 * when no tick is pending any more (a wait re-entered from a signal handler
 * took it: the caller goes on to the next one). */
static PyObject *Pacer_poll(PacerObject *self, PyObject *args) {
  int rc;
  long long tok;
  int64_t dl;
  if (precise_tok_arg(args, &tok) < 0) return NULL;
  if ((rc = precise_claim(self->open, &self->busy, &self->busy_gen, "Pacer")) < 0) return NULL;
  if (rc == 1 || (tok != 0 && self->handed_tok == tok && !self->p.pending)) {
    if (rc == 0) self->busy = 0;
    Py_RETURN_NONE; /* another wait took the tick handed to this one */
  }
  rc = sleepacc_pacer_poll(&self->p, &dl);
  self->busy = 0;
  if (rc < 0) {
    if (rc == -EINTR) Py_RETURN_FALSE;
    sleepacc_py_raise(rc, "Pacer.wait");
    return NULL;
  }
  if (rc == 1) {
    self->delivered_tok = tok;
    self->delivered_dl = dl;
  }
  return PyBool_FromLong(rc == 1);
}

/* The Python wait() with token `tok` could not return its tick (an
 * exception landed after the core delivered it): the next wait returns it. */
static PyObject *Pacer_unwait(PacerObject *self, PyObject *arg) {
  long long tok = PyLong_AsLongLong(arg);
  if (tok == -1 && PyErr_Occurred()) return NULL;
  if (tok != 0 && self->delivered_tok == tok && !PRECISE_BUSY(self->busy, self->busy_gen)) {
    sleepacc_pacer_unwait(&self->p, self->delivered_dl);
    self->delivered_tok = 0;
  }
  Py_RETURN_NONE;
}

static PyObject *Pacer_iter(PacerObject *self) { return Py_NewRef(self); }

static PyObject *Pacer_iternext(PacerObject *self) { return Pacer_wait(self, NULL); }

static PyObject *Pacer_get_stats(PacerObject *self, void *closure) {
  sleepacc_pacer_stats st;
  PyObject *d, *te;
  (void)closure;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Pacer is sleeping in another thread");
    return NULL;
  }
  sleepacc_pacer_stats_get(&self->p, &st);
  d = PyDict_New();
  if (!d) return NULL;
  te = PyDict_New();
  if (!te) goto fail;
  if (precise_set(te, "mean", PyFloat_FromDouble(st.timer_err_mean)) < 0 ||
      precise_set(te, "min", PyFloat_FromDouble(st.timer_err_min)) < 0 ||
      precise_set(te, "max", PyFloat_FromDouble(st.timer_err_max)) < 0 ||
      precise_set(te, "stddev", PyFloat_FromDouble(st.timer_err_stddev)) < 0) {
    Py_DECREF(te);
    goto fail;
  }
  if (precise_set(d, "count", PyLong_FromLongLong(st.count)) < 0 ||
      precise_set(d, "misses", PyLong_FromLongLong(st.misses)) < 0 ||
      precise_set(d, "lateness", precise_stats_dict(&st.lateness)) < 0 ||
      precise_set(d, "timer_misses", PyLong_FromLongLong(st.timer_misses)) < 0 ||
      precise_set(d, "timer_err_percent", PyFloat_FromDouble(st.timer_err_percent)) < 0 ||
      precise_set(d, "timer_err", te) < 0 ||
      precise_set(d, "period_ns", PyLong_FromLongLong(self->p.period_ns)) < 0 ||
      precise_set(d, "missed", PyUnicode_FromString(sleepacc_missed_name(self->p.missed_policy)
                                                        ? sleepacc_missed_name(self->p.missed_policy)
                                                        : "")) < 0 ||
      precise_set(d, "sleeper", precise_sleeper_stats(&self->p.sleeper)) < 0)
    goto fail;
  return d;
fail:
  Py_DECREF(d);
  return NULL;
}

static PyObject *Pacer_get_method(PacerObject *self, void *closure) {
  (void)closure;
  return Py_NewRef(self->method ? self->method : Py_None);
}

static PyObject *Pacer_get_missed(PacerObject *self, void *closure) {
  const char *n = sleepacc_missed_name(self->p.missed_policy);
  (void)closure;
  return PyUnicode_FromString(n ? n : "");
}

static PyObject *Pacer_close(PacerObject *self, PyObject *unused) {
  (void)unused;
  if (PRECISE_BUSY(self->busy, self->busy_gen)) {
    PyErr_SetString(PyExc_RuntimeError, "Pacer is sleeping in another thread");
    return NULL;
  }
  if (self->open) sleepacc_pacer_close(&self->p);
  self->open = 0;
  Py_RETURN_NONE;
}

static PyObject *Pacer_enter(PacerObject *self, PyObject *unused) {
  (void)unused;
  return Py_NewRef(self);
}

static PyObject *Pacer_exit(PacerObject *self, PyObject *args) {
  (void)args;
  return Pacer_close(self, NULL);
}

static PyObject *Pacer_repr(PacerObject *self) {
  return PyUnicode_FromFormat("<sleepacc.Pacer period_ns=%lld method=%R missed=%s count=%lld%s>",
                              (long long)self->p.period_ns, self->method,
                              sleepacc_missed_name(self->p.missed_policy)
                                  ? sleepacc_missed_name(self->p.missed_policy)
                                  : "?",
                              (long long)self->p.count, self->open ? "" : " closed");
}

static PyMethodDef Pacer_methods[] = {
  {"wait", (PyCFunction)Pacer_wait, METH_NOARGS, Pacer_wait_doc},
  {"_begin", (PyCFunction)Pacer_begin, METH_VARARGS,
   "_begin(token=0)\n--\n\nwait() up to the hand-off: (deadline, near); near: finish with _poll()."},
  {"_poll", (PyCFunction)Pacer_poll, METH_VARARGS,
   "_poll(token=0)\n--\n\nOne clock read of a handed-off tick: True once it is delivered, None\n"
   "when a re-entrant wait took it."},
  {"_unwait", (PyCFunction)Pacer_unwait, METH_O,
   "_unwait(token)\n--\n\nThe wait() with this token could not return its tick: offer it again."},
  {"close", (PyCFunction)Pacer_close, METH_NOARGS, "close()\n--\n\nRelease the kernel wait's descriptor."},
  {"__enter__", (PyCFunction)Pacer_enter, METH_NOARGS, NULL},
  {"__exit__", (PyCFunction)Pacer_exit, METH_VARARGS, NULL},
  {NULL, NULL, 0, NULL},
};

static PyMemberDef Pacer_members[] = {
  {"period_ns", T_LONGLONG, offsetof(PacerObject, p.period_ns), READONLY, "int: the period (ns)."},
  {"start_ns", T_LONGLONG, offsetof(PacerObject, p.start_ns), READONLY,
   "int: origin of the schedule (CLOCK_MONOTONIC ns); tick k is due at start_ns + k * period_ns\n"
   "(k = 1, 2, ...); 'delay' moves it when it restarts the schedule."},
  {"last_deadline_ns", T_LONGLONG, offsetof(PacerObject, p.last_deadline_ns), READONLY,
   "int: deadline of the last tick delivered (0 before the first)."},
  {NULL, 0, 0, 0, NULL},
};

static PyGetSetDef Pacer_getset[] = {
  {"stats", (getter)Pacer_get_stats, NULL,
   "dict: count, misses, lateness (ns stats), irtt's timer_misses, timer_err_percent and\n"
   "timer_err {mean, min, max, stddev} (ns), period_ns, missed, sleeper (its stats).",
   NULL},
  {"method", (getter)Pacer_get_method, NULL, "str: the sleep method.", NULL},
  {"missed", (getter)Pacer_get_missed, NULL, "str: the missed-tick policy.", NULL},
  {NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(Pacer_doc,
             "Pacer(period, method='auto', missed='skip')\n--\n\n"
             "Periodic ticks at start_ns + k * period (k = 1, 2, ...; start_ns = creation),\n"
             "so no drift accumulates.  `for deadline in pacer:` yields each tick's deadline\n"
             "(CLOCK_MONOTONIC ns) for ever; .wait() returns the next one.  A tick whose\n"
             "deadline passed before wait() was called is missed: 'skip' drops the passed\n"
             "ticks and waits for the next future one, 'burst' delivers each missed tick at\n"
             "once, 'delay' restarts the schedule from now.");

static PyTypeObject Pacer_Type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "sleepacc.Pacer",
  .tp_basicsize = sizeof(PacerObject),
  .tp_dealloc = (destructor)Pacer_dealloc,
  .tp_repr = (reprfunc)Pacer_repr,
  .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
  .tp_doc = Pacer_doc,
  .tp_iter = (getiterfunc)Pacer_iter,
  .tp_iternext = (iternextfunc)Pacer_iternext,
  .tp_methods = Pacer_methods,
  .tp_members = Pacer_members,
  .tp_getset = Pacer_getset,
  .tp_init = (initproc)Pacer_init,
  .tp_new = PyType_GenericNew,
};

/* ----------------------------------------------------------------- init */

/* Add Sleeper and Pacer to sleepacc._core (sleepacc.sleep is Python, in
 * sleepacc/precise.py: one Sleeper per thread and method). */
int sleepacc_py_init_precise(PyObject *module) {
  if (PyType_Ready(&Sleeper_Type) < 0 || PyType_Ready(&Pacer_Type) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Sleeper", (PyObject *)&Sleeper_Type) < 0) return -1;
  if (PyModule_AddObjectRef(module, "Pacer", (PyObject *)&Pacer_Type) < 0) return -1;
  return 0;
}
