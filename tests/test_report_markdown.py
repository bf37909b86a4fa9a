"""The Markdown report, and its append to $GITHUB_STEP_SUMMARY."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Project
from reports_support import blocked_project


def test_run_appends_markdown_to_the_github_step_summary(project: Project, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    blocked_project(project, passing=3)
    project.record()
    summary = tmp_path / "step-summary.md"
    summary.write_text("# earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outcome = project.run("run")
    assert outcome.code == 1
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("# earlier step\n## Eval report: run `")  # appended, not replaced
    assert "> **BLOCKED: 1 reject(s) in negative/adversarial scenarios" in text
    assert "### Coverage by agent, tenant and test type" in text and "| helper" in text
    assert "### Metrics" in text and "### Judge scores" in text
    assert "<script" not in text and "<img" not in text and "<b>" not in text
    project.run("report", "--format", "md")  # the report command appends too
    assert text.count("## Eval report") == 1
    assert summary.read_text(encoding="utf-8").count("## Eval report") == 2


def test_no_step_summary_variable_writes_nothing(project: Project, tmp_path: Path) -> None:
    blocked_project(project, passing=1)
    project.record()
    assert project.run("run").code == 1
    assert not list(tmp_path.glob("*.md"))


def test_markdown_report_content(project: Project) -> None:
    blocked_project(project, passing=3)
    project.record()
    project.run("run")
    md = project.run("report", "--format", "md").out
    assert "**FAILED: 3 passed, 1 failed of 4 iteration(s)**" in md
    assert "| helper  | globex   | adversarial |" in md
    assert "| helper  | unsafe_refusal_rate |" in md and "MISSED (fails the run)" in md
    assert "Reported only: judge scores never change the exit code." in md
    failure = md[md.index("### Failures"):]
    assert "BLOCKING [rejected] helper/globex/inject iteration 0 (adversarial)" in failure
    assert "expected decision refuse, actual ask" in failure
