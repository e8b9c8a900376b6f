"""Record formats of sleepacc (schema ``sleepacc/1``), written and read here once.

This package is the bottom layer of the record: it knows the schema as plain
dicts and text, and never imports the measuring API (``sleepacc._api``
builds its ``Measurement``/``Sweep`` objects from the dicts read here, and
writes through the functions here).  It holds:

- (``schema``) the one error rule (:func:`error_ns`): the error of a
  statistic is ``value - requested_ns`` for a relative point, the value
  itself (lateness) for a periodic one; and the checks of a record;
- (``rows``) the one flattener (:func:`flatten`): a point record as one flat
  row (``Sweep.to_records``, ``report``, ``plot``, the CLI use it), and the
  rows of any input (:func:`to_records`, which the model reads): ``p99_ns``
  is a statistic as recorded, ``actual_p99_ns`` its actual duration;
- (``files``) the two file forms and their reader (:func:`loads`, :func:`read`,
  :func:`save`), and the append-only results file of the CLI
  (:class:`ResultsFile`); (``monitor``) monitor lines and irtt's timer
  statistics.

JSON (``Sweep.save``)::

    {"schema": "sleepacc/1", "host": {...}, "started": iso8601,
     "finished": iso8601, "settings": {...},
     "measurements": [Measurement.to_dict(), ...]}

JSON Lines (written by the CLI while it runs, so a killed run keeps what it
measured)::

    {"schema": "sleepacc/1", "type": "header", "host": {...},
     "settings": {...}, "started": iso8601}
    {"type": "point", ...Measurement.to_dict()}
    ...
    {"type": "footer", "finished": iso8601}        (optional)

A torn last line (a run killed mid-write) is dropped; any other line that is
not valid JSON is an error.  Lines of other types are ignored, so later
writers may add them.  :func:`loads` reads both forms (and irtt sleep's
table text) into the JSON form's dict.

Measurement.to_dict() is the record of one measurement: method, mode,
requested_ns, n, stats {n, min, max, mean, std, median, p90, p99, p999,
undersleeps, ...: the core's fields}, missed, cpu_ns_per_call, cpu_percent,
ctx_switches {voluntary, involuntary}, wall_ns, env, samples (list of int
ns, or None).  docs/schema.md describes every field.
"""
from __future__ import annotations

# The package's rooms: schema (the tag, the error rule, the checks), rows (the
# one row shape), files (the file forms, reading and writing), monitor
# (monitor lines, irtt's timer statistics).  Every name is re-exported here:
# sleepacc.records.X keeps working.
from .files import (MAX_FILE_BYTES, ResultsFile, go_duration_ns, irtt_doc, is_irtt_table,
                    jsonl_footer, jsonl_header, jsonl_point, loads, parse_irtt_table,
                    parse_jsonl, read, read_bounded, save, write_atomic)
from .monitor import (TimerTotals, irtt_json, irtt_timer_stats, monitor_line,
                      pacer_irtt_json, read_monitor)
from .rows import (ACTUAL_STATS, CONTEXT_COLUMNS, actual_of, context, fit_row, flatten,
                   load_records, stat_error, to_records)
from .schema import (COUNT_FIELDS, SCHEMA, TRACE_SCHEMA, TRACE_TERMS, check_doc, check_point,
                     check_trace, clean, error_ns, origin_ns, stat_fields)

__all__ = ["SCHEMA", "TRACE_SCHEMA", "TRACE_TERMS", "check_trace", "COUNT_FIELDS", "STAT_FIELDS", "CONTEXT_COLUMNS", "ACTUAL_STATS", "origin_ns", "error_ns",
           "stat_error", "actual_of", "flatten", "fit_row", "to_records", "load_records",
           "context", "save", "read",
           "loads", "parse_jsonl", "jsonl_header", "jsonl_point", "jsonl_footer",
           "ResultsFile", "clean", "go_duration_ns", "is_irtt_table", "parse_irtt_table",
           "irtt_doc", "monitor_line", "read_monitor", "TimerTotals", "irtt_timer_stats",
           "irtt_json", "pacer_irtt_json"]


def __getattr__(name: str):
    """``STAT_FIELDS`` (:func:`schema.stat_fields`): read from the compiled
    core on first use, so the records import without it."""
    if name == "STAT_FIELDS":
        fields = stat_fields()
        globals()[name] = fields
        return fields
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
