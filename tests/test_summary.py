"""A run's summary (`idemsim.judge.run_summary.Summary`): a typed record whose fields are the keys of the JSON's
``summary``, in the same order, read by attribute, and still by key as the dict it once was."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError, fields

import pytest

from idemsim.judge.run_summary import KEY_OF_FIELD, KEYS, OPTIONAL, Summary
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import builtin_names, load, runs

STORIES = [story for name in builtin_names() for story in runs(load(name))]


def printed(run) -> dict:
    """The run's summary as its JSON prints it, read back."""
    return json.loads(json.dumps(run.to_dict(), ensure_ascii=False))["summary"]


@pytest.fixture(scope="module")
def lost():
    return simulate(load("lost-response"))


@pytest.fixture(scope="module")
def pooled():
    """A load whose API has a connection pool (the shipped ``pool`` sweep's scenario, cut to 60 operations)."""
    return simulate(load("pool", ["arrivals.count=60"]), "same-tx", 3)


class TestFields:
    def test_the_fields_are_the_keys_in_order(self):
        """Each field stands for one key, in the keys' order; only ``items`` has a field of another name."""
        assert [KEY_OF_FIELD.get(f.name, f.name) for f in fields(Summary)] == list(KEYS)
        assert KEY_OF_FIELD == {"api_items": "items"}

    @pytest.mark.parametrize("story", STORIES, ids=lambda s: f"{s.name}/{s.variant or ''}")
    def test_every_shipped_storys_summary_is_its_json_summary(self, story):
        """Every shipped story's summary has exactly the JSON summary's keys, in order, and equal values."""
        run = simulate(story)
        json_summary = printed(run)
        assert list(json_summary) == [key for key in KEYS if key not in OPTIONAL]
        assert list(run.summary) == list(json_summary)
        assert run.summary == json_summary

    def test_a_pooled_loads_summary_has_its_pool_waits_too(self, pooled):
        """A load whose API has a pool has every key, ``pool_wait`` and ``pool_wait_max`` before the violations."""
        assert list(printed(pooled)) == list(pooled.summary) == list(KEYS)
        assert pooled.summary.pool_wait_max == pooled.summary.pool_wait["max"] is not None

    def test_the_json_command_prints_the_summary(self, cli, lost):
        """``idemsim run --format json`` prints the summary's dict."""
        result = cli("run", "lost-response", "--format", "json")
        assert json.loads(result.stdout)["summary"] == lost.summary.to_dict()


class TestReading:
    def test_a_key_reads_its_field(self, lost, pooled):
        """``summary[key]`` is the field that stands for the key: ``summary["charges"] == summary.charges``."""
        for run in (lost, pooled):
            s = run.summary
            assert s["charges"] == s.charges
            assert all(s[key] is getattr(s, name) for name, key in zip((f.name for f in fields(Summary)), KEYS)
                       if key in s)

    def test_items_is_the_mappings_method(self, lost):
        """``summary.items()`` is the Mapping's; the API's items are ``summary["items"]``, the field ``api_items``."""
        s = lost.summary
        assert dict(s.items()) == s.to_dict()
        assert s["items"] is s.api_items

    def test_get_in_and_keys_work_as_on_the_dict(self, lost, pooled):
        """``get``, ``in``, ``keys()``, ``len`` and ``dict()`` answer as the summary's dict would."""
        s = lost.summary
        assert s.get("pool_wait") is None and "pool_wait" not in s and "charges" in s
        assert list(s.keys()) == list(s.to_dict()) and len(s) == len(s.to_dict()) and dict(s) == s.to_dict()
        assert pooled.summary.get("pool_wait") == pooled.summary.pool_wait and "pool_wait_max" in pooled.summary

    def test_an_absent_or_unknown_key_is_a_key_error(self, lost):
        """An optional key the run has not, a key no summary has, and a field's own name are no keys."""
        for key in ("pool_wait", "pool_wait_max", "nothing", "api_items"):
            with pytest.raises(KeyError):
                lost.summary[key]

    def test_a_summary_equals_its_dict(self, lost):
        """A summary equals its dict, and a summary with the same values; it differs from another run's."""
        assert lost.summary == lost.summary.to_dict() == Summary.from_dict(lost.summary.to_dict())
        assert lost.summary != simulate(load("lost-response"), "naive").summary


class TestDict:
    def test_to_dict_round_trips(self, lost, pooled):
        """``from_dict`` of ``to_dict`` (through JSON too) is the same summary, whose dict prints the same text."""
        for run in (lost, pooled):
            s = run.summary
            again = Summary.from_dict(json.loads(json.dumps(s.to_dict())))
            assert again == s and json.dumps(again.to_dict()) == json.dumps(s.to_dict())

    def test_to_dict_holds_the_values_themselves(self, lost):
        """The dict holds the summary's own values, not copies."""
        d = lost.summary.to_dict()
        assert d["operations"] is lost.summary.operations and d["ledger"] is lost.summary.ledger

    def test_a_summary_cannot_change(self, lost):
        """A summary is made whole at once: neither a field nor a key can be set afterwards."""
        with pytest.raises(FrozenInstanceError):
            lost.summary.charges = 3
        with pytest.raises(TypeError):
            lost.summary["charges"] = 3
