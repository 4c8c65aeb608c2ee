"""The numbers a story's text states are the numbers of its run.

A shipped story (and each of its variants) states times (``t=3.85``, ``at 17 s``) and counts (``2 charges``,
``one capture``) in its ``story`` and ``teaches``. Each is true of the run it speaks of: a time is the time of an
event in that run's trace, to the millisecond (``t=5`` is 5.000 s: a commit at 5.05 s is written ``t=5.05``); a
count is that run's charge rows or captures. Which run a sentence speaks of is read from the sentence: the
story's own run, under its own design; in a story with variants, a sentence that names a variant (or says "the
variant") speaks of those variants' runs; a sentence that names a design speaks of the runs under that design.
The Japanese texts state the same times as the English ones.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

import pytest

from idemsim.model.designs import SHIPPED
from idemsim.runners.simulation import Run, simulate
from idemsim.scenario.schema import Scenario, builtin_names, load, runs

WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
NUMBER = r"\d+|" + "|".join(WORDS)
STATED = re.compile(rf"\bt=(?P<t>\d+(?:\.\d+)?)|\bat (?P<at>\d+(?:\.\d+)?) s\b|"
                    rf"\b(?P<count>{NUMBER}) (?P<what>charge|capture)s?\b", re.IGNORECASE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"])")
SAME_INSTANT = 0.0005
"""Trace times are whole milliseconds: a stated time within half of one is that time."""


class Fact(NamedTuple):
    """One number a text states: a ``time`` in seconds, or a count of ``charges`` or ``captures``."""

    kind: str
    value: float
    text: str


def sentences(text: str) -> list[str]:
    """The sentences of a story's text, its line breaks undone."""
    return [s for s in SENTENCE_END.split(" ".join(text.split())) if s]


def facts(sentence: str) -> list[Fact]:
    """The times and counts ``sentence`` states, in the order it states them."""
    out = []
    for m in STATED.finditer(sentence):
        if m["count"]:
            count = m["count"].lower()
            value = int(count) if count.isdigit() else WORDS[count]
            out.append(Fact("charges" if m["what"].lower() == "charge" else "captures", value, m[0]))
        else:
            out.append(Fact("time", float(m["t"] or m["at"]), m[0]))
    return out


def spoken_of(sentence: str, story: Scenario, variants: list[Scenario]) -> list[tuple[Scenario, str]]:
    """The runs (a scenario and a design) ``sentence`` of ``story`` speaks of; ``variants`` are the story's own
    when it is a base story with variants (a sentence may speak of them), else empty."""
    named = [v for v in variants if re.search(rf"(?<![\w-]){re.escape(v.variant)}(?![\w-])", sentence)]
    stories = named or (variants if re.search(r"\bvariant\b", sentence, re.IGNORECASE) else [story])
    designs = [d for d in SHIPPED if re.search(rf"(?<![\w-]){re.escape(d)}(?![\w-])", sentence, re.IGNORECASE)]
    return [(s, d) for s in stories for d in designs or [story.design]]


@cache
def run_of(name: str, variant: str | None, design: str) -> Run:
    base = load(name)
    story = next(s for s in runs(base) if s.variant == variant)
    return simulate(story, design)


def shown(run: Run, fact: Fact) -> bool:
    """Whether ``run`` shows ``fact``: an event at that time, or that many charge rows or captures."""
    if fact.kind == "time":
        return any(abs(event.t - fact.value) < SAME_INSTANT for event in run.trace.events)
    return run.summary[fact.kind] == fact.value


def untrue(text: str, story: Scenario, variants: list[Scenario]) -> list[str]:
    """Each number ``text`` states that no run it speaks of shows, with what those runs show instead."""
    out = []
    for sentence in sentences(text):
        for fact in facts(sentence):
            spoken = spoken_of(sentence, story, variants)
            ran = [run_of(s.name, s.variant, d) for s, d in spoken]
            if not any(shown(run, fact) for run in ran):
                where = ", ".join(f"{s.variant or s.name} under {d}" for s, d in spoken)
                has = [run.summary[fact.kind] for run in ran] if fact.kind != "time" else "no event then"
                out.append(f"{fact.text!r} ({where}: {has}) in: {sentence}")
    return out


def texts(name: str) -> list[tuple[str, str, Scenario, list[Scenario]]]:
    """Every English text of a shipped scenario: (where, text, story, the variants it may speak of); a variant's
    ``teaches`` only where it differs from the base story's."""
    base, *variants = runs(load(name))
    out = [(f"{name} story", base.story, base, variants), (f"{name} teaches", base.teaches, base, variants)]
    for v in variants:
        out.append((f"{name}/{v.variant} story", v.story, v, []))
        if v.teaches != base.teaches:
            out.append((f"{name}/{v.variant} teaches", v.teaches, v, []))
    return out


class TestReadingAText:
    def test_times_and_counts_are_read_in_order(self):
        """A sentence's ``t=N``, ``at N s``, ``N charges`` and ``one capture`` are its facts, in order."""
        assert facts("The retry at t=2.5 and the one at 17 s: one capture, 2 charges, 1 charge row.") == [
            Fact("time", 2.5, "t=2.5"), Fact("time", 17.0, "at 17 s"), Fact("captures", 1, "one capture"),
            Fact("charges", 2, "2 charges"), Fact("charges", 1, "1 charge")]

    def test_a_duration_or_an_amount_is_no_fact(self):
        """``3 s lease``, ``waits 4 s``, ``1,000 yen`` and ``one per purchase`` state nothing this test checks."""
        assert facts("A 3 s lease; it waits 4 s for 1,000 yen: 4 items, one per purchase.") == []

    def test_sentences_split_at_their_ends_not_at_decimal_points(self):
        """``t=3.85. 2 captures`` is two sentences; ``t=3.85`` stays one number."""
        assert sentences("A capture at\nt=3.85. 2 captures, 1 charge. (A note.)") == [
            "A capture at t=3.85.", "2 captures, 1 charge.", "(A note.)"]

    def test_a_sentence_speaks_of_the_variants_and_designs_it_names(self):
        """A base sentence naming a variant speaks of that variant's run; one naming a design, of that design's."""
        base, *variants = runs(load("split-transactions"))
        assert [(s.variant, d) for s, d in spoken_of("The charge-first variant: 2 charges.", base, variants)] == [
            ("charge-first", "split-tx")]
        assert [(s.variant, d) for s, d in spoken_of("Under same-tx, 1 charge.", base, variants)] == [
            (None, "same-tx")]
        assert [(s.variant, d) for s, d in spoken_of("The key commits; 0 charges.", base, variants)] == [
            (None, "split-tx")]

    def test_the_lease_story_as_it_stood_is_caught(self):
        """The lease story's old text, a takeover at t=5.5 after retries at t=2.5 and t=3.5, disagrees with its run:
        the run's retries are at t=2.5 and t=3.6, and the takeover captures at t=3.85."""
        base, *variants = runs(load("lease-recaptures"))
        old = ("The retries at t=2.5 and t=3.5 get 409 while the record is younger than the lease; the one at t=5.5"
               " finds it older, takes the key over, and calls the processor again: a second capture.")
        assert [line.split(" (")[0] for line in untrue(old, base, variants)] == ["'t=3.5'", "'t=5.5'"]


class TestShippedStories:
    @pytest.mark.parametrize("name", builtin_names())
    def test_every_number_a_story_states_is_its_runs(self, name):
        """Every time and count in a shipped story's and lesson's English text is shown by the run it speaks of."""
        found = {where: untrue(text, story, variants) for where, text, story, variants in texts(name)}
        assert {where: lines for where, lines in found.items() if lines} == {}

    @pytest.mark.parametrize("name", builtin_names())
    def test_the_japanese_texts_state_the_english_times(self, name):
        """A story's Japanese story and lesson state the same times (``t=N``) as its English ones."""
        times = re.compile(r"\bt=(\d+(?:\.\d+)?)")
        differ = [(s.variant, field) for s in runs(load(name)) for field in ("story", "teaches")
                  if sorted(times.findall(s.text(field, "ja"))) != sorted(times.findall(s.text(field, "en")))]
        assert differ == []
