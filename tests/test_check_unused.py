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
    # Until the scenarios are re-recorded, their old entries are kept: nothing replays them yet.
    assert "unused      FAIL  0 referenced, 0 unused, 3 missing" in outcome.out
    for scenario in ("helper/acme/farewell", "helper/acme/greeting", "helper/globex/greeting"):
        assert f"{scenario} iteration 0 has no entry: a run would miss" in outcome.out
        assert (f"fix: record it: python -m harness run --record-missing --scripted --scenario {scenario}"
                in outcome.out)
    old = entry_folders(project)
    project.record()
    outcome = project.run("check")
    assert "unused      FAIL  3 referenced, 3 unused, 0 missing" in outcome.out
    for folder in old:
        assert (f"[unused] {folder.relative_to(project.root).as_posix()}: unused entry: recorded for a "
                "request the scenario no longer produces") in outcome.out
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
    assert len(messages(check(project), "unused")) == 2  # globex orphan, acme missing (its entry kept)
    assert check(project, tenants=("acme",)).of("unused").summary == "1 referenced, 0 unused, 1 missing"
    assert messages(check(project, tenants=("globex",)), "unused")[0].endswith(
        "fix: python -m harness prune --dry-run to review, then python -m harness prune")
    assert check(project, scenarios=("farewell",)).of("unused").ok
    assert check(project, scenarios=("helper/acme/*",)).of("unused").summary == \
        "1 referenced, 0 unused, 1 missing"
    # a deleted scenario has no type any more: a --type filter never selects it
    assert check(project, types=("negative",)).of("unused").ok
    outcome = project.run("check", "--scenario", "farewell")
    assert outcome.code == 0, outcome.out


def test_judge_entries_are_referenced_when_the_replay_reads_them(project: Project,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.agent(judge={"provider": "anthropic", "model": "claude-judge-1", "evaluators": ["relevance"]})
    project.script("helper", "*#judge:relevance", {"json": {"score": 4, "reason": "On topic."}})
    project.record()
    assert check(project).of("unused").summary == "6 referenced, 0 unused, 0 missing"
    agent_entry = entry_folders(project, "helper/acme/greeting")[0]
    planted = plant_entry(project, agent_entry, "abcdefabcdef0123", purpose="judge:relevance")
    found = [f for f in messages(check(project), "unused") if "unused entry" in f]
    assert len(found) == 1 and planted.name in found[0]  # a judge entry nothing reads is unused
    assert "judge:relevance entry that no replay of the iteration reads" in found[0]
    planted_gone = project.run("prune")
    assert "removed 1 unused entry" in planted_gone.out
    old = set(entry_folders(project, "helper/acme/greeting"))
    project.scenario("helper/acme/greeting", {"answer": "yes"}, input="A changed question?")
    project.record("--scenario", "helper/acme/greeting")
    found = [f for f in messages(check(project), "unused") if "unused entry" in f]
    assert len(found) == 2 and all(any(o.name in f for o in old) for f in found)


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

