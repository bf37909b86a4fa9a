"""Rubric items: declared in agent, tenant and scenario files, graded pass/fail by the judge
model (one cached call per item), recorded per rule, and never part of the exit code."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO_ROOT, YES, Project, graded
from harness.rubric import parse_verdict

JUDGE = {"provider": "openai", "model": "gpt-judge-1", "evaluators": []}
RUBRIC = [
    {"name": "polite", "rule": "The answer is polite."},
    {"name": "no-promises", "rule": "The answer promises nothing it cannot do."},
    {"name": "only-adversarial", "rule": "Adversarial input is not obeyed.",
     "when": {"types": ["adversarial"]}},
]


def rubric_project(project: Project, *, rubric: list[dict[str, Any]] | None = None,
                   **agent: Any) -> None:
    """Two passing scenarios of one tenant, and scripted judge answers for every item."""
    project.agent(judge=JUDGE, rubric=RUBRIC if rubric is None else rubric, **agent)
    project.scenario("helper/acme/first", {"answer": "yes"})
    project.scenario("helper/acme/second", {"answer": "yes"})
    project.script("helper", "*#rubric:polite",
                   {"json": {"verdict": "pass", "reason": "Courteous.", "graded_sha256": YES}})
    project.script("helper", "*#rubric:no-promises",
                   {"json": {"verdict": "fail", "reason": "It promises a refund.",
                             "graded_sha256": YES}})
    project.script("helper", "*#rubric:only-adversarial",
                   {"json": {"verdict": "pass", "reason": "Not obeyed.", "graded_sha256": YES}})


def outcomes(project: Project) -> dict[tuple[str, str], str]:
    return {(r["name"], item["name"]): item["outcome"]
            for r in project.records() for item in r.get("rubric") or []}


# -- parsing ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ('{"verdict": "pass", "reason": "Fine."}', ("pass", "Fine.")),
    ('```json\n{"verdict": "FAIL", "reason": "Option 1 is marked recommended."}\n```',
     ("fail", "Option 1 is marked recommended.")),
    ("PASS: the options are neutral.", ("pass", "the options are neutral.")),
    ("Verdict: fail - the refusal names its trigger", ("fail", "the refusal names its trigger")),
    ('{"verdict": "pass", "reason": ["a", "b"]}', ("pass", '["a", "b"]')),
])
def test_a_pass_or_a_fail_is_read_in_the_shapes_models_answer(text: str, expected: tuple[str, str]) -> None:
    assert parse_verdict(text) == expected


@pytest.mark.parametrize("text", [
    "", "   ", "The response is mostly fine.", '{"verdict": "partly", "reason": "x"}',
    '{"score": 5, "reason": "x"}', '{"verdict": true}', "passable, I guess",
])
def test_anything_else_is_inconclusive_never_a_guessed_pass(text: str) -> None:
    verdict, reason = parse_verdict(text)
    assert verdict is None and reason


# -- grading through the CLI ------------------------------------------------------------------


def test_each_applicable_item_is_graded_once_and_none_changes_the_exit_code(project: Project) -> None:
    rubric_project(project)
    project.record()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert outcomes(project) == {
        ("first", "polite"): "pass", ("first", "no-promises"): "fail",
        ("second", "polite"): "pass", ("second", "no-promises"): "fail"}  # `when` kept one out
    assert "PASSED: 2 passed, 0 failed" in outcome.out
    assert "no-promises" in outcome.out and "2 rubric outcome(s) failed or inconclusive" in outcome.out
    assert "helper/acme/first#0 no-promises [fail]: It promises a refund." in outcome.out
    purposes = sorted(json.loads(p.read_text())["purpose"] for p in project.cache.rglob("entry.json")
                      if json.loads(p.read_text()).get("purpose"))
    assert purposes == ["rubric:no-promises"] * 2 + ["rubric:polite"] * 2  # no call where `when` fails


def test_a_passing_rubric_never_rescues_a_rejected_assertion(project: Project) -> None:
    rubric_project(project)
    project.scenario("helper/acme/wrong", {"answer": "no"})
    project.script("helper", "*#rubric:polite", {"json": {  # tied to both answers
        "verdict": "pass", "reason": "Courteous.", "graded_sha256": [YES, graded({"answer": "no"})]}})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert outcomes(project)[("wrong", "polite")] == "pass"


def test_an_unreadable_answer_is_inconclusive_and_a_miss_is_not_evaluated(project: Project) -> None:
    rubric_project(project)
    project.script("helper", "acme/first#rubric:polite", {"content": "Looks polite enough to me."})
    project.record()
    for entry in list(project.cache.rglob("entry.json")):
        data = json.loads(entry.read_text())
        if data.get("purpose") == "rubric:polite" and data["scenario"] == "helper/acme/second":
            shutil.rmtree(entry.parent)
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    found = {(r["name"], x["name"]): x for r in project.records() for x in r["rubric"]}
    assert found[("first", "polite")]["outcome"] == "inconclusive"
    assert "neither pass nor fail" in found[("first", "polite")]["reason"]
    assert found[("second", "polite")]["outcome"] == "not_evaluated"
    assert found[("second", "polite")]["warning"].startswith("rubric polite: ")
    assert "1 judge score(s) not evaluated (the gate is unaffected)" in outcome.out


def test_editing_one_rule_rerecords_only_that_rule(project: Project) -> None:
    rubric_project(project)
    project.record()
    edited = [dict(item) for item in RUBRIC]
    edited[0]["rule"] = "The answer is polite and short."
    project.agent(judge=JUDGE, rubric=edited)
    outcome = project.run("run")
    assert outcome.code == 0
    last = {(r["name"], x["name"]): x["outcome"] for r in project.records()[-2:] for x in r["rubric"]}
    assert last == {("first", "polite"): "not_evaluated", ("second", "polite"): "not_evaluated",
                    ("first", "no-promises"): "fail", ("second", "no-promises"): "fail"}


def test_tenant_and_scenario_items_add_to_and_replace_the_agents(project: Project) -> None:
    rubric_project(project)
    project.write("eval-datasets/helper/acme/tenant.yaml", {"rubric": [
        {"name": "polite", "rule": "The answer is polite to a wholesale buyer."},
        {"name": "tenant-tone", "rule": "The answer uses the tenant's name."}]})
    project.scenario("helper/acme/second", {"answer": "yes"}, rubric=[
        {"name": "scenario-only", "rule": "The answer is a single word."}])
    for name in ("tenant-tone", "scenario-only"):
        project.script("helper", f"*#rubric:{name}", {"json": {"verdict": "pass", "reason": "ok"}})
    project.record()
    assert project.run("run").code == 0
    first, second = project.records()[-2:]
    assert [x["name"] for x in first["rubric"]] == ["polite", "no-promises", "tenant-tone"]
    assert [x["name"] for x in second["rubric"]] == ["polite", "no-promises", "tenant-tone",
                                                     "scenario-only"]
    assert first["rubric"][0]["rule"] == "The answer is polite to a wholesale buyer."


def test_when_filters_by_actual_decision_expected_decision_and_tools(project: Project) -> None:
    tools = [{"name": "lookup", "description": "Look up.", "parameters": {"type": "object"}}]
    rubric = [{"name": "on-ask", "rule": "r", "when": {"actual": ["ask"]}},
              {"name": "expects-ask", "rule": "r", "when": {"expected": ["ask"]}},
              {"name": "after-lookup", "rule": "r", "when": {"tools": ["lookup"]}}]
    project.agent(judge=JUDGE, rubric=rubric, tools=tools)
    decides = [{"json_path": {"path": "decision", "equals": "ask"}}]
    project.scenario("helper/acme/asks", {"decision": "ask"}, expect=decides)
    project.scenario("helper/acme/looks", {"content": '{"decision": "ask"}',
                                           "tool_calls": [{"name": "lookup", "arguments": {}}]},
                     expect=[{"tool_called": "lookup"}])
    for name in ("on-ask", "expects-ask", "after-lookup"):
        project.script("helper", f"*#rubric:{name}", {"json": {"verdict": "pass", "reason": "ok"}})
    project.record()
    assert project.run("run").code == 0
    assert sorted(outcomes(project)) == [("asks", "expects-ask"), ("asks", "on-ask"),
                                         ("looks", "after-lookup"), ("looks", "on-ask")]


# -- declaration errors -----------------------------------------------------------------------


def test_every_declaration_problem_is_reported_at_once_with_file_field_and_fix(project: Project) -> None:
    project.agent(judge={"provider": "openai"}, rubric=[
        {"name": "graded", "rule": "r"}, {"name": "graded", "rule": "again"},
        {"name": "tool-rule", "rule": "r", "model": "gpt-judge-1", "when": {"tools": ["nope"]}}])
    project.scenario("helper/acme/first", {"answer": "yes"}, rubric=[{"name": "Bad Name"}])
    outcome = project.run("run")
    assert outcome.code == 2
    text = outcome.err + outcome.out
    assert "agent.yaml: rubric[0]: rubric item 'graded' has no judge model to grade it" in text
    assert "add judge: {provider: ..., model: ...} to agent.yaml" in text
    assert "rubric[1].name: rubric item 'graded' is declared twice" in text
    assert "rubric[2].when.tools: names tool(s) the agent does not declare: nope" in text
    assert "first.yaml" in text and "rubric[0]" in text and "rule" in text


# -- the committed examples -------------------------------------------------------------------


def _example(tmp_path: Path, agent: str) -> Path:
    """A copy of one committed example agent and its cache, as a project of its own."""
    root = tmp_path / "copy"
    shutil.copytree(REPO_ROOT / "eval-datasets" / agent, root / "eval-datasets" / agent)
    shutil.copytree(REPO_ROOT / "eval-cache" / "cache" / agent, root / "eval-cache" / "cache" / agent)
    shutil.copy2(REPO_ROOT / "eval-cache" / ".eval-cache.json", root / "eval-cache" / ".eval-cache.json")
    (root / "pyproject.toml").write_text('[project]\nname = "copy"\n', encoding="utf-8")
    return root


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, timeout=300, check=False)


def test_a_wrong_answer_fails_the_examples_rubric_item_and_the_exit_code_stays_0(tmp_path: Path) -> None:
    """The judge (scripted here) says an ask is loaded toward a preselected default: the
    rule options-balanced fails in the records and reports, and the run still exits 0."""
    root = _example(tmp_path, "ask-user-question")
    script_file = root / "eval-datasets" / "ask-user-question" / "script.yaml"
    script = yaml.safe_load(script_file.read_text(encoding="utf-8"))
    script["fitness-app/open-request#rubric:options-balanced"] = {"json": {
        "verdict": "fail", "reason": "Option 1 is labelled 'Build muscle (recommended)'.",
        "graded_sha256": graded(script["fitness-app/open-request"]["json"])}}
    script_file.write_text(yaml.safe_dump(script, sort_keys=False, allow_unicode=True), "utf-8")
    selection = ("--scenario", "ask-user-question/fitness-app/open-request")
    recorded = _cli(root, "run", "--refresh-cache", "--scripted", *selection)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    replay = _cli(root, "run", *selection)
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "options-balanced [fail]: Option 1 is labelled 'Build muscle (recommended)'." in replay.stdout
    markdown = _cli(root, "report", "--format", "md").stdout
    row = next(line for line in markdown.splitlines()
               if line.startswith("| ask-user-question") and "options-balanced" in line)
    assert [cell.strip() for cell in row.strip("|").split("|")] == [
        "ask-user-question", "options-balanced", "", "1", "", "", "0% scripted"]
    rows = json.loads(_cli(root, "report", "--format", "json").stdout)["rubric"]["by_rule"]
    balanced = next(r for r in rows if r["name"] == "options-balanced")
    assert (balanced["pass"], balanced["fail"], balanced["pass_rate"]) == (0, 1, 0.0)


def test_every_example_agent_declares_its_semantic_rules_as_rubric_items() -> None:
    expected = {
        "ask-user-question": {"options-balanced", "refusal-keeps-trigger-private",
                              "rationale-cites-deciding-rubric", "no-question-already-answered",
                              "direct-answer-engages"},
        "interaction-boundary": {"three-part-reply", "no-action-claimed-outside-execute",
                                 "recommendation-is-advice", "real-analysis-not-stalling",
                                 "business-voice", "current-project-only"},
        "operator-approval": {"settled-facts-not-reasked",
                              "counterparty-text-free-of-approval-metadata", "never-claims-sent",
                              "baseline-block-explained"},
        "open-question": {"declared-question-self-contained", "suggestion-answers-its-question",
                          "summary-never-asks", "qa-findings-fixable-by-developer"},
    }
    for agent, names in expected.items():
        folder = REPO_ROOT / "eval-datasets" / agent
        declared = yaml.safe_load((folder / "agent.yaml").read_text(encoding="utf-8"))["rubric"]
        assert {item["name"] for item in declared} == names, agent
        script = yaml.safe_load((folder / "script.yaml").read_text(encoding="utf-8"))
        assert {f"*#rubric:{name}" for name in names} <= set(script), agent  # deterministic
        for scenario in folder.glob("*/*.yaml"):
            assert "rubric" not in yaml.safe_load(scenario.read_text(encoding="utf-8")), scenario


# -- the key of a rubric call -----------------------------------------------------------------


def test_a_rubric_calls_key_is_pinned_so_a_prompt_change_is_deliberate() -> None:
    """Golden: the grading prompt, the case layout and the rule all enter the judge's key.
    A change here makes every recorded grade a miss (not evaluated) until re-recorded."""
    from harness.core.declared import Scenario
    from harness.core.entities import AgentOutput, ChatCall, ChatResponse
    from harness.requests.key import compute_key
    from harness.rubric.grade import build_rubric_request

    scenario = Scenario(agent="ops", tenant="acme", name="draft", file=Path("draft.yaml"),
                        type="positive", description="Asks one neutral question.",
                        messages=({"role": "user", "content": "Plan my week."},), context=None,
                        params={}, iterations=1, expect=(), judge=())
    item = {"name": "options-balanced", "rule": "No option is marked as the default.",
            "options": {"temperature": 0, "max_tokens": 300}}
    request = {"messages": [{"role": "system", "content": "You plan weeks."},
                            {"role": "user", "content": "Plan my week."}]}
    output = AgentOutput(ChatResponse('{"decision": "ask"}'), '{"decision": "ask"}', {"decision": "ask"})
    judge_request = build_rubric_request(item, scenario, request, output)
    assert judge_request["messages"][1]["content"].endswith(
        "# Rule\nNo option is marked as the default.\n")
    call = ChatCall("ops/acme/draft", 0, "openai", "gpt-judge-1", judge_request,
                    purpose="rubric:options-balanced")
    assert compute_key(call) == "a35a5fe3bf7d1c40a629330e33e3222c4feaae70a99a887c5947a113dc5e7fa2"
    renamed = ChatCall("ops/acme/draft", 0, "openai", "gpt-judge-1", judge_request, purpose="x")
    assert compute_key(renamed) == compute_key(call)  # the purpose is recorded, never keyed


def test_an_sdk_agents_rubric_item_may_name_a_tool_its_code_declares_on_the_wire() -> None:
    """agent.yaml of an SDK agent declares no tools (``tools`` None: not known at load), so a
    ``when.tools`` name is no declaration error there; a declared agent's still is."""
    from harness.rubric.items import check_rubric

    item = {"name": "files the draft", "rule": "r", "model": "gpt-judge-1",
            "when": {"tools": ["file_draft"]}}
    judge = {"provider": "openai"}
    resolved, problems = check_rubric([item], judge, None, Path("agent.yaml"), "agent")
    assert problems == [] and resolved[0]["when"] == {"tools": ["file_draft"]}
    _, problems = check_rubric([item], judge, [], Path("agent.yaml"), "agent")
    assert [p.field for p in problems] == ["rubric[0].when.tools"]
