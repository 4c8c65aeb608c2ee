"""Hostile input (issue 10): whatever a user hands idemsim, it ends with a run or one `error:` line and exit 2.

One parametrised test per class of the issue: values the validation must refuse (generated from the models'
own fields, and the cases the issue found), runs that would go on for ever (each under a wall-clock guard,
so that a regression fails instead of hanging the suite), files the readers must refuse, output that must stay
strict JSON and escaped text, and side effects. A Hypothesis test then feeds random scenario documents over
the real field names to the loader and the simulation: a clean `InputError` or a run within its bound, never
another exception.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idemsim.base import fields
from idemsim.base.errors import InputError
from idemsim.base.printable import shown
from idemsim.base.readers import parse_toml
from idemsim.model.api import ApiConfig
from idemsim.model.client import ClientConfig, Operation
from idemsim.model.faults import Crash, DelayMessage, Duplicate, LoseMessage, Outage
from idemsim.model.network import Latency, Link
from idemsim.model.processor import ProcessorConfig
from idemsim.runners.simulation import simulate
from idemsim.scenario.schema import Arrivals, Expectation, load, runs, validate

ROOT = Path(__file__).resolve().parent.parent
HEADER = {"title": "t", "summary": "s"}
RANDOM_HEADER = {**HEADER, "name": "random"}


class Hang(Exception):
    """A command took longer than its guard allows."""


@contextmanager
def deadline(seconds: float):
    """Fail with `Hang` instead of waiting when the block runs longer than ``seconds`` of wall time."""

    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def toml_file(tmp_path: Path, document: dict[str, Any], name: str = "mine.toml") -> Path:
    path = tmp_path / name
    path.write_text(tomli_w.dumps({**HEADER, **document}), encoding="utf-8")
    return path


# -- 1. the validation layer, generated from the models ------------------------------------------------------
SECTIONS: dict[tuple, tuple[type, dict[str, Any]]] = {
    ("client",): (ClientConfig, {}),
    ("api",): (ApiConfig, {}),
    ("processor",): (ProcessorConfig, {}),
    ("network", "request"): (Link, {}),
    ("network", "request", "latency"): (Latency, {}),
    ("operations", 0): (Operation, {}),
    ("faults", 0, "delay"): (DelayMessage, {"kind": "delay", "message": "request", "seconds": 1.0}),
    ("faults", 0, "crash"): (Crash, {"kind": "crash", "point": "after_key"}),
    ("faults", 0, "duplicate"): (Duplicate, {"kind": "duplicate"}),
    ("expect", "same-tx"): (Expectation, {}),
}
"""Each section of the format, the model that validates it, and what else its table needs to be valid."""


def _atoms(annotation: Any, metadata: tuple = ()) -> list[tuple[Any, tuple]]:
    """The plain types a field accepts, each with the constraints attached to it."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *meta = get_args(annotation)
        return _atoms(base, (*metadata, *meta))
    if origin in (Union, UnionType):
        return [atom for arg in get_args(annotation) for atom in _atoms(arg, metadata)]
    return [(annotation, metadata)]


def _kind(info) -> str | None:
    atoms = [(t, m) for t, m in _atoms(info.annotation, tuple(info.metadata)) if t is not type(None)]
    types = {t for t, _ in atoms}
    if any(t is float and any(getattr(m, "func", None) is fields._within_bound for m in meta) for t, meta in atoms):
        return "time"
    if float in types:
        return "number"
    if bool in types:
        return "bool"
    if int in types:
        return "int"
    if any(get_origin(t) is Literal for t in types):
        return "word"
    return None


WRONG = {
    "time": [(math.inf, "finite number"), (math.nan, "finite number"), (1e8, r"at most 1e\+07 s"),
             (True, "valid number"), ("2", "valid number|a number of seconds")],
    "number": [(math.inf, "finite number"), (math.nan, "finite number"), (True, "valid number"),
               ("2", "valid number")],
    "int": [("3", "valid integer"), (2.5, "valid integer"), (True, "valid integer"), (2**70, "less than or equal")],
    "bool": [(0, "valid boolean"), ("yes", "valid boolean")],
    "word": [(1, "Input should be"), ("nonsense", "Input should be")],
}
"""Per kind of field: values that must be refused, and what the message must say (a regular expression)."""


def generated_cases() -> list:
    cases = []
    for (*where, ), (model, needs) in SECTIONS.items():
        table_path = tuple(p for p in where if p not in ("delay", "crash", "duplicate"))
        for name, info in model.model_fields.items():
            kind = _kind(info)
            if kind is None or name == "kind" or (model is Operation and name == "retry"):
                continue
            for value, says in WRONG[kind]:
                field = ".".join(str(p) for p in (*table_path, name))
                cases.append(pytest.param(table_path, {**needs, name: value}, field, says,
                                          id=f"{field}={value!r}"))
    return cases


def document_for(table_path: tuple, table: dict[str, Any]) -> dict[str, Any]:
    node: Any = table
    for part in reversed(table_path):
        node = [node] if isinstance(part, int) else {part: node}
    return node


class TestValidation:
    @pytest.mark.parametrize("table_path,table,field,says", generated_cases())
    def test_every_field_refuses_what_it_cannot_honour(self, table_path, table, field, says):
        """Every field of every section, generated from the models: strict types (no text read as a number,
        no number as a boolean), finite numbers, times within the run's bound; one line naming the source,
        the field and what is allowed. (Through the TOML reader and the validation; the CLI's part, the
        `error:` line and exit 2, is the same for every InputError and is checked below.)"""
        text = tomli_w.dumps({**HEADER, **document_for(table_path, table)})
        with pytest.raises(InputError) as refused:
            validate({"name": "mine", **parse_toml(text, "mine.toml")}, "mine.toml")
        line = str(refused.value)
        assert line.startswith(f"mine.toml: field '{field}'") and "\n" not in line, line
        assert re.search(says, line), line

    @pytest.mark.parametrize("set_,says", [
        ("client.timeout=1e400", "finite number"),
        ("client.timeout='2'", "valid number"),
        ("client.timeout=\"2\"", "valid number"),
        ("client.max_attempts='3'", "valid integer"),
        ("api.unique=0", "valid boolean"),
        ("api.fingerprint_check=yes", "valid boolean"),
        ("api.reap_every=1e-9", "greater than or equal to 0.001"),
        ("api.lease=1e-9", "greater than or equal to 0.001"),
        ("api.completer_every=sometimes", "a valid number or 'off'"),
        ("api.ttl=never", 'number of seconds or "forever"'),
        ("name=''", "at least 1 character"),
        ("compare=[]", "at least 1 item"),
        ("network.request.latency={dist='uniform', low=2.0, high=1.0}", "low <= high"),
        ("operations=[{body={amount='lots'}}]", "'amount', an integer from -2147483648 to 2147483647"),
        ("operations=[{body={amount=10.5}}]", "'amount', an integer"),
        ("operations=[{body={amount=1099511627776}}]", "'amount', an integer"),
        ("operations=[{body={}}]", "(has none)"),
        ("operations=[{method='PUT', path='/balance', body={}}]", "'value', an integer"),
        ("operations=[{method='PUT', path='/balance', body={value='x'}}]", "'value', an integer"),
        ("operations=[{path='/balance/decrement', body={amount='x'}}]", "'amount', an integer"),
        ("operations=[{body={amount=1, when=1979-05-27}}]", "TOML date"),
        ("operations=[{body={amount=1, x=nan}}]", "not a finite number"),
        ('operations=[{key="k\\u001b[2J"}]', "without control characters"),
        ("faults=[{kind='duplicate', op=5}]", "an operation to duplicate, from 1 to 1"),
        ("expect.same-tx.seen=['x']", "a valid integer or 'timeout'"),
    ])
    def test_accepted_but_wrong_is_refused(self, cli, one_line, set_, says):
        """What the issue saw accepted although clearly invalid, given through --set: refused in one line."""
        line = one_line(cli("run", "lost-response", "--set", set_))
        assert line.startswith(f"error: scenario 'lost-response', --set {shown(set_)}: field '"), line
        assert says in line, line

    @pytest.mark.parametrize("args,expected", [
        (["--set", "variants.TYPO.api.lease=1"],
         "error: --set 'variants.TYPO.api.lease=1': no variant 'TYPO'; variants: gateway-504"),
        (["--set", "..=1"],
         "error: --set '..=1': a field name is empty; expected section.field=value, e.g. client.timeout=1"),
        (["--variant", ""], "error: scenario 'lost-response' has no variant ''; variants: gateway-504"),
        (["--max-time", "nan"], "error: --max-time nan: must be a finite number of seconds > 0"),
        (["--max-time", "-1"], "error: --max-time -1: must be a finite number of seconds > 0"),
    ])
    def test_bad_options_are_one_line(self, cli, one_line, args, expected):
        """--set naming a variant that does not exist or an empty field, --variant '', a bad --max-time."""
        assert one_line(cli("run", "lost-response", *args)) == expected

    def test_an_integer_is_a_number(self, cli, tmp_path):
        """Strict, but not pedantic: an integer where a number is meant is accepted (timeout = 2)."""
        path = toml_file(tmp_path, {"client": {"timeout": 2}})
        assert cli("run", path).exit_code == 0

    def test_a_lost_message_of_a_missing_attempt_stays_legal_and_vacuous(self, cli):
        """Only a duplicate must name an existing operation; losing what never happens proves nothing."""
        result = cli("run", "lost-response", "--set", "faults=[{kind='lose', message='response', op=5}]",
                     "--format", "json")
        assert result.exit_code == 1
        assert json.loads(result.stdout)["summary"]["verdict"] == "vacuous"

    @pytest.mark.parametrize("value", ["x" * 1_000_000,
                                       pytest.param("[" + "1," * 50_000 + "1]", marks=pytest.mark.slow)])
    def test_a_huge_value_is_shortened(self, cli, one_line, value):
        """A 1 MB value is never echoed whole: the line stays short."""
        line = one_line(cli("run", "lost-response", "--set", f"client.timeout={value}"))
        assert "field 'client.timeout'" in line and len(line) < 300


# -- 2. every run is bounded -------------------------------------------------------------------------------------
class TestBounds:
    @pytest.mark.parametrize("set_,field", [
        ("client.timeout=inf", "client.timeout"),
        ("client.timeout=1e9", "client.timeout"),
        ("client.backoff=1e308", "client.backoff"),
        ("client.max_backoff=inf", "client.max_backoff"),
        ("client.max_attempts=100000", "client.max_attempts"),
        ("operations=[{at=1e308}]", "operations.0.at"),
        ("operations=[{at=inf}]", "operations.0.at"),
        ("api.charge_seconds=1e8", "api.charge_seconds"),
        ("api.reap_every=1e-9", "api.reap_every"),
        ("api.lease=1e-9", "api.lease"),
        ("faults=[{kind='delay', message='request', seconds=1e8}]", "faults.0.seconds"),
        ("faults=[{kind='crash', point='after_key', restart_after=1e8}]", "faults.0.restart_after"),
        ("network.request.latency={dist='exponential', mean=1e308}", "network.request.latency.mean"),
    ])
    def test_what_implies_a_longer_run_is_refused_up_front(self, cli, one_line, set_, field):
        """A single time longer than the bound (or a period too short to keep up with) is refused before
        anything runs, naming the field."""
        with deadline(10):
            line = one_line(cli("run", "lost-response", "--design", "committed-first", "--set", set_))
        assert f"field '{field}'" in line, line

    @pytest.mark.parametrize("sets,says", [
        (["client.timeout=9e6", "client.max_attempts=3", "network.response.loss=1.0", "api.ttl='forever'"],
         "did not end within 1e+07 s of simulated time"),
        (["faults=[{kind='delay', message='request', seconds=9e6}, {kind='delay', message='response', "
          "seconds=9e6}]", "client.timeout=1e7", "api.ttl='forever'"],
         "did not end within 1e+07 s of simulated time"),
        (["api.reap_every=0.001", "client.timeout=9e6", "client.max_attempts=2", "network.response.loss=1.0"],
         "did not end within 20,200 simulation events"),
    ])
    def test_a_run_that_goes_on_stops_with_one_line(self, cli, one_line, monkeypatch, sets, says):
        """What only the run reveals stops at the bound: one line naming it, exit 2, within seconds (the
        events' bound lowered here to keep the suite fast; at its real value, 250,000 events and 100 an
        attempt, it takes about 3 s)."""
        monkeypatch.setattr("idemsim.runners.simulation.MAX_EVENTS", 20_000)
        with deadline(20):
            line = one_line(cli("run", "lost-response", "--variant", "gateway-504", "--set", "api.gateway_timeout=none",
                                *[a for s in sets for a in ("--set", s)]))
        assert says in line and "the bound on a run" in line, line

    @pytest.mark.slow
    def test_an_exploration_stops_at_the_first_run_past_its_bound(self, cli, one_line, monkeypatch):
        """explore does not shrink a run that passed its bound (each would take seconds): one line at once."""
        monkeypatch.setattr("idemsim.runners.simulation.MAX_EVENTS", 20_000)
        with deadline(20):
            line = one_line(cli("explore", "same-tx", "--set", "client.timeout=9e6", "--set", "api.reap_every=0.001",
                                "--max-examples", "20"))
        assert line.startswith("error: explore, design same-tx: the run did not end within 20,300"), line

    @pytest.mark.parametrize("sets", [
        pytest.param(["client.max_attempts=1100", "network.request.loss=1.0"], marks=pytest.mark.slow),
        ["client.multiplier=1e200", "client.max_attempts=5", "network.request.loss=1.0"],
        ["client.multiplier=1e300", "client.backoff=1e7", "client.max_backoff=5", "client.max_attempts=4",
         "network.request.loss=1.0"],
    ])
    def test_large_retry_policies_finish(self, cli, sets):
        """No overflow: the backoff is capped before it grows past a float; the run ends (its expectation of
        one charge fails: exit 1)."""
        with deadline(10):
            result = cli("run", "lost-response", "--variant", "gateway-504", "--format", "json",
                         *[a for s in sets for a in ("--set", s)])
        assert result.exit_code == 1, result.output
        assert json.loads(result.stdout)["summary"]["charges"] == 0

    def test_max_time_raises_the_bound(self, cli, one_line, tmp_path):
        """A timeout of 2e7 s is refused by default and runs with --max-time 1e8; --max-time 10 lowers it."""
        path = toml_file(tmp_path, {"client": {"timeout": 2e7}})
        assert "--max-time raises it" in one_line(cli("run", path))
        assert cli("run", path, "--max-time", "1e8").exit_code == 0
        assert "at most 10 s" in one_line(cli("run", "lost-response", "--max-time", "10",
                                              "--set", "client.timeout=11"))
        for command in ("compare", "show", "plot"):
            assert "at most 10 s" in one_line(cli(command, "lost-response", "--max-time", "10",
                                                  "--set", "client.timeout=11"))
        assert "at most 10 s" in one_line(cli("explore", "same-tx", "--max-time", "10",
                                              "--set", "client.timeout=11"))

    def test_simulate_takes_its_own_bounds(self):
        """From Python, simulate() bounds time and events too, and says so with an InputError."""
        scenario = load("lost-response")
        with pytest.raises(InputError, match="within 1 s of simulated time"):
            simulate(scenario, max_time=1.0)
        with pytest.raises(InputError, match="within 10 simulation events"):
            simulate(scenario, max_events=10)


# -- 3. readers ----------------------------------------------------------------------------------------------
def _bytes_cases() -> list:
    text = 'title = "t"\nsummary = "s"\n'
    return [
        pytest.param(text.encode("utf-16"), "is UTF-16 (it starts with a UTF-16 byte order mark)", id="utf-16"),
        pytest.param(text.encode("utf-32"), "is UTF-32", id="utf-32"),
        pytest.param(text.encode("utf-16-le"), "contains NUL bytes", id="utf-16-no-bom"),
        pytest.param(b"\x7fELF\x02\x01\x00\xff\xfe", "not UTF-8 (byte 0xff at offset 7)", id="binary"),
        pytest.param(text.encode() + b"story = '\xe9t\xe9'\n", "not UTF-8 (byte 0xe9", id="latin-1"),
        pytest.param(("x = " + "[" * 100_000 + "]" * 100_000).encode(), "nested too deeply to read", id="deep-arrays"),
        pytest.param((text + "[[operations]]\nbody = " + "{a=" * 500 + "1" + "}" * 500).encode(),
                     "nested too deeply to read", id="deep-body"),
        pytest.param((text + "[" + ".".join(["a"] * 2000) + "]\n").encode(), "nested more than 100 levels deep",
                     id="deep-table-header"),
        pytest.param((text + "seed = " + "9" * 5000 + "\n").encode(), "an integer has too many digits", id="long-int"),
        pytest.param((text + "title = \n").encode(), "not valid TOML", id="not-toml"),
    ]


class TestReaders:
    @pytest.mark.parametrize("data,says", _bytes_cases())
    def test_what_is_not_a_utf8_toml_file_is_one_line(self, cli, one_line, tmp_path, data, says):
        """Other encodings, binary, deep nesting, an integer too long: one line naming the file."""
        path = tmp_path / "mine.toml"
        path.write_bytes(data)
        line = one_line(cli("run", path))
        assert line.startswith(f"error: {path}: ") and says in line, line

    def test_utf8_with_a_byte_order_mark_is_read(self, cli, tmp_path):
        """A file saved by an editor that writes a UTF-8 BOM runs like any other."""
        path = tmp_path / "mine.toml"
        path.write_bytes(b"\xef\xbb\xbf" + 'title = "t"\nsummary = "s"\n'.encode())
        assert cli("run", path).exit_code == 0

    @pytest.mark.parametrize("make,kind", [
        (lambda p: p.mkdir(), "a directory"),
        (lambda p: os.mkfifo(p), "a FIFO (named pipe)"),
    ])
    @pytest.mark.parametrize("name", ["mine.toml", "mine"])
    def test_a_path_that_is_not_a_file_is_named(self, cli, one_line, tmp_path, make, kind, name):
        """A directory or a FIFO (never opened: it would block) is named as what it is."""
        path = tmp_path / name
        make(path)
        with deadline(10):
            assert one_line(cli("run", path)) == f"error: {path}: is {kind}, not a scenario file"

    def test_a_device_is_named(self, cli, one_line):
        assert one_line(cli("run", "/dev/null")) == "error: /dev/null: is a character device, not a scenario file"

    @pytest.mark.parametrize("name,says", [
        ("", "give a scenario's name"),
        ("n" * 5000, "unknown scenario 'nnnnn"),
        ("n" * 5000 + ".toml", "no such scenario file"),
    ])
    def test_odd_names_are_one_short_line(self, cli, one_line, name, says):
        line = one_line(cli("run", name))
        assert says in line and len(line) < 1000


# -- 4. output -----------------------------------------------------------------------------------------------
def strict_json(text: str) -> Any:
    """JSON as a strict parser reads it: NaN and Infinity are errors."""

    def refuse(constant: str) -> None:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def strings(value: Any) -> set[str]:
    """Every string in a JSON document."""
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values()), value)
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value))
    return {value} if isinstance(value, str) else set()


HOSTILE_TEXT = "a\x1b[2Jb\x00c\x07d\x9be\u202ef"
"""ESC (a terminal escape), NUL, BEL, a C1 CSI, a right-to-left override."""


def hostile_file(tmp_path: Path) -> Path:
    return toml_file(tmp_path, {"title": HOSTILE_TEXT, "summary": HOSTILE_TEXT, "group": HOSTILE_TEXT,
                                "story": HOSTILE_TEXT,
                                "operations": [{"client": HOSTILE_TEXT, "key": "k-1",
                                                "body": {"amount": 1000, "note": HOSTILE_TEXT}}],
                                "variants": {"v\x1bx": {"title": HOSTILE_TEXT}}})


class TestOutput:
    @pytest.mark.parametrize("args", [
        ["run", "{file}", "--format", "json"],
        ["run", "{file}", "--format", "json", "--variant", "v\x1bx"],
        ["compare", "{file}", "--format", "json"],
        pytest.param(["explore", "naive", "--format", "json", "--max-examples", "5"], marks=pytest.mark.slow),
        ["explore", "same-tx", "--format", "json", "--exhaustive", "--max-faults", "1"],
    ])
    def test_json_is_strict_and_escapes_what_a_terminal_would_act_on(self, cli, tmp_path, args):
        """Every JSON output parses with a strict parser, keeps the input's characters, and carries no
        control character raw."""
        path = hostile_file(tmp_path)
        result = cli(*[a.replace("{file}", str(path)) for a in args])
        assert result.exit_code in (0, 1), result.output
        document = strict_json(result.stdout)
        assert all(line.isprintable() for line in result.stdout.splitlines())
        if "{file}" in args:
            assert HOSTILE_TEXT in strings(document)


    @pytest.mark.parametrize("command", [["run"], ["run", "--brief"], ["show"], ["compare"],
                                         ["run", "--format", "mermaid"]])
    def test_text_escapes_control_characters(self, cli, tmp_path, command):
        """Text views (and Mermaid) show control characters from the input as escapes, never raw."""
        path = hostile_file(tmp_path)
        result = cli(command[0], path, *command[1:])
        assert result.exit_code in (0, 1), result.output
        assert all(line.isprintable() for line in result.stdout.splitlines()), result.stdout
        if command[-1] != "mermaid":
            assert "a\\x1b[2Jb\\x00c\\x07d\\x9be\\u202ef" in result.stdout

    def test_names_are_never_read_as_rich_markup(self, tmp_path):
        """A name such as ``[/bold]`` is shown as written by every text view, even on a Console that reads
        markup (a notebook's, say): never a MarkupError."""
        import io

        from rich.console import Console

        from idemsim.runners.compare import compare
        from idemsim.views.terminal import print_comparison, print_run, print_show

        markup = "[/bold] [red]x[/red] [/]"
        path = toml_file(tmp_path, {"name": markup, "title": markup, "group": markup, "story": markup,
                                    "operations": [{"client": markup, "body": {"amount": 1}},
                                                   {"client": "b", "at": 1.0, "body": {"amount": 1}}],
                                    "variants": {markup: {"title": markup}}})
        scenario = load(str(path))
        out = io.StringIO()
        console = Console(file=out, width=100)
        print_run(console, simulate(scenario), None, markup)
        print_run(console, simulate(scenario), None, markup, brief=True)
        print_comparison(console, compare(scenario))
        print_show(console, scenario, runs(scenario))
        assert out.getvalue().count(markup) >= 6

    def test_error_messages_escape_control_characters(self, cli, one_line, tmp_path):
        """A bad value or a file name with control characters or a newline is still one printable line."""
        line = one_line(cli("run", "lost-response", "--set", "client.timeout='\x1b[2J\nx'"))
        assert line.isprintable() and "\\x1b[2J\\nx" in line
        path = tmp_path / "a\x1b[2J\nb.toml"
        line = one_line(cli("run", path))
        assert line.isprintable() and line.endswith("b.toml: no such scenario file")

    def test_compare_of_a_file_names_the_file_in_its_commands(self, cli, tmp_path, monkeypatch):
        """`compare mine.toml` prints commands that run mine.toml, not a scenario called mine."""
        monkeypatch.chdir(tmp_path)
        toml_file(tmp_path, {})
        out = cli("compare", "mine.toml").stdout.replace(" \\\n    ", " ")
        assert "idemsim run mine.toml --design DESIGN --seed 1" in out


def idemsim_command() -> list[str]:
    """The installed console script (or its entry point run by this Python)."""
    exe = Path(sys.executable).with_name("idemsim")
    return [str(exe)] if exe.exists() else [sys.executable, "-c", "from idemsim.cli.app import main; main()"]


def idemsim_process(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*idemsim_command(), *args], capture_output=True, timeout=60,
                          env={**os.environ, "COLUMNS": "100", **(env or {})}, **kwargs)


@pytest.mark.slow
class TestStandardOutput:
    """Real processes: what a terminal, a pipe or a full disk does to standard output."""

    @pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
    @pytest.mark.parametrize("args", [["run", "lost-response"], ["run", "lost-response", "--format", "json"]])
    def test_a_full_disk_is_one_line(self, args):
        with open("/dev/full", "w") as full:
            done = subprocess.run([*idemsim_command(), *args], stdout=full,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr == "error: cannot write to standard output: No space left on device\n"

    @pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
    def test_the_systems_reason_is_said_in_the_commands_language(self):
        """Under IDEMSIM_LANG=ja the line is Japanese through to the system's reason, not its English words."""
        with open("/dev/full", "w") as full:
            done = subprocess.run([*idemsim_command(), "run", "lost-response"], stdout=full, stderr=subprocess.PIPE,
                                  text=True, timeout=60, env={**os.environ, "IDEMSIM_LANG": "ja"})
        assert done.returncode == 2
        assert done.stderr == "エラー: 標準出力に書き込めません: デバイスに空き領域がありません\n"

    def test_a_closed_standard_output_is_one_line(self):
        """`idemsim run … >&-`: Python has no sys.stdout at all; still one line, exit 2."""
        done = subprocess.run([*idemsim_command(), "run", "lost-response"], stderr=subprocess.PIPE, text=True,
                              preexec_fn=lambda: os.close(1), timeout=60)
        assert done.returncode == 2
        assert done.stderr == "error: cannot write to standard output: Bad file descriptor\n"

    def test_a_closed_pipe_ends_quietly(self):
        """`idemsim run … | head -1`: exit 141 and nothing on stderr, as a Unix tool does."""
        process = subprocess.Popen([*idemsim_command(), "run", "lost-response"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        process.stdout.readline()
        process.stdout.close()
        stderr = process.stderr.read()
        assert process.wait(timeout=60) == 141
        assert stderr == b""

    @pytest.mark.parametrize("args", [["run", "lost-response", "--lang", "ja"], ["show", "lost-response"],
                                      ["compare", "lost-response"], ["list"]])
    def test_an_ascii_terminal_gets_replacements(self, args):
        """PYTHONIOENCODING=ascii: text views replace what cannot be shown, never a traceback."""
        done = idemsim_process(*args, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, done.stderr
        assert done.stderr == b"" and done.stdout.isascii()

    def test_an_ascii_terminal_gets_json_escapes(self):
        """JSON stays exact under PYTHONIOENCODING=ascii: every other character is a \\u escape."""
        done = idemsim_process("run", "lost-response", "--lang", "ja", "--format", "json",
                               env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0 and done.stdout.isascii()
        assert strict_json(done.stdout)["summary"]["charges"] == 1


# -- 5. side effects -----------------------------------------------------------------------------------------
class TestSideEffects:
    def test_explore_leaves_an_empty_directory_empty(self, tmp_path):
        """`idemsim explore same-tx --max-examples 30` in an empty directory writes nothing there."""
        done = idemsim_process("explore", "same-tx", "--max-examples", "30", cwd=tmp_path)
        assert done.returncode in (0, 1), done.stderr
        assert list(tmp_path.iterdir()) == []

    @pytest.mark.parametrize("args", [
        ["run", "lost-response", "--set", "client.timeout=inf"],
        ["compare", "lost-response", "--set", "client.timeout=inf"],
        ["plot", "lost-response", "--set", "client.timeout=inf", "-o", "out.png"],
        ["explore", "naive", "--set", "client.timeout=inf", "--save", "cx.toml"],
        ["explore", "naive", "--save", ""],
    ])
    def test_bad_input_writes_nothing(self, cli, one_line, tmp_path, monkeypatch, args):
        """Refused input leaves the working directory as it was."""
        monkeypatch.chdir(tmp_path)
        one_line(cli(*args))
        assert list(tmp_path.iterdir()) == []


# -- 6. random documents -----------------------------------------------------------------------------------
HOSTILE = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70),
    st.sampled_from([1e-9, 1e8, 1e308, -1, 0, "", "3", "yes", True]),
    st.text(max_size=20), st.text(alphabet=st.characters(codec="utf-8", categories=["Cc", "Cf"]), max_size=5),
    st.just("x" * 10_000), st.dates(), st.none(), st.lists(st.integers(), max_size=3),
    st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                                          max_size=2), max_leaves=5),
)
"""Values no field should take as they are: wrong types, NaN and infinities, huge and negative numbers, long
text, control characters, dates, nesting."""


def plausible(info) -> st.SearchStrategy:
    """A value a user could well mean for a field, from its annotation: a small time, a small count, one of
    its words, a boolean."""
    atoms = [t for t, _ in _atoms(info.annotation, tuple(info.metadata)) if t is not type(None)]
    words = [w for t in atoms if get_origin(t) is Literal for w in get_args(t)]
    kind = _kind(info)
    options = [st.sampled_from(words)] if words else []
    if kind == "time":
        options.append(st.floats(0.001, 3.0))
    elif kind == "number":
        options.append(st.floats(0.0, 1.0) | st.floats(1.0, 3.0))
    elif kind == "int":
        options.append(st.integers(1, 4))
    elif kind == "bool":
        options.append(st.booleans())
    return st.one_of(options) if options else st.nothing()


def section(draw, model: type, hostile: bool, skip: tuple = ()) -> dict[str, Any]:
    """A table of ``model``'s fields: plausible values, and in a hostile document some hostile ones and a typo."""
    names = [n for n, info in model.model_fields.items() if n not in skip and not plausible(info).is_empty]
    chosen = draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    table = {}
    for name in chosen:
        bad = hostile and draw(st.integers(0, 2)) == 0
        table[name] = draw(HOSTILE if bad else plausible(model.model_fields[name]))
    if hostile and draw(st.integers(0, 4)) == 0:
        table["typo"] = draw(HOSTILE)
    return table


REQUESTS = [("POST", "/charges", "amount"), ("PUT", "/balance", "value"), ("POST", "/balance/decrement", "amount"),
            ("PUT", "/items/1", "name"), ("GET", "/items/1", None), ("DELETE", "/items/1", None)]


@st.composite
def documents(draw) -> dict[str, Any]:
    """A scenario document over the real field names; half of them hostile somewhere."""
    hostile = draw(st.booleans())
    doc: dict[str, Any] = dict(RANDOM_HEADER)
    for name, model in (("client", ClientConfig), ("api", ApiConfig), ("processor", ProcessorConfig)):
        if draw(st.booleans()):
            doc[name] = section(draw, model, hostile)
    if draw(st.booleans()):
        doc["network"] = {"request": {**section(draw, Link, hostile, skip=("latency",)),
                                      "latency": section(draw, Latency, hostile)}}
    if draw(st.booleans()):
        operations = []
        for _ in range(draw(st.integers(1, 3))):
            method, path, needs = draw(st.sampled_from(REQUESTS))
            operation = {**section(draw, Operation, hostile, skip=("method", "path", "body", "retry", "key")),
                         "method": method, "path": path}
            if needs:
                amount = HOSTILE if hostile and draw(st.booleans()) else st.integers(-5, 5000)
                operation["body"] = {needs: draw(amount)}
            operations.append(operation)
        doc["operations"] = operations
    if draw(st.booleans()):
        faults = []
        for model, needs in ((LoseMessage, {"kind": "lose", "message": "response"}),
                             (DelayMessage, {"kind": "delay", "message": "request", "seconds": 1.0}),
                             (Crash, {"kind": "crash", "point": "before_commit"}),
                             (Duplicate, {"kind": "duplicate"}),
                             (Outage, {"kind": "outage", "from": 0.5, "until": 1.5})):
            if draw(st.booleans()):
                faults.append({**needs, **section(draw, model, hostile, skip=("kind", "message", "point"))})
        doc["faults"] = faults
    if draw(st.booleans()):
        doc["arrivals"] = section(draw, Arrivals, hostile, skip=("operation",))
    if draw(st.booleans()):
        doc["expect"] = {"same-tx": section(draw, Expectation, hostile)}
    if hostile and draw(st.booleans()):
        doc[draw(st.sampled_from(["seed", "design", "compare", "name", "variants", "title"]))] = draw(HOSTILE)
    return doc


MAX_TIME = 1000.0


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(documents(), st.sampled_from(["naive", "same-tx", "committed-first", "recovery-points"]))
def test_random_documents_load_and_run_or_fail_cleanly(document, design):
    """Random scenario documents over the real field names with hostile values: either one clean InputError
    line, or a run that stays within its bound and gives strict JSON; never another exception, never a hang."""
    with deadline(20):
        try:
            try:
                text = tomli_w.dumps(document)
            except (TypeError, ValueError):  # None, or an integer TOML cannot write: straight to the validation
                raw = document
            else:
                raw = parse_toml(text, "random.toml")
            scenario = validate(raw, "random.toml", max_time=MAX_TIME)
            for story in runs(scenario):
                run = simulate(story, design, max_events=20_000)
                assert all(event.t <= MAX_TIME for event in run.trace)
                json.dumps(run.to_dict(), allow_nan=False)
        except InputError as e:
            assert str(e).startswith(("random.toml", "scenario")), e
