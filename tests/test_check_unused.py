"""Unused-entry guard: orphans and scenarios with no entry, both listed; filtered runs stay in scope."""

from __future__ import annotations

import pytest
import yaml
from check_support import check, entry_folders, healthy, messages, plant_entry

from conftest import Project


def test_a_tree_that_matches_the_datasets_passes(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("unused")
    assert result.ok and result.summary == "3 referenced, 0 unused, 0 missing"


def test_a_prompt_change_lists_the_orphans_and_the_scenarios_with_no_entry(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-datasets/helper/system.md", "A reworded prompt for {{tenant}}. Answer in JSON.\n")
    outcome = project.run("check")
    assert outcome.code == 1
    assert "unused      FAIL  0 referenced, 3 unused, 3 missing" in outcome.out
    for folder in entry_folders(project):
        assert (f"[unused] {folder.relative_to(project.root).as_posix()}: unused entry: recorded for a "
                "request the scenario no longer produces") in outcome.out
    for scenario in ("helper/acme/farewell", "helper/acme/greeting", "helper/globex/greeting"):
        assert f"{scenario} iteration 0 has no entry: a run would miss" in outcome.out
        assert f"fix: record it: python -m harness run --refresh-cache --scenario {scenario}" in outcome.out
    assert "python -m harness prune --dry-run" in outcome.out


def test_a_deleted_scenario_leaves_an_orphan(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    found = messages(check(project), "unused")
    assert len(found) == 1
    assert "unused entry: scenario helper/acme/farewell no longer exists (deleted or renamed)" in found[0]


def test_fewer_iterations_leave_orphans(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.scenario("helper/acme/repeat", {"answer": "yes"}, iterations=3)
    project.record("--scenario", "helper/acme/repeat")
    project.scenario("helper/acme/repeat", iterations=1)
    found = messages(check(project), "unused")
    assert len(found) == 2
    assert "iteration 1 is beyond the scenario's 1 iteration(s)" in found[0]
    assert "iteration 2 is beyond" in found[1]


def test_a_filtered_run_never_reports_unselected_scenarios(project: Project,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    (project.datasets / "helper/globex/greeting.yaml").unlink()
    project.write("eval-datasets/helper/acme/greeting.yaml", {
        **yaml.safe_load((project.datasets / "helper/acme/greeting.yaml").read_text()),
        "input": "A changed question?"})
    assert len(messages(check(project), "unused")) == 3  # globex orphan, acme orphan + missing
    assert check(project, tenants=("acme",)).of("unused").summary == "1 referenced, 1 unused, 1 missing"
    assert messages(check(project, tenants=("globex",)), "unused")[0].endswith(
        "fix: python -m harness prune --dry-run to review, then python -m harness prune")
    assert check(project, scenarios=("farewell",)).of("unused").ok
    assert check(project, scenarios=("helper/acme/*",)).of("unused").summary == \
        "1 referenced, 1 unused, 1 missing"
    # a deleted scenario has no type any more: a --type filter never selects it
    assert check(project, types=("negative",)).of("unused").ok
    outcome = project.run("check", "--scenario", "farewell")
    assert outcome.code == 0, outcome.out


def test_a_judge_entry_is_referenced_while_its_agent_entry_is(project: Project,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    agent_entry = entry_folders(project, "helper/acme/greeting")[0]
    judge = plant_entry(project, agent_entry, "abcdefabcdef0123", purpose="judge:relevance")
    assert check(project).of("unused").summary == "4 referenced, 0 unused, 0 missing"
    project.scenario("helper/acme/greeting", input="A changed question?")
    found = [f for f in messages(check(project), "unused") if "unused entry" in f]
    assert len(found) == 2
    assert any(judge.name in f and "judge:relevance entry of an iteration whose current agent entry is "
               "not recorded" in f for f in found)


def test_entries_it_cannot_read_or_understand_are_never_called_unused(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    agent_entry = entry_folders(project, "helper/acme/greeting")[0]
    plant_entry(project, agent_entry, "abcdefabcdef0123", purpose="embedding")  # a purpose from the future
    torn = plant_entry(project, agent_entry, "0123456789abcdef")
    (torn / "entry.json").write_text("{torn", encoding="utf-8")
    report = check(project)
    assert report.of("unused").ok, report.of("unused").findings
    assert len(report.of("integrity").findings) == 1  # the torn one is integrity's finding

