"""What every idemsim command shares: the language it speaks (``--lang``) and its one-line errors.

Guarantees: a command's language is its ``--lang``, else ``IDEMSIM_LANG``, else English (`choose_language`),
and its error lines are in that language too. Bad input (`idemsim.base.errors.InputError`) is one line on stderr,
``error: …``, exit code 2 (`user_errors`). So is bad usage that the command line parser finds before any command
runs (`OneLineUsage`): an unknown option or command, a missing argument, a bad value, an option without its
value, an extra argument. Such a line names the option or argument, keeps what the parser offers ("did you
mean --design?"), and ends with how to get help ("see idemsim run --help"); the parser may stop before it reads
``--lang``, so the language is then read from the command line as written (`language_in_argv`).

Importing this module is light: typer, and nothing that runs a simulation.
"""

from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from enum import Enum
from typing import Any, Iterator, Optional, Sequence

import typer
from typer.core import TyperGroup

from ..base.errors import InputError, Message
from ..base.printable import one_line


class Lang(str, Enum):
    en = "en"
    ja = "ja"


LANG_OPTION = typer.Option(None, "--lang", envvar="IDEMSIM_LANG",
                           help="Language of the words shown: en (default) or ja (the article's own).")

LANGUAGE = {"now": "en"}
"""The language of the command being run: set by `choose_language` from --lang or IDEMSIM_LANG."""


def choose_language(lang: Optional[Lang]) -> str:
    """The command's language (--lang, else IDEMSIM_LANG, else English); its error lines use it too."""
    from ..base.i18n import language

    LANGUAGE["now"] = language(lang.value if lang is not None else None)
    return LANGUAGE["now"]


def language_in_argv(argv: Sequence[str]) -> str:
    """The language a command line asks for, read as written: the last ``--lang ja`` or ``--lang=ja``, else
    IDEMSIM_LANG, else English. For errors found before the parser reads ``--lang``."""
    from ..base.i18n import language

    chosen = None
    for i, word in enumerate(argv):
        if word == "--":
            break
        if word == "--lang" and i + 1 < len(argv):
            chosen = argv[i + 1]
        elif word.startswith("--lang="):
            chosen = word.partition("=")[2]
    return language(chosen if chosen in ("en", "ja") else None)


def error_line(message: Any, lang: str) -> str:
    """``error: …`` (``エラー: …``): one line, control characters and newlines escaped; ``message`` is anything
    with ``said(lang)``."""
    from ..base.i18n import text

    return text("error", lang, message=one_line(message.said(lang)))


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn `InputError` into one line on stderr and exit code 2, in the language of the command."""
    try:
        yield
    except InputError as e:
        print(error_line(e, LANGUAGE["now"]), file=sys.stderr)
        raise typer.Exit(2) from None


class OneLineUsage(TyperGroup):
    """A command group whose usage errors are one line on stderr, exit code 2, in the command's language,
    instead of the parser's usage text."""

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        from typer._click.exceptions import NoArgsIsHelpError, UsageError

        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except NoArgsIsHelpError as e:
            e.show()
            sys.exit(e.exit_code)
        except UsageError as e:
            lang = language_in_argv(argv)
            print(error_line(usage_problem(e, self, argv, prog_name), lang), file=sys.stderr)
            sys.exit(e.exit_code)
        sys.exit(code if isinstance(code, int) else 0)


_EXTRA = re.compile(r"Got unexpected extra arguments? ?(?:\(s\))? \((?P<args>.*)\)$", re.S)
_NO_COMMAND = re.compile(r"No such command (?P<name>.+?)\.(?: Did you mean (?P<maybe>.+)\?)?$", re.S)


def usage_problem(e: Any, root: Any, argv: Sequence[str], prog_name: Optional[str] = None) -> Message:
    """What a usage error says, in words of the catalogue, with the help to look at."""
    from typer._click.exceptions import BadOptionUsage, BadParameter, MissingParameter, NoSuchOption

    see = Message("usage.see", command=_command_path(e, root, argv, prog_name))
    if isinstance(e, NoSuchOption):
        hint = Message("usage.did_you_mean", options=", ".join(sorted(e.possibilities))) if e.possibilities else ""
        return Message("usage.no_such_option", option=e.option_name, hint=hint, see=see)
    if isinstance(e, MissingParameter):
        kind = e.param_type or (e.param.param_type_name if e.param is not None else "parameter")
        name = _param_name(e.param)
        return Message("usage.missing_argument" if kind == "argument" else "usage.missing_option", name=name,
                       see=see)
    if isinstance(e, BadParameter):
        return Message("usage.invalid", param=_param_name(e.param), **_bad_value(e), see=see)
    if isinstance(e, BadOptionUsage):
        if e.message.endswith("requires an argument."):
            return Message("usage.requires_value", option=e.option_name, see=see)
        if e.message.endswith("does not take a value."):
            return Message("usage.takes_no_value", option=e.option_name, see=see)
    extra = _EXTRA.match(e.message)
    if extra:
        return Message("usage.extra", args=extra["args"], see=see)
    missing = _NO_COMMAND.match(e.message)
    if missing:
        if missing["maybe"]:
            hint = Message("usage.did_you_mean", options=missing["maybe"])
            return Message("usage.no_such_command", name=missing["name"], hint=hint, see=see)
        group = e.ctx.command if e.ctx is not None else root
        commands = Message("usage.commands", commands=", ".join(getattr(group, "commands", {})))
        return Message("usage.no_such_command", name=missing["name"], hint=commands, see=see)
    if e.message == "Missing command.":
        return Message("usage.missing_command", see=see)
    return Message("usage.other", message=e.format_message(), see=see)


def _bad_value(e: Any) -> dict[str, Any]:
    """The value a `BadParameter` refused and why: one of the allowed choices, or what pydantic (which typer
    converts values with) found wrong, said in the reader's language."""
    from ..base.fields import Problem

    cause = e.__cause__
    errors = cause.errors() if hasattr(cause, "errors") else []
    if not errors:
        return {"value": "", "problem": e.message}
    err = errors[0]
    value = repr(err.get("input"))
    descriptor = getattr(e.param, "type_descriptor", None)
    choices = getattr(descriptor, "choices", None)
    if choices and err["type"] == "value_error":
        allowed = ", ".join(repr(getattr(c, "value", c)) for c in choices)
        return {"value": value, "problem": Message("usage.choice", choices=allowed)}
    return {"value": value, "problem": Problem(err)}


def _param_name(param: Any) -> str:
    """A parameter as the user writes it: ``'--seed'``, or an argument's name, ``'scenario'``."""
    if param is None:
        return "?"
    if param.param_type_name == "argument":
        return repr(param.name or "")
    return " / ".join(repr(opt) for opt in param.opts)


def _command_path(e: Any, root: Any, argv: Sequence[str], prog_name: Optional[str]) -> str:
    """The command whose ``--help`` helps: the one the error came from, else the deepest one the command line
    names."""
    if e.ctx is not None:
        return e.ctx.command_path
    path = [prog_name or _program_name()]
    command = root
    for word in argv:
        commands = getattr(command, "commands", None)
        if not commands or word not in commands:
            if commands is None or not word.startswith("-"):
                break
            continue
        command = commands[word]
        path.append(word)
    return " ".join(path)


def _program_name() -> str:
    try:
        from typer._click.utils import _detect_program_name

        return _detect_program_name()
    except Exception:  # a private helper of the parser: its name is a courtesy, never a reason to fail
        return "idemsim"
