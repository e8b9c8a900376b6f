/*
 * binding.h -- helpers shared by every source file of the CPython extension
 * sleepacc._core (every python/_ext/ source file).
 *
 * The extension is thin: it converts arguments, releases the GIL, runs the
 * core in chunks so Ctrl-C is seen, and maps errors.  The helpers those
 * three jobs need live here once:
 *
 *   sleepacc_py_seconds_ns()  a duration in seconds -> int64 ns, with the
 *                             exact error rules of the Python API;
 *   sleepacc_py_raise()       a negative errno from the core -> a Python
 *                             exception whose text comes from
 *                             sleepacc_strerror()/sleepacc_errname();
 *   sleepacc_py_run_chunks()  call a core step function until it is done,
 *                             with the GIL released around each chunk and
 *                             PyErr_CheckSignals() between chunks.
 *
 * Every function here is static inline so each binding file may include
 * this header without link-time coupling.  Init hooks of the other binding
 * files are declared at the bottom; module.c calls them.
 */
#ifndef SLEEPACC_BINDING_H
#define SLEEPACC_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>

#include "sleepacc.h"

/* Python 3.9 compatibility for the few newer helpers used. */
#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *sleepacc_py_newref(PyObject *o) {
  Py_INCREF(o);
  return o;
}
#define Py_NewRef(o) sleepacc_py_newref((PyObject *)(o))
static inline int sleepacc_py_addobjectref(PyObject *m, const char *name, PyObject *v) {
  Py_INCREF(v);
  if (PyModule_AddObject(m, name, v) < 0) {
    Py_DECREF(v);
    return -1;
  }
  return 0;
}
#define PyModule_AddObjectRef sleepacc_py_addobjectref
#endif

/* Convert `obj`, a duration in seconds, to int64 ns (rounded to the nearest
 * ns) in *out.  The rules, one place for every binding entry point:
 *   - bool, None, str and anything that is not a real number: TypeError
 *     "<name> must be a number of seconds (int or float), got <type>";
 *   - NaN or infinity: ValueError "<name> must be finite, got nan";
 *   - negative: ValueError "<name> must be non-negative, got -1.0";
 *   - over one day (SLEEPACC_MAX_DURATION_NS): ValueError
 *     "<name> must be at most 86400 s (one day), got 1e+06".
 * ints are converted exactly; anything else through its __float__.
 * Returns 0, or -1 with the exception set. */
static inline int sleepacc_py_seconds_ns(PyObject *obj, const char *name, int64_t *out) {
  const double max_s = (double)SLEEPACC_MAX_DURATION_NS / 1e9;
  if (obj == NULL || PyBool_Check(obj) || PyUnicode_Check(obj) || PyBytes_Check(obj) ||
      obj == Py_None ||
      (!PyLong_Check(obj) && !PyFloat_Check(obj) &&
       (Py_TYPE(obj)->tp_as_number == NULL ||
        (Py_TYPE(obj)->tp_as_number->nb_float == NULL &&
         Py_TYPE(obj)->tp_as_number->nb_index == NULL)))) {
    PyErr_Format(PyExc_TypeError, "%s must be a number of seconds (int or float), got %s",
                 name, obj ? Py_TYPE(obj)->tp_name : "NULL");
    return -1;
  }
  if (PyLong_Check(obj)) {
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || (overflow == 0 && s < 0)) {
      PyErr_Format(PyExc_ValueError, "%s must be non-negative, got %R", name, obj);
      return -1;
    }
    if (overflow > 0 || s > (long long)max_s) {
      PyErr_Format(PyExc_ValueError, "%s must be at most %lld s (one day), got %R", name,
                   (long long)max_s, obj);
      return -1;
    }
    *out = (int64_t)s * 1000000000LL;
    return 0;
  }
  double s = PyFloat_AsDouble(obj);
  if (s == -1.0 && PyErr_Occurred()) {
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyErr_Clear();
      PyErr_Format(PyExc_TypeError, "%s must be a number of seconds (int or float), got %s",
                   name, Py_TYPE(obj)->tp_name);
    }
    return -1;
  }
  if (!isfinite(s)) {
    PyErr_Format(PyExc_ValueError, "%s must be finite, got %R", name, obj);
    return -1;
  }
  if (s < 0) {
    PyErr_Format(PyExc_ValueError, "%s must be non-negative, got %R", name, obj);
    return -1;
  }
  if (s > max_s) {
    PyErr_Format(PyExc_ValueError, "%s must be at most %lld s (one day), got %R", name,
                 (long long)max_s, obj);
    return -1;
  }
  *out = (int64_t)llround(s * 1e9);
  return 0;
}

/* The Python exception class for a (negative or positive) errno:
 * EINVAL, ERANGE, EOVERFLOW, ENOENT -> ValueError; ENOMEM -> MemoryError;
 * everything else an OSError (whose constructor picks the subclass:
 * PermissionError for EPERM/EACCES, InterruptedError for EINTR, ...). */
static inline PyObject *sleepacc_py_exc_type(int err) {
  if (err < 0) err = -err;
  switch (err) {
  case EINVAL: case ERANGE: case EOVERFLOW: case ENOENT: return PyExc_ValueError;
  case ENOMEM: return PyExc_MemoryError;
  default: return PyExc_OSError;
  }
}

/* Set a Python exception for the core error `err` (negative errno):
 * "<what>: <ENAME>: <message>".  OSError subclasses carry .errno.
 * Returns NULL so callers can `return sleepacc_py_raise(...)`. */
static inline PyObject *sleepacc_py_raise(int err, const char *what) {
  if (err < 0) err = -err;
  PyObject *type = sleepacc_py_exc_type(err);
  if (type == PyExc_OSError) {
    PyObject *args = Py_BuildValue("(iN)", err,
                                   PyUnicode_FromFormat("%s: %s: %s", what, sleepacc_errname(-err),
                                                        sleepacc_strerror(-err)));
    if (args == NULL) return NULL;
    PyErr_SetObject(PyExc_OSError, args);
    Py_DECREF(args);
    return NULL;
  }
  PyErr_Format(type, "%s: %s: %s", what, sleepacc_errname(-err), sleepacc_strerror(-err));
  return NULL;
}

/* One chunk of core work: returns 1 when the job is complete, 0 when more
 * chunks remain, -EINTR when a signal interrupted it (call again), or
 * another negative errno.  sleepacc_run_step, sleepacc_sleeper_until and
 * sleepacc_pacer_wait all fit this shape through a one-line adapter. */
typedef int (*sleepacc_py_step_fn)(void *arg);

/* Run `step(arg)` until it reports completion.  The GIL is released around
 * every chunk; between chunks pending signals are handled
 * (PyErr_CheckSignals), so Ctrl-C raises KeyboardInterrupt within one
 * chunk.  -EINTR resumes.  Returns 0 when complete, 1 when the step
 * handed the end of a spin to the caller (SLEEPACC_NEAR), or -1 with a Python
 * exception set (the signal handler's exception, or the core error mapped
 * by sleepacc_py_raise with `what` as context).  The caller still owns
 * cleanup (finish/close) on both paths. */
static inline int sleepacc_py_run_chunks(sleepacc_py_step_fn step, void *arg, const char *what) {
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

/* Init hooks of the other binding files, called by module.c's exec slot.
 * Each adds its functions/types to `module`; 0 or -1 with an exception. */
int sleepacc_py_init_precise(PyObject *module);

#endif /* SLEEPACC_BINDING_H */
