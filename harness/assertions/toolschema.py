"""The ``tool_schema`` assertion: every tool call matches the tool the agent declared.

A model that calls a tool with a 3,000-character body against a declared
``maxLength: 1500``, an enum value the tool does not know, a missing required
argument or a tool nobody declared has produced an action the real tool would
refuse (or worse, accept). Keyword assertions cannot see that; the declaration
already says it, so the check reads the declaration itself (never a second
list of rules that could drift from it, as the guardrails standard asks).

It runs on every answer with tool calls, with no ``expect`` item: on by
default, ``tool_schema: false`` in agent.yaml switches it off (the verdict is
then ``not_evaluated`` with that reason, so a report still shows it was
skipped on purpose). Validators are compiled once per parameter schema, the
fast yes/no check of :mod:`harness.documents.fastschema` first and jsonschema only to
explain an invalid call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from harness.core.entities import AgentOutput, JsonObject, Verdict
from harness.documents.compiled import OFFLINE_REGISTRY
from harness.documents.fastkeywords import Check
from harness.documents.fastschema import compile_schema

__all__ = ["TOOL_SCHEMA", "tool_call_problems", "tool_schema_verdict"]

#: The assertion's label in verdicts and reports.
TOOL_SCHEMA = "tool_schema"
#: Problems quoted in one reason before "+N more".
_SHOWN = 4


@lru_cache(maxsize=512)
def _compiled(schema_json: str) -> tuple[Check | None, Draft202012Validator]:
    """Fast check and jsonschema validator of one parameter schema (by its canonical text)."""
    schema = json.loads(schema_json)
    return compile_schema(schema), Draft202012Validator(schema, registry=OFFLINE_REGISTRY)


def _call_problems(schema: Mapping[str, Any], arguments: Any) -> list[str]:
    """Every way ``arguments`` breaks ``schema`` (empty when valid)."""
    fast, validator = _compiled(json.dumps(schema, sort_keys=True, ensure_ascii=False))
    if fast is not None and fast(arguments):
        return []
    errors = sorted(validator.iter_errors(arguments), key=lambda e: (e.json_path, e.message))
    return [_describe(error) for error in errors]


def _describe(error: Any) -> str:
    where = error.json_path.removeprefix("$").removeprefix(".") or "arguments"
    value = error.instance
    if error.validator in ("maxLength", "minLength") and isinstance(value, str):
        return f"{where} has {len(value)} characters, {error.validator} is {error.validator_value}"
    message = error.message if len(error.message) <= 160 else error.message[:160] + "…"
    return f"{where}: {message}"


def tool_call_problems(tools: Sequence[JsonObject], calls: Sequence[Any]) -> list[str]:
    """Every problem of ``calls`` (objects with ``name`` and ``arguments``) against ``tools``."""
    declared = {str(tool.get("name")): tool for tool in tools}
    problems: list[str] = []
    for number, call in enumerate(calls, start=1):
        prefix = f"call {number} ({call.name})" if len(calls) > 1 else call.name
        tool = declared.get(call.name)
        if tool is None:
            known = ", ".join(sorted(declared)) or "none"
            problems.append(f"{prefix}: unknown tool (declared: {known})")
            continue
        schema = tool.get("parameters")
        if isinstance(schema, Mapping):
            problems.extend(f"{prefix}: {p}" for p in _call_problems(schema, call.arguments))
    return problems


def tool_schema_verdict(tools: Sequence[JsonObject], enabled: bool, output: AgentOutput
                        ) -> Verdict | None:
    """The verdict for an answer's tool calls; ``None`` when the answer called no tool."""
    calls = output.tool_calls
    if not calls:
        return None
    if not enabled:
        return Verdict(TOOL_SCHEMA, "not_evaluated", "switched off (tool_schema: false in agent.yaml)")
    problems = tool_call_problems(tools, calls)
    if problems:
        more = f" (+{len(problems) - _SHOWN} more)" if len(problems) > _SHOWN else ""
        return Verdict(TOOL_SCHEMA, "reject", "; ".join(problems[:_SHOWN]) + more)
    count = len(calls)
    return Verdict(TOOL_SCHEMA, "pass",
                   f"{count} tool call{'s' if count > 1 else ''} match the declared parameters")
