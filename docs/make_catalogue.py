"""Regenerate docs/catalogue.md from the simulator: ``python docs/make_catalogue.py``.

Every shipped scenario (`idemsim.scenario_names`), grouped as ``idemsim list`` groups them (the groups follow the
article's order), with its title, summary, story, lesson and variants, and the Mermaid sequence diagram of its
main story under its own design and seed (`idemsim.Run.mermaid`). Nothing is written by hand:
``tests/test_notebooks.py`` checks that the file is exactly what `render` returns now.
"""

import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE / "catalogue.md"


WIDTH = 116
"""Prose is wrapped to this many columns, as the other docs are."""


def _fill(text: str, indent: str = "") -> str:
    return textwrap.fill(" ".join(text.split()), WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def _paragraphs(text: str) -> str:
    """A scenario's text (hard-wrapped in its TOML file) as Markdown paragraphs."""
    return "\n\n".join(_fill(block) for block in text.strip().split("\n\n") if block.strip())


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _anchor(name: str) -> str:
    return name.lower()


def render() -> str:
    """The whole catalogue, as Markdown."""
    import idemsim

    groups: dict[str, list] = {}
    for name in idemsim.scenario_names():
        scenario = idemsim.load_scenario(name)
        groups.setdefault(scenario.group, []).append(scenario)
    out = ["# Catalogue of the shipped scenarios", "",
           _fill("Every story idemsim ships, grouped as `idemsim list` groups them (in the article's order), each "
                 "with the sequence diagram of its main story under its own design and seed, as `idemsim run NAME "
                 "--format mermaid` draws it. This file is generated from the simulator by `python "
                 "docs/make_catalogue.py`; `tests/test_notebooks.py` fails when it differs from what the simulator "
                 "draws now, so regenerate it rather than edit it."), ""]
    for group, members in sorted(groups.items()):
        out.append(_fill(f"- {group}: " + ", ".join(f"[`{s.name}`](#{_anchor(s.name)})" for s in members), "  "))
    for group, members in sorted(groups.items()):
        out += ["", f"## {group}"]
        for scenario in members:
            run = idemsim.simulate(scenario)
            out += ["", f"### {scenario.name}", "", _fill(f"**{scenario.title}**"), "", _fill(scenario.summary)]
            if scenario.story.strip():
                out += ["", _paragraphs(scenario.story)]
            if scenario.teaches.strip():
                out += ["", _paragraphs("*What it teaches:* " + scenario.teaches.strip())]
            if scenario.variants:
                out += ["", "Variants (`idemsim run " + scenario.name + " --variant NAME`):", ""]
                for name, variant in scenario.variants.items():
                    summary = " ".join(str(variant.get("summary", "")).split())
                    out.append(_fill(f"- `{name}`: {summary}" if summary else f"- `{name}`", "  "))
            s = run.summary
            out += ["", _fill(f"Its main story under `{run.design}`, seed {run.seed} (`idemsim run {scenario.name} "
                              f"--format mermaid`): {_count(s['charges'], 'charge row')}, "
                              f"{_count(s['captures'], 'capture')}, the client ends `{s['outcome']}`."),
                    "", "```mermaid", run.mermaid(lang="en").rstrip("\n"), "```"]
    return "\n".join(out) + "\n"


def main() -> None:
    TARGET.write_text(render(), encoding="utf-8")
    print(TARGET)


if __name__ == "__main__":
    main()
