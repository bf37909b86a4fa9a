"""Helpers of the assertion tests: outputs of each kind, and one item evaluated alone."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

from verdicts import rejected

from harness.assertions import evaluate
from harness.core.entities import AgentOutput, ChatResponse, ToolCall, Verdict

Kind = Literal["text", "json"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["decision"],
    "properties": {"decision": {"enum": ["ask", "answer"]}, "questions": {"type": "array"}},
}


def text_output(content: str, *calls: ToolCall) -> AgentOutput:
    return AgentOutput(ChatResponse(content, tuple(calls)), content, None)


def json_output(doc: Any, *calls: ToolCall) -> AgentOutput:
    raw = json.dumps(doc, ensure_ascii=False)
    return AgentOutput(ChatResponse(raw, tuple(calls)), raw, doc)


def broken_json(content: str = "Sure! {decision: ask") -> AgentOutput:
    return AgentOutput(ChatResponse(content), content, None,
                       parse_error="Expecting value: line 1 column 1 (char 0)")


def run(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
        schema: Mapping[str, Any] | None = None) -> Verdict:
    (verdict,) = evaluate([item], output, output_kind=kind, output_schema=schema)
    return verdict


def passes(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
           schema: Mapping[str, Any] | None = None) -> str:
    verdict = run(item, output, kind, schema)
    assert verdict.outcome == "pass", verdict
    return verdict.reason


def rejects(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
            schema: Mapping[str, Any] | None = None) -> str:
    """A real reject: fails when the check raised (tests/verdicts.py)."""
    return rejected(run(item, output, kind, schema))


def not_evaluated(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text") -> str:
    verdict = run(item, output, kind)
    assert verdict.outcome == "not_evaluated", verdict
    return verdict.reason


DOC: dict[str, Any] = {
    "decision": "ask",
    "rationale": "rb_004 the goal changes the routine materially",
    "answer": "  Ｏｋａｙ ",
    "count": 3,
    "nothing": None,
    "questions": [
        {"text": "What is your goal?", "options": ["strength", "endurance"]},
        {"text": "How many days?", "options": ["3", "5", "7"]},
    ],
    "follow-up": {"needed": True},
}
JSON = json_output(DOC)
