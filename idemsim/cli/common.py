"""What every idemsim command shares: the language it speaks (``--lang``) and its one-line errors.

Guarantees: a command's language is its ``--lang``, else ``IDEMSIM_LANG``, else English (`choose_language`),
and its error lines are in that language too. Bad input (`idemsim.base.errors.InputError`) is one line on stderr,
``error: …``, exit code 2 (`user_errors`). So is bad usage that the command line parser finds before any command
runs (`UsageProblem`): an unknown option or command, a missing argument, a bad value, an option without its
value, an extra argument. Such a line names the option or argument, keeps what the parser offers ("did you
mean --design?"), and ends with how to get help ("see idemsim run --help"); the parser may stop before it reads
``--lang``, so the language is then read from the command line as written (`language_in_argv`). No arguments at
all, where a command is due, is the help on stderr, exit code 2.

A usage error is built from what the parser knows where it stopped (the context, the command's parameters) and
from the documented attributes of its exceptions (``option_name``, ``possibilities``, ``param``,
``param_type``), never from the words of its English messages; only typer's public API is used (typer vendors
Click privately, so Click's exception classes are not named here: typer's `typer.TyperException` and
`typer.BadParameter` are).

Importing this module is light: typer, and nothing that runs a simulation.
"""

from __future__ import annotations

import difflib
import inspect
import sys
from contextlib import contextmanager
from enum import Enum
from typing import Any, Iterator, Literal, Optional, Sequence, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

from ..base.errors import InputError, Message
from ..base.i18n import LANGS
from ..base.printable import one_line

Lang = Enum("Lang", {lang: lang for lang in LANGS}, type=str)
"""The languages ``--lang`` takes: one per catalogue file (`idemsim.base.i18n.LANGS`)."""


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
    return language(chosen if chosen in LANGS else None)


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


class UsageProblem(typer.TyperException):
    """A usage error, in words of the catalogue (``usage.<kind>``, its ``fields``), found where the command line
    is read (``ctx``: the command whose help to see). Said in English, it is the exception's message."""

    exit_code = 2

    def __init__(self, ctx: typer.Context, kind: str, **fields: Any) -> None:
        self.ctx = ctx
        self.kind = kind
        self.fields = fields
        super().__init__(self.said("en"))

    def said(self, lang: str = "en") -> str:
        see = Message("usage.see", command=self.ctx.command_path)
        return Message(f"usage.{self.kind}", **self.fields, see=see).said(lang)


class _ReadsInOneLine:
    """The reading of a command's (or a group's) arguments, for `OneLineCommand` and `OneLineUsage`: what the
    parser refuses becomes a `UsageProblem`, extra arguments are named as written, and no arguments at all where
    the command wants some (``no_args_is_help``) is its help, on stderr, exit code 2."""

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:  # type: ignore[attr-defined]
            typer.echo(ctx.get_help(), err=True, color=ctx.color)
            ctx.exit(2)
        allowed = ctx.allow_extra_args
        ctx.allow_extra_args = True  # the parser leaves them to us: `rest`
        try:
            rest = super().parse_args(ctx, args)  # type: ignore[misc]
        except typer.TyperException as refused:
            if isinstance(refused, UsageProblem) or refused.exit_code != 2:
                raise
            raise parser_problem(refused, ctx) from None
        finally:
            ctx.allow_extra_args = allowed
        if rest and not allowed and not ctx.resilient_parsing:
            raise UsageProblem(ctx, "extra", args=" ".join(_escaped(arg) for arg in rest))
        return rest


class OneLineCommand(_ReadsInOneLine, TyperCommand):
    """A command whose usage errors are `UsageProblem`s (`OneLineUsage` prints them as one line)."""


class OneLineUsage(_ReadsInOneLine, TyperGroup):
    """A command group whose usage errors are one line on stderr, exit code 2, in the command's language,
    instead of the parser's usage text: its own (an unknown or a missing command, a bad option of its own) and
    those of its commands (`OneLineCommand`)."""

    def main(self, args: Optional[Sequence[str]] = None, prog_name: Optional[str] = None,
             complete_var: Optional[str] = None, standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        argv = list(sys.argv[1:] if args is None else args)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as refused:
            if not isinstance(refused, UsageProblem):
                if refused.exit_code != 2 or getattr(refused, "ctx", None) is None:
                    raise
                refused = parser_problem(refused, refused.ctx)  # (a usage error raised while a command runs)
            print(error_line(refused, language_in_argv(argv)), file=sys.stderr)
            sys.exit(refused.exit_code)
        sys.exit(code if isinstance(code, int) else 0)

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:
        name = args[0]
        if ctx.resilient_parsing or self._named(ctx, name) is not None:
            return super().resolve_command(ctx, args)
        if not name[:1].isalnum():  # perhaps an option, where a command is due: the parser's finding comes first
            self.parse_args(ctx, list(args))
        close = difflib.get_close_matches(name, list(self.commands)) if self.suggest_commands else []
        hint = (Message("usage.did_you_mean", options=", ".join(repr(match) for match in close)) if close else
                Message("usage.commands", commands=", ".join(self.commands)))
        raise UsageProblem(ctx, "no_such_command", name=repr(name), hint=hint)

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except typer.TyperException as refused:
            # the group's own refusal before it chose a command (an unknown one is a `UsageProblem` already):
            # the command line named none
            if (not isinstance(refused, UsageProblem) and refused.exit_code == 2 and ctx.invoked_subcommand is None
                    and getattr(refused, "ctx", None) is ctx and not self.invoke_without_command):
                raise UsageProblem(ctx, "missing_command") from None
            raise

    def _named(self, ctx: typer.Context, name: str) -> Any:
        """The command ``name`` names (as the group resolves it), or None."""
        command = self.get_command(ctx, name)
        if command is None and ctx.token_normalize_func is not None:
            command = self.get_command(ctx, ctx.token_normalize_func(name))
        return command


class OneLineTyper(typer.Typer):
    """A typer app whose usage errors are one line: a `OneLineUsage` group of `OneLineCommand` commands, unless
    told otherwise (``cls=``)."""

    def __init__(self, *, cls: Optional[type] = None, **settings: Any) -> None:
        super().__init__(cls=cls or OneLineUsage, **settings)

    def command(self, name: Optional[str] = None, *, cls: Optional[type] = None, **settings: Any) -> Any:
        return super().command(name, cls=cls or OneLineCommand, **settings)


def parser_problem(refused: Any, ctx: typer.Context) -> UsageProblem:
    """What the parser refused, said as a `UsageProblem`: read from where it stopped (``ctx``, the command's
    parameters) and from the documented attributes of its exception, never from its English words.

    An option the command does not have is unknown (the parser's close matches offered); one it has either
    lacked its value or, a flag, was given one. A parameter with nothing given is missing (``param_type``), one
    given a value it cannot take names the value and why (`_bad_value`). Anything else is shown in the parser's
    own words."""
    option = getattr(refused, "option_name", None)
    if option is not None:
        known = _option(ctx, option)
        if known is None:
            possibilities = getattr(refused, "possibilities", None)
            hint = Message("usage.did_you_mean", options=", ".join(sorted(possibilities))) if possibilities else ""
            return UsageProblem(ctx, "no_such_option", option=option, hint=hint)
        flag = getattr(known, "is_flag", False) or getattr(known, "count", False)
        return UsageProblem(ctx, "takes_no_value" if flag else "requires_value", option=option)
    if isinstance(refused, typer.BadParameter):
        param = refused.param
        if hasattr(refused, "param_type"):  # nothing given where a value must be
            kind = refused.param_type or (param.param_type_name if param is not None else "parameter")
            return UsageProblem(ctx, "missing_argument" if kind == "argument" else "missing_option",
                                name=_param_name(param))
        return UsageProblem(ctx, "invalid", param=_param_name(param), **_bad_value(refused, ctx))
    return UsageProblem(ctx, "other", message=refused.format_message())


def _option(ctx: typer.Context, name: str) -> Any:
    """The option of the context's command that ``name`` names (one of its names), or None."""
    for param in ctx.command.get_params(ctx):
        if param.param_type_name == "option" and (name in param.opts or name in param.secondary_opts):
            return param
    return None


def _bad_value(refused: Any, ctx: typer.Context) -> dict[str, Any]:
    """The value a `typer.BadParameter` refused and why: one of the allowed choices, or what pydantic (which
    typer converts values with) found wrong, said in the reader's language."""
    from ..base.fields import Problem

    cause = refused.__cause__
    errors = cause.errors() if hasattr(cause, "errors") else []
    if not errors:
        return {"value": "", "problem": refused.message}
    err = errors[0]
    value = repr(err.get("input"))
    choices = _choices(ctx, refused.param)
    if choices and err["type"] == "value_error":
        allowed = ", ".join(repr(choice) for choice in choices)
        return {"value": value, "problem": Message("usage.choice", choices=allowed)}
    return {"value": value, "problem": Problem(err)}


def _choices(ctx: typer.Context, param: Any) -> list[Any]:
    """The values a parameter allows, read from the command function's annotation of it (an `Enum`, or a
    `Literal`, perhaps ``Optional``): empty for any other type."""
    callback = ctx.command.callback
    if callback is None or param is None:
        return []
    declared = inspect.signature(callback, eval_str=True).parameters.get(param.name)
    annotation = declared.annotation if declared is not None else None
    for kind in (annotation, *get_args(annotation)):
        if isinstance(kind, type) and issubclass(kind, Enum):
            return [member.value for member in kind]
        if get_origin(kind) is Literal:
            return list(get_args(kind))
    return []


def _param_name(param: Any) -> str:
    """A parameter as the user writes it: ``'--seed'``, or an argument's name, ``'scenario'``."""
    if param is None:
        return "?"
    if param.param_type_name == "argument":
        return repr(param.name or "")
    return " / ".join(repr(opt) for opt in param.opts)


def _escaped(arg: str) -> str:
    """An argument as a usage error shows it: every C0 or C1 control character and DEL as ``\\xNN``."""
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or 0x7F <= ord(ch) <= 0x9F else ch for ch in arg)
