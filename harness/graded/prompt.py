"""The grading request: the grader's prompt as system message, the case as user message.

Every byte of it enters the grader's cache key, so the layout is fixed: a
change here turns every recorded judge and rubric answer into a miss (reported
as not evaluated) until re-recorded. A key of each kind is pinned (``tests/test_graded.py``,
``tests/test_rubric.py``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from harness.core.declared import Scenario
from harness.core.entities import AgentOutput, JsonObject
from harness.graded.honesty import rendered

__all__ = ["DEFAULT_OPTIONS", "PLACEHOLDER", "PLACEHOLDERS", "build_request"]

#: Options of a grading call unless agent.yaml ``judge.options`` (or the item) says otherwise.
DEFAULT_OPTIONS: JsonObject = {"temperature": 0, "max_tokens": 300}
#: Placeholders a grader's prompt may use; anything else in ``{{...}}`` is a dataset error.
PLACEHOLDERS = frozenset({"description", "conversation", "input", "output", "agent", "tenant",
                          "scenario", "type"})
PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def build_request(prompt: str, options: Mapping[str, Any] | None, scenario: Scenario,
                  request: Mapping[str, Any], output: AgentOutput, *,
                  rule: str | None = None) -> JsonObject:
    """The grader's canonical request; ``rule``, when given, ends the case (a rubric item)."""
    values = _values(scenario, request, output)
    system = PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), prompt)
    case = (f"# Expected behaviour\n{values['description']}\n\n"
            f"# Conversation\n{values['conversation']}\n\n"
            f"# Response to evaluate\n{values['output']}\n")
    if rule is not None:
        case = f"{case}\n# Rule\n{rule}\n"
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": case}],
            "options": dict(options or DEFAULT_OPTIONS)}


def _values(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput) -> dict[str, str]:
    messages = list(request.get("messages") or [])
    turns = messages[1:] if messages and messages[0].get("role") == "system" else messages
    users = [m for m in turns if m.get("role") == "user"]
    return {
        "description": scenario.description,
        "conversation": "\n\n".join(_render_turn(m) for m in turns) or "(none)",
        "input": str(users[-1].get("content") or "") if users else "",
        "output": rendered(output),  # one rendering: the one a scripted answer's graded_sha256 names
        "agent": scenario.agent,
        "tenant": scenario.tenant,
        "scenario": scenario.id,
        "type": scenario.type,
    }


def _render_turn(message: Mapping[str, Any]) -> str:
    text = f"[{message.get('role')}] {message.get('content') or ''}".rstrip()
    for call in message.get("tool_calls") or []:
        text += f"\n  -> tool call {call.get('name')}({json.dumps(call.get('arguments'))})"
    return text
