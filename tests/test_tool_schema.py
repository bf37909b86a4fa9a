"""The tool_schema assertion: every tool call is checked against the agent's declaration."""

from __future__ import annotations

from typing import Any

import pytest
from verdicts import rejected

from conftest import Project
from harness.assertions.toolschema import TOOL_SCHEMA, tool_schema_verdict
from harness.core.entities import AgentOutput, ChatResponse, ToolCall

FILE_DRAFT = {
    "name": "file_draft",
    "parameters": {
        "type": "object", "additionalProperties": False,
        "required": ["counterparty", "body", "channel"],
        "properties": {
            "counterparty": {"type": "string", "pattern": "^[a-z0-9-]+$"},
            "body": {"type": "string", "minLength": 1, "maxLength": 1500},
            "channel": {"type": "string", "enum": ["email", "shared_chat"]},
            "priority": {"type": "integer", "minimum": 0, "maximum": 3},
        },
    },
}
VALID = {"counterparty": "oakline-timber", "body": "Friday works for us.", "channel": "email"}


def _output(*calls: tuple[str, dict[str, Any]]) -> AgentOutput:
    response = ChatResponse("Filed.", tuple(ToolCall(n, a) for n, a in calls))
    return AgentOutput(response, "Filed.", None)


def test_a_valid_call_passes() -> None:
    verdict = tool_schema_verdict([FILE_DRAFT], True, _output(("file_draft", VALID)))
    assert verdict is not None
    assert (verdict.assertion, verdict.outcome) == (TOOL_SCHEMA, "pass")


def test_a_3000_character_body_breaks_a_max_length_of_1500() -> None:
    verdict = tool_schema_verdict([FILE_DRAFT], True,
                                  _output(("file_draft", {**VALID, "body": "x" * 3000})))
    rejected(verdict)
    assert verdict.reason == "file_draft: body has 3000 characters, maxLength is 1500"


@pytest.mark.parametrize(("arguments", "expected"), [
    ({**VALID, "channel": "fax"}, "channel: 'fax' is not one of ['email', 'shared_chat']"),
    ({"body": "hi", "channel": "email"}, "'counterparty' is a required property"),
    ({**VALID, "priority": "P1"}, "priority: 'P1' is not of type 'integer'"),
    ({**VALID, "cc": "boss@example.test"}, "Additional properties are not allowed ('cc'"),
    ({**VALID, "counterparty": "Oakline Timber"}, "does not match '^[a-z0-9-]+$'"),
    ({**VALID, "body": ""}, "body has 0 characters, minLength is 1"),
])
def test_each_violation_is_a_named_reject(arguments: dict[str, Any], expected: str) -> None:
    verdict = tool_schema_verdict([FILE_DRAFT], True, _output(("file_draft", arguments)))
    rejected(verdict)
    assert expected in verdict.reason


def test_an_unknown_tool_is_a_reject_and_every_call_is_reported() -> None:
    verdict = tool_schema_verdict([FILE_DRAFT], True, _output(
        ("send_message", {"to": "x"}), ("file_draft", {**VALID, "body": "y" * 1501})))
    rejected(verdict)
    assert "call 1 (send_message): unknown tool (declared: file_draft)" in verdict.reason
    assert "call 2 (file_draft): body has 1501 characters" in verdict.reason


def test_no_tool_call_means_no_verdict_and_switched_off_is_not_evaluated() -> None:
    assert tool_schema_verdict([FILE_DRAFT], True, _output()) is None
    verdict = tool_schema_verdict([FILE_DRAFT], False,
                                  _output(("file_draft", {**VALID, "body": "x" * 3000})))
    assert verdict is not None and verdict.outcome == "not_evaluated"
    assert "tool_schema: false" in verdict.reason


def _draft_project(project: Project, **agent_fields: Any) -> None:
    project.agent("ops", output="text", tools=[FILE_DRAFT], **agent_fields)
    project.scenario("ops/acme/long-draft",
                     {"content": "Filed the reply for approval.",
                      "tool_calls": [{"name": "file_draft",
                                      "arguments": {**VALID, "body": "Dear Oakline, " * 215}}]},
                     expect=[{"tool_called": "file_draft"}])


def test_a_run_rejects_an_overlong_draft_body_on_by_default(project: Project) -> None:
    _draft_project(project)
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    record = project.records()[-1]
    assert record["status"] == "rejected"
    verdict = record["verdicts"][-1]
    assert (verdict["assertion"], verdict["outcome"]) == ("tool_schema", "reject")
    assert "body has 3010 characters, maxLength is 1500" in verdict["reason"]


def test_switched_off_in_agent_yaml_the_check_is_not_evaluated(project: Project) -> None:
    _draft_project(project, tool_schema=False)
    project.record()
    assert project.run("run").code == 0
    verdicts = project.records()[-1]["verdicts"]
    assert verdicts[-1]["assertion"] == "tool_schema"
    assert verdicts[-1]["outcome"] == "not_evaluated"


def test_tool_schema_alone_does_not_make_a_scenario_count_as_checked(project: Project) -> None:
    project.agent("ops", output="text", tools=[FILE_DRAFT])
    project.scenario("ops/acme/draft",
                     {"content": "Filed.", "tool_calls": [{"name": "file_draft", "arguments": VALID}]},
                     expect=[{"json_path": {"path": "answer", "equals": "yes"}}])  # text agent
    project.record()
    assert project.run("run").code == 1
    assert project.records()[-1]["status"] == "unchecked"


def test_tool_schema_in_agent_yaml_must_be_a_boolean(project: Project) -> None:
    project.agent("ops", output="text", tools=[FILE_DRAFT], tool_schema="off")
    project.scenario("ops/acme/draft", expect=[{"contains": "x"}])
    outcome = project.run("run")
    assert outcome.code == 2
    assert "agent.yaml" in outcome.err and "tool_schema" in outcome.err
