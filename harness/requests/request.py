"""Request builder: agent + scenario -> the canonical chat request.

The canonical request is what gets hashed into the key and stored in
``entry.json``. It holds only what changes the model's answer, in a form that
is identical on every machine: line endings normalised, template parameters
rendered, volatile tool-call ids renamed by position, tool arguments decoded
to objects.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.core.declared import Agent, Scenario
from harness.core.entities import JsonObject
from harness.documents.reading import normalise_newlines

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


class TemplateError(ValueError):
    """Template parameters that no params mapping defines, as ``(field, name)`` pairs."""

    def __init__(self, missing: list[tuple[str, str]]) -> None:
        self.missing = missing
        names = ", ".join(f"{{{{{name}}}}} in {where}" for where, name in missing)
        super().__init__(f"undefined template parameter(s): {names}")


def merged_params(agent: Agent, tenant_params: JsonObject, scenario: Scenario) -> JsonObject:
    """Scenario params over tenant params over agent params, plus ``agent`` and ``tenant``."""
    params: JsonObject = {"agent": scenario.agent, "tenant": scenario.tenant}
    params.update(agent.params)
    params.update(tenant_params)
    params.update(scenario.params)
    return params


def render(text: str, params: JsonObject, where: str, missing: list[tuple[str, str]]) -> str:
    """Replace ``{{name}}`` placeholders; record undefined names in ``missing``."""
    if "{{" not in text:
        return text

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in params:
            missing.append((where, name))
            return match.group(0)
        value = params[name]
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _PLACEHOLDER.sub(substitute, text)


def build_request(agent: Agent, scenario: Scenario, tenant_params: JsonObject) -> JsonObject:
    """The canonical request for one scenario (the same for every iteration).

    Raises :class:`TemplateError` listing every undefined placeholder at once.
    """
    params = merged_params(agent, tenant_params, scenario)
    missing: list[tuple[str, str]] = []
    messages: list[JsonObject] = [
        {
            "role": "system",
            "content": render(normalise_newlines(agent.system_prompt), params, "system_prompt", missing),
        }
    ]
    if scenario.context is not None:
        context = render(normalise_newlines(scenario.context), params, "context", missing)
        messages.append({"role": "system", "content": f"Context:\n{context}"})
    ids: dict[str, str] = {}
    for index, message in enumerate(scenario.messages):
        messages.append(_canonical_message(message, params, f"messages[{index}]", missing, ids))
    if missing:
        raise TemplateError(missing)
    request: JsonObject = {"messages": messages, "options": dict(agent.options)}
    if agent.tools:
        request["tools"] = [dict(tool) for tool in agent.tools]
    return request


def _canonical_message(
    message: JsonObject,
    params: JsonObject,
    where: str,
    missing: list[tuple[str, str]],
    ids: dict[str, str],
) -> JsonObject:
    """One message in canonical form; tool-call ids are renamed ``call_<n>`` by first use."""
    out: JsonObject = {"role": message["role"]}
    content = message.get("content")
    out["content"] = (
        None if content is None else render(normalise_newlines(content), params, where, missing)
    )
    if "name" in message:
        out["name"] = message["name"]
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": _stable_id(call.get("id"), ids),
                "name": call["name"],
                "arguments": _decode_arguments(call.get("arguments", {})),
            }
            for call in message["tool_calls"]
        ]
    if "tool_call_id" in message:
        out["tool_call_id"] = _stable_id(message["tool_call_id"], ids)
    return out


def _stable_id(volatile: str | None, ids: dict[str, str]) -> str:
    """Map a provider-issued id to ``call_<n>``; an id-less call gets a fresh number."""
    if volatile is None:
        volatile = f"\0anonymous-{len(ids)}"
    if volatile not in ids:
        ids[volatile] = f"call_{len(ids)}"
    return ids[volatile]


def _decode_arguments(arguments: Any) -> Any:
    """Tool arguments as an object: providers send JSON strings, datasets write mappings."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except json.JSONDecodeError:
            return arguments
    return arguments
