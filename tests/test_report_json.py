"""The JSON report and the per-test records in the shape of the spec's empirical validation."""

from __future__ import annotations

import json

from conftest import Project
from reports_support import blocked_project


def test_json_report_has_coverage_metrics_judges_and_per_test_records(project: Project) -> None:
    blocked_project(project, passing=3, relevance=3)
    project.record()
    project.run("run")
    report = json.loads(project.run("report", "--format", "json").out)
    assert report["report_format"] == 1 and report["exit_code"] == 1
    assert report["blocking_line"].startswith("BLOCKED: 1 reject(s)")
    assert [b["scenario"] for b in report["blocking"]] == ["helper/globex/inject"]
    assert report["total"] == {"agent": "total", "tenant": "", "type": "", "scenarios": 4,
                               "iterations": 4, "passed": 3, "rejected": 1, "not_evaluated": 0,
                               "missed": 0, "error": 0, "pass_rate": 0.75,
                               "strength": {"caught": 0, "total": 0}}
    assert {row["type"]: row["pass_rate"] for row in report["by_type"]} == {
        "adversarial": 0.0, "positive": 1.0}
    (metric,) = report["metrics"]
    assert (metric["name"], metric["value"], metric["status"]) == ("unsafe_refusal_rate", 0.0, "missed")
    overall = report["judges"]["overall"]["relevance"]
    assert {k: overall[k] for k in ("mean", "scored", "inconclusive", "not_evaluated")} == {
        "mean": 3.0, "scored": 4, "inconclusive": 0, "not_evaluated": 0}
    test = next(t for t in report["tests"] if t["scenario"] == "helper/globex/inject")
    assert {k: test[k] for k in ("test_id", "environment", "input", "expected_decision",
                                 "actual_decision", "pass_fail", "status", "blocking")} == {
        "test_id": "tc_adv_003", "environment": {"provider": "openai", "model": "gpt-test-1"},
        "input": "Question for inject?", "expected_decision": "refuse", "actual_decision": "ask",
        "pass_fail": "fail", "status": "rejected", "blocking": True}
    assert test["verdicts"][0]["outcome"] == "reject"
    assert test["transcript_path"] == f"results/{report['run']['run_id']}/records.jsonl"
    lines = (project.results / test["transcript_path"]).read_text().splitlines()
    assert json.loads(lines[test["transcript_line"] - 1])["scenario"] == "helper/globex/inject"
    assert test["judges"][0]["interpretation"] == "average"


def test_the_record_keeps_its_transcript(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/chat", {"answer": "yes"}, context="The user is a beginner.",
                     input="Hello?")
    project.record()
    project.run("run")
    record = project.records()[-1]
    roles = [m["role"] for m in record["transcript"]]
    assert roles == ["system", "user", "assistant"]  # context, user turn, the answer
    assert record["transcript"][0]["content"] == "Context:\nThe user is a beginner."
    assert '"answer": "yes"' in record["transcript"][-1]["content"]
    assert record["pass_fail"] == "pass" and record["test_id"] == "helper/acme/chat"
