"""Results from Python as plain records and DataFrames (idemsim.records, idemsim.dataframe), and a variant's
story from idemsim.run."""

import sys
import types

import pytest

import idemsim
from idemsim.runners.compare import compare


def test_a_runs_records_are_its_trace_event_by_event():
    """A run's records are one plain dict per trace event, in order, with the time, the parties, the kind, the
    event in words and its data; a database event carries its whole SQL."""
    run = idemsim.run("lost-response")
    rows = idemsim.records(run)
    assert len(rows) == len(run.trace)
    assert [r["kind"] for r in rows] == [e.kind for e in run.trace]
    assert all(list(r)[:5] == ["t", "actor", "target", "kind", "what"] for r in rows)
    inserts = [r for r in rows if r["kind"] == "db.result" and r["op"] == "register_key"]
    assert [r["rows"] for r in inserts] == [1, 0]
    assert inserts[0]["sql"].startswith("INSERT INTO idempotency_keys") and "ON CONFLICT (key) DO NOTHING" in \
        inserts[0]["sql"]


def test_a_sweeps_records_are_its_rows_flattened():
    """A sweep's records are one dict per point and design, with its figures flattened as the CSV's columns."""
    result = idemsim.sweep("loss", vary=["network.response.loss=0,0.5"], designs=["naive"], seeds=20)
    rows = idemsim.records(result)
    assert [(r["design"], r["network.response.loss"]) for r in rows] == [("naive", 0), ("naive", 0.5)]
    assert rows[0]["double_charge.rate"] == 0 and rows[1]["double_charge.rate"] > 0
    assert all(not isinstance(v, dict) for r in rows for v in r.values())


def test_a_comparisons_records_are_its_rows():
    """A comparison's records are its rows, one per design, as `idemsim compare --format json` gives them."""
    comparison = compare(idemsim.load_scenario("lost-response"), designs=["naive", "same-tx"])
    assert [(r["design"], r["charges"]) for r in idemsim.records(comparison)] == [("naive", 2), ("same-tx", 1)]


def test_records_refuse_what_they_cannot_read():
    """Anything but a run, a sweep or a comparison is a TypeError that names what records() takes."""
    with pytest.raises(TypeError, match="a Run, a SweepResult or a Comparison"):
        idemsim.records({"charges": 1})


def test_dataframe_without_pandas_names_the_extra(monkeypatch):
    """Without pandas, idemsim.dataframe() fails with an ImportError that names the extra idemsim[pandas]."""
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'idemsim\[pandas\]'"):
        idemsim.dataframe(idemsim.run("lost-response"))


def test_dataframe_builds_a_frame_from_the_records(monkeypatch):
    """idemsim.dataframe() hands pandas exactly the records, and imports pandas only when called."""
    fake = types.ModuleType("pandas")
    fake.DataFrame = lambda rows: ("frame", rows)
    monkeypatch.setitem(sys.modules, "pandas", fake)
    run = idemsim.run("lost-response")
    assert idemsim.dataframe(run) == ("frame", idemsim.records(run))


def test_run_tells_a_variants_story():
    """idemsim.run(name, variant=V) runs that variant's story, as `idemsim run NAME --variant V` does."""
    run = idemsim.run("retry-or-give-up", variant="give-up-after-lost-response")
    assert run.scenario.variant == "give-up-after-lost-response"
    assert (run.summary["charges"], run.summary["outcome"]) == (1, "info")
    assert idemsim.run("retry-or-give-up", variant="give-up-after-lost-response",
                       sets=["client.max_attempts=3"]).summary["outcome"] == "ok"
