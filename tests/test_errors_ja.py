"""Every error line in both languages (issue 16): no message ships untranslated.

An `InputError` is raised with a message id of the catalogue and its fields, never with a sentence: an AST walk
over idemsim/ checks every raise, every `Message` and every validation problem idemsim raises itself. Then the
common errors are read end to end through the command line, in Japanese: one line on stderr, exit code 2, no
traceback, naming the file, the field and what is allowed; and so are the usage errors the parser finds.
"""

from __future__ import annotations

import ast
import os
import pickle
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w
from hypothesis import HealthCheck, given, settings
from test_hostile import HEADER, document_for, documents, generated_cases

from idemsim.base.errors import InputError, Message
from idemsim.base.i18n import MESSAGES
from idemsim.base.readers import parse_toml
from idemsim.scenario.schema import validate

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "idemsim").rglob("*.py"))


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def error_classes() -> set[str]:
    """`InputError` and every class in idemsim/ that derives from one (`DesignError`, `PostgresUnavailable`)."""
    names = {"InputError"}
    classes = [node for path in SOURCES for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef)]
    grown = True
    while grown:
        before = len(names)
        names |= {c.name for c in classes if any(isinstance(b, ast.Name) and b.id in names for b in c.bases)}
        grown = len(names) > before
    return names


def imports_from_errors(tree: ast.Module, name: str) -> bool:
    return any(isinstance(node, ast.ImportFrom) and (node.module or "").endswith("errors")
               and any(alias.name == name for alias in node.names) for node in ast.walk(tree))


def calls(names: set[str], *, imported: str | None = None):
    """(file, line, call) for every call in idemsim/ of a function or class named in ``names`` (only in the
    modules that import ``imported`` from `idemsim.base.errors`, when given)."""
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if imported and path.name != "errors.py" and not imports_from_errors(tree, imported):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
                if name in names:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", node


def constant_ids(node: ast.expr) -> list[str] | None:
    """The message ids a first argument can be: a string, or a choice between strings; None when computed."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = constant_ids(node.body), constant_ids(node.orelse)
        return body + orelse if body is not None and orelse is not None else None
    return None


def missing_fields(call: ast.Call, message: str) -> set[str]:
    """The fields of ``message``'s English that ``call`` does not fill (none when it passes ``**fields``)."""
    given = {k.arg for k in call.keywords}
    return set() if None in given else fields(MESSAGES[message]["en"]) - given


class TestEveryErrorComesFromTheCatalogue:
    @pytest.mark.slow
    def test_every_input_error_is_raised_with_a_message_id_and_its_fields(self):
        """Every `InputError` (and subclass) in idemsim/ names a message of the catalogue and fills its fields."""
        found, bad = 0, []
        for where, call in calls(error_classes()):
            if where.startswith("idemsim/base/errors.py"):
                continue  # the class itself rebuilding an error from its message
            found += 1
            ids = constant_ids(call.args[0]) if call.args else None
            if not ids or not all(i.startswith(("err.", "usage.")) and i in MESSAGES for i in ids):
                bad.append(f"{where}: {ast.unparse(call)[:80]}")
            elif any(missing_fields(call, i) for i in ids):
                bad.append(f"{where}: fields {sorted(set().union(*(missing_fields(call, i) for i in ids)))} unfilled")
        assert found >= 78
        assert bad == []

    @pytest.mark.slow
    def test_every_message_built_for_an_error_exists_with_its_fields(self):
        """Every `Message("id", …)` with a written id names a message of the catalogue and fills its fields."""
        bad = []
        for where, call in calls({"Message"}, imported="Message"):
            ids = constant_ids(call.args[0]) if call.args else None
            for message in ids or ():
                if message not in MESSAGES:
                    bad.append(f"{where}: no message {message!r}")
                elif missing_fields(call, message):
                    bad.append(f"{where}: {message} misses {sorted(missing_fields(call, message))}")
        assert bad == []

    @pytest.mark.slow
    def test_every_validation_problem_idemsim_raises_is_worded_in_the_catalogue(self):
        """`invalid("kind", …)` names a ``pyd.kind`` message and fills it; no validator raises its own sentence."""
        bad = []
        for where, call in calls({"invalid"}):
            kind = call.args[0].value
            if f"pyd.{kind}" not in MESSAGES:
                bad.append(f"{where}: no message pyd.{kind}")
            elif missing_fields(call, f"pyd.{kind}"):
                bad.append(f"{where}: pyd.{kind} misses {sorted(missing_fields(call, f'pyd.{kind}'))}")
        direct = [where for where, _ in calls({"PydanticCustomError"})
                  if not where.startswith("idemsim/base/fields.py")]
        assert bad == [] and direct == []

    def test_no_error_line_is_written_in_english_by_hand(self):
        """No module prints ``error: …`` itself: every error line goes through the catalogue's ``error``."""
        written = [f"{path.relative_to(ROOT)}" for path in SOURCES if path.name != "i18n.py"
                   and re.search(r"""f?["']error: """, path.read_text(encoding="utf-8"))]
        assert written == []

    def test_the_systems_reasons_are_its_own_english_and_japanese(self):
        """A reason the system gives (an `OSError`) is said in its own English words (C's strerror), and in Japanese;
        one the catalogue lacks stays the system's words."""
        import errno

        from idemsim.base.errors import os_reason

        for name in (m[3:] for m in MESSAGES if m.startswith("os.")):
            code = getattr(errno, name)
            reason = os_reason(OSError(code, os.strerror(code)))
            assert reason.said("en") == os.strerror(code) and reason.said("ja") == MESSAGES[f"os.{name}"]["ja"]
        assert os_reason(OSError(errno.EXDEV, "Invalid cross-device link")) == "Invalid cross-device link"
        error = InputError("err.cannot_read", file="x.toml", reason=os_reason(FileNotFoundError(errno.ENOENT, "")))
        assert error.message.said("ja") == "x.toml: 読めません: そのようなファイルやディレクトリはありません"

    @pytest.mark.parametrize("document, japanese", [
        ("title = \n", "正しくない値です（1 行 9 列目）"),
        ("a = 1\na = 2\n", "値は上書きできません（2 行 6 列目）"),
        ("x = 'abc\n", "\"'\" が必要です（文書の終わり）"),
        ("[t\n", "テーブルの宣言の終わりに ']' がありません（1 行 3 列目）"),
        ("[[t\nx=1", "配列の宣言の終わりに ']]' がありません（1 行 4 列目）"),
        ("a = [1, 2\n", "配列が閉じていません（文書の終わり）"),
        ("a = {b = 1\n", "インラインテーブルが閉じていません（1 行 11 列目）"),
        ("a = \"\\q\"\n", "文字列の中にエスケープされていない '\\' があります（1 行 8 列目）"),
        ("a = 1 b = 2\n", "文の後には改行か文書の終わりが必要です（1 行 7 列目）"),
        ("= 1\n", "正しくない文です（1 行 1 列目）"),
        ("a = \"\\uD800\"\n", "エスケープした文字が Unicode のスカラー値ではありません（1 行 12 列目）"),
        ("a = {b = 1, b = 2}\n", "インラインテーブルのキー 'b' が重複しています（1 行 18 列目）"),
        ("a = \"x\x01\"\n", "使えない文字 '\\x01' です（1 行 7 列目）"),
        ("[a]\nb=1\n[a]\n", "('a',) は二度宣言できません（3 行 3 列目）"),
        ("a = {b=1}\na.c = 2\n", "変更できない名前空間 ('a',) は変更できません（2 行 8 列目）"),
        ("x = 'a\nb'\n", "使えない文字 '\\n' があります（1 行 7 列目）"),
        ('"\\u00"=1', "16 進の値が正しくありません（1 行 4 列目）"),
    ])
    def test_the_toml_parsers_reasons_are_its_own_english_and_japanese(self, document, japanese):
        """A reason TOML's parser gives is said in its own English words, where it stopped included, and in
        Japanese."""
        import tomllib

        from idemsim.base.readers import toml_reason

        with pytest.raises(tomllib.TOMLDecodeError) as refused:
            tomllib.loads(document)
        reason = toml_reason(refused.value)
        assert reason.said("en") == str(refused.value) and reason.said("ja") == japanese

    def test_an_error_keeps_its_message_across_processes(self):
        """A pickled error (a sweep's worker) comes back with its message id and fields, in either language."""
        error = pickle.loads(pickle.dumps(InputError("err.no_such_file", file="x.toml")))
        assert (str(error), error.said("ja")) == ("x.toml: no such file", "x.toml: ファイルがありません")

    def test_a_field_may_be_a_phrase_said_in_the_same_language(self):
        """A `Message` inside a message, and a list of them, is said in the language of the whole."""
        error = InputError("err.is_not", file="d", kind=Message("err.kind.directory"),
                           what=Message("err.what.scenario"))
        assert error.said("en") == "d: is a directory, not a scenario file"
        assert error.said("ja") == "d: ディレクトリです。シナリオファイルではありません"
        listed = Message("err.run_settle", design="'x'", seconds=60.0,
                         working=[Message("err.run_handler", name="api#1", request="1.1"), "completer"])
        assert "api#1（要求 1.1）, completer" in listed.said("ja")


class TestEveryValidationProblemInJapanese:
    @pytest.mark.parametrize("table_path,table,field,says", generated_cases())
    def test_every_field_is_refused_in_japanese(self, table_path, table, field, says):
        """Every field of every section refuses a wrong value in Japanese, naming the file and the field, with
        no English of pydantic left (the cases of test_hostile, generated from the models)."""
        text = tomli_w.dumps({**HEADER, **document_for(table_path, table)})
        with pytest.raises(InputError) as refused:
            validate({"name": "mine", **parse_toml(text, "mine.toml")}, "mine.toml")
        line = refused.value.said("ja")
        assert line.startswith(f"mine.toml: 項目 '{field}': ") and "\n" not in line, line
        assert not re.search(r"Input should|Value error|should have", line), line

    @pytest.mark.slow
    @settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))
    @given(documents())
    def test_random_documents_are_refused_in_japanese(self, document):
        """A random scenario document over the real field names that fails validation fails in Japanese."""
        try:
            validate(document, "random.toml", max_time=1000.0)
        except InputError as e:
            line = e.said("ja")
            assert line.startswith("random.toml: ") and "\n" not in line, line
            assert not re.search(r"Input should|Value error|should have|unknown field|is required", line), line


def japanese_line(result) -> str:
    """The one line a bad input prints under --lang ja: exit code 2, no traceback, Japanese from its first word."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("エラー: ")
    return lines[0]


class TestCommonErrorsInJapanese:
    def test_an_unknown_scenario_names_the_valid_ones(self, cli):
        """`idemsim run no-such-scenario --lang ja` says the scenario does not exist and lists the valid names."""
        line = japanese_line(cli("run", "no-such-scenario", "--lang", "ja"))
        assert line.startswith("エラー: シナリオ 'no-such-scenario' はありません。使える名前: ")
        assert "lost-response" in line and line.endswith("（または .toml ファイルへのパス）")

    def test_a_bad_set_names_the_scenario_the_set_and_the_field(self, cli, monkeypatch):
        """Under IDEMSIM_LANG=ja, a timeout that is not a number names the scenario, the --set, the field, the
        problem and the value."""
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        assert japanese_line(cli("run", "lost-response", "--set", "client.timeout=abc")) == (
            "エラー: シナリオ 'lost-response'、--set 'client.timeout=abc': 項目 'client.timeout': "
            "数でなければなりません（値 'abc'）")

    def test_a_bad_scenario_file_names_the_file_the_field_and_the_bound(self, cli, tmp_path):
        """A probability of 1.5 in a file names the file, the field and the bound, in Japanese."""
        bad = tmp_path / "bad.toml"
        bad.write_text('title = "t"\nsummary = "s"\n[network.request]\nloss = 1.5\n', encoding="utf-8")
        assert japanese_line(cli("run", bad, "--lang", "ja")) == (
            f"エラー: {bad}: 項目 'network.request.loss': 1 以下でなければなりません（値 1.5）")

    def test_an_unknown_field_lists_the_allowed_ones(self, cli, tmp_path):
        """A misspelt field is named with the fields allowed there."""
        bad = tmp_path / "bad.toml"
        bad.write_text('title = "t"\nsummary = "s"\n[client]\ntimout = 1\n', encoding="utf-8")
        line = japanese_line(cli("run", bad, "--lang", "ja"))
        assert line.startswith(f"エラー: {bad}: 不明な項目 'client.timout'。使える項目: timeout, max_attempts")

    def test_a_file_that_is_not_toml_is_named(self, cli, tmp_path):
        """A file that is not TOML is named; the parser's reason follows, in Japanese, with where it stopped."""
        bad = tmp_path / "bad.toml"
        bad.write_text("title = \n", encoding="utf-8")
        assert japanese_line(cli("run", bad, "--lang", "ja")) == (
            f"エラー: {bad}: TOML として正しくありません: 正しくない値です（1 行 9 列目）")

    def test_a_sweep_with_nothing_to_vary_says_what_to_give(self, cli):
        """`idemsim sweep lost-response --lang ja` has no grid: it says to give --vary."""
        assert japanese_line(cli("sweep", "lost-response", "--lang", "ja", "--quiet")) == (
            "エラー: lost-response: 変える値がありません。--vary FIELD=V1,V2,… を指定してください"
            "（シナリオに [sweep] の格子がありません）")

    def test_an_unknown_design_lists_the_six(self, cli):
        """An unknown design names the six designs and the form of one's own."""
        assert japanese_line(cli("run", "lost-response", "--design", "magic", "--lang", "ja")) == (
            "エラー: 設計 'magic' はありません。使える設計: naive, check-then-insert, same-tx, committed-first, "
            "split-tx, recovery-points（または path/to/file.py:function）")

    def test_an_unknown_variant_lists_the_variants(self, cli):
        """An unknown variant names the scenario and its variants."""
        line = japanese_line(cli("run", "lost-response", "--variant", "nope", "--lang", "ja"))
        assert line.startswith("エラー: シナリオ 'lost-response' にバリアント 'nope' はありません。バリアント: ")

    def test_a_variant_with_a_bad_field_is_named_as_a_variant(self, cli):
        """A --set that breaks a variant names the scenario, the variant, the set and the field."""
        line = japanese_line(cli("run", "lost-response", "--lang", "ja",
                                 "--set", "variants.gateway-504.client.timeout=-1"))
        assert line.startswith("エラー: シナリオ 'lost-response'（バリアント 'gateway-504'）、--set ")
        assert "項目 'client.timeout': 0 より大きくなければなりません（値 -1" in line

    def test_a_directory_given_as_a_scenario_is_called_one(self, cli, tmp_path):
        """What is at the path is said in Japanese too."""
        folder = tmp_path / "dir.toml"
        folder.mkdir()
        assert japanese_line(cli("run", folder, "--lang", "ja")) == (
            f"エラー: {folder}: ディレクトリです。シナリオファイルではありません")

    def test_a_db_schedule_error_names_the_session_step_and_field(self, tmp_path):
        """`idemsim db run` takes --lang: a bad isolation level names the session, the step and the allowed ones."""
        import json

        from typer.testing import CliRunner

        from idemsim.cli.db import app

        path = tmp_path / "bad.json"
        path.write_text(json.dumps({"version": 1, "sessions": {"s1": [{"op": "begin", "isolation": "snapshot"}]}}))
        result = CliRunner().invoke(app, ["run", str(path), "--lang", "ja"])
        assert japanese_line(result) == (f"エラー: {path}: セッション 's1' の手順 1（1 から数える）、項目 'isolation': "
                                    "\"snapshot\" は使えません。使える値: 'read committed', 'repeatable read', "
                                    "'serializable'")

    def test_a_schedule_that_is_not_json_says_why_in_japanese(self, tmp_path):
        """`idemsim db run` of a file that is not JSON names the file and says where the parser stopped, and
        why, in Japanese; each reason of the parser is its own English in English."""
        import json

        from typer.testing import CliRunner

        from idemsim.base.readers import json_reason
        from idemsim.cli.db import app

        path = tmp_path / "bad.json"
        path.write_text('{"version": 1 "sessions": {}}')
        result = CliRunner().invoke(app, ["run", str(path), "--lang", "ja"])
        assert japanese_line(result) == (f"エラー: {path}: JSON として正しくありません: 区切りの ',' がありません"
                                         "（1 行 15 列目、先頭から 14 文字）")
        for document in ("", "{", '{"a" 1}', '"abc', '"a\x01"', '"\\q"', '"\\u00zz"', '{"a": 1} x'):
            with pytest.raises(json.JSONDecodeError) as refused:
                json.loads(document)
            reason = json_reason(refused.value)
            assert reason.said("en") == str(refused.value) and "（" in reason.said("ja")

    def test_english_stays_the_default(self, cli):
        """Without --lang or IDEMSIM_LANG the same error is English, as before."""
        result = cli("run", "lost-response", "--design", "magic")
        assert result.stderr.startswith("error: unknown design 'magic'; valid designs: naive, ")


USAGE = [
    (["run", "--bogus"], "error: no such option: --bogus", "エラー: オプション --bogus はありません"),
    (["run"], "error: missing argument 'scenario'", "エラー: 引数 'scenario' がありません"),
    (["run", "lost-response", "--seed", "x"], "error: invalid value 'x' for '--seed': Input should be a valid integer",
     "エラー: '--seed' の値 'x' は正しくありません: 整数でなければなりません"),
    (["run", "lost-response", "--format", "xml"],
     "error: invalid value 'xml' for '--format': allowed: 'text', 'json', 'mermaid', 'mermaid-state'",
     "エラー: '--format' の値 'xml' は正しくありません: 使える値は 'text', 'json', 'mermaid', 'mermaid-state' です"),
    (["run", "lost-response", "extra"], "error: unexpected extra argument: extra",
     "エラー: 余分な引数があります: extra"),
    (["run", "lost-response", "--desing", "naive"], "error: no such option: --desing; did you mean --design?",
     "エラー: オプション --desing はありません。--design のことですか？"),
    (["explore", "naive", "--max-examples", "0"],
     "error: invalid value '0' for '--max-examples': Input should be greater than or equal to 1",
     "エラー: '--max-examples' の値 '0' は正しくありません: 1 以上でなければなりません"),
    (["run", "lost-response", "--brief=yes"], "error: option --brief does not take a value",
     "エラー: オプション --brief は値を取りません"),
    (["runn"], "error: no such command 'runn'; did you mean 'run'?",
     "エラー: コマンド 'runn' はありません。'run' のことですか？"),
    (["bogus"], "error: no such command 'bogus'; commands: list, run, ",
     "エラー: コマンド 'bogus' はありません。コマンド: list, run, "),
    (["db", "run"], "error: missing argument 'schedule'", "エラー: 引数 'schedule' がありません"),
]


class TestUsageErrors:
    @pytest.mark.parametrize("args, english, japanese", USAGE, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
    def test_a_usage_error_is_one_line_in_the_commands_language(self, cli, args, english, japanese):
        """The parser's usage errors are one line on stderr, exit 2, naming the option and the help to read,
        in English and, with --lang ja anywhere on the line, in Japanese."""
        for words, start in ((args, english), (args + ["--lang", "ja"], japanese)):
            result = cli(*words)
            assert result.exit_code == 2 and result.stdout == ""
            assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
            assert result.stderr.startswith(start), result.stderr
            assert re.search(r"(\(see |（)\S+( \S+)* --help", result.stderr)

    def test_the_language_of_a_usage_error_comes_from_the_line_or_the_environment(self, cli, monkeypatch):
        """--lang=ja works before the parser reaches it; IDEMSIM_LANG=ja too; --lang en wins over it."""
        assert cli("run", "--lang=ja", "--bogus").stderr.startswith("エラー: オプション --bogus")
        monkeypatch.setenv("IDEMSIM_LANG", "ja")
        assert cli("run", "--bogus").stderr.startswith("エラー: ")
        assert cli("run", "--bogus", "--lang", "en").stderr.startswith("error: no such option: --bogus")

    @pytest.mark.slow
    def test_a_usage_error_is_one_line_from_the_installed_command(self):
        """The real `idemsim` names itself and the command in the hint (a subprocess)."""
        exe = Path(sys.executable).parent / "idemsim"
        command = [str(exe)] if exe.exists() else [sys.executable, "-c", "from idemsim.cli.app import main; main()"]
        env = {**os.environ, "IDEMSIM_LANG": "ja", "PYTHONPATH": str(ROOT)}
        done = subprocess.run(command + ["run", "--desing", "x"], capture_output=True, text=True, env=env,
                              timeout=60)
        assert (done.returncode, done.stdout) == (2, "")
        assert re.fullmatch(r"エラー: オプション --desing はありません。--design のことですか？"
                            r"（\S+ run --help を参照）\n",
                            done.stderr), done.stderr
