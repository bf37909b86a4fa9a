"""Generated mutants: deterministic wrong answers, judged like counterexamples, shown as strength.

A mutant the hard assertions reject is killed, one they let through survives
(listed with its operator), a crash never counts as a kill, an equivalent
survivor is marked with a reason, and ``--fail-under`` gates on the share killed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Project
from harness.assertions import CheckedItem
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, ChatResponse, ToolCall
from harness.mutants import OPERATORS, check_mutants, mutants_of

SCHEMA = {"type": "object", "properties": {
    "decision": {"enum": ["ask", "answer", "refuse"]},
    "questions": {"type": "array", "items": {"type": "object", "properties": {
        "options": {"type": "array", "items": {"type": "string"}}}}},
    "note": {"type": "string"}}}
TOOLS = ({"name": "file_draft", "parameters": {"type": "object", "properties": {
    "body": {"type": "string", "maxLength": 40}, "tone": {"enum": ["formal", "casual"]}}}},
         {"name": "send_message", "parameters": {"type": "object", "properties": {}}})
ANSWER = {"decision": "ask", "questions": [{"options": ["Oak table", "Walnut table"]}],
          "note": "Filed for review."}


def _agent() -> Agent:
    return Agent("helper", Path("."), "openai", "m", "", Path("system.md"), {}, TOOLS, "json",
                 SCHEMA, None)


def _scenario(*items: dict[str, Any], equivalent: tuple[dict[str, Any], ...] = ()) -> Scenario:
    return Scenario("helper", "acme", "case", Path("case.yaml"), "positive", "d", (), None, {}, 1,
                    tuple(CheckedItem(item) for item in items), (), equivalent_mutants=equivalent)


def _output(doc: Any = ANSWER, *calls: ToolCall) -> AgentOutput:
    raw = json.dumps(doc, indent=2)
    return AgentOutput(ChatResponse(raw, calls), raw, doc)


CALL = ToolCall("file_draft", {"body": "Dear Ana, the draft is ready.", "tone": "formal"})


def test_every_operator_makes_mutants_and_the_list_is_deterministic() -> None:
    scenario = _scenario({"max_chars": {"value": 40, "path": "note"}},
                         {"words": {"path": "questions[*].options[*]", "max": 5}},
                         {"json_path": {"path": "questions", "max_items": 1}},
                         {"not_contains": {"any": ["status_summary"], "path": "note"}})
    first = mutants_of(_agent(), scenario, _output(ANSWER, CALL))
    again = mutants_of(_agent(), scenario, _output(ANSWER, CALL))
    assert [(m.operator, m.detail, m.text) for m in first] == [
        (m.operator, m.detail, m.text) for m in again]
    assert {m.operator for m in first} == set(OPERATORS)
    details = {f"{m.operator}: {m.detail}" for m in first}
    assert "flip_enum: decision: 'ask' -> 'refuse'" in details
    assert "grow_list: questions: 1 -> 2 items" in details
    assert "lengthen: questions[*].options[*]: 6 words joined by '—'" in details
    assert "inject_term: 'status summary' into note" in details
    assert "append_question: 'Your call: the first one or the second one.' after note" in details
    assert "swap_tool: file_draft -> send_message" in details
    assert "swap_tool: file_draft.tone: 'formal' -> 'casual'" in details
    assert any(d.startswith("lengthen: file_draft.body: 29 -> ") for d in details)  # maxLength 40
    assert len({m.text + json.dumps([[c.name, c.arguments] for c in m.tool_calls])
                for m in first}) == len(first)  # no duplicate, none equal to the original


def test_killed_and_survivors_are_judged_by_the_scenarios_assertions() -> None:
    weak = _scenario({"json_path": {"path": "decision", "equals": "ask"}})
    strong = _scenario({"json_path": {"path": "decision", "equals": "ask"}},
                       {"questions": {"path": "note", "max": 0}},
                       {"json_schema": True})
    weak_report = check_mutants(_agent(), weak, _output())
    strong_report = check_mutants(_agent(), strong, _output())
    assert weak_report.total == strong_report.total > 0
    assert strong_report.killed > weak_report.killed
    assert ("append_question", "'Please also confirm the date that suits you.' after note") in (
        weak_report.survivors)
    assert not any(op == "append_question" and "after note" in detail
                   for op, detail in strong_report.survivors)
    assert weak_report.by_operator["flip_enum"] == (2, 2)  # decision ask -> answer, -> refuse


def _sdk_agent() -> Agent:
    """An SDK agent: agent.yaml declares no tools, agent.py declares them on the wire."""
    return Agent("helper", Path("."), "openai", "m", "", Path("system.md"), {}, (), "json",
                 SCHEMA, None)


def test_an_sdk_agents_mutants_are_judged_and_made_against_the_tools_it_declared_on_the_wire(
        ) -> None:
    """Judged against agent.yaml's empty tool list, every mutant that keeps a tool call was
    "killed" by tool_schema as an unknown tool (the committed SDK example reported 965 of 965
    killed; 826 of 1027 was the truth), and no mutant swapped a tool or broke its limits."""
    scenario = _scenario({"json_path": {"path": "decision", "equals": "ask"}})
    plain = _output(ANSWER, CALL)
    wired = AgentOutput(plain.response, plain.text, plain.parsed, wire_tools=TOOLS)
    declared = check_mutants(_agent(), scenario, _output(ANSWER, CALL))
    sdk = check_mutants(_sdk_agent(), scenario, wired)
    assert (sdk.total, sdk.killed, sdk.survivors) == (declared.total, declared.killed,
                                                      declared.survivors)
    assert ("swap_tool", "file_draft.tone: 'formal' -> 'casual'") in sdk.survivors
    details = {f"{m.operator}: {m.detail}" for m in mutants_of(_sdk_agent(), scenario, wired)}
    assert "swap_tool: file_draft -> send_message" in details
    assert any(d.startswith("lengthen: file_draft.body: 29 -> ") for d in details)  # maxLength 40


def test_a_crash_is_never_a_kill() -> None:
    crashing = _scenario({"max_chars": {"value": "not a number"}})  # int() raises in the check
    report = check_mutants(_agent(), crashing, _output())
    assert report.total > 0 and report.killed == 0
    assert len(report.survivors) == report.total


def test_equivalent_survivors_are_marked_with_their_reason() -> None:
    scenario = _scenario({"json_path": {"path": "decision", "in": ["ask", "answer"]}},
                         equivalent=({"match": "flip_enum: decision: 'ask' -> 'answer'",
                                      "reason": "both decisions are right for this request"},))
    report = check_mutants(_agent(), scenario, _output())
    assert ("flip_enum", "decision: 'ask' -> 'answer'",
            "both decisions are right for this request") in report.equivalent
    assert ("flip_enum", "decision: 'ask' -> 'answer'") not in report.survivors


def _project(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/first", {"answer": "yes", "note": "Filed."},
                     expect=[{"json_path": {"path": "answer", "equals": "yes"}}])
    project.record()


def test_the_mutants_command_lists_survivors_and_gates_with_fail_under(project: Project) -> None:
    _project(project)
    outcome = project.run("mutants")
    assert outcome.code == 0, outcome.err
    assert "helper:" in outcome.out and "survived" in outcome.out
    assert "append_question: 'Your call: the first one or the second one.' after note" in outcome.out
    gated = project.run("mutants", "--fail-under", "0.99")
    assert gated.code == 1
    assert "eval-mutants-below-floor" in gated.err and "helper" in gated.err
    found = json.loads(project.run("mutants", "--json").out)
    assert found["helper"]["mutants"] == found["helper"]["killed"] + len(found["helper"]["survivors"])


def test_run_with_mutants_adds_the_section_to_every_report_and_is_off_by_default(
        project: Project) -> None:
    _project(project)
    plain = project.run("run")
    assert plain.code == 0 and "generated mutants" not in plain.out
    assert "mutants" not in project.records()[-1]
    with_mutants = project.run("run", "--mutants")
    assert with_mutants.code == 0 and "generated mutants" in with_mutants.out
    assert project.records()[-1]["mutants"]["total"] > 0
    assert "### Generated mutants" in project.run("report", "--format", "md").out
    assert "mutants" in json.loads(project.run("report", "--format", "json").out)
    junit = project.run("report", "--format", "junit").out
    assert 'name="mutant_strength"' in junit and 'name="mutants_killed"' in junit
    page = project.run("report", "--format", "html").out
    assert '<section id="mutants">' in page and "survivors per scenario" in page
    refused = project.run("run", "--fail-under", "0.5")
    assert refused.code == 2 and "add --mutants" in refused.err
