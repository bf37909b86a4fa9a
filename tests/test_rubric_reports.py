"""What every report shows of graded answers: rubric pass rates per rule, inconclusive judge
counts, and scripted labels read from ``calls[].provenance`` (absent = unknown).

The runs here are written as files, exactly as a run leaves them under
``eval-results/results/<run-id>/`` (``records.jsonl`` and ``run.json``): records are
plain JSON lines, and that is the input every report reads.
"""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from test_report_html_browser import CHROMIUM, browse, text_of

from conftest import YES, Project
from harness.results.aggregates import judge_means, rubric_summary

PROVIDER = {"source": "provider", "endpoint_kind": "openai", "obtained": "paid", "attempts": 1,
            "latency_ms": 812.0, "input_tokens": 900, "output_tokens": 40}
SCRIPTED = {"source": "scripted", "endpoint_kind": "scripted", "obtained": "scripted",
            "attempts": 0, "latency_ms": None, "input_tokens": 0, "output_tokens": 0}


def call(purpose: str, provenance: dict[str, Any] | None) -> dict[str, Any]:
    found: dict[str, Any] = {"key": "0" * 64, "cache_hit": True, "latency_ms": 0.2,
                             "entry": "helper/acme/x/0/0000000000000000", "provenance": provenance}
    if purpose:
        found["purpose"] = purpose
    return found


def record(name: str, *, score: int | None, rubric: dict[str, str], source: dict[str, Any] | None,
           tenant: str = "acme", kind: str = "positive") -> dict[str, Any]:
    """One iteration record: an agent call, a relevance judge and rubric items, all answered
    from ``source`` (a provenance, or None: recorded before provenance existed)."""
    interpretation = {None: "inconclusive", 5: "exceptional", 4: "good", 3: "average"}[score]
    return {
        "scenario": f"helper/{tenant}/{name}", "agent": "helper", "tenant": tenant, "name": name,
        "type": kind, "iteration": 0, "status": "passed", "message": "", "verdicts": [],
        "test_id": name,
        "calls": [call("", source), call("judge:relevance", source),
                  *(call(f"rubric:{rule}", source) for rule in rubric)],
        "judges": [{"name": "relevance", "score": score, "interpretation": interpretation,
                    "reason": "r" if score else "the judge output could not be parsed as a 1-5 score",
                    "provider": "openai", "model": "gpt-judge-1", "warning": ""}],
        "rubric": [{"name": rule, "rule": f"The rule {rule}.", "outcome": outcome,
                    "reason": f"{rule} is {outcome}", "provider": "openai", "model": "gpt-judge-1",
                    "warning": ""} for rule, outcome in rubric.items()],
    }


def write_run(project: Project, run_id: str, started: str, records: list[dict[str, Any]]) -> None:
    folder = project.results / "results" / run_id
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    run = {"run_id": run_id, "started": started, "finished": started, "selection": {},
           "stamp_problem": "", "iterations": len(records), "counts": {"passed": len(records)},
           "exit_code": 0, "metrics": [], "blocking": [],
           "judges": judge_means((j["name"], j["score"], j["interpretation"],
                                  (next(c for c in r["calls"] if c.get("purpose") == "judge:relevance")
                                   ["provenance"] or {}).get("source", ""))
                                 for r in records for j in r["judges"]),
           "rubric": rubric_summary((r["agent"], x["name"], x["rule"], x["outcome"],
                                     (next(c for c in r["calls"] if c.get("purpose") == f"rubric:{x['name']}")
                                      ["provenance"] or {}).get("source", ""))
                                    for r in records for x in r["rubric"])}
    (folder / "run.json").write_text(json.dumps(run), "utf-8")


def scripted_run(project: Project, run_id: str = "20260101T000000000Z-aaaaaa",
                 started: str = "2026-01-01T00:00:00Z") -> None:
    """Three scenarios answered by the scripted provider: one inconclusive judge answer, a
    rubric rule that fails once and one that is inconclusive once."""
    write_run(project, run_id, started, [
        record("alpha", score=5, rubric={"polite": "pass", "brief": "fail"}, source=SCRIPTED),
        record("beta", score=None, rubric={"polite": "pass", "brief": "pass"}, source=SCRIPTED),
        record("gamma", score=4, rubric={"polite": "inconclusive", "brief": "pass"},
               source=SCRIPTED, tenant="globex", kind="edge"),
    ])


def provider_run(project: Project) -> None:
    write_run(project, "20260102T000000000Z-bbbbbb", "2026-01-02T00:00:00Z", [
        record("alpha", score=3, rubric={"polite": "fail", "brief": "fail"}, source=PROVIDER),
        record("beta", score=4, rubric={"polite": "pass", "brief": "fail"}, source=PROVIDER),
        record("gamma", score=4, rubric={"polite": "pass", "brief": "pass"}, source=None,
               tenant="globex", kind="edge"),
    ])


# -- inconclusive judges, in every format -----------------------------------------------------


def test_the_terminal_shows_inconclusive_counts_scripted_labels_and_rule_pass_rates(project: Project) -> None:
    scripted_run(project)
    text = project.run("report").out
    assert re.search(r"helper\s+acme\s+positive\s+5\.00 scripted, 1 inconclusive", text), text
    assert re.search(r"helper\s+globex\s+edge\s+4\.00 scripted", text)
    assert re.search(r"helper\s+brief\s+2\s+1\s+67% scripted", text), text
    assert re.search(r"helper\s+polite\s+2\s+1\s+100% scripted", text), text
    assert "helper/acme/alpha#0 brief [fail]: brief is fail" in text
    assert "helper/globex/gamma#0 polite [inconclusive]" in text
    assert ("provenance: agent answers: 3 scripted; judge answers: 9 scripted (a judge mean or pass "
            "rate marked scripted is a constant from a script, not a grade; trends leave it out)") in text


def test_markdown_shows_the_same_counts_and_labels(project: Project) -> None:
    scripted_run(project)
    markdown = project.run("report", "--format", "md").out
    cells = {tuple(c.strip() for c in line.strip("|").split("|"))
             for line in markdown.splitlines() if line.startswith("| helper")}
    assert ("helper", "acme", "positive", "5.00 scripted, 1 inconclusive") in cells
    assert ("helper", "brief", "2", "1", "", "", "67% scripted") in cells
    assert ("helper", "polite", "2", "", "1", "", "100% scripted") in cells
    assert ("helper", "globex", "edge", "polite", "", "", "1", "", "-") in cells  # by tenant and type
    assert "2 rubric outcome(s) failed or inconclusive" in markdown


def test_json_carries_counts_per_cell_and_per_rule_and_no_scripted_trend(project: Project) -> None:
    scripted_run(project)
    report = json.loads(project.run("report", "--format", "json").out)
    overall = report["judges"]["overall"]["relevance"]
    assert overall == {"mean": 4.5, "scored": 2, "inconclusive": 1, "not_evaluated": 0,
                       "scripted": 2, "trend_mean": None}
    cell = next(c for c in report["judges"]["cells"] if c["tenant"] == "acme")
    assert cell == {"agent": "helper", "tenant": "acme", "type": "positive", "judge": "relevance",
                    "mean": 5.0, "scored": 1, "inconclusive": 1, "not_evaluated": 0, "scripted": 1}
    brief = next(r for r in report["rubric"]["by_rule"] if r["name"] == "brief")
    assert brief == {"agent": "helper", "name": "brief", "rule": "The rule brief.", "pass": 2,
                     "fail": 1, "inconclusive": 0, "not_evaluated": 0, "scripted": 3,
                     "pass_rate": 0.6667, "trend_pass_rate": None}
    assert report["provenance"] == {"agent": {"scripted": 3, "provider": 0, "unknown": 0},
                                    "judge": {"scripted": 9, "provider": 0, "unknown": 0}}
    assert report["trend"] == [{"run_id": "20260101T000000000Z-aaaaaa",
                                "started": "2026-01-01T00:00:00Z", "judges": {"relevance": None},
                                "rubric": {"helper/brief": None, "helper/polite": None}}]


def test_junit_carries_the_counts_as_properties_and_never_a_failure(project: Project) -> None:
    scripted_run(project)
    root = ET.fromstring(project.run("report", "--format", "junit").out)
    suite = root.find("testsuite")
    assert suite is not None and suite.get("failures") == "0" and suite.get("errors") == "0"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")
             if p.get("name", "").startswith(("judge.", "rubric."))}
    assert props["judge.relevance.inconclusive"] == "1" and props["judge.relevance.scripted"] == "2"
    assert props["rubric.brief.fail"] == "1" and props["rubric.brief.pass_rate"] == "0.6667"
    assert props["rubric.polite.inconclusive"] == "1"
    beta = next(c for c in root.iter("testcase") if c.get("name") == "beta[0]")
    assert beta.find("properties") is None  # junit-10.xsd: per-testcase details go to system-out
    case = dict(line.split(": ", 1) for line in (beta.findtext("system-out") or "").splitlines())
    assert case["judge.relevance"] == "inconclusive scripted"
    assert case["rubric.brief"] == "pass scripted: brief is pass"


def test_html_embeds_the_counts_labels_and_rubric_outcomes(project: Project) -> None:
    scripted_run(project)
    page = project.run("report", "--format", "html").out
    raw = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page, re.S)
    assert raw is not None
    data = json.loads(raw.group(1))
    assert ["helper", "acme", "positive", "5.00 scripted, 1 inconclusive"] in data["judge_groups"]["rows"]
    assert data["rubric"]["headers"][:4] == ["agent", "tenant", "type", "rule"]
    assert ["helper", "acme", "positive", "brief", 1, 1, "", "", "50% scripted"] in data["rubric"]["rows"]
    alpha = next(r for r in data["records"] if r["scenario"] == "helper/acme/alpha")
    assert [(x["name"], x["outcome"], x["scripted"]) for x in alpha["rubric"]] == [
        ("polite", "pass", True), ("brief", "fail", True)]
    assert data["provenance"].startswith("provenance: agent answers: 3 scripted")
    assert 'id="table-rubric"' in page and 'id="provenance"' in page


# -- provenance read defensively --------------------------------------------------------------


def test_provider_answers_are_trended_and_unknown_provenance_is_not_called_scripted(project: Project) -> None:
    scripted_run(project)
    provider_run(project)
    report = json.loads(project.run("report", "--format", "json").out)
    assert report["judges"]["overall"]["relevance"]["scripted"] == 0
    assert report["provenance"]["agent"] == {"scripted": 0, "provider": 2, "unknown": 1}
    assert [t["judges"]["relevance"] for t in report["trend"]] == [None, 3.667]
    assert [t["rubric"]["helper/polite"] for t in report["trend"]] == [None, 0.6667]
    text = project.run("report").out
    assert "scripted" not in text.split("provenance:")[0]
    assert "provenance: agent answers: 2 provider, 1 unknown; judge answers: 6 provider, 3 unknown" in text


def test_records_without_any_provenance_get_no_label_and_no_provenance_line(project: Project) -> None:
    write_run(project, "20260103T000000000Z-cccccc", "2026-01-03T00:00:00Z",
              [record("alpha", score=5, rubric={"polite": "pass"}, source=None)])
    for run in (project.results / "results").iterdir():  # as written before provenance existed
        lines = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
        for line in lines:
            for item in line["calls"]:
                del item["provenance"]
        (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines), "utf-8")
    text = project.run("report").out
    assert "scripted" not in text and "provenance:" not in text
    assert re.search(r"helper\s+polite\s+1\s+.*100%", text)


# -- compare ----------------------------------------------------------------------------------


def test_compare_shows_each_rules_change_and_the_outcomes_that_flipped(project: Project) -> None:
    scripted_run(project)
    provider_run(project)
    outcome = project.run("compare", "20260101T000000000Z-aaaaaa", "20260102T000000000Z-bbbbbb")
    assert outcome.code == 0
    text = outcome.out
    assert "2 rubric rule(s) changed pass rate (reported only, never gating):" in text
    assert re.search(r"helper\s+brief\s+67%\s+33%\s+-33%\s+yes", text), text
    assert re.search(r"helper\s+polite\s+100%\s+67%\s+-33%\s+yes", text), text
    assert "helper/acme/alpha#0 polite: pass -> fail: polite is fail" in text
    assert "helper/acme/alpha#0 brief" not in text  # fail -> fail is no flip


# -- run.json, computed at the end of a run ---------------------------------------------------


def test_run_means_leave_scripted_scores_out_of_the_trend() -> None:
    means = judge_means([("relevance", 5, "exceptional", "scripted"), ("relevance", 3, "average", ""),
                         ("relevance", None, "inconclusive", "provider"),
                         ("relevance", None, "not_evaluated", "")])
    assert means == {"relevance": {"mean": 4.0, "scored": 2, "inconclusive": 1, "not_evaluated": 1,
                                   "scripted": 1, "trend_mean": 3.0}}
    rubric = rubric_summary([("a", "r", "R.", "pass", "scripted"), ("a", "r", "R.", "fail", "provider"),
                             ("a", "r", "R.", "inconclusive", "provider")])
    assert rubric == {"a/r": {"rule": "R.", "pass": 1, "fail": 1, "inconclusive": 1,
                              "not_evaluated": 0, "scripted": 1, "pass_rate": 0.5,
                              "trend_pass_rate": 0.0}}


# -- the HTML report in a real browser --------------------------------------------------------


def test_the_browser_renders_rubric_counts_and_labels_without_errors(project: Project,
                                                                     tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() and os.environ.get("HARNESS_REQUIRE_BROWSER") != "1":
        pytest.skip("chromium is not installed (apt-get install chromium; .ci/run does it)")
    scripted_run(project)
    page = tmp_path / "report.html"
    assert project.run("report", "--format", "html", "--output", str(page)).code == 0
    dom, console = browse(page, tmp_path / "profile")
    assert console == [] and 'data-rendered="ok"' in dom
    judges = dom[dom.index('id="table-judges"'):dom.index('id="table-rubric"')]
    assert "5.00 scripted, 1 inconclusive" in judges
    rubric = dom[dom.index('id="table-rubric"'):dom.index('id="table-rubric-trend"')]
    assert rubric.count("<tr>") == 5  # header + brief and polite for two groups
    assert "50% scripted" in rubric and ">-<" in rubric  # gamma's polite: inconclusive only
    assert "provenance: agent answers: 3 scripted" in text_of(dom, "provenance")
    trend = dom[dom.index('id="chart-trend"'):dom.index('id="table-coverage"')]
    assert "<circle" not in trend and "scripted answers are left out of trends" in trend
    rule_trend = dom[dom.index('id="table-rubric-trend"'):dom.index('id="provenance"')]
    assert "helper/brief" in rule_trend and "2026-01-01T00:00:00" in rule_trend
    assert "%" not in rule_trend  # every pass rate of that run came from a script
    view = dom[dom.index('id="transcript"'):]
    assert "Rubric (reported only)" in view and "brief is fail" in view


# -- end to end: a scripted recording, replayed --------------------------------------------------


def test_a_scripted_recording_is_labelled_scripted_in_every_report_and_never_trended(
        project: Project) -> None:
    """Recorded through the scripted provider, every entry says so (provenance source
    scripted); the offline replay's records carry it on every call, and every report labels
    the judge means and rubric pass rates as scripted and leaves them out of the trend."""
    project.agent(judge={"provider": "openai", "model": "gpt-judge-1", "evaluators": ["relevance"]},
                  rubric=[{"name": "polite", "rule": "The answer is polite."}])
    project.scenario("helper/acme/first", {"answer": "yes"})
    project.scenario("helper/acme/second", {"answer": "yes"})
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 5, "reason": "On point.", "graded_sha256": YES}})
    project.script("helper", "*#rubric:polite",
                   {"json": {"verdict": "pass", "reason": "Courteous.", "graded_sha256": YES}})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    run_dir = sorted((project.results / "results").iterdir())[-1]
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert {c["provenance"]["source"] for r in records for c in r["calls"]} == {"scripted"}
    assert {x["source"] for r in records for x in r["judges"] + r["rubric"]} == {"scripted"}
    run = json.loads((run_dir / "run.json").read_text())
    assert run["judges"]["relevance"]["scripted"] == 2 and run["judges"]["relevance"]["trend_mean"] is None
    assert run["rubric"]["helper/polite"]["scripted"] == 2
    assert run["rubric"]["helper/polite"]["trend_pass_rate"] is None
    assert re.search(r"helper\s+acme\s+positive\s+5\.00 scripted", outcome.out), outcome.out
    assert re.search(r"helper\s+polite\s+2\s+.*100% scripted", outcome.out)
    assert "provenance: agent answers: 2 scripted; judge answers: 4 scripted" in outcome.out
    report = json.loads(project.run("report", "--format", "json").out)
    assert report["trend"][-1]["judges"] == {"relevance": None}
    assert report["trend"][-1]["rubric"] == {"helper/polite": None}
