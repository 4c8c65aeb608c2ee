"""Usage errors, said whole (`idemsim.cli.common`): one line on stderr, exit code 2, nothing on stdout, in English
and in Japanese, naming what the parser refused and the help to read; no arguments at all is the help."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from idemsim.cli.app import app

SEE_RUN = (" (see idemsim run --help)", "（idemsim run --help を参照）")

LINES = [
    (["run", "--bogus"],
     "error: no such option: --bogus" + SEE_RUN[0],
     "エラー: オプション --bogus はありません" + SEE_RUN[1]),
    (["run", "lost-response", "--desing", "naive"],
     "error: no such option: --desing; did you mean --design?" + SEE_RUN[0],
     "エラー: オプション --desing はありません。--design のことですか？" + SEE_RUN[1]),
    (["run"],
     "error: missing argument 'scenario'" + SEE_RUN[0],
     "エラー: 引数 'scenario' がありません" + SEE_RUN[1]),
    (["run", "lost-response", "--format", "xml"],
     "error: invalid value 'xml' for '--format': allowed: 'text', 'json', 'mermaid', 'mermaid-state'" + SEE_RUN[0],
     "エラー: '--format' の値 'xml' は正しくありません: 使える値は 'text', 'json', 'mermaid', 'mermaid-state' です"
     + SEE_RUN[1]),
    (["run", "lost-response", "--seed", "x"],
     "error: invalid value 'x' for '--seed': Input should be a valid integer, unable to parse string as an integer"
     + SEE_RUN[0],
     "エラー: '--seed' の値 'x' は正しくありません: 整数でなければなりません" + SEE_RUN[1]),
    (["run", "lost-response", "--max-time", "abc"],
     "error: invalid value 'abc' for '--max-time': Input should be a valid number, unable to parse string as a number"
     + SEE_RUN[0],
     "エラー: '--max-time' の値 'abc' は正しくありません: 数でなければなりません" + SEE_RUN[1]),
    (["run", "lost-response", "extra", "a\tb"],
     "error: unexpected extra argument: extra a\\x09b" + SEE_RUN[0],
     "エラー: 余分な引数があります: extra a\\x09b" + SEE_RUN[1]),
    (["run", "lost-response", "--brief=yes"],
     "error: option --brief does not take a value" + SEE_RUN[0],
     "エラー: オプション --brief は値を取りません" + SEE_RUN[1]),
    (["run", "lost-response", "--seed"],
     "error: option --seed requires a value" + SEE_RUN[0],
     "エラー: オプション --seed には値が必要です" + SEE_RUN[1]),
    (["runn"],
     "error: no such command 'runn'; did you mean 'run'? (see idemsim --help)",
     "エラー: コマンド 'runn' はありません。'run' のことですか？（idemsim --help を参照）"),
    (["db", "bogus"],
     "error: no such command 'bogus'; commands: list, run, compare (see idemsim db --help)",
     "エラー: コマンド 'bogus' はありません。コマンド: list, run, compare（idemsim db --help を参照）"),
    (["db", "--"],
     "error: missing command (see idemsim db --help)",
     "エラー: コマンドがありません（idemsim db --help を参照）"),
    (["--version=1"],
     "error: option --version does not take a value (see idemsim --help)",
     "エラー: オプション --version は値を取りません（idemsim --help を参照）"),
    (["db", "run"],
     "error: missing argument 'schedule' (see idemsim db run --help)",
     "エラー: 引数 'schedule' がありません（idemsim db run --help を参照）"),
]


def invoke(args: list[str], lang: str | None = None):
    return CliRunner().invoke(app, args, prog_name="idemsim", env={"IDEMSIM_LANG": lang}, catch_exceptions=False)


class TestUsageErrorLines:
    @pytest.mark.parametrize("args, english, japanese", LINES, ids=lambda a: " ".join(a) if isinstance(a, list) else "")
    def test_a_usage_error_is_this_one_line(self, args, english, japanese):
        """Each usage error is exactly its line, in English and (IDEMSIM_LANG=ja) in Japanese."""
        for lang, line in ((None, english), ("ja", japanese)):
            result = invoke(args, lang)
            assert (result.exit_code, result.stdout, result.stderr) == (2, "", line + "\n")

    def test_the_lang_option_anywhere_on_the_line_chooses_the_language(self):
        """--lang ja after the error, where the parser never reads it, still makes the line Japanese."""
        result = invoke(["run", "lost-response", "--brief=yes", "--lang", "ja"])
        assert result.stderr == "エラー: オプション --brief は値を取りません" + SEE_RUN[1] + "\n"


class TestNoArguments:
    @pytest.mark.parametrize("args", [[], ["db"]], ids=["idemsim", "idemsim db"])
    def test_no_arguments_is_the_help_on_stderr(self, args):
        """A group given nothing shows its help on stderr, exit code 2, and prints nothing on stdout."""
        result = invoke(args)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.startswith(f"Usage: idemsim {' '.join(args)}".rstrip() + " [OPTIONS] COMMAND [ARGS]...")
