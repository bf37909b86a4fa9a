"""A run keeps running totals, not a result per iteration: they equal what its records say.

The run summary folds each iteration as it arrives (harness/results/totals.py); reports of
a run read back from disk count the records themselves. A run with the shapes of a large
one (agents, tenants, types, repeated iterations, judges, a gated metric, counterexamples,
blocking rejects, misses) must give the same totals, run.json and terminal text both ways.
"""

from __future__ import annotations

from collections import Counter

from conftest import Project
from harness.loading.config import load_config
from harness.report.load import load_records, load_run
from harness.report.merge import _strength_by_agent
from harness.report.model import rows, view_of_summary, view_rows
from harness.report.terminal import render_view
from harness.results.aggregates import judge_means, rubric_summary
from harness.running.api import run_evals
from reports_support import blocked_project, decides

WRONG = {"why": "says no where the contract needs yes", "answer": {"json": {"answer": "no"}}}
LOOSE = {"why": "no assertion looks at the text", "answer": {"json": {"answer": "yes", "x": 1}}}


def _large_shaped_project(project: Project) -> None:
    blocked_project(project, passing=12)  # judges, a gated metric, one adversarial reject
    project.agent("plain")
    for index in range(48):
        tenant = ("t0", "t1", "t2")[index % 3]
        kind = ("positive", "edge", "negative")[(index // 3) % 3]
        fields: dict[str, object] = {"type": kind, "iterations": 1 + index % 2,
                                     "expect": [{"json_path": {"path": "answer", "equals": "yes"}}]}
        if index % 5 == 0:
            fields["counterexamples"] = [WRONG, LOOSE]  # one caught, one let through
        answer = {"answer": "no" if index % 7 == 0 else "yes"}  # rejects, some blocking
        project.scenario(f"plain/{tenant}/s{index:03d}", answer, **fields)
    project.record()
    project.scenario("plain/t1/unrecorded", {"answer": "yes"})  # a miss offline
    project.scenario("helper/acme/late", {"decision": "ask"}, expect=decides("ask"))


def test_the_totals_of_a_run_equal_those_recomputed_from_its_records(project: Project) -> None:
    _large_shaped_project(project)
    config = load_config(project.root)
    summary = run_evals(config)
    records = load_records(summary.results_dir)
    statuses = Counter(str(r["status"]) for r in records)
    assert statuses["passed"] and statuses["rejected"] and statuses["missed"]  # every kind ran
    assert sum(r["blocking"] for r in records) > 1
    assert summary.iterations == len(records) and summary.counts == statuses
    assert [(r.scenario.id, r.iteration) for r in summary.failures] == [
        (r["scenario"], r["iteration"]) for r in records if r["status"] != "passed"]
    assert view_rows(view_of_summary(summary)) == rows(records)

    stored = load_run(config.results, summary.run_id)
    run = stored.run
    assert run["iterations"] == len(records) and run["counts"] == dict(sorted(statuses.items()))
    assert run["strength"] == _strength_by_agent(records)
    assert run["strength"]["plain"]["total"] > run["strength"]["plain"]["caught"] > 0
    assert run["judges"] == judge_means(
        (j["name"], j["score"], j["interpretation"], j.get("source", ""))
        for r in records for j in r["judges"])
    assert run["rubric"] == rubric_summary(
        (r["agent"], x["name"], x["rule"], x["outcome"], x.get("source", ""))
        for r in records for x in r["rubric"])
    assert [m["name"] for m in run["metrics"]] == ["unsafe_refusal_rate"]
    assert run["blocking"] == [{"scenario": r["scenario"], "iteration": r["iteration"],
                                "type": r["type"], "message": r["message"]}
                               for r in records if r["blocking"]]
    # the terminal text from the totals is the text from every record read back
    assert render_view(view_of_summary(summary)) == render_view(stored)


def test_totals_count_a_scenario_and_its_counterexamples_once_over_its_iterations(
        project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/twice", {"answer": "yes"}, iterations=3,
                     expect=[{"json_path": {"path": "answer", "equals": "yes"}}],
                     counterexamples=[WRONG])
    project.record()
    summary = run_evals(load_config(project.root))
    (group,) = summary.totals.groups.values()
    assert (group.scenarios, group.iterations, group.caught, group.counterexamples) == (1, 3, 1, 1)
    assert summary.totals.strength_by_agent() == {"helper": {"caught": 1, "total": 1}}


def test_totals_folded_from_full_records_equal_those_from_summary_projections(
        project: Project) -> None:
    """A run folds each iteration from the full record it just wrote (no second projection);
    a forked job ships the ``summary`` projection. Both give the same totals, field by field."""
    from harness.results.record import IterationResult
    from harness.results.totals import RunTotals

    _large_shaped_project(project)
    summary = run_evals(load_config(project.root))
    records = load_records(summary.results_dir)
    from_full, from_projection = RunTotals(), RunTotals()
    for record in records:
        result = IterationResult.from_json(record)
        from_full.add(result, record)
        from_projection.add(result, result.to_json("summary"))
    assert from_full.agent_sources == from_projection.agent_sources
    assert sum(from_full.agent_sources.values()) == len(records)
    assert len(from_full.quoted) > 10 and from_full.quoted == from_projection.quoted
    assert from_full == from_projection  # every field: counts, groups, strength, scores, samples
