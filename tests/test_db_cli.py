"""`idemsim db …` (list, run, compare), in-process with typer's CliRunner and once as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from idemsim.cli.db import app
from idemsim.proof import postgres
from idemsim.proof.schedule import load, run_on_model, shipped

UNREACHABLE = "postgresql://postgres@127.0.0.1:9/test"


def _postgres_disagreeing(monkeypatch) -> None:
    """PostgreSQL, faked, answering article-wait-commit's s2 insert with 1 row and leaving no charge."""
    document = run_on_model(load("article-wait-commit")).document
    document["sessions"]["s2"][0].update(rows=1, end=1.0)
    document["tables"]["charges"] = []
    monkeypatch.setattr(postgres, "server_version", lambda dsn: "PostgreSQL 15.0 on test")
    monkeypatch.setattr(postgres, "run_postgres", lambda s, dsn, scale: postgres.PostgresRun(document, {}, {}))


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


class TestList:
    def test_lists_every_shipped_schedule_with_its_description(self):
        """db list prints each shipped schedule's name and the start of its description."""
        result = invoke("list")
        assert result.exit_code == 0
        for name, path in shipped().items():
            assert name in result.stdout
            assert load(path).description[:40] in result.stdout


class TestRun:
    def test_text_draws_who_waited_for_whom_and_how_long(self):
        """The text view shows the wait's start, whom it waited for, its length, result and sequence id."""
        result = invoke("run", "article-wait-commit")
        assert result.exit_code == 0
        assert "register_key k-8f3a fp1 ┬ waits for s1" in result.stdout
        assert "└ after 4.000 s → 0 rows (id 2 used)" in result.stdout
        assert "idempotency_keys" in result.stdout and "charges" in result.stdout

    def test_json_is_exactly_the_result_document(self):
        """--format json prints the spec's result document and nothing else."""
        result = invoke("run", "article-wait-rollback", "--format", "json", "--scale", "0.1")
        assert result.exit_code == 0
        assert json.loads(result.stdout) == run_on_model(load("article-wait-rollback"), 0.1).document

    def test_a_bad_schedule_is_one_line_on_stderr_and_exit_2(self, tmp_path):
        """A bad schedule prints `error: <message>` on stderr and exits 2."""
        path = tmp_path / "bad.json"
        path.write_text(json.dumps({"version": 1, "sessions": {"s1": [{"op": "begin", "isolation": "snapshot"}]}}))
        result = invoke("run", str(path))
        assert result.exit_code == 2
        assert result.stdout == ""
        assert result.stderr == (f"error: {path}: session 's1', step 1 (1-based), field 'isolation': \"snapshot\" "
                                 "is not allowed; allowed: 'read committed', 'repeatable read' or 'serializable'\n")

    @pytest.mark.parametrize("args, message", [
        (("run", "article-wait-commit", "--scale", "nan"), "error: --scale nan: must be > 0 and finite"),
        (("run", "article-wait-commit", "--scale", "inf", "--postgres", "--dsn", UNREACHABLE),
         "error: --scale inf: must be > 0 and finite"),
        (("compare", "article-wait-commit", "--scale", "0", "--postgres", UNREACHABLE),
         "error: --scale 0: must be > 0 and finite"),
        (("compare", "article-wait-commit", "--scale", "1e7", "--postgres", UNREACHABLE),
         f"error: {shipped()['article-wait-commit']}: session 's1', step 5 (1-based), field 'seconds': "
         "5 s × --scale 1e+07 = 5e+07 s is too long; times must be at most 1e+07 s (about 116 days)"),
    ])
    def test_a_bad_scale_is_one_line_before_any_connection(self, args, message):
        """A scale that is not finite and > 0, or that makes a time absurd, is bad input on both sides: exit 2."""
        result = invoke(*args)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", message + "\n")

    def test_a_fifo_is_one_line_and_never_read(self, tmp_path):
        """A named pipe given as the schedule exits 2 at once, naming it."""
        fifo = tmp_path / "pipe"
        os.mkfifo(fifo)
        result = invoke("run", str(fifo), "--postgres", "--dsn", UNREACHABLE)
        assert (result.exit_code, result.stderr) == (2, f"error: {fifo}: is a FIFO (named pipe), not a schedule file\n")

    @pytest.mark.parametrize("args", [("run", "article-wait-commit", "--postgres", "--dsn", UNREACHABLE),
                                      ("compare", "article-wait-commit", "--postgres", UNREACHABLE)])
    def test_an_unreachable_postgresql_is_exit_2(self, args):
        """--postgres against a server that does not answer: one line on stderr, exit 2."""
        result = invoke(*args)
        assert result.exit_code == 2
        assert result.stderr.startswith(f"error: cannot connect to PostgreSQL at {UNREACHABLE}: ")
        assert result.stderr.count("\n") == 1


class TestCompare:
    def test_a_disagreement_is_shown_and_exits_1(self, monkeypatch):
        """When PostgreSQL's result differs, compare marks the step and the tables and exits 1."""
        _postgres_disagreeing(monkeypatch)
        result = invoke("compare", "article-wait-commit")
        assert result.exit_code == 1
        assert "✗ rows: model 0 vs PostgreSQL 1; end: model" in result.stdout
        assert "tables: ✗ charges: model [{'amount': 1000, 'key': 'k-8f3a'}] vs PostgreSQL []" in result.stdout
        assert result.stdout.rstrip().endswith("DISAGREE")

    def test_names_that_look_like_rich_markup_are_shown_as_written(self, monkeypatch, tmp_path):
        """A schedule whose file, sessions and key look like rich markup ([/x]) runs and compares as written."""
        document = json.loads((Path(shipped()["article-wait-commit"])).read_text())
        document["sessions"] = {"[/x]": document["sessions"]["s1"], "[bold]": document["sessions"]["s2"]}
        for step in (s for steps in document["sessions"].values() for s in steps):
            step.update({k: "[/k]" for k in ("key", "fingerprint") if k in step})
        path = tmp_path / "[red]odd.json"
        path.write_text(json.dumps(document))
        model = run_on_model(load(str(path))).document
        monkeypatch.setattr(postgres, "server_version", lambda dsn: "PostgreSQL 15.0 on test")
        monkeypatch.setattr(postgres, "run_postgres", lambda s, dsn, scale: postgres.PostgresRun(model, {}, {}))
        for args in (("run", str(path)), ("compare", str(path))):
            result = invoke(*args)
            assert result.exit_code == 0, result.output
            assert "[/x]" in result.stdout and "[/k]" in result.stdout and "[red]odd.json" in result.stdout

    @pytest.mark.slow
    @pytest.mark.postgres
    def test_the_articles_wait_from_both_sides_as_a_real_process(self, postgres_dsn):
        """`python -m idemsim.cli.db compare article-wait-commit` shows the ≈4 s wait on both sides and agrees."""
        out = subprocess.run([sys.executable, "-m", "idemsim.cli.db", "compare", "article-wait-commit",
                              "--postgres", postgres_dsn], capture_output=True, text=True, env={"COLUMNS": "200",
                              "PATH": "/usr/bin:/bin"}, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr  # (the table says which step disagreed, and why)
        s2 = next(line for line in out.stdout.splitlines() if line.strip().startswith("s2") and "register_key" in line)
        assert "0 rows (id 2 used)  1.000→5.000 (waited 4.000 s)" in s2
        assert "(waited 4.0" in s2.split("(waited 4.000 s)")[1]
        assert out.stdout.rstrip().endswith("agree")


class TestJapanese:
    def test_run_says_its_words_in_japanese_and_keeps_sql_and_numbers(self):
        """`db run --lang ja`: the title, the time column, the wait and the results in Japanese; statements,
        keys, ids and times as they are."""
        result = invoke("run", "article-wait-commit", "--lang", "ja")
        assert result.exit_code == 0
        out = result.stdout
        assert "article-wait-commit（モデル、倍率 1）" in out and "t (秒)" in out
        assert "register_key k-8f3a fp1 ┬ s1 を待つ" in out
        assert "└ 4.000 秒後 → 0 行（id 2 を消費）" in out
        assert "idempotency_keys" in out and "waits" not in out

    def test_list_heads_its_columns_in_japanese(self):
        """`db list --lang ja` heads its table in Japanese; the schedules keep their names."""
        result = invoke("list", "--lang", "ja")
        assert result.exit_code == 0
        assert "スケジュール" in result.stdout and "示すこと" in result.stdout
        assert "article-wait-commit" in result.stdout

    def test_a_disagreement_is_said_in_japanese(self, monkeypatch):
        """Under IDEMSIM_LANG=ja, compare's columns, problems, tables line and verdict are Japanese."""
        _postgres_disagreeing(monkeypatch)
        result = CliRunner().invoke(app, ["compare", "article-wait-commit"], env={"COLUMNS": "200",
                                                                                 "IDEMSIM_LANG": "ja"})
        assert result.exit_code == 1
        assert "article-wait-commit、倍率 1: モデルと PostgreSQL 15.0 の比較" in result.stdout
        assert "✗ rows: モデル 0、PostgreSQL 1; end: モデル" in result.stdout
        assert "テーブル: ✗ charges: モデル [{'amount': 1000, 'key': 'k-8f3a'}]、PostgreSQL []" in result.stdout
        assert result.stdout.rstrip().endswith("不一致")

    def test_a_bad_scale_is_one_japanese_line(self):
        """A bad --scale is one line in Japanese, exit 2."""
        result = invoke("run", "article-wait-commit", "--scale", "nan", "--lang", "ja")
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", "エラー: --scale nan: 0 より大きい有限の数でなければなりません\n")


class TestDocs:
    def test_the_text_view_shown_in_the_docs_is_what_db_run_prints(self):
        """docs/db-model.md shows the real output of `COLUMNS=118 idemsim db run article-wait-commit`."""
        command = "$ COLUMNS=118 idemsim db run article-wait-commit"
        doc = (Path(__file__).resolve().parent.parent / "docs" / "db-model.md").read_text(encoding="utf-8")
        shown = doc.split(command + "\n", 1)[1].split("\n```", 1)[0]
        printed = CliRunner().invoke(app, ["run", "article-wait-commit"], env={"COLUMNS": "118"}).stdout
        assert shown.rstrip("\n") == printed.rstrip("\n")
