"""Regenerate the Japanese notebooks from the English ones: ``python notebooks/ja/make.py``.

Every notebook of the course (``notebooks/NN-*.ipynb``) and its answer notebook (``notebooks/answers/``) has a
Japanese twin here (``notebooks/ja/NN-*.ipynb``, ``notebooks/ja/answers/``), built from three things:

- the English notebook: every code cell is copied byte for byte, with its id, tags and metadata;
- ``translations/NN-*.toml``: for each markdown cell, by its id, a copy of the English it translates (``en``)
  and the Japanese (``ja``). A markdown cell of an answer notebook tagged ``answer`` has its own entry under
  ``[answers.ID]``; every other cell of an answer notebook uses the lesson's entry;
- one cell added before the first code cell (id and tag ``setup-ja``) that sets ``IDEMSIM_LANG=ja``, so that
  what idemsim draws and writes (figures, a run's HTML, the verdicts of ``idemsim.course.check``) is in
  Japanese. It is the only code that differs from the English notebook; what the code cells print themselves
  stays as the code prints it.

When an English markdown cell no longer equals the copy its translation was made from, or has no translation,
or a translation names a cell that no longer exists, nothing is written: the error names the notebook and the
cell and shows what changed in the English, so the translation can be brought up to date (edit ``ja``, then
copy the new English into ``en``). Nothing in ``notebooks/ja/*.ipynb`` is written by hand:
``tests/test_notebooks_ja.py`` checks that each file is exactly what `render` returns now.
"""

from __future__ import annotations

import difflib
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
"""notebooks/ja/"""
ENGLISH = HERE.parent
"""notebooks/, where the English course lives."""
TRANSLATIONS = HERE / "translations"
"""One TOML file of translations per lesson, named as the lesson."""
COMMAND = "python notebooks/ja/make.py"
"""The command that regenerates the Japanese notebooks, as the error messages and the tests quote it."""

SETUP_ID = "setup-ja"
"""The id, and the tag, of the one cell the Japanese notebooks add."""
SETUP_SOURCE = """\
# 日本語版だけにあるセル: idemsim が描く図と表、演習のチェック（idemsim.course.check）の答えを
# 日本語にします（環境変数 IDEMSIM_LANG）。ほかのコードは英語版のノートブックと同じなので、
# コードが自分で print する文字列（表の見出しなど）は英語のままです。
import os

os.environ["IDEMSIM_LANG"] = "ja"\
"""
LANGUAGE_METADATA = {"lang": "ja"}
"""Added to the notebook's metadata under ``idemsim``. nbformat has no field for the language of a notebook's
prose (``kernelspec.language`` and ``language_info`` name the kernel's, Python), so the mark is namespaced, as
nbformat asks of metadata of one's own; ``source`` names the English notebook it was generated from."""


class TranslationError(Exception):
    """A translation does not match the English notebook: stale, missing, or for a cell that is gone."""


def lessons() -> list[Path]:
    """The English lesson notebooks, in order."""
    return sorted(ENGLISH.glob("[0-9][0-9]-*.ipynb"))


def sources() -> dict[Path, Path]:
    """Each English notebook (lessons, then answers) and the Japanese notebook generated from it."""
    pairs = {path: HERE / path.name for path in lessons()}
    pairs.update({ENGLISH / "answers" / path.name: HERE / "answers" / path.name for path in lessons()})
    return pairs


def translations(name: str) -> dict:
    """The translations of lesson ``name`` (its file name without ``.ipynb``): {cell id: {"en", "ja"}}, and the
    answer cells' under ``"answers"``."""
    path = TRANSLATIONS / f"{name}.toml"
    if not path.exists():
        raise TranslationError(f"{path.relative_to(ENGLISH.parent)}: no translations for notebooks/{name}.ipynb")
    with path.open("rb") as f:
        return tomllib.load(f)


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _changed(old: str, new: str) -> str:
    diff = difflib.unified_diff(old.splitlines(), new.splitlines(), "translated from", "the English now",
                                lineterm="", n=1)
    return "\n".join("    " + line for line in diff)


def translate(english: Path):
    """The Japanese notebook generated from the English notebook at ``english`` (an nbformat notebook).
    Raises `TranslationError`, naming the cell, when a translation is stale, missing or left over."""
    import nbformat

    nb = nbformat.read(english, as_version=4)
    answers = english.parent.name == "answers"
    table = translations(english.stem)
    answer_table = table.get("answers", {})
    toml = f"notebooks/ja/translations/{english.stem}.toml"
    where = f"notebooks/{'answers/' if answers else ''}{english.name}"
    problems, used = [], set()
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        own = answers and "answer" in cell.metadata.get("tags", [])
        entries, name = (answer_table, f"[answers.{cell.id}]") if own else (table, f"[{cell.id}]")
        entry = entries.get(cell.id)
        text = _source(cell)
        if entry is None:
            problems.append(f"{where}, markdown cell {cell.id}: not translated; add {name} with its en and ja "
                            f"to {toml}. Its English:\n" + "\n".join("    " + line for line in text.splitlines()))
            continue
        used.add(name)
        if entry["en"] != text:
            problems.append(f"{where}, markdown cell {cell.id}: the English changed since it was translated; "
                            f"update {name} in {toml} (its ja, then copy the new English into en):\n"
                            + _changed(entry["en"], text))
            continue
        cell.source = entry["ja"]
    if answers:
        left = [f"[answers.{key}]" for key in answer_table if f"[answers.{key}]" not in used]
    else:
        left = [f"[{key}]" for key in table if key != "answers" and f"[{key}]" not in used]
    problems += [f"{toml}: {name} translates no markdown cell of {where}; remove it" for name in left]
    if problems:
        raise TranslationError("\n".join(problems))
    first_code = next(i for i, cell in enumerate(nb.cells) if cell.cell_type == "code")
    setup = nbformat.v4.new_code_cell(SETUP_SOURCE, id=SETUP_ID, metadata={"tags": [SETUP_ID]})
    nb.cells.insert(first_code, setup)
    relative = ("../../answers/" if answers else "../") + english.name  # from the Japanese notebook's folder
    nb.metadata["idemsim"] = dict(LANGUAGE_METADATA, source=relative)
    return nb


def render(english: Path) -> str:
    """The Japanese notebook generated from ``english``, as the text of its file (as Jupyter saves it)."""
    import nbformat

    text = nbformat.writes(translate(english))
    return text if text.endswith("\n") else text + "\n"


def main() -> int:
    rendered, problems = {}, []
    for english, japanese in sources().items():
        try:
            rendered[japanese] = render(english)
        except TranslationError as error:
            problems.append(str(error))
    if problems:
        print("\n\n".join(problems), file=sys.stderr)
        print(f"\nnothing written: bring the translations up to date, then run {COMMAND} again", file=sys.stderr)
        return 1
    for japanese, text in rendered.items():
        japanese.parent.mkdir(parents=True, exist_ok=True)
        japanese.write_text(text, encoding="utf-8")
        print(japanese.relative_to(ENGLISH.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
