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
 *   Samples        a read-only buffer of int64 ns the core wrote into
 *                  directly (buffer protocol, len, indexing);
 *   config_default(), config_check(), measure(): a run, by the config and
 *                  result tables;
 *   methods(), stats(), table(), format_duration(), host_facts(),
 *   clock_info(), seconds_ns(), errname(), strerror(), policy_names(),
 *   policy_from_name(), mode_from_name(), stats_fields,
 *   default_durations_ns.
 */
#include "binding.h"

#include <string.h>

/* -------------------------------------------------------------------------
 * Samples: int64 ns values in one PyMem buffer, exported zero-copy.
 * ---------------------------------------------------------------------- */
typedef struct {
  PyObject_HEAD
  int64_t *data;        /* PyMem buffer (NULL when empty) */
  Py_ssize_t len;       /* values held */
  Py_ssize_t shape[1];  /* buffer view shape: {len} */
  Py_ssize_t strides[1];/* buffer view strides: {8} */
  Py_ssize_t exports;   /* live buffer views */
} SamplesObject;

static PyTypeObject Samples_Type;
static int64_t samples_empty[1]; /* buf of an empty view: never NULL */

/* A new Samples owning `data` (PyMem, or NULL when len is 0). */
static SamplesObject *samples_new(int64_t *data, Py_ssize_t len) {
  SamplesObject *s = PyObject_New(SamplesObject, &Samples_Type);
  if (s == NULL) return NULL;
  s->data = data;
  s->len = len;
  s->shape[0] = len;
  s->strides[0] = sizeof(int64_t);
  s->exports = 0;
  return s;
}

/* Samples(values=()): a copy of an int64 buffer or any iterable of ints. */
static PyObject *Samples_tp_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"values", NULL};
  PyObject *values = NULL;
  (void)type;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:Samples", kwlist, &values)) return NULL;
  if (values == NULL) return (PyObject *)samples_new(NULL, 0);
  Py_buffer view;
  if (PyObject_CheckBuffer(values) &&
      PyObject_GetBuffer(values, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) == 0) {
    int ok = view.itemsize == 8 && view.format != NULL &&
             (strcmp(view.format, "q") == 0 || strcmp(view.format, "l") == 0 ||
              strcmp(view.format, "<q") == 0 || strcmp(view.format, "=q") == 0 ||
              strcmp(view.format, "<l") == 0 || strcmp(view.format, "=l") == 0);
    if (ok) {
      Py_ssize_t n = view.len / 8;
      int64_t *data = NULL;
      if (n > 0 && (data = PyMem_Malloc((size_t)n * sizeof(int64_t))) == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
      }
      if (n > 0) memcpy(data, view.buf, (size_t)n * sizeof(int64_t));
      PyBuffer_Release(&view);
      SamplesObject *s = samples_new(data, n);
      if (s == NULL) PyMem_Free(data);
      return (PyObject *)s;
    }
    PyBuffer_Release(&view); /* another format: fall back to iterating */
  } else {
    PyErr_Clear();
  }
  PyObject *seq = PySequence_Fast(values, "Samples() needs an iterable of ints");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  int64_t *data = NULL;
  if (n > 0 && (data = PyMem_Malloc((size_t)n * sizeof(int64_t))) == NULL) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
    if (!PyLong_Check(item) || PyBool_Check(item)) {
      PyErr_Format(PyExc_TypeError, "Samples() values must be ints, got %s",
                   Py_TYPE(item)->tp_name);
      goto fail;
    }
    long long v = PyLong_AsLongLong(item);
    if (v == -1 && PyErr_Occurred()) goto fail;
    data[i] = (int64_t)v;
  }
  Py_DECREF(seq);
  SamplesObject *s = samples_new(data, n);
  if (s == NULL) PyMem_Free(data);
  return (PyObject *)s;
fail:
  Py_DECREF(seq);
  PyMem_Free(data);
  return NULL;
}

static void Samples_dealloc(SamplesObject *s) {
  PyMem_Free(s->data);
  Py_TYPE(s)->tp_free((PyObject *)s);
}

static int Samples_getbuffer(SamplesObject *s, Py_buffer *view, int flags) {
  if (flags & PyBUF_WRITABLE) {
    PyErr_SetString(PyExc_BufferError, "Samples are read-only");
    view->obj = NULL;
    return -1;
  }
  view->obj = Py_NewRef((PyObject *)s);
  view->buf = s->data ? (void *)s->data : (void *)samples_empty;
  view->len = s->len * (Py_ssize_t)sizeof(int64_t);
  view->readonly = 1;
  view->itemsize = sizeof(int64_t);
  view->format = (flags & PyBUF_FORMAT) ? "q" : NULL;
  view->ndim = 1;
  view->shape = (flags & PyBUF_ND) == PyBUF_ND ? s->shape : NULL;
  view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? s->strides : NULL;
  view->suboffsets = NULL;
  view->internal = NULL;
  s->exports++;
  return 0;
}

static void Samples_releasebuffer(SamplesObject *s, Py_buffer *view) {
  (void)view;
  s->exports--;
}

static Py_ssize_t Samples_len(SamplesObject *s) { return s->len; }

static PyObject *Samples_item(SamplesObject *s, Py_ssize_t i) {
  if (i < 0 || i >= s->len) {
    PyErr_SetString(PyExc_IndexError, "Samples index out of range");
    return NULL;
  }
  return PyLong_FromLongLong(s->data[i]);
}

static PyObject *Samples_repr(SamplesObject *s) {
  return PyUnicode_FromFormat("<sleepacc Samples: %zd int64 ns>", s->len);
}

static PyBufferProcs Samples_as_buffer = {
  .bf_getbuffer = (getbufferproc)Samples_getbuffer,
  .bf_releasebuffer = (releasebufferproc)Samples_releasebuffer,
};

static PySequenceMethods Samples_as_sequence = {
  .sq_length = (lenfunc)Samples_len,
  .sq_item = (ssizeargfunc)Samples_item,
};

static PyTypeObject Samples_Type = {
  PyVarObject_HEAD_INIT(NULL, 0)
  .tp_name = "sleepacc._core.Samples",
  .tp_basicsize = sizeof(SamplesObject),
  .tp_dealloc = (destructor)Samples_dealloc,
  .tp_repr = (reprfunc)Samples_repr,
  .tp_as_sequence = &Samples_as_sequence,
  .tp_as_buffer = &Samples_as_buffer,
  .tp_flags = Py_TPFLAGS_DEFAULT,
  .tp_doc = "Samples(values=())\n--\n\n"
            "Read-only int64 nanosecond samples, written by the core directly.\n"
            "Supports the buffer protocol (format 'q'): numpy.asarray(samples)\n"
            "shares its memory.",
  .tp_new = Samples_tp_new,
};

PyDoc_STRVAR(methods_doc,
"methods() -> list of (name, family, description, granularity_ns,\n"
"                      honours_slack, absolute, available)\n\n"
"Every row of the core's method registry, in registry order.");

static PyObject *py_methods(PyObject *self, PyObject *unused) {
  (void)self; (void)unused;
  size_t count = sleepacc_method_count();
  PyObject *list = PyList_New(0);
  if (list == NULL) return NULL;
  for (size_t i = 0; i < count; i++) {
    sleepacc_method_info m;
    if (sleepacc_method_info_get(sleepacc_method_at(i), &m) < 0) continue;
    PyObject *row = Py_BuildValue("(sssLsNN)", m.name, m.family, m.description,
                                  (long long)m.granularity_ns, m.honours_slack,
                                  PyBool_FromLong(m.absolute), PyBool_FromLong(m.available));
    if (row == NULL || PyList_Append(list, row) < 0) {
      Py_XDECREF(row);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(row);
  }
  return list;
}

static PyObject *py_errname(PyObject *self, PyObject *arg) {
  (void)self;
  long err = PyLong_AsLong(arg);
  if (err == -1 && PyErr_Occurred()) return NULL;
  if (err < -100000 || err > 100000) err = 0; /* no errno is that large */
  return PyUnicode_FromString(sleepacc_errname((int)err));
}

static PyObject *py_strerror(PyObject *self, PyObject *arg) {
  (void)self;
  long err = PyLong_AsLong(arg);
  if (err == -1 && PyErr_Occurred()) return NULL;
  if (err < -100000 || err > 100000) err = 0; /* no errno is that large */
  return PyUnicode_FromString(sleepacc_strerror((int)err));
}

PyDoc_STRVAR(policy_names_doc,
"policy_names() -> tuple of str\n\nScheduling policy names the core knows, by value.");

static PyObject *py_policy_names(PyObject *self, PyObject *unused) {
  (void)self; (void)unused;
  PyObject *list = PyList_New(0);
  if (list == NULL) return NULL;
  for (int p = 0;; p++) {
    const char *name = sleepacc_policy_name(p);
    if (name == NULL) break;
    PyObject *s = PyUnicode_FromString(name);
    if (s == NULL || PyList_Append(list, s) < 0) {
      Py_XDECREF(s);
      Py_DECREF(list);
      return NULL;
    }
    Py_DECREF(s);
  }
  PyObject *t = PyList_AsTuple(list);
  Py_DECREF(list);
  return t;
}

static PyObject *py_policy_from_name(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = PyUnicode_AsUTF8(arg);
  if (name == NULL) return NULL;
  return PyLong_FromLong(sleepacc_policy_from_name(name));
}

static PyObject *py_mode_from_name(PyObject *self, PyObject *arg) {
  (void)self;
  const char *name = PyUnicode_AsUTF8(arg);
  if (name == NULL) return NULL;
  return PyLong_FromLong(sleepacc_mode_from_name(name));
}

PyDoc_STRVAR(seconds_ns_doc,
"seconds_ns(value, name='duration') -> int\n\n"
"A duration in seconds as int64 ns (nearest): TypeError for what is not a\n"
"number, ValueError '<name>: ...' for NaN/inf and the core's duration rule.");

static PyObject *py_seconds_ns(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"value", "name", NULL};
  PyObject *value;
  const char *name = "duration";
  int64_t ns;
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|s:seconds_ns", kwlist, &value, &name))
    return NULL;
  if (sleepacc_py_seconds_ns(value, name, &ns) < 0) return NULL;
  return PyLong_FromLongLong(ns);
}

static PyObject *py_name_check(PyObject *self, PyObject *args) {
  PyObject *obj;
  const char *arg = "name";
  (void)self;
  if (!PyArg_ParseTuple(args, "O|s:name_check", &obj, &arg)) return NULL;
  return sleepacc_py_name(obj, arg) ? Py_NewRef(obj) : NULL;
}

PyDoc_STRVAR(sweep_plan_doc,
"sweep_plan(names, ladder_ns, mode) -> list of (name, duration_ns)\n\n"
"sleepacc_sweep_plan(): the points of a sweep (names, ladder_ns: None for\n"
"every available method / the default ladder); ValueError for its rules.");

static PyObject *py_sweep_plan(PyObject *self, PyObject *args) {
  PyObject *names, *ladder, *out = NULL;
  const sleepacc_method **ms = NULL;
  int64_t *ds = NULL;
  sleepacc_point *pts = NULL;
  Py_ssize_t nm = 0, nd = 0;
  size_t bad = 0;
  const char *msg = NULL;
  int mode, n = -1;
  (void)self;
  if (!PyArg_ParseTuple(args, "OOi:sweep_plan", &names, &ladder, &mode)) return NULL;
  if ((names != Py_None && (nm = PySequence_Size(names)) < 0) ||
      (ladder != Py_None && (nd = PySequence_Size(ladder)) < 0))
    return NULL;
  ms = PyMem_Calloc((size_t)nm + 1, sizeof *ms), ds = PyMem_Calloc((size_t)nd + 1, sizeof *ds);
  for (Py_ssize_t i = 0; ms && i < nm; i++) {
    PyObject *o = PySequence_GetItem(names, i);
    const char *name = o ? PyUnicode_AsUTF8(o) : NULL;
    if (name && !(ms[i] = sleepacc_method_find(name))) PyErr_Format(PyExc_ValueError, "unknown method %R", o);
    Py_XDECREF(o);
    if (!ms[i]) goto done;
  }
  for (Py_ssize_t j = 0; ds && j < nd; j++) {
    PyObject *o = PySequence_GetItem(ladder, j);
    ds[j] = o ? (int64_t)PyLong_AsLongLong(o) : -1;
    Py_XDECREF(o);
    if (PyErr_Occurred()) goto done;
  }
  if (!ms || !ds) goto done;
  n = sleepacc_sweep_plan(names == Py_None ? NULL : ms, (size_t)nm, ladder == Py_None ? NULL : ds,
                          (size_t)nd, mode, NULL, 0, &bad, &msg);
  if (n == -EINVAL && msg && bad != (size_t)-1) PyErr_Format(PyExc_ValueError, "method '%s' %s", ms[bad]->name, msg);
  else if (n < 0) PyErr_SetString(PyExc_ValueError, msg ? msg : sleepacc_strerror(n));
  else if ((pts = PyMem_Calloc((size_t)n + 1, sizeof *pts)) && (out = PyList_New(n))) {
    sleepacc_sweep_plan(names == Py_None ? NULL : ms, (size_t)nm, ladder == Py_None ? NULL : ds, (size_t)nd,
                        mode, pts, (size_t)n, NULL, NULL);
    for (int i = 0; out && i < n; i++) {
      PyObject *t = Py_BuildValue("(sL)", pts[i].method->name, (long long)pts[i].duration_ns);
      if (t) PyList_SET_ITEM(out, i, t);
      else Py_CLEAR(out);
    }
  }
done:
  if ((!ms || !ds || (n >= 0 && !pts)) && !PyErr_Occurred()) PyErr_NoMemory();
  PyMem_Free(ms), PyMem_Free(ds), PyMem_Free(pts);
  return out;
}

static PyObject *py_option_of_field(PyObject *self, PyObject *arg) {
  const char *field = PyUnicode_AsUTF8(arg);
  (void)self;
  return field ? PyUnicode_FromString(sleepacc_option_of_field(field)) : NULL;
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

PyDoc_STRVAR(config_check_doc,
"config_check(config) -> None or (field, message, errname)\n\n"
"sleepacc_config_check() of a mapping of config fields (config_default()'s\n"
"keys; absent keys keep their default): None, or the core field name of the\n"
"first broken rule ('duration_ns', 'env.cpu', ...), its message and errno name.");

static PyObject *py_config_check(PyObject *self, PyObject *m) {
  sleepacc_config cfg;
  const char *field = NULL, *msg = NULL;
  int rc;
  (void)self;
  if (config_from(m, &cfg) < 0) return NULL;
  rc = sleepacc_config_explain(&cfg, &field, &msg);
  if (rc == 0) Py_RETURN_NONE;
  return Py_BuildValue("(sss)", field, msg, sleepacc_errname(rc));
}

/* One chunk of a run, in the shape sleepacc_py_run_chunks wants. */
static int run_step_adapter(void *run) { return sleepacc_run_step((sleepacc_run *)run); }

/* A Samples of capacity values (len 0 until filled), or NULL; Py_None when
 * capacity is 0. */
static PyObject *samples_alloc(int64_t capacity) {
  int64_t *data;
  SamplesObject *s;
  if (capacity == 0) return Py_NewRef(Py_None);
  if ((data = PyMem_Malloc((size_t)capacity * sizeof(int64_t))) == NULL) return PyErr_NoMemory();
  if ((s = samples_new(data, 0)) == NULL) PyMem_Free(data);
  return (PyObject *)s;
}

/* Keep the first n values of a Samples (or None): give back the rest. */
static void samples_shrink(PyObject *obj, int64_t n) {
  SamplesObject *s = (SamplesObject *)obj;
  int64_t *shrunk;
  if (obj == Py_None) return;
  shrunk = PyMem_Realloc(s->data, (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
  if (shrunk != NULL) s->data = shrunk;
  s->len = s->shape[0] = (Py_ssize_t)n;
}

PyDoc_STRVAR(measure_doc,
"measure(config) -> dict\n\n"
"One run of the core's engine (sleepacc_run_start / _step / _finish) for a\n"
"mapping of config fields, in chunks with the GIL released and signals\n"
"checked between them.  The sample buffer is sized by the core\n"
"(sleepacc_config_capacity).  Returns the record (sleepacc_result_fields)\n"
"plus samples and starts (Samples, or None when streaming) and\n"
"stream_stats.  The thread is restored on every path, Ctrl-C included.");

static PyObject *py_measure(PyObject *self, PyObject *m) {
  sleepacc_config cfg;
  const char *field = NULL, *msg = NULL;
  PyObject *result = NULL, *samples = NULL, *starts = NULL;
  int64_t *scratch = NULL, cap, n;
  sleepacc_run *run;
  sleepacc_result res;
  int rc, failed;
  (void)self;
  if (config_from(m, &cfg) < 0) return NULL;
  if ((rc = sleepacc_config_explain(&cfg, &field, &msg)) < 0)
    return PyErr_Format(rc == -ENOSYS ? PyExc_OSError : PyExc_ValueError, "%s: %s", field, msg);
  cap = sleepacc_config_capacity(&cfg);
  if ((run = PyMem_Calloc(1, sizeof *run)) == NULL) return PyErr_NoMemory();
  if ((samples = samples_alloc(cap)) == NULL || (starts = samples_alloc(cap)) == NULL) goto done;
  /* Same OS thread throughout: the environment applied by start is the
   * one the steps run under and the one finish restores. */
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_run_start(run, &cfg, cap ? ((SamplesObject *)samples)->data : NULL, (size_t)cap);
  if (rc == 0 && cap) rc = sleepacc_run_set_starts(run, ((SamplesObject *)starts)->data);
  if (rc < 0) sleepacc_run_finish(run);
  Py_END_ALLOW_THREADS
  if (rc < 0) {
    sleepacc_run_refusal(run, &field, &msg);
    if (field != NULL && msg != NULL) /* refused up front, nothing changed */
      PyErr_SetObject(PyExc_PermissionError,
                      Py_BuildValue("(iN)", -rc, PyUnicode_FromFormat("%s: %s", field, msg)));
    else
      sleepacc_py_raise(rc, field ? field : "sleepacc_run_start");
    goto done;
  }
  failed = sleepacc_py_run_chunks(run_step_adapter, run, "sleepacc_run_step");
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_run_finish(run);
  Py_END_ALLOW_THREADS
  if (failed) goto done; /* the first exception wins */
  if (rc < 0) {
    sleepacc_py_raise(rc, "sleepacc_run_finish (restoring the thread)");
    goto done;
  }
  n = sleepacc_run_count(run);
  if (cap && n > 0 && (scratch = PyMem_Malloc((size_t)n * sizeof(int64_t))) == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  if ((rc = sleepacc_run_result(run, scratch, &res)) < 0) {
    sleepacc_py_raise(rc, "sleepacc_run_result");
    goto done;
  }
  samples_shrink(samples, n);
  samples_shrink(starts, n);
  if ((result = sleepacc_py_from_fields(sleepacc_result_fields, &res)) == NULL) goto done;
  PyObject *stream = sleepacc_py_from_fields(sleepacc_stats_fields, &res.stream_stats);
  if (stream == NULL || PyDict_SetItemString(result, "stream_stats", stream) < 0 ||
      PyDict_SetItemString(result, "samples", samples) < 0 ||
      PyDict_SetItemString(result, "starts", starts) < 0)
    Py_CLEAR(result);
  Py_XDECREF(stream);
done:
  PyMem_Free(scratch);
  Py_XDECREF(samples);
  Py_XDECREF(starts);
  PyMem_Free(run);
  return result;
}

PyDoc_STRVAR(stats_doc,
"stats(values, threshold) -> dict\n\n"
"Exact summary statistics (sleepacc_stats_compute) of an int64 buffer;\n"
"values < threshold count as undersleeps.");

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

/* The core's table renderers by style name. */
typedef int (*table_fn)(const sleepacc_row *, size_t, char *, size_t, size_t *);
static const struct { const char *style; table_fn render; } table_styles[] = {
  {"irtt", sleepacc_table_irtt},
  {"wide", sleepacc_table_wide},
};

PyDoc_STRVAR(table_doc,
"table(rows, style='irtt') -> str\n\n"
"Render rows with the core's text table renderer ('irtt' or 'wide').  Each\n"
"row is a mapping with method, requested_ns, mode ('relative'/'periodic'),\n"
"stats (a mapping with every stats field) and cpu_percent (< 0: unknown).");

static PyObject *py_table(PyObject *self, PyObject *args, PyObject *kwds) {
  static char *kwlist[] = {"rows", "style", NULL};
  PyObject *rows_obj;
  const char *style = "irtt";
  (void)self;
  if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|s:table", kwlist, &rows_obj, &style))
    return NULL;
  table_fn render = NULL;
  for (size_t i = 0; i < sizeof table_styles / sizeof table_styles[0]; i++)
    if (strcmp(style, table_styles[i].style) == 0) render = table_styles[i].render;
  if (render == NULL)
    return PyErr_Format(PyExc_ValueError, "style must be 'irtt' or 'wide', got '%s'", style);
  PyObject *seq = PySequence_Fast(rows_obj, "rows must be a sequence of mappings");
  if (seq == NULL) return NULL;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject *names = PyList_New(0); /* keeps the method strings alive */
  sleepacc_row *rows = PyMem_Calloc(n > 0 ? (size_t)n : 1, sizeof *rows);
  char *buf = NULL;
  PyObject *result = NULL;
  if (names == NULL || rows == NULL) {
    if (rows == NULL) PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    PyObject *row = PySequence_Fast_GET_ITEM(seq, i);
    PyObject *v = PyMapping_GetItemString(row, "method");
    if (v == NULL) goto done;
    int err = PyList_Append(names, v);
    rows[i].method = PyUnicode_AsUTF8(v);
    Py_DECREF(v);
    if (err < 0 || rows[i].method == NULL) goto done;
    if ((v = PyMapping_GetItemString(row, "requested_ns")) == NULL) goto done;
    rows[i].requested_ns = PyLong_AsLongLong(v);
    Py_DECREF(v);
    if (rows[i].requested_ns == -1 && PyErr_Occurred()) goto done;
    if ((v = PyMapping_GetItemString(row, "mode")) == NULL) goto done;
    const char *mode = PyUnicode_AsUTF8(v);
    rows[i].mode = mode ? sleepacc_mode_from_name(mode) : -1;
    Py_DECREF(v);
    if (mode == NULL) goto done;
    if (rows[i].mode < 0) {
      PyErr_Format(PyExc_ValueError, "rows[%zd]: unknown mode '%s'", i, mode);
      goto done;
    }
    if ((v = PyMapping_GetItemString(row, "stats")) == NULL) goto done;
    err = sleepacc_py_to_fields(sleepacc_stats_fields, v, &rows[i].stats);
    Py_DECREF(v);
    if (err < 0) goto done;
    if ((v = PyMapping_GetItemString(row, "cpu_percent")) == NULL) goto done;
    rows[i].cpu_percent = v == Py_None ? -1.0 : PyFloat_AsDouble(v);
    Py_DECREF(v);
    if (rows[i].cpu_percent == -1.0 && PyErr_Occurred()) goto done;
  }
  size_t cap = 4096, needed = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    PyMem_Free(buf);
    if ((buf = PyMem_Malloc(cap)) == NULL) {
      PyErr_NoMemory();
      goto done;
    }
    int len = render(rows, (size_t)n, buf, cap, &needed);
    if (len >= 0) {
      result = PyUnicode_DecodeUTF8(buf, len, "strict");
      goto done;
    }
    if (len != -ENOSPC || needed <= cap) {
      sleepacc_py_raise(len, "sleepacc_table");
      goto done;
    }
    cap = needed;
  }
  sleepacc_py_raise(-ENOSPC, "sleepacc_table");
done:
  PyMem_Free(buf);
  PyMem_Free(rows);
  Py_XDECREF(names);
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

PyDoc_STRVAR(host_facts_doc,
"host_facts() -> dict\n\nsleepacc_host_facts(): key -> int, float, str, or None when unknown.");

static PyObject *py_host_facts(PyObject *self, PyObject *unused) {
  (void)self; (void)unused;
  sleepacc_fact *facts = PyMem_Calloc(SLEEPACC_MAX_FACTS, sizeof *facts);
  if (facts == NULL) return PyErr_NoMemory();
  size_t count = 0;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = sleepacc_host_facts(facts, SLEEPACC_MAX_FACTS, &count);
  Py_END_ALLOW_THREADS
  PyObject *d = NULL;
  if (rc < 0) {
    sleepacc_py_raise(rc, "sleepacc_host_facts");
    goto done;
  }
  if ((d = PyDict_New()) == NULL) goto done;
  for (size_t i = 0; i < count && i < SLEEPACC_MAX_FACTS; i++) {
    PyObject *v;
    switch (facts[i].type) {
    case SLEEPACC_FACT_INT: v = PyLong_FromLongLong(facts[i].i); break;
    case SLEEPACC_FACT_REAL: v = PyFloat_FromDouble(facts[i].d); break;
    case SLEEPACC_FACT_STR:
      v = PyUnicode_DecodeUTF8(facts[i].s, (Py_ssize_t)strnlen(facts[i].s, sizeof facts[i].s),
                               "replace");
      break;
    default: v = Py_NewRef(Py_None); break;
    }
    if (v == NULL || PyDict_SetItemString(d, facts[i].key, v) < 0) {
      Py_XDECREF(v);
      Py_CLEAR(d);
      goto done;
    }
    Py_DECREF(v);
  }
done:
  PyMem_Free(facts);
  return d;
}

PyDoc_STRVAR(clock_info_doc,
"clock_info(reads=0) -> dict\n\n"
"Per clock name: (resolution_ns, read_cost_ns), -1 when unknown.");

static PyObject *py_clock_info(PyObject *self, PyObject *args) {
  int reads = 0;
  (void)self;
  if (!PyArg_ParseTuple(args, "|i:clock_info", &reads)) return NULL;
  PyObject *d = PyDict_New();
  if (d == NULL) return NULL;
  for (int id = 0; id < SLEEPACC_CLOCK_COUNT; id++) {
    sleepacc_clock_info info;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = sleepacc_clock_info_get(id, reads, &info);
    Py_END_ALLOW_THREADS
    if (rc < 0) {
      Py_DECREF(d);
      return sleepacc_py_raise(rc, "sleepacc_clock_info_get");
    }
    PyObject *v = Py_BuildValue("(LL)", (long long)info.resolution_ns,
                                (long long)info.read_cost_ns);
    if (v == NULL || PyDict_SetItemString(d, info.name ? info.name : "unknown", v) < 0) {
      Py_XDECREF(v);
      Py_DECREF(d);
      return NULL;
    }
    Py_DECREF(v);
  }
  return d;
}

static PyMethodDef core_methods[] = {
  {"methods", py_methods, METH_NOARGS, methods_doc},
  {"seconds_ns", (PyCFunction)(void (*)(void))py_seconds_ns, METH_VARARGS | METH_KEYWORDS,
   seconds_ns_doc},
  {"errname", py_errname, METH_O, "errname(err) -> str: symbolic errno name (\"EINVAL\")."},
  {"strerror", py_strerror, METH_O, "strerror(err) -> str: the core's message for an errno."},
  {"policy_names", py_policy_names, METH_NOARGS, policy_names_doc},
  {"policy_from_name", py_policy_from_name, METH_O,
   "policy_from_name(name) -> int: policy value, or -EINVAL when unknown."},
  {"mode_from_name", py_mode_from_name, METH_O,
   "mode_from_name(name) -> int: mode value, or -EINVAL when unknown."},
  {"name_check", py_name_check, METH_VARARGS,
   "name_check(name, arg='name') -> name: TypeError unless a str, ValueError for a NUL byte."},
  {"config_default", py_config_default, METH_NOARGS,
   "config_default() -> dict: sleepacc_config_default() by sleepacc_config_fields."},
  {"config_check", py_config_check, METH_O, config_check_doc},
  {"sweep_plan", py_sweep_plan, METH_VARARGS, sweep_plan_doc},
  {"option_of_field", py_option_of_field, METH_O,
   "option_of_field(field) -> str: the option that fills a core config field (sleepacc_options)."},
  {"measure", py_measure, METH_O, measure_doc},
  {"stats", py_stats, METH_VARARGS, stats_doc},
  {"table", (PyCFunction)(void (*)(void))py_table, METH_VARARGS | METH_KEYWORDS, table_doc},
  {"format_duration", py_format_duration, METH_O,
   "format_duration(ns) -> str: a duration as Go's time.Duration prints it."},
  {"host_facts", py_host_facts, METH_NOARGS, host_facts_doc},
  {"clock_info", py_clock_info, METH_VARARGS, clock_info_doc},
  {NULL, NULL, 0, NULL},
};

/* A tuple of the names of a field table (top level). */
static PyObject *field_names(const sleepacc_field *t) {
  Py_ssize_t n = 0, i = 0;
  while (t[n].name) n++;
  PyObject *tuple = PyTuple_New(n);
  for (; tuple && i < n; i++) {
    PyObject *s = PyUnicode_FromString(t[i].name);
    if (s == NULL) Py_CLEAR(tuple);
    else PyTuple_SET_ITEM(tuple, i, s);
  }
  return tuple;
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
  if (PyType_Ready(&Samples_Type) < 0 ||
      PyModule_AddObjectRef(module, "Samples", (PyObject *)&Samples_Type) < 0 ||
      PyModule_AddStringConstant(module, "VERSION", SLEEPACC_VERSION) < 0 ||
      PyModule_AddIntConstant(module, "MAX_DURATION_NS", SLEEPACC_MAX_DURATION_NS) < 0 ||
      PyModule_AddIntConstant(module, "CHUNK_NS", SLEEPACC_CHUNK_NS) < 0 ||
      PyModule_AddIntConstant(module, "POLICY_KEEP", SLEEPACC_POLICY_KEEP) < 0 ||
      PyModule_AddIntConstant(module, "MAX_DMA_LATENCY_US", SLEEPACC_MAX_DMA_LATENCY_US) < 0 ||
      PyModule_AddIntConstant(module, "MAX_SAMPLES", SLEEPACC_MAX_SAMPLES) < 0 ||
      PyModule_AddIntConstant(module, "SAMPLE_FLOOR_NS", SLEEPACC_SAMPLE_FLOOR_NS) < 0 ||
      add(module, "HIST_PRECISION", PyFloat_FromDouble(SLEEPACC_HIST_PRECISION)) < 0 ||
      add(module, "stats_fields", field_names(sleepacc_stats_fields)) < 0 ||
      add(module, "result_fields", field_names(sleepacc_result_fields)) < 0 ||
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
