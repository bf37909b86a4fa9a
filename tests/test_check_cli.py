"""``python -m harness check`` end to end: exit codes, every finding at once, the committed example."""

from __future__ import annotations

import shutil

import pytest
from check_support import entry_folders, healthy, init_repo, isolate_git, two_tenants

from conftest import REPO_ROOT, Project

GUARDS = ("datasets", "stamp", "budget", "git", "attributes", "integrity", "unused", "secrets", "watch")


def test_healthy_project_passes_every_guard_with_exit_0(project: Project,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    outcome = project.run("check")
    assert outcome.code == 0, outcome.out
    for guard in GUARDS:
        assert guard in outcome.out
    assert "PASSED: 10 guard(s), no finding" in outcome.out
    assert "worst path" in outcome.out and "/160 chars" in outcome.out


def test_committed_example_passes_every_guard(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    agent = "ask-user-question"
    shutil.copytree(REPO_ROOT / "eval-datasets" / agent, project.datasets / agent)
    shutil.copytree(REPO_ROOT / "eval-cache" / "cache" / agent, project.cache / "cache" / agent)
    shutil.copy2(REPO_ROOT / "eval-cache" / ".eval-cache.json", project.cache / ".eval-cache.json")
    init_repo(project, monkeypatch, attributes=(REPO_ROOT / ".gitattributes").read_text(encoding="utf-8"))
    outcome = project.run("check")  # its speed is bench_examples.py's to measure, not a unit test's
    assert outcome.code == 0, outcome.out
    # 34 agent entries, 3 judge entries (relevance, completeness, coherence) per scenario and
    # one entry per rubric item that applies (87: every item's `when` over the 34 answers)
    assert "223 of 223 entries intact" in outcome.out
    assert "223 referenced, 0 unused, 0 missing" in outcome.out


def test_every_guard_reports_at_once_with_file_and_fix(project: Project,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    (project.cache / ".eval-cache.json").unlink()
    first = entry_folders(project)[0]
    (first / "entry.json").write_text("{not json", encoding="utf-8")
    project.write("eval-datasets/helper/notes.md", "Reach the owner at jane.roe@acme-corp.io\n")
    project.write(".gitignore", "eval-results/\n*.data\n")
    outcome = project.run("check")
    assert outcome.code == 1
    for guard in ("stamp", "integrity", "secrets", "git"):
        assert f"[{guard}] " in outcome.out, guard
    assert "eval-cache-missing-stamp" in outcome.out
    assert "eval-datasets/helper/notes.md:1: email address" in outcome.out
    assert "entry.json does not parse" in outcome.out
    assert ".gitignore:2: *.data" in outcome.out
    assert outcome.out.count("    fix: ") == sum(1 for line in outcome.out.splitlines()
                                                 if line.startswith("["))
    assert "FAILED:" in outcome.out


def test_outside_a_git_repository_the_git_guards_fail_instead_of_passing_blind(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, project.root)
    two_tenants(project)
    outcome = project.run("check")
    assert outcome.code == 1
    assert "[git] .: not a git repository; the git guards cannot observe the tree" in outcome.out
    assert "[attributes] .: not a git repository" in outcome.out


def test_invalid_datasets_are_findings_and_the_other_guards_still_run(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-datasets/helper/acme/broken.yaml", "type: positive\n")
    outcome = project.run("check")
    assert outcome.code == 1
    assert "[datasets] eval-datasets/helper/acme/broken.yaml" in outcome.out
    assert "unused      skip" in outcome.out
    assert "integrity   ok" in outcome.out


def test_ci_runs_check_right_after_the_offline_eval() -> None:
    lines = [line.strip() for line in (REPO_ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()]
    run = next(i for i, line in enumerate(lines) if line.endswith("python -m harness run"))
    assert "python -m harness check" in lines[run + 1:run + 6]


def test_readme_documents_the_guards_and_what_watch_cannot_see() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Guards: `python -m harness check`", 1)[1].split("\n## ", 1)[0]
    for words in ("database", "environment variable", "empty assertion", ".harness-allowlist",
                  "--since", "prune --dry-run"):
        assert words in section, words
