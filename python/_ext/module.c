/*
 * module.c -- sleepacc._core, the CPython extension over the C core.
 *
 * Thin by design (binding.h): arguments and results are converted by the
 * core's field tables (convert.c), the core runs with the GIL released and
 * in chunks, and errors are mapped.  Every rule and default of a run is the
 * core's (sleepacc_config_default / sleepacc_config_check); names and
 * meaning are added in python/sleepacc/.
 *
 * Owns:
 *   config_default(), plan(), measure(): a run, by the
 *                  option, config and result tables;
 *   methods(), stats(), table(), format_duration(), host_facts(),
 *   clock_info(), seconds_ns(), and the tuples stats_fields,
 *   result_fields, policy_names, mode_names (index = value),
 *   default_durations_ns.
 */
#include "binding.h"

#include <string.h>

/* methods(): the registry's rows, each a dict of sleepacc_method_info_fields. */
static PyObject *py_methods(PyObject *self, PyObject *unused) {
  PyObject *list = PyList_New((Py_ssize_t)sleepacc_method_count());
  (void)self; (void)unused;
  for (size_t i = 0; list && i < sleepacc_method_count(); i++) {
    sleepacc_method_info m;
    int rc = sleepacc_method_info_get(sleepacc_method_at(i), &m);
    PyObject *row = rc < 0 ? sleepacc_py_raise(rc, "sleepacc_method_info_get")
                           : sleepacc_py_from_fields(sleepacc_method_info_fields, &m);
    if (row) PyList_SET_ITEM(list, (Py_ssize_t)i, row);
    else Py_CLEAR(list);
  }
  return list;
}

static PyObject *py_seconds_ns(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"value", "name", NULL};
  PyObject *value;
  const char *name = "duration";
  sleepacc_config c;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|s:seconds_ns", kwlist, &value, &name))
    return NULL;
  if (sleepacc_py_value(sleepacc_option_find(sleepacc_options, "duration"), name, &c, value) < 0)
    return NULL;
  return PyLong_FromLongLong(c.duration_ns);
}

/* sweep_plan(options): sleepacc_sweep_plan()'s points [(name, duration_ns)]
 * of options, a dict of "methods" (absent: every available method),
 * "durations" (seconds; absent: the default ladder) and "mode", read by the
 * core (sleepacc_sweep_read: each element by its rule, named "methods[i]";
 * the plan's rules, "methods: must not be empty"). */
static PyObject *py_sweep_plan(PyObject *self, PyObject *opts) {
  sleepacc_py_source src;
  sleepacc_getter g;
  sleepacc_sweep_args s;
  sleepacc_fault f;
  PyObject *out;
  int n;
  (void)self;
  if (!PyDict_Check(opts))
    return PyErr_Format(PyExc_TypeError, "options must be a dict, got %s", Py_TYPE(opts)->tp_name);
  g = sleepacc_py_getter(&src, opts);
  if ((n = sleepacc_sweep_read(&s, &g, 0, &f)) < 0) return sleepacc_py_fault(&src, n, &f);
  out = PyList_New(n);
  for (int i = 0; out && i < n; i++) {
    PyObject *t = Py_BuildValue("(sL)", s.points[i].method->name, (long long)s.points[i].duration_ns);
    if (t) PyList_SET_ITEM(out, i, t);
    else Py_CLEAR(out);
  }
  PyMem_Free(src.room);
  return out;
}

/* A config from a mapping of sleepacc_config_fields over the defaults. */
static int config_from(PyObject *m, sleepacc_config *cfg) {
  sleepacc_config_default(cfg);
  if (!PyMapping_Check(m)) {
    PyErr_Format(PyExc_TypeError, "config must be a mapping, got %s", Py_TYPE(m)->tp_name);
    return -1;
  }
  return sleepacc_py_to_fields(sleepacc_config_fields, m, cfg);
}

static PyObject *py_config_default(PyObject *self, PyObject *unused) {
  sleepacc_config cfg;
  (void)self; (void)unused;
  sleepacc_config_default(&cfg);
  return sleepacc_py_from_fields(sleepacc_config_fields, &cfg);
}

/* The defaults of a Sleeper/Pacer (sleepacc_sleeper_config_default), by its field table. */
static PyObject *py_sleeper_default(PyObject *self, PyObject *unused) {
  sleepacc_sleeper_config c;
  (void)self; (void)unused;
  sleepacc_sleeper_config_default(&c);
  return sleepacc_py_from_fields(sleepacc_sleeper_config_fields, &c);
}

/* plan(options, sweep_point=False): the checked config of a run (a dict of
 * sleepacc_config_fields) from options, a dict {option: value} of
 * sleepacc_options names, read by the core (sleepacc_config_read: the
 * defaults, each option by the rule of its kind, the defaults that depend on
 * another option, sweep_point: a sweep's point, then every rule of a run);
 * its fault is the exception (sleepacc_py_fault). */
static PyObject *py_plan(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"options", "sweep_point", NULL};
  sleepacc_py_source src;
  sleepacc_getter g;
  sleepacc_fault f;
  PyObject *opts;
  sleepacc_config cfg;
  int sweep = 0, rc;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!|p:plan", kwlist, &PyDict_Type, &opts, &sweep))
    return NULL;
  g = sleepacc_py_getter(&src, opts);
  if ((rc = sleepacc_config_read(&cfg, &g, sweep, &f)) < 0) return sleepacc_py_fault(&src, rc, &f);
  return sleepacc_py_from_fields(sleepacc_config_fields, &cfg);
}

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

/* measure(config, point=False): one run of the engine in the one block the
 * core states (sleepacc_run_memory: samples, start times, the statistics'
 * scratch), its chunks with the GIL released and signals checked between
 * them; the thread is restored on every path, Ctrl-C included; a failed run
 * raised in the core's words (sleepacc_py_raise_run; point: a sweep's
 * point, named as Lua's sweep names it). */
static PyObject *py_measure(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"config", "point", NULL};
  sleepacc_config cfg;
  const char *field = NULL, *msg = NULL;
  PyObject *m, *block = NULL, *result = NULL, *samples = NULL, *starts = NULL, *stream = NULL;
  sleepacc_run *run;
  sleepacc_result res;
  size_t size, used = 0;
  int rc, interrupted = 0, point = 0;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|p:measure", kwlist, &m, &point) ||
      config_from(m, &cfg) < 0)
    return NULL;
  if ((rc = sleepacc_config_explain(&cfg, &field, &msg)) < 0)
    return PyErr_Format(rc == -ENOSYS ? PyExc_OSError : PyExc_ValueError, "%s: %s", field, msg);
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
  if (rc < 0 || (result = sleepacc_py_from_fields(sleepacc_result_fields, &res)) == NULL) goto done;
  stream = sleepacc_py_from_fields(sleepacc_stats_fields, &res.stream_stats);
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

static PyObject *py_stats(PyObject *self, PyObject *args) {
  Py_buffer view;
  long long threshold;
  (void)self;
  if (!PyArg_ParseTuple(args, "y*L:stats", &view, &threshold)) return NULL;
  if (view.len % (Py_ssize_t)sizeof(int64_t) != 0) {
    PyBuffer_Release(&view);
    return PyErr_Format(PyExc_ValueError, "values must be a buffer of int64");
  }
  size_t n = (size_t)view.len / sizeof(int64_t);
  int64_t *scratch = PyMem_Malloc((n ? n : 1) * sizeof(int64_t));
  if (scratch == NULL) {
    PyBuffer_Release(&view);
    return PyErr_NoMemory();
  }
  sleepacc_stats st;
  int rc = sleepacc_stats_compute((const int64_t *)view.buf, n, threshold, scratch, &st);
  PyMem_Free(scratch);
  PyBuffer_Release(&view);
  if (rc < 0) return sleepacc_py_raise(rc, "sleepacc_stats_compute");
  return sleepacc_py_from_fields(sleepacc_stats_fields, &st);
}

/* stats_level(name): sleepacc_stats_level, the quantile level of a statistic (-1: none). */
static PyObject *py_stats_level(PyObject *self, PyObject *name) {
  const char *s = PyUnicode_AsUTF8(name);
  (void)self;
  return s ? PyFloat_FromDouble(sleepacc_stats_level(s)) : NULL;
}

static PyObject *py_table(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"rows", "style", NULL};
  PyObject *rows_obj;
  const char *style = "irtt";
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|s:table", kwlist, &rows_obj, &style))
    return NULL;
  sleepacc_table_fn render = sleepacc_table_style(style);
  if (render == NULL)
    return PyErr_Format(PyExc_ValueError, "style must be 'irtt' or 'wide', got '%s'", style);
  PyObject *seq = PySequence_Fast(rows_obj, "rows must be a sequence of mappings");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  sleepacc_row *rows = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *rows);
  char *buf = NULL;
  PyObject *result = NULL;
  size_t needed = 0;
  int len;
  if (rows == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  /* the rows' strings are borrowed from the row dicts, which seq holds */
  for (Py_ssize_t i = 0; i < n; i++)
    if (sleepacc_py_to_fields(sleepacc_row_fields, PySequence_Fast_GET_ITEM(seq, i), &rows[i]) < 0)
      goto done;
  /* the size first, then the table */
  len = render(rows, (size_t)n, NULL, 0, &needed);
  if (len == -ENOSPC && (buf = PyMem_Malloc(needed)) == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if (len == -ENOSPC) len = render(rows, (size_t)n, buf, needed, NULL);
  if (len < 0) sleepacc_py_raise(len, "sleepacc_table");
  else result = PyUnicode_DecodeUTF8(buf, len, "strict");
done:
  PyMem_Free(buf);
  PyMem_Free(rows);
  Py_DECREF(seq);
  return result;
}

static PyObject *py_format_duration(PyObject *self, PyObject *arg) {
  (void)self;
  long long ns = PyLong_AsLongLong(arg);
  if (ns == -1 && PyErr_Occurred()) return NULL;
  char buf[64];
  int len = sleepacc_format_duration(ns, buf, sizeof buf);
  if (len < 0) return sleepacc_py_raise(len, "sleepacc_format_duration");
  return PyUnicode_DecodeUTF8(buf, len, "strict");
}

static PyObject *py_host_facts(PyObject *self, PyObject *unused) {
  sleepacc_fact *facts = PyMem_Calloc(SLEEPACC_MAX_FACTS, sizeof *facts);
  sleepacc_field rows[SLEEPACC_MAX_FACTS + 1];
  size_t count = 0;
  PyObject *d = NULL;
  int rc;
  (void)self; (void)unused;
  if (facts == NULL) return PyErr_NoMemory();
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count);
  Py_END_ALLOW_THREADS
  if (rc < 0) {
    sleepacc_py_raise(rc, "sleepacc_host_facts");
  } else {
    sleepacc_fact_fields(facts, count, rows);
    d = sleepacc_py_from_fields(rows, facts);
  }
  PyMem_Free(facts);
  return d;
}

static PyObject *py_clock_info(PyObject *self, PyObject *args) {
  sleepacc_clocks clocks;
  int reads = 0, rc;
  (void)self;
  if (!PyArg_ParseTuple(args, "|i:clock_info", &reads)) return NULL;
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_clocks_get(reads, &clocks);
  Py_END_ALLOW_THREADS
  if (rc < 0) return sleepacc_py_raise(rc, "sleepacc_clocks_get");
  return sleepacc_py_from_fields(sleepacc_clocks_fields, &clocks);
}

static PyMethodDef core_methods[] = {
  {"methods", py_methods, METH_NOARGS, "methods() -> list of the registry's rows (dicts)"},
  {"seconds_ns", (PyCFunction)(void (*)(void))py_seconds_ns, METH_VARARGS | METH_KEYWORDS,
   "seconds_ns(value, name='duration') -> int ns, by the core's duration rule"},
  {"config_default", py_config_default, METH_NOARGS, "config_default() -> dict of config fields"},
  {"sleeper_default", py_sleeper_default, METH_NOARGS, "sleeper_default() -> dict: Sleeper/Pacer's"},
  {"plan", (PyCFunction)(void (*)(void))py_plan, METH_VARARGS | METH_KEYWORDS,
   "plan(options, sweep_point=False) -> the checked config of {option: value}"},
  {"sweep_plan", py_sweep_plan, METH_O,
   "sweep_plan({methods=, durations=, mode=}) -> [(name, duration_ns)] by sleepacc_sweep_plan()"},
  {"measure", (PyCFunction)(void (*)(void))py_measure, METH_VARARGS | METH_KEYWORDS,
   "measure(config, point=False) -> dict: the record, samples, starts"},
  {"stats", py_stats, METH_VARARGS, "stats(values, threshold) -> dict of the core's stats"},
  {"stats_level", py_stats_level, METH_O, "stats_level(name) -> quantile level, -1 for none"},
  {"table", (PyCFunction)(void (*)(void))py_table, METH_VARARGS | METH_KEYWORDS,
   "table(rows, style='irtt') -> str, by the core's renderer"},
  {"format_duration", py_format_duration, METH_O, "format_duration(ns) -> str, as Go prints it"},
  {"host_facts", py_host_facts, METH_NOARGS, "host_facts() -> dict of sleepacc_host_facts()"},
  {"clock_info", py_clock_info, METH_VARARGS,
   "clock_info(reads=0) -> {clock: {resolution_ns, read_cost_ns}} (None: unknown)"},
  {NULL, NULL, 0, NULL},
};

/* A tuple of the names of a field table's rows (table != NULL) or of
 * name(0), name(1), ... up to the first NULL (an enum's names by value). */
static PyObject *names_tuple(const sleepacc_field *table, const char *(*name)(int)) {
  PyObject *list = PyList_New(0), *t;
  for (int i = 0; list && (table ? table[i].name : name(i)) != NULL; i++) {
    PyObject *s = PyUnicode_FromString(table ? table[i].name : name(i));
    if (s == NULL || PyList_Append(list, s) < 0) Py_CLEAR(list);
    Py_XDECREF(s);
  }
  t = list ? PyList_AsTuple(list) : NULL;
  Py_XDECREF(list);
  return t;
}

/* module.name = value (stealing value); 0 or -1. */
static int add(PyObject *module, const char *name, PyObject *value) {
  int rc = value ? PyModule_AddObjectRef(module, name, value) : -1;
  Py_XDECREF(value);
  return rc;
}

static int core_exec(PyObject *module) {
  PyObject *ladder = PyTuple_New(SLEEPACC_DEFAULT_DURATION_COUNT);
  for (int i = 0; ladder && i < SLEEPACC_DEFAULT_DURATION_COUNT; i++) {
    PyObject *v = PyLong_FromLongLong(sleepacc_default_durations_ns[i]);
    if (v == NULL) Py_CLEAR(ladder);
    else PyTuple_SET_ITEM(ladder, i, v);
  }
  if (PyModule_AddStringConstant(module, "VERSION", SLEEPACC_VERSION) < 0 ||
      PyModule_AddIntConstant(module, "MAX_DURATION_NS", SLEEPACC_MAX_DURATION_NS) < 0 ||
      PyModule_AddIntConstant(module, "MAX_SAMPLES", SLEEPACC_MAX_SAMPLES) < 0 ||
      PyModule_AddIntConstant(module, "SWEEP_BUDGET_NS", SLEEPACC_SWEEP_BUDGET_NS) < 0 ||
      add(module, "HIST_PRECISION", PyFloat_FromDouble(SLEEPACC_HIST_PRECISION)) < 0 ||
      add(module, "stats_fields", names_tuple(sleepacc_stats_fields, NULL)) < 0 ||
      add(module, "result_fields", names_tuple(sleepacc_result_fields, NULL)) < 0 ||
      add(module, "policy_names", names_tuple(NULL, sleepacc_policy_name)) < 0 ||
      add(module, "mode_names", names_tuple(NULL, sleepacc_mode_name)) < 0 ||
      add(module, "default_durations_ns", ladder) < 0)
    return -1;
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
