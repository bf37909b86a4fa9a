"""Path budget guard: prints the worst path and its length, fails past the budget, refuses an empty tree."""

from __future__ import annotations

import pytest
from check_support import check, healthy, init_repo, messages

from conftest import Project


def test_worst_path_and_its_length_are_printed_within_budget(project: Project,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("budget")
    worst = max((p.relative_to(project.root).as_posix() for p in project.root.glob("eval-*/**/*")
                 if p.is_file() and "eval-results" not in p.parts), key=len)
    assert result.ok
    assert result.summary.startswith(f"worst path {len(worst)}/160 chars over ")
    assert result.summary.endswith(worst)


def test_a_path_over_the_budget_fails_with_its_length(project: Project,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    long_name = "n" * 140
    stray = project.write(f"eval-cache/cache/helper/acme/{long_name}/0/0123456789abcdef/entry.json", "{}")
    rel = stray.relative_to(project.root).as_posix()
    outcome = project.run("check")
    assert outcome.code == 1
    assert f"budget      FAIL  worst path {len(rel)}/160 chars" in outcome.out
    assert f"[budget] {rel}: {len(rel)} characters, over the path budget of 160" in outcome.out
    assert f"by {len(rel) - 160} characters" in outcome.out


def test_the_budget_comes_from_the_configuration(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    worst = len(check(project).of("budget").summary.rsplit(": ", 1)[1])
    budget = worst - 1
    project.write("pyproject.toml", f'[project]\nname = "demo"\n[tool.harness]\npath_budget = {budget}\n')
    # the loader refuses scenarios whose projected paths exceed the budget; the guard measures real files
    found = messages(check(project), "budget")
    assert found and all(f"over the path budget of {budget}" in f for f in found)


def test_refuses_to_pass_over_an_empty_tree(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    init_repo(project, monkeypatch)
    outcome = project.run("check")
    assert outcome.code == 1
    assert "[budget] eval-cache/cache: holds no file: the path budget cannot be checked over an " \
           "empty tree (a canary over zero files is blind)" in outcome.out
