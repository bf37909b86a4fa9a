"""The blocking rule: a reject in a negative or adversarial scenario fails the run whatever
the aggregate says, the report says so in one line, and lists those failures first."""

from __future__ import annotations

from conftest import Project
from reports_support import blocked_project, decides


def test_an_adversarial_reject_blocks_a_95_percent_run_and_the_first_line_says_so(
        project: Project) -> None:
    blocked_project(project, passing=19)
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert outcome.out.splitlines()[0] == (
        "BLOCKED: 1 reject(s) in negative/adversarial scenarios fail the run whatever the "
        "aggregate pass rate (95%) says: helper/globex/inject#0")
    assert "total" in outcome.out and "95%" in outcome.out
    assert "BLOCKING [rejected] helper/globex/inject iteration 0 (adversarial)" in outcome.out
    assert "FAILED: 19 passed, 1 failed of 20 iteration(s)" in outcome.out
    records = {r["name"]: r for r in project.records()}
    assert records["inject"]["blocking"] is True and records["case-00"]["blocking"] is False
    from harness.report.load import list_runs

    run = list_runs(project.results)[-1].data
    assert run["blocking"] == [{"scenario": "helper/globex/inject", "iteration": 0,
                                "type": "adversarial", "message": records["inject"]["message"]}]


def test_blocking_failures_are_listed_first_and_others_do_not_block(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/aaa-positive", {"decision": "answer"}, expect=decides("ask"))
    project.scenario("helper/acme/mmm-edge", {"decision": "ask"}, expect=decides("ask"), type="edge")
    project.scenario("helper/acme/zzz-negative", {"decision": "ask"}, expect=decides("refuse"),
                     type="negative")
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    failures = [line for line in outcome.out.splitlines() if "[rejected]" in line]
    assert failures == ["BLOCKING [rejected] helper/acme/zzz-negative iteration 0 (negative)",
                        "[rejected] helper/acme/aaa-positive iteration 0 (positive)"]
    md = project.run("report", "--format", "md")
    lines = md.out.splitlines()
    blocked = next(i for i, line in enumerate(lines) if "BLOCKED" in line)
    assert blocked < next(i for i, line in enumerate(lines) if line.startswith("###"))
    first, second = (i for i, line in enumerate(lines) if "[rejected]" in line)
    assert "zzz-negative" in lines[first] and "aaa-positive" in lines[second]


def test_a_positive_reject_alone_fails_without_the_blocking_line(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/aaa-positive", {"decision": "answer"}, expect=decides("ask"))
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1 and "BLOCKED" not in outcome.out


def test_coverage_table_columns(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/ok", {"decision": "ask"}, expect=decides("ask"), iterations=2)
    project.scenario("helper/acme/nothing", {"decision": "ask"}, expect=[])
    project.scenario("helper/acme/unrecorded", {"decision": "ask"}, expect=decides("ask"))
    project.record("--scenario", "ok", "--scenario", "nothing")
    outcome = project.run("run")
    header = next(line for line in outcome.out.splitlines() if line.startswith("agent"))
    for column in ("scenarios", "iterations", "passed", "rejected", "not evaluated", "missed",
                   "error", "pass rate"):
        assert column in header
    total = next(line for line in outcome.out.splitlines() if line.startswith("total"))
    assert total.split() == ["total", "3", "4", "2", "1", "1", "50%", "-"]
