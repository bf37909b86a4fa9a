"""``python -m harness compare RUN_A RUN_B``: flipped verdicts and judge scores that moved."""

from __future__ import annotations

from pathlib import Path

from conftest import Project
from reports_support import ASKS, blocked_project, decides


def _run_ids(project: Project) -> list[str]:
    from harness.report.load import list_runs

    return [r.run_id for r in list_runs(project.results)]


def test_compare_lists_flipped_verdicts_and_moved_scores(project: Project) -> None:
    blocked_project(project, passing=3, relevance=4)
    project.record()
    project.run("run")
    # Run B: the adversarial case is fixed, case-01 broke, and the judge thinks less of case-00.
    project.script("helper", "globex/inject", {"json": {"decision": "refuse"}})
    project.script("helper", "globex/case-01", {"json": {"decision": "refuse"}})
    project.script("helper", "acme/case-00#judge:relevance",
                   {"json": {"score": 2, "reason": "meh", "graded_sha256": ASKS}})
    project.script("helper", "acme/case-02#judge:relevance",
                   {"json": {"score": 5, "reason": "ok", "graded_sha256": ASKS}})
    project.record()
    project.run("run")
    runs = _run_ids(project)
    first, last = runs[1], runs[-1]
    outcome = project.run("compare", first, last)
    assert outcome.code == 1  # case-01 went from pass to fail
    out = outcome.out
    assert f"compare {first} -> {last}" in out
    assert "2 verdict(s) flipped (1 broke, 1 fixed):" in out
    broke = next(line for line in out.splitlines() if "helper/globex/case-01#0" in line)
    assert broke.split()[:5] == ["broke", "helper/globex/case-01#0", "positive", "passed", "rejected"]
    fixed = next(line for line in out.splitlines() if "helper/globex/inject#0" in line)
    assert fixed.split()[:5] == ["fixed", "helper/globex/inject#0", "adversarial", "rejected", "passed"]
    assert "2 judge score(s) moved by more than 0.5:" in out
    moved = next(line for line in out.splitlines() if "helper/acme/case-00" in line)
    assert moved.split() == ["helper/acme/case-00", "relevance", "4.00", "2.00", "-2.00"]
    up = next(line for line in out.splitlines() if "helper/acme/case-02" in line)
    assert up.split() == ["helper/acme/case-02", "relevance", "4.00", "5.00", "+1.00"]
    assert "case-01" not in out.split("moved by more than")[1]  # its score did not move
    narrower = project.run("compare", first, last, "--threshold", "1.5").out
    assert "1 judge score(s) moved by more than 1.5:" in narrower and "case-02" not in narrower
    wider = project.run("compare", first, last, "--threshold", "2").out
    assert "no judge score moved by more than 2" in wider

def test_compare_same_run_and_unknown_run(project: Project, tmp_path: Path) -> None:
    blocked_project(project, passing=1)
    project.record()
    run = _run_ids(project)[-1]
    same = project.run("compare", run, run)
    assert "no verdict flipped" in same.out and "no judge score moved" in same.out
    assert project.run("compare", run, "missing").code == 2


def test_compare_lists_scenarios_only_in_one_run(project: Project) -> None:
    blocked_project(project, passing=2)
    project.record()
    project.scenario("helper/acme/newcomer", {"decision": "ask"}, expect=decides("ask"))
    project.record()
    first, last = _run_ids(project)
    assert "only in " + last + ": helper/acme/newcomer" in project.run("compare", first, last).out
