"""GitHub Actions: job summary and ``::error`` annotations from ``run`` and ``pytest --evals``.

Real subprocesses with the runner's variables set; the summary file and the
annotation lines are what a GitHub job would read.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Project
from harness.report.github import error_command, escape_data, escape_property

FRONT_ENDS = {
    "cli": [sys.executable, "-m", "harness", "run"],
    "pytest": [sys.executable, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider"],
    "pytest-xdist": [sys.executable, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider",
                     "-n", "2"],
}


def _runner_env(project: Project, summary: Path, *, actions: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_STEP_SUMMARY=str(summary), GITHUB_WORKSPACE=str(project.root))
    if actions:
        env["GITHUB_ACTIONS"] = "true"
    return env


def _run(project: Project, front_end: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(FRONT_ENDS[front_end], cwd=project.root, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def _failing_project(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/fine", {"answer": "yes"})
    project.scenario("helper/acme/wrong,answer", {"answer": "no"}, type="negative")
    project.record()
    project.scenario("helper/acme/unrecorded", {"answer": "yes"})


def test_escaping_follows_the_workflow_command_rules() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a/b: c,d%\n") == "a/b%3A c%2Cd%25%0A"
    assert error_command("two\nlines", file="x,y.yaml", title="t:1") == \
        "::error file=x%2Cy.yaml,title=t%3A1::two%0Alines"


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_rejects_and_misses_become_error_annotations_and_the_summary_is_written(
        project: Project, tmp_path: Path, front_end: str) -> None:
    _failing_project(project)
    summary = tmp_path / "step-summary.md"
    done = _run(project, front_end, _runner_env(project, summary))
    assert done.returncode == 1, done.stdout + done.stderr
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error")]
    assert len(errors) == 2, done.stdout
    (reject,) = [line for line in errors if "[rejected]" in line]
    (miss,) = [line for line in errors if "[missed]" in line]
    assert reject.startswith("::error file=eval-datasets/helper/acme/wrong%2Canswer.yaml,"
                             "title=helper/acme/wrong%2Canswer::[rejected] iteration 0: ")
    assert "expected 'yes'" in reject
    assert miss.startswith("::error file=eval-datasets/helper/acme/unrecorded.yaml,"
                           "title=helper/acme/unrecorded::[missed] iteration 0: eval-cache-miss")
    assert "%0A" in miss and "\r" not in miss  # the multi-line reason stays on one command line
    text = summary.read_text(encoding="utf-8")
    assert text.count("## Eval report") == 1 and "helper" in text


@pytest.mark.parametrize("front_end", ["cli", "pytest"])
def test_outside_github_actions_no_annotations_are_printed(
        project: Project, tmp_path: Path, front_end: str) -> None:
    _failing_project(project)
    done = _run(project, front_end, _runner_env(project, tmp_path / "s.md", actions=False))
    assert done.returncode == 1
    assert "::error" not in done.stdout + done.stderr


@pytest.mark.parametrize("front_end", ["cli", "pytest"])
@pytest.mark.parametrize("actions", [True, False])
def test_an_unwritable_step_summary_is_a_warning_not_a_failed_run(
        project: Project, tmp_path: Path, front_end: str, actions: bool) -> None:
    project.agent()
    project.scenario("helper/acme/fine", {"answer": "yes"})
    project.record()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the summary's folder should be\n", encoding="utf-8")
    done = _run(project, front_end, _runner_env(project, blocker / "summary.md", actions=actions))
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    expected = "::warning::cannot append" if actions else "warning: cannot append"
    assert expected in output and "GITHUB_STEP_SUMMARY" in output
    assert "Traceback" not in output


def test_report_md_with_an_unwritable_step_summary_still_prints_the_report(
        project: Project, tmp_path: Path) -> None:
    project.agent()
    project.scenario("helper/acme/fine", {"answer": "yes"})
    project.record()
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "harness", "report", "--format", "md"],
                          cwd=project.root, env=_runner_env(project, blocker / "s.md", actions=False),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert "## Eval report" in done.stdout
    assert "warning: cannot append the eval report to $GITHUB_STEP_SUMMARY" in done.stderr
