"""Counterexamples: every run proves each scenario can fail on a known-wrong answer."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

import pytest

from conftest import Project

WRONG_NO = {"why": "says no where the contract needs yes", "answer": {"json": {"answer": "no"}}}
WRONG_MAYBE = {"name": "hedges", "why": "hedges instead of answering",
               "answer": {"json": {"answer": "maybe"}}}


def _setup(project: Project, counterexamples: list[dict[str, Any]], **fields: Any) -> None:
    project.agent()
    project.scenario("helper/acme/yes", {"answer": "yes"}, counterexamples=counterexamples, **fields)
    project.record()


def test_caught_counterexamples_keep_the_scenario_green_and_make_no_call(project: Project) -> None:
    _setup(project, [WRONG_NO, WRONG_MAYBE])
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert project.cache_digest() == before
    record = project.records()[-1]
    assert record["status"] == "passed"
    assert len(record["calls"]) == 1  # the agent's own call; counterexamples never call
    assert record["counterexamples"] == [
        {"name": "counterexample 1", "why": WRONG_NO["why"], "caught": True,
         "rejected": ["json_path answer == 'yes'"], "let_through": []},
        {"name": "hedges", "why": WRONG_MAYBE["why"], "caught": True,
         "rejected": ["json_path answer == 'yes'"], "let_through": []},
    ]
    assert "2/2" in outcome.out.splitlines()[-3] or "2/2" in outcome.out


def test_a_counterexample_that_passes_makes_the_scenario_toothless(project: Project) -> None:
    lucky = {"name": "yes with a lie", "why": "right answer field, invented source",
             "answer": {"json": {"answer": "yes", "source": "a study nobody ran"}}}
    _setup(project, [WRONG_NO, lucky])
    outcome = project.run("run")
    assert outcome.code == 1
    record = project.records()[-1]
    assert record["status"] == "toothless"
    assert "counterexample 'yes with a lie' (right answer field, invented source) passes every " \
           "hard assertion" in record["message"]
    assert "counterexample 1" not in record["message"]
    assert "toothless" in outcome.out
    assert "1/2" in outcome.out


def test_rejected_by_names_the_assertion_that_must_catch_it(project: Project) -> None:
    wrong = {"why": "answers no, and is short", "answer": {"json": {"answer": "no"}},
             "rejected_by": ["short", "right answer"]}
    _setup(project, [wrong], expect=[
        {"name": "right answer", "json_path": {"path": "answer", "equals": "yes"}},
        {"name": "short", "max_chars": 200}])
    assert project.run("run").code == 1
    record = project.records()[-1]
    assert record["status"] == "toothless"
    assert "is not rejected by 'short'" in record["message"]
    assert record["counterexamples"][0]["let_through"] == ["short"]


def test_a_tool_loop_counterexample_is_judged_on_every_step(project: Project) -> None:
    tools = [{"name": "lookup", "parameters": {"type": "object"}},
             {"name": "file_draft", "parameters": {
                 "type": "object", "required": ["body"],
                 "properties": {"body": {"type": "string", "maxLength": 40}}}}]
    project.agent("ops", output="text", tools=tools)
    lookup = {"content": None, "tool_calls": [{"name": "lookup", "arguments": {}}]}
    draft = {"content": "Filed.", "tool_calls": [{"name": "file_draft",
                                                  "arguments": {"body": "Short note."}}]}
    project.scenario(
        "ops/acme/reply", [lookup, draft], tool_results={"lookup": {"ok": True}},
        expect=[{"name": "looks up first", "tool_called": "lookup"},
                {"name": "files", "tool_called": "file_draft"}],
        counterexamples=[
            {"name": "skips the lookup", "why": "files without reading the baseline",
             "answer": draft, "rejected_by": ["looks up first"]},
            {"name": "long body", "why": "a draft body over the declared maxLength",
             "answer": [lookup, {"content": "Filed.", "tool_calls": [
                 {"name": "file_draft", "arguments": {"body": "x" * 41}}]}],
             "rejected_by": ["tool_schema"]},
        ])
    project.record()
    assert project.run("run").code == 0
    found = project.records()[-1]["counterexamples"]
    assert [c["caught"] for c in found] == [True, True]
    assert found[1]["rejected"] == ["tool_schema"]


def test_counterexamples_are_not_part_of_the_key(project: Project) -> None:
    _setup(project, [WRONG_NO])
    path = project.datasets / "helper/acme/yes.yaml"
    text = path.read_text(encoding="utf-8").replace("says no", "says no, bluntly")
    path.write_text(text, encoding="utf-8")
    assert project.run("run").code == 0
    assert project.records()[-1]["cache_hit"] is True


def test_strength_is_in_every_report(project: Project) -> None:
    _setup(project, [WRONG_NO, WRONG_MAYBE])
    project.run("run")
    data = json.loads(project.run("report", "--format", "json").out)
    assert data["total"]["strength"] == {"caught": 2, "total": 2}
    assert data["run"]["strength"] == {"helper": {"caught": 2, "total": 2}}
    markdown = project.run("report", "--format", "md").out
    assert "strength" in markdown and "2/2" in markdown
    suite = ET.fromstring(project.run("report", "--format", "junit").out).find("testsuite")
    assert suite is not None
    own = suite.find("properties")
    assert own is not None
    props = {p.get("name"): p.get("value") for p in own.iter("property")}
    assert props["strength"] == "2/2"
    case = suite.find("testcase")
    assert case is not None
    details = dict(line.split(": ", 1) for line in (case.findtext("system-out") or "").splitlines())
    assert details["strength"] == "2/2"  # in system-out: junit-10.xsd refuses testcase properties
    page = project.run("report", "--format", "html").out
    assert '"strength": {"caught": 2, "total": 2}' in page.replace("\\u0022", '"')


def test_malformed_counterexamples_are_dataset_errors_naming_the_field(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/yes", counterexamples=[
        {"answer": {"json": {"answer": "no"}}},                                   # no why
        {"why": "x", "answer": {"content": "a", "json": {}}},                     # both
    ])
    project.scenario("helper/acme/named", counterexamples=[
        {"name": "dup", "why": "a", "answer": {"content": "a"}, "rejected_by": ["nope"]},
        {"name": "dup", "why": "b", "answer": {"content": "b"}},
    ])
    outcome = project.run("run")
    assert outcome.code == 2
    assert "yes.yaml" in outcome.err and "counterexamples" in outcome.err
    assert "'nope' is not an assertion of this scenario" in outcome.err
    assert "'dup' names two counterexamples" in outcome.err


def _pytest_project(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> Project:
    (pytester.path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    project = Project(pytester.path, capsys)
    project.agent()
    lucky = {"name": "lucky", "why": "right field, invented source",
             "answer": {"json": {"answer": "yes", "source": "made up"}}}
    project.scenario("helper/acme/yes", {"answer": "yes"}, counterexamples=[WRONG_NO, lucky])
    project.scenario("helper/globex/yes", {"answer": "yes"}, counterexamples=[WRONG_MAYBE])
    assert project.record().code in (0, 1)
    return project


def test_pytest_fails_a_toothless_item_and_xdist_keeps_the_strength(
        pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> None:
    project = _pytest_project(pytester, capsys)
    serial = pytester.runpytest_subprocess("--evals", "-p", "no:cacheprovider")
    serial.assert_outcomes(passed=1, failed=1)
    serial.stdout.fnmatch_lines(["*[[]toothless] helper/acme/yes iteration 0*",
                                 "*counterexample 'lucky'*passes every hard assertion*"])
    parallel = pytester.runpytest_subprocess("--evals", "-n", "2", "-p", "no:cacheprovider")
    parallel.assert_outcomes(passed=1, failed=1)
    runs = sorted((project.results / "results").iterdir())
    strengths = [json.loads((run / "run.json").read_text(encoding="utf-8"))["strength"]
                 for run in runs[-2:]]
    assert strengths[0] == strengths[1] == {"helper": {"caught": 2, "total": 3}}


def test_an_invalid_agent_file_is_reported_without_blaming_the_rules_it_could_not_declare(
        project: Project) -> None:
    """agent.yaml with a bad field declares no rules, so a counterexample naming one of its rules
    in ``rejected_by`` used to get a second, misleading error ("is not an assertion of this
    scenario") beside the real one: only the agent file's problem is reported."""
    project.agent(equivalent_mutants=42,
                  expect=[{"name": "says yes", "json_path": {"path": "answer", "equals": "yes"}}])
    project.scenario("helper/acme/first", {"answer": "yes"}, counterexamples=[
        {"why": "says no", "answer": {"json": {"answer": "no"}}, "rejected_by": ["says yes"]}])
    outcome = project.run("run")
    assert outcome.code == 2
    text = outcome.err + outcome.out
    assert "agent.yaml: equivalent_mutants: 42 is not of type 'array'" in text
    assert "is not an assertion of this scenario" not in text
