/*
 * binding.h -- the helpers of the CPython extension sleepacc._core, shared
 * by its two source files.  The extension is thin: it converts arguments
 * and results by the core's field tables, releases the GIL, runs the core
 * in chunks so Ctrl-C is seen, and maps errors.  Every rule of a run lives
 * in the core (sleepacc_config_check); none is written here.
 *
 *   sleepacc_py_getter()       the getter the core reads options through;
 *   sleepacc_py_fault()        a read's fault as the exception;
 *   sleepacc_py_value()        one value by an option's rule;
 *   sleepacc_py_from_fields()  a core struct -> dict, by its field table;
 *   sleepacc_py_raise()        a negative errno -> a Python exception;
 *   sleepacc_py_raise_run()    a failed run -> the core's words of it;
 *   sleepacc_py_run_chunks()   a core step, GIL released, signals checked.
 */
#ifndef SLEEPACC_PY_BINDING_H
#define SLEEPACC_PY_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#if PY_VERSION_HEX < 0x030A0000
#error "sleepacc needs Python 3.10 or later (3.9 reached its end of life in October 2025)"
#endif

#include <stdint.h>

#include "sleepacc_binding.h"

/* Where the core's reader (sleepacc_getter) takes a call's options from:
 * a dict {option: value}, or one value; and the dicts it entered. */
typedef struct sleepacc_py_source {
  PyObject *options; /* the dict (borrowed), or NULL */
  PyObject *value;   /* the one value (sleepacc_py_value, a table's results), or NULL */
  Py_ssize_t pos;    /* PyDict_Next's position over the keys */
  void *room[2];     /* the memory the core asked for (PyMem): the caller frees it */
  const char *keytype; /* the type of the last key read (a KEY fault names it) */
  PyObject *at[SLEEPACC_GETTER_DEPTH]; /* the dicts entered (borrowed), the last read from */
  int depth;
  PyObject *hold;    /* each value read and dict entered, held until sleepacc_py_done */
} sleepacc_py_source;

/* The getter over the dict `options` (src filled; values converted by
 * their Python type: None NULL, bool BOOL, str TEXT, int INT, a real number
 * REAL, a list or tuple LIST; a dict is entered, sleepacc_getter.enter). */
sleepacc_getter sleepacc_py_getter(sleepacc_py_source *src, PyObject *options);
/* The end of a read: what it held and the room given back. */
void sleepacc_py_done(sleepacc_py_source *src);

/* The exception of a read's fault (rc its result): the core's one sentence
 * of it (sleepacc_fault_text, given the value's type name and repr()), a
 * TypeError for a wrong type (TYPE) or an unknown key (KEY), a ValueError
 * for a broken rule (RULE).  Returns NULL (src's room is the caller's to free). */
PyObject *sleepacc_py_fault(sleepacc_py_source *src, int rc, const sleepacc_fault *f);

/* One value `obj` of option o under `name` into base (sleepacc_value_read);
 * 0 or -1 with the fault's exception. */
int sleepacc_py_value(const sleepacc_option *o, const char *name, void *base, PyObject *obj);

/* A new dict of the struct at `base` described by `table`, built as the
 * core's walk of it says (sleepacc_fields_walk: a null None, PAIRS a dict
 * {key: value}, a list a list); one: the value of its first row alone
 * (sleepacc_field_walk; None when the walk leaves it out). */
PyObject *sleepacc_py_from_fields(const sleepacc_field *table, const void *base, int one);

/* Set the exception for a core error `err` (negative errno):
 * "<what>: <ENAME>: <message>"; EINVAL/ERANGE/EOVERFLOW/ENOENT are
 * ValueError, ENOMEM MemoryError, the rest OSError with .errno (so
 * PermissionError for EPERM/EACCES).  Returns NULL. */
PyObject *sleepacc_py_raise(int err, const char *what);

/* Set the exception of the failed run r, err its failure
 * (sleepacc_run_close's): the core's words of it (sleepacc_run_words, with
 * flags), a PermissionError when it was refused for privileges, else the
 * type of err as sleepacc_py_raise maps it.  Returns NULL. */
PyObject *sleepacc_py_raise_run(const sleepacc_run *run, int err, int flags);

/* One chunk of core work: 1 complete, 0 more to do, SLEEPACC_NEAR handed
 * off, -EINTR interrupted (call again), another -errno. */
typedef int (*sleepacc_py_step_fn)(void *arg);

/* Run step(arg) by the core's chunk protocol (sleepacc_chunks), the GIL
 * released around each chunk and PyErr_CheckSignals() between chunks.  0
 * complete, 1 handed off, -1 with an exception set (`what` names the call). */
int sleepacc_py_run_chunks(sleepacc_py_step_fn step, void *arg, const char *what);

/* Add Sleeper and Pacer to the module (sleeper.c). */
int sleepacc_py_init_precise(PyObject *module);

#endif /* SLEEPACC_PY_BINDING_H */
