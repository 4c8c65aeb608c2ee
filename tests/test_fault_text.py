"""The fault syntax (idemsim/scenario/fault_text.py) and ``--faults`` on ``idemsim run`` and ``idemsim compare``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import TypeAdapter

from idemsim.base.errors import InputError
from idemsim.model.faults import Crash, DelayMessage, Duplicate, Fault, LoseMessage, Outage, ProcessorError
from idemsim.scenario.fault_text import FORMS, faults_text, parse_faults, with_faults
from idemsim.scenario.schema import builtin_names, load, runs
from idemsim.scenario.schema import variant as pick

STORIES = [(name, story.variant) for name in builtin_names() for story in runs(load(name))]


class TestTokens:
    @pytest.mark.parametrize("token, fault", [
        ("lose:request@1.1", LoseMessage(message="request")),
        ("lose:response@2.3", LoseMessage(message="response", op=2, attempt=3)),
        ("lose:processor_response@1.2", LoseMessage(message="processor_response", attempt=2)),
        ("delay:request@1.1+2.5", DelayMessage(message="request", seconds=2.5)),
        ("delay:response@1.2+0.5", DelayMessage(message="response", attempt=2, seconds=0.5)),
        ("crash:after_processor@1.1", Crash(point="after_processor")),
        ("crash:after_key@1.2+3", Crash(point="after_key", attempt=2, restart_after=3.0)),
        ("processor_error@1.1", ProcessorError()),
        ("duplicate@1+0.5", Duplicate(op=1, at=0.5)),
        ("duplicate@2", Duplicate(op=2)),
        ("outage:lost@2-5", Outage(start=2.0, until=5.0)),
        ("outage:503@2-5", Outage(start=2.0, until=5.0, mode="503")),
    ])
    def test_each_form_reads_as_its_fault_and_is_written_back_as_it_was(self, token, fault):
        """Every form of the syntax is the fault its [[faults]] table would be, and is its own canonical text."""
        assert parse_faults(token) == [fault]
        assert faults_text([fault]) == token

    @pytest.mark.parametrize("text, canonical", [
        ("lose:response@2", "lose:response@1.2"),
        ("  lose:response@1.1 ,crash:after_key@1.2+1 ", "lose:response@1.1,crash:after_key@1.2"),
        ("duplicate@1+0", "duplicate@1"),
        ("delay:request@1.1+2.50", "delay:request@1.1+2.5"),
        ("outage:lost@0.5-1e1", "outage:lost@0.5-10"),
        ("processor_error@3", "processor_error@1.3"),
    ])
    def test_the_canonical_text_writes_op_and_attempt_and_leaves_defaults_out(self, text, canonical):
        """`@ATTEMPT` is operation 1's; the canonical text always writes `@OP.ATTEMPT`, numbers as `:g` does."""
        assert faults_text(parse_faults(text)) == canonical

    @pytest.mark.parametrize("text", ["", "  ", "\t"])
    def test_an_empty_text_is_no_fault(self, text):
        """No token: no fault."""
        assert parse_faults(text) == []
        assert faults_text([]) == ""

    @pytest.mark.parametrize("name, variant", STORIES)
    def test_every_shipped_storys_faults_go_round_the_syntax(self, name, variant):
        """parse_faults(faults_text(x)) == x for every shipped scenario's and variant's faults."""
        story = load(name) if variant is None else pick(load(name), variant)
        assert parse_faults(faults_text(story.faults)) == story.faults

    @given(st.lists(st.one_of(
        st.builds(dict, kind=st.just("lose"), message=st.sampled_from(["request", "response", "processor_response"]),
                  op=st.integers(1, 10**6), attempt=st.integers(1, 99)),
        st.builds(dict, kind=st.just("delay"), message=st.sampled_from(["request", "response"]),
                  op=st.integers(1, 9), attempt=st.integers(1, 9), seconds=st.floats(1e-9, 1e6)),
        st.builds(dict, kind=st.just("crash"), point=st.sampled_from(["after_key", "before_commit"]),
                  attempt=st.integers(1, 9), restart_after=st.floats(0, 1e6)),
        st.builds(dict, kind=st.just("duplicate"), op=st.integers(1, 9), at=st.floats(0, 1e6)),
        st.builds(dict, kind=st.just("outage"), start=st.floats(0, 10), until=st.floats(10.001, 1e6)),
    ), max_size=4))
    def test_any_faults_go_round_the_syntax(self, tables):
        """Whatever the numbers (a tenth, 1e-9, a million and a half), the text gives the same faults back."""
        faults = [TypeAdapter(Fault).validate_python({("from" if k == "start" else k): v for k, v in t.items()})
                  for t in tables]
        assert parse_faults(faults_text(faults)) == faults


class TestBadTokens:
    @pytest.mark.parametrize("text, token", [
        ("lose", "lose"),
        ("lose:response", "lose:response"),
        ("lose:respons@1.1", "lose:respons@1.1"),
        ("lose:response@0.1", "lose:response@0.1"),
        ("lose:response@1.1+2", "lose:response@1.1+2"),
        ("delay:request@1.1", "delay:request@1.1"),
        ("delay:request@1.1+0", "delay:request@1.1+0"),
        ("delay:processor_response@1.1+1", "delay:processor_response@1.1+1"),
        ("crash:nowhere@1.1", "crash:nowhere@1.1"),
        ("crash:after_key@1.1+-1", "crash:after_key@1.1+-1"),
        ("duplicate@1.1", "duplicate@1.1"),
        ("outage:lost@5-2", "outage:lost@5-2"),
        ("outage:maybe@1-2", "outage:maybe@1-2"),
        ("outage:lost@1-inf", "outage:lost@1-inf"),
        ("lose:response@1.1,,lose:request@1.1", ""),
        ("lose:response@1.1, explode", "explode"),
        ("lose:response@" + "9" * 40, "lose:response@" + "9" * 40),
        ("LOSE:response@1.1", "LOSE:response@1.1"),
    ])
    def test_a_bad_token_is_one_line_naming_it_and_the_forms(self, text, token):
        """The error names the token as written and every allowed form."""
        with pytest.raises(InputError) as caught:
            parse_faults(text)
        line = caught.value.said("en")
        assert "\n" not in line
        assert line.startswith(f"bad fault {token!r}")
        assert FORMS in line
        assert "書ける形" in caught.value.said("ja")


class TestWithFaults:
    def test_the_story_runs_with_the_faults_given_instead_of_its_own(self):
        """Everything but the faults stays the story's, a variant's included."""
        story = pick(load("lost-response"), "gateway-504")
        changed = with_faults(story, parse_faults("lose:request@1.1"))
        assert changed.faults == [LoseMessage(message="request")]
        assert changed.variant == "gateway-504"
        assert changed.api == story.api and changed.expect == story.expect

    def test_a_duplicate_of_an_operation_the_story_lacks_is_refused(self):
        """The story's own checks apply: a duplicate must copy one of its operations."""
        with pytest.raises(InputError) as caught:
            with_faults(load("lost-response"), parse_faults("duplicate@3"))
        assert "--faults 'duplicate@3'" in str(caught.value)


class TestCommandLine:
    def test_run_faults_replaces_the_storys_faults(self, cli):
        """`run --faults` runs the main story with those faults: lost-response under naive with its lost 201 is
        two charges, with no fault one."""
        lost = json.loads(cli("run", "lost-response", "--design", "naive", "--faults", "lose:response@1.1",
                              "--format", "json").stdout)
        none = json.loads(cli("run", "lost-response", "--design", "naive", "--faults", "", "--format",
                              "json").stdout)
        assert (lost["summary"]["charges"], none["summary"]["charges"]) == (2, 1)
        assert lost["summary"]["faults"] == [{"fault": "lose the response of op 1 attempt 1", "fired": True}]
        assert none["summary"]["faults"] == [] and none["variants"] == [] == lost["variants"]

    def test_run_faults_with_a_variant_runs_that_variant_alone(self, cli):
        """With --variant, the variant's story, with the faults given."""
        out = json.loads(cli("run", "lost-response", "--variant", "gateway-504", "--faults", "lose:request@1.1",
                             "--format", "json").stdout)
        assert out["variant"] == "gateway-504" and out["variants"] == []
        assert out["summary"]["faults"][0]["fault"] == "lose the request of op 1 attempt 1"

    @pytest.mark.parametrize("command", ["run", "compare"])
    def test_a_bad_token_is_one_line_and_exit_2(self, cli, one_line, command):
        """The command's one-line error, in its language."""
        line = one_line(cli(command, "lost-response", "--faults", "lose:response@1.1,oops"))
        assert line.startswith("error: bad fault 'oops'")
        assert one_line(cli(command, "lost-response", "--faults", "oops", "--lang", "ja")).startswith("エラー: ")

    def test_compare_faults_runs_every_design_with_them(self, cli):
        """`compare --faults ''`: lost-response without its fault charges once under every design."""
        out = json.loads(cli("compare", "lost-response", "--faults", "", "--format", "json").stdout)
        assert [row["charges"] for row in out["rows"]] == [1] * len(out["rows"])
        lost = json.loads(cli("compare", "lost-response", "--faults", "lose:response@1.1", "--format",
                              "json").stdout)
        assert lost["rows"][0]["design"] == "naive" and lost["rows"][0]["charges"] == 2


    def test_the_command_that_reproduces_a_run_names_its_faults(self, cli):
        """`run --faults`'s text ends with the command that reproduces it, --faults included."""
        out = cli("run", "lost-response", "--faults", " lose:request@1 ", "--design", "naive").stdout
        assert " ".join(out.replace("\\\n", " ").split()).endswith(
            "reproduce: idemsim run lost-response --design naive --seed 1 --faults lose:request@1.1")


class TestTheDocs:
    DOC = (Path(__file__).resolve().parent.parent / "docs" / "scenarios.md").read_text(encoding="utf-8")
    SECTION = DOC.partition("## The fault syntax")[2].partition("\n## ")[0]

    def test_every_token_of_the_table_reads_and_is_canonical(self):
        """docs/scenarios.md's table of tokens: each reads, and is written back as it is (but the `@2` short form)."""
        tokens = re.findall(r"`([a-z_]+(?::[a-z_0-9]+)?@[0-9.+-]+)`", self.SECTION)
        assert len(tokens) >= 12
        for token in tokens:
            if token.count("@") == 1 and "." in token.split("@")[1] or token.startswith(("duplicate", "outage")):
                assert faults_text(parse_faults(token)) == token

    def test_the_quoted_error_is_what_run_prints(self, cli, one_line):
        """The error line the doc quotes is the command's."""
        quoted = re.search(r"```text\n(error: bad fault .*?)\n```", self.SECTION).group(1)
        token = re.search(r"'(.*?)'", quoted).group(1)
        assert one_line(cli("run", "lost-response", "--faults", token)) == quoted
