/*
 * module.c -- sleepacc._core, the CPython extension over the C core.
 *
 * Thin by design (binding.h): arguments and results are converted by the
 * core's field tables (convert.c), the core runs with the GIL released and
 * in chunks, and errors are mapped.  Every rule and default of a run is the
 * core's (sleepacc_config_default / sleepacc_config_check); names and
 * meaning are added in python/sleepacc/.
 *
 * Owns: measure(), a run of an options dict the core reads, by the result
 * tables; and one dispatcher for every row of the core's call table
 * (sleepacc_calls, csrc/calls.c: its queries, plan(), sweep_plan(),
 * table(), and its constants, which it lists).
 */
#include "binding.h"

#include <string.h>

/* The n samples and their n start times at the front of a run's block
 * (sleepacc_run_close's layout; this consumes block, NULL when the run kept
 * no samples) as two read-only int64 views of it,
 * memoryview(bytes).cast('q')[:n] and [n:], the bytes past `used` given
 * back; None, None without a block.  0 or -1. */
static int samples_view(PyObject *block, size_t used, int64_t n, PyObject **samples, PyObject **starts) {
  PyObject *mv, *all;
  *samples = *starts = NULL;
  if (block == NULL) {
    *samples = Py_NewRef(Py_None), *starts = Py_NewRef(Py_None);
    return 0;
  }
  if (_PyBytes_Resize(&block, (Py_ssize_t)used) < 0) return -1;
  mv = PyMemoryView_FromObject(block);
  Py_DECREF(block);
  all = mv ? PyObject_CallMethod(mv, "cast", "s", "q") : NULL;
  Py_XDECREF(mv);
  if (all) *samples = PySequence_GetSlice(all, 0, (Py_ssize_t)n);
  if (*samples) *starts = PySequence_GetSlice(all, (Py_ssize_t)n, 2 * (Py_ssize_t)n);
  Py_XDECREF(all);
  return *starts ? 0 : -1;
}

/* measure(options, point=False): one run, its config read by the core as
 * plan() reads it (point: a sweep's), in the one block the core states
 * (sleepacc_run_memory), its chunks with the GIL released and signals
 * checked between them; the thread restored on every path, Ctrl-C included;
 * a failure in the core's words (sleepacc_py_raise_run). */
static PyObject *py_measure(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"options", "point", NULL};
  sleepacc_config cfg;
  sleepacc_py_source src;
  sleepacc_getter g;
  sleepacc_fault f;
  PyObject *m, *block = NULL, *result = NULL, *samples = NULL, *starts = NULL, *stream = NULL;
  sleepacc_run *run;
  sleepacc_result res;
  size_t size, used = 0;
  int rc, interrupted = 0, point = 0;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|p:measure", kwlist, &PyDict_Type, &m, &point))
    return NULL;
  g = sleepacc_py_getter(&src, m);
  if ((rc = sleepacc_config_read(&cfg, &g, point, &f)) < 0) sleepacc_py_fault(&src, rc, &f);
  sleepacc_py_done(&src); /* the config holds no text of the dict's */
  if (rc < 0) return NULL;
  size = sleepacc_run_memory(&cfg, SLEEPACC_RUN_STARTS);
  if ((run = PyMem_Calloc(1, sizeof *run)) == NULL) return PyErr_NoMemory();
  if (size && (block = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)size)) == NULL) goto done;
  /* Same OS thread throughout: the environment applied by open is the
   * one the chunks run under and the one close restores. */
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_run_open(run, &cfg, block ? PyBytes_AS_STRING(block) : NULL, size, SLEEPACC_RUN_STARTS);
  Py_END_ALLOW_THREADS
  if (rc == 0) interrupted = sleepacc_py_run_chunks(sleepacc_run_chunk, run, "measure") < 0;
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_run_close(run, &res, &used);
  Py_END_ALLOW_THREADS
  if (interrupted) goto done; /* Ctrl-C (a signal handler's exception) wins */
  if (rc < 0) {
    sleepacc_py_raise_run(run, rc, point ? SLEEPACC_RUN_POINT : 0);
    goto done;
  }
  rc = samples_view(block, used, res.n, &samples, &starts);
  block = NULL; /* consumed */
  if (rc < 0 || (result = sleepacc_py_from_fields(sleepacc_result_fields, &res, 0)) == NULL) goto done;
  stream = sleepacc_py_from_fields(sleepacc_stats_fields, &res.stream_stats, 0);
  if (stream == NULL || PyDict_SetItemString(result, "stream_stats", stream) < 0 ||
      PyDict_SetItemString(result, "samples", samples) < 0 ||
      PyDict_SetItemString(result, "starts", starts) < 0)
    Py_CLEAR(result);
done:
  Py_XDECREF(block);
  Py_XDECREF(samples);
  Py_XDECREF(starts);
  Py_XDECREF(stream);
  PyMem_Free(run);
  return result;
}

/* ------------------------------------------------------------ the core's queries */

/* The queries of the core's call table (sleepacc_calls): one function
 * object per row, made at load, whose self is a capsule of its row; one
 * dispatcher, py_call, answers them all. */
#define CALL_CAPSULE "sleepacc._core.call"

/* What a call holds while the core answers it: the source and getter of a
 * TABLE or RECORDS argument, the memory the core asks for (src.room, by the
 * getter's room), the buffer a VALUES argument lends. */
typedef struct call_state {
  sleepacc_py_source src;
  sleepacc_getter g;
  Py_buffer view;
} call_state;

/* The arguments of call c from args and kwds (positional or by name, as
 * CPython's own parser takes them and words their TypeErrors) into *a by
 * its option rows, each converted by the core's rule of its kind
 * (sleepacc_py_value); a TABLE argument, a dict, as the getter st->g over
 * it, which the core reads (a RECORDS argument: over the one value); a
 * VALUES argument as the buffer it lends (st->view).  0 or -1. */
static int call_args(const sleepacc_call *c, PyObject *args, PyObject *kwds, sleepacc_call_args *a,
                     call_state *st) {
  char format[64], *kwlist[SLEEPACC_CALL_MAX_ARGS + 1] = {NULL};
  PyObject *v[SLEEPACC_CALL_MAX_ARGS] = {NULL};
  int n = 0;
  memset(a, 0, sizeof *a);
  st->g = sleepacc_py_getter(&st->src, NULL);
  a->room = st->g.room, a->ctx = st->g.ctx;
  for (; n < SLEEPACC_CALL_MAX_ARGS && c->args && c->args[n].name; n++) kwlist[n] = (char *)c->args[n].name;
  /* "O" per argument, the optional ones after "|" (SLEEPACC_CALL_MAX_ARGS is 4: "OOOO", v[0..3]) */
  snprintf(format, sizeof format, "%.*s|%.*s:%s", c->required, "OOOO", n - c->required, "OOOO", c->python);
  if (!PyArg_ParseTupleAndKeywords(args, kwds, format, kwlist, &v[0], &v[1], &v[2], &v[3])) return -1;
  for (int i = 0; i < n; i++) {
    if (v[i] == NULL) continue;
    if (c->args[i].kind == SLEEPACC_OPT_VALUES && PyObject_GetBuffer(v[i], &st->view, PyBUF_SIMPLE) == 0 &&
        st->view.len % (Py_ssize_t)sizeof(int64_t) == 0) {
      a->values = st->view.buf, a->count = (size_t)st->view.len / sizeof(int64_t);
    } else if (c->args[i].kind == SLEEPACC_OPT_RECORDS) { /* the one value, read by the core */
      st->src.value = v[i];
      a->options = &st->g;
    } else if (c->args[i].kind == SLEEPACC_OPT_TABLE && PyDict_Check(v[i])) {
      st->g = sleepacc_py_getter(&st->src, v[i]);
      a->options = &st->g;
    } else { /* by the core's rule of its kind: a VALUES or TABLE it cannot take, its words */
      PyErr_Clear();
      if (sleepacc_py_value(&c->args[i], c->args[i].name, a, v[i]) < 0) return -1;
    }
  }
  return 0;
}

/* The answer of call c as an object: a dict of its fields, or the value of
 * the first (SLEEPACC_CALL_VALUE).  a: its arguments, NULL: none.  NULL on
 * error: the read's fault of a TABLE argument (sleepacc_py_fault over st's
 * source), else the core's errno raised, naming c->what. */
static PyObject *call_answer(const sleepacc_call *c, const sleepacc_call_args *a, call_state *st) {
  PyThreadState *ts = NULL;
  sleepacc_answer ans;
  PyObject *d = NULL;
  void *buf = PyMem_Malloc(c->size);
  int rc;
  if (buf == NULL) return PyErr_NoMemory();
  if (c->flags & SLEEPACC_CALL_BLOCKS) ts = PyEval_SaveThread(); /* the GIL released */
  rc = sleepacc_call_run(c, a, buf, &ans);
  if (ts) PyEval_RestoreThread(ts);
  if (rc < 0 && a && a->options && !ans.context) sleepacc_py_fault(&st->src, rc, &ans.fault);
  else if (rc < 0) sleepacc_py_raise(rc, a && a->options ? ans.context : c->what); /* an OS failure's words */
  else d = sleepacc_py_from_fields(ans.fields, ans.base, c->shape == SLEEPACC_CALL_VALUE);
  PyMem_Free(buf);
  return d;
}

/* The one dispatcher of the core's queries; what a call holds (the memory
 * the core asked for: a sweep's points, stats' scratch; a lent buffer) is
 * given back once the answer is converted. */
static PyObject *py_call(PyObject *self, PyObject *args, PyObject *kwds) {
  const sleepacc_call *c = PyCapsule_GetPointer(self, CALL_CAPSULE);
  sleepacc_call_args a;
  call_state st;
  PyObject *answer = NULL;
  memset(&st, 0, sizeof st);
  if (c != NULL && call_args(c, args, kwds, &a, &st) == 0) answer = call_answer(c, &a, &st);
  sleepacc_py_done(&st.src);
  PyBuffer_Release(&st.view);
  return answer;
}

/* A MODULE row: each field of its answer set on the module (a list as a
 * tuple: module constants are immutable).  0 or -1. */
static int add_constants(PyObject *module, const sleepacc_call *c) {
  PyObject *d = call_answer(c, NULL, NULL), *k, *v;
  Py_ssize_t pos = 0;
  int rc = d ? 0 : -1;
  while (rc == 0 && PyDict_Next(d, &pos, &k, &v)) {
    PyObject *o = PyList_Check(v) ? PyList_AsTuple(v) : Py_NewRef(v);
    rc = o ? PyObject_SetAttr(module, k, o) : -1;
    Py_XDECREF(o);
  }
  Py_XDECREF(d);
  return rc;
}

/* The call table's Python functions, filled from the rows at load (the
 * same values at every load). */
static PyMethodDef call_defs[SLEEPACC_CALL_MAX];

/* The Python rows of the call table on the module: a function each, or
 * its constants.  0 or -1. */
static int add_calls(PyObject *module) {
  PyObject *modname = PyModule_GetNameObject(module);
  size_t k = 0;
  int rc = modname ? 0 : -1;
  for (const sleepacc_call *c = sleepacc_calls; rc == 0 && c->fn && k < SLEEPACC_CALL_MAX; c++) {
    PyObject *cap, *f;
    if (c->python == NULL) continue;
    if (c->shape == SLEEPACC_CALL_MODULE) {
      rc = add_constants(module, c);
      continue;
    }
    call_defs[k] = (PyMethodDef){c->python, (PyCFunction)(void (*)(void))py_call,
                                 METH_VARARGS | METH_KEYWORDS, c->doc};
    cap = PyCapsule_New((void *)(uintptr_t)c, CALL_CAPSULE, NULL);
    f = cap ? PyCFunction_NewEx(&call_defs[k++], cap, modname) : NULL;
    rc = f ? PyModule_AddObjectRef(module, c->python, f) : -1;
    Py_XDECREF(cap);
    Py_XDECREF(f);
  }
  Py_XDECREF(modname);
  return rc;
}

static PyMethodDef core_methods[] = {
  {"measure", (PyCFunction)(void (*)(void))py_measure, METH_VARARGS | METH_KEYWORDS,
   "measure(options, point=False) -> dict: the record, samples, starts"},
  {NULL, NULL, 0, NULL},
};

static int core_exec(PyObject *module) {
  if (add_calls(module) < 0) return -1;
  return sleepacc_py_init_precise(module);
}

static PyModuleDef_Slot core_slots[] = {
  {Py_mod_exec, core_exec},
  {0, NULL},
};

static struct PyModuleDef core_module = {
  PyModuleDef_HEAD_INIT,
  .m_name = "sleepacc._core",
  .m_doc = "The C core of sleepacc (thin binding; see the sleepacc package).",
  .m_size = 0,
  .m_methods = core_methods,
  .m_slots = core_slots,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&core_module); }
