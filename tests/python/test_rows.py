"""One row shape: every function that makes a flat row of a point gives one
value per column name, whichever function made the row.

A periodic point is where two meanings could part: its recorded statistics
are lateness, its actual durations requested + lateness.  ``p99_ns`` is the
statistic as recorded; ``actual_p99_ns`` the actual duration."""
import pytest

import sleepacc
from sleepacc import model, records, report


@pytest.fixture(scope="module")
def periodic():
    m = sleepacc.measure("nanosleep", 1e-3, mode="periodic", n=40, warmup=1)
    host = sleepacc.system_info()
    return m, host, sleepacc.Sweep([m], host=host)


def _rows(m, host, sw):
    """Every row-making function's row of the one point."""
    return {
        "records.flatten(point)": records.flatten(m, host),
        "records.flatten(dict)": records.flatten(m.to_dict(), host),
        "Measurement.to_record": m.to_record(host),
        "Sweep.to_records": sw.to_records()[0],
        "records.fit_row": records.fit_row(m, host),
        "records.to_records": records.to_records(sw)[0],
        "model.to_records": model.to_records(sw)[0],
        "report.records_for_report": report.records_for_report(sw)[0],
        # a monitor line's statistics are a periodic run's lateness too
        "records.monitor_line": records.monitor_line(m.method, m.requested_ns, m.stats,
                                                     m.missed, 0.0, 1.0,
                                                     "1970-01-01T00:00:01Z"),
    }


def test_every_row_maker_gives_one_value_per_column_for_a_periodic_point(periodic):
    m, host, sw = periodic
    rows = _rows(m, host, sw)
    seen = {}
    for maker, row in rows.items():
        for col, value in row.items():
            if col.startswith("_"):        # private: the maker's own (stats, env, host facts)
                continue
            if col in seen:
                first, v0 = seen[col]
                assert value == v0, f"{col}: {first} gives {v0!r}, {maker} gives {value!r}"
            else:
                seen[col] = (maker, value)
    # the columns every row has, and what they mean for a periodic point
    for maker, row in rows.items():
        for col in ("method", "median_ns", "p99_ns", "max_ns") + (
                () if maker == "records.monitor_line" else ("mode", "requested_ns", "actual_ns")):
            assert col in row, (maker, col)
    row = rows["records.fit_row"]
    req = row["requested_ns"]
    assert row["mode"] == "periodic"
    assert row["p99_ns"] == m.stats.p99 == m.error("p99")          # lateness, as recorded
    assert row["actual_p99_ns"] == req + row["p99_ns"]              # the actual duration
    assert row["actual_ns"] == req + row["median_ns"]
    assert row["actual_min_ns"] <= row["actual_ns"] <= row["actual_p99_ns"] <= row["actual_max_ns"]


def test_the_samples_frame_carries_the_rows_context(periodic):
    pytest.importorskip("pandas")
    m, host, _ = periodic
    row = records.flatten(m, host)
    frame = m.to_frame(host)
    for col in ("method", "mode", "requested_ns") + records.CONTEXT_COLUMNS:
        v = frame[col].iloc[0]
        assert (v is None and row[col] is None) or v == row[col], (col, v, row[col])


def test_a_relative_point_s_statistics_are_its_actual_durations():
    m = sleepacc.measure("nanosleep", 1e-4, n=20, warmup=1)
    row = records.fit_row(m)
    for stat in ("min", "p99", "max"):
        assert row[f"actual_{stat}_ns"] == row[f"{stat}_ns"] == m.stats[stat]
        assert records.actual_of(row, stat) == m.stats[stat]
    assert records.actual_of(row, "median") == row["actual_ns"] == m.stats.median
