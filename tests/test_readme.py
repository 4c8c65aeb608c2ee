"""README's promises: its two commands, and the one CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_readme_has_the_run_and_the_test_command():
    """The first command installs and runs `idemsim run lost-response`; the second installs and runs pytest."""
    run, test = readme_commands()[:2]
    assert run.endswith("idemsim run lost-response") and "pip install" in run
    assert "pip install" in test and "pytest" in test and "[test]" in test


def test_ci_runs_readmes_test_command():
    """.ci/run runs README's test command verbatim."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert readme_commands()[1] in ci


def test_the_sample_output_is_what_run_prints():
    """README's sample is exactly what `idemsim run lost-response` prints for its first story, 80 columns wide."""
    import io

    from rich.console import Console

    from idemsim.runners.simulation import simulate
    from idemsim.scenario.schema import load
    from idemsim.views.terminal import print_run

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    sample = re.search(r"```text\n(.*?)\n```", text, re.S).group(1)
    out = io.StringIO()
    print_run(Console(width=80, file=out, color_system=None, highlight=False), simulate(load("lost-response")),
              None, "lost-response")
    assert "\n".join(line.rstrip() for line in out.getvalue().splitlines()).strip() == sample.strip()
