"""The Anthropic messages provider: ``POST {base_url}/v1/messages``.

The canonical (OpenAI-shaped) request is mapped to the messages API: system
messages become the top-level ``system`` text; assistant tool calls become
``tool_use`` blocks and tool answers ``tool_result`` blocks in the next user
turn (consecutive turns of one role are merged, as the API requires);
``stop`` becomes ``stop_sequences`` and ``tool_choice`` is translated.
``seed`` has no Anthropic equivalent and is not sent (it stays in the key).
A JSON ``response_format`` (``json_object`` or ``json_schema``) is served the
way Anthropic documents JSON output: one forced tool whose input schema is the
wanted schema; its input comes back as the response content, never as a tool
call. Answers are validated strictly before anything is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harness.core.entities import ChatCall, ChatResponse, JsonObject, ToolCall, Usage
from harness.core.errors import ProviderError
from harness.providers.http import Transport, malformed
from harness.providers.retries import CallFailed, Receipt

API_VERSION = "2023-06-01"
#: The forced tool that carries a JSON response format.
JSON_TOOL = "json_output"
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "refusal": "content_filter",
}
#: Options translated here; everything else is passed through verbatim (top_k, metadata...).
_TRANSLATED = {"stop", "seed", "response_format", "tool_choice"}
RESERVED_OPTIONS = frozenset({"model", "messages", "tools", "system", "stream"})
_IGNORED_BLOCKS = frozenset({"thinking", "redacted_thinking"})


class AnthropicProvider:
    """A :class:`~harness.clients.base.ChatClient` for the Anthropic messages API."""

    def __init__(self, model: str, transport: Transport, *, provider: str = "anthropic",
                 secrets: tuple[str, ...] = ()) -> None:
        self.provider = provider
        self.model = model
        self.transport = transport
        self._secrets = secrets
        self.endpoint_kind = "anthropic"

    def complete(self, call: ChatCall) -> ChatResponse:
        """One paid call: the canonical request on the wire, the answer back in canonical form."""
        return self.complete_with_receipt(call)[0]

    def complete_with_receipt(self, call: ChatCall) -> tuple[ChatResponse, Receipt]:
        """:meth:`complete`, and what the call cost (attempts that reached the provider)."""
        body, json_tool = to_wire(call.request, call.model, scenario=call.scenario_id)
        path = "messages" if self.transport.base_url.rstrip("/").endswith("/v1") else "v1/messages"
        receipt = Receipt()
        data = self.transport.post_json(path, body, scenario=call.scenario_id, receipt=receipt)
        try:
            response = from_wire(data, scenario=call.scenario_id, json_tool=json_tool,
                                 label=self.transport.label, secrets=self._secrets)
        except CallFailed:
            raise
        except ProviderError as exc:
            raise CallFailed(Exception.__str__(exc), receipt.attempts) from None
        return response, receipt


def to_wire(request: JsonObject, model: str, *, scenario: str = "") -> tuple[JsonObject, str | None]:
    """The messages body of a canonical request, and the name of the JSON tool if one is forced."""
    options: JsonObject = dict(request.get("options") or {})
    if "max_tokens" not in options:
        raise ProviderError(f"{scenario}: the anthropic messages API needs options.max_tokens "
                            "(add it to agent.yaml options)")
    system = [m.get("content") or "" for m in request.get("messages", []) if m["role"] == "system"]
    turns: list[JsonObject] = []
    for message in request.get("messages", []):
        if message["role"] == "system":
            continue
        role, blocks = _blocks(message)
        if not blocks:
            continue
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    body: JsonObject = {"model": model, "messages": turns}
    if system:
        body["system"] = "\n\n".join(system)
    for name, value in options.items():
        if name not in _TRANSLATED:
            body[name] = value
    if "stop" in options:
        stop = options["stop"]
        body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    tools = [{"name": t["name"],
              **({"description": t["description"]} if t.get("description") else {}),
              "input_schema": t.get("parameters") or {"type": "object", "properties": {}}}
             for t in request.get("tools") or []]
    json_tool = _json_tool(options.get("response_format"))
    if json_tool is not None:
        if any(t["name"] == json_tool["name"] for t in tools):
            raise ProviderError(f"{scenario}: a tool is named {json_tool['name']!r}, the name the "
                                "JSON response format uses on Anthropic; rename the tool")
        tools.append(json_tool)
    if tools:
        body["tools"] = tools
    if "tool_choice" in options:
        body["tool_choice"] = _tool_choice(options["tool_choice"])
    elif json_tool is not None:
        only_json = len(tools) == 1
        body["tool_choice"] = {"type": "tool", "name": json_tool["name"]} if only_json else {"type": "any"}
    return body, (json_tool["name"] if json_tool else None)


def _blocks(message: JsonObject) -> tuple[str, list[JsonObject]]:
    role = message["role"]
    content = message.get("content")
    if role == "tool":
        return "user", [{"type": "tool_result", "tool_use_id": message.get("tool_call_id"),
                         "content": content or ""}]
    blocks: list[JsonObject] = []
    if content:
        blocks.append({"type": "text", "text": content})
    for call in message.get("tool_calls") or []:
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                arguments = {"value": arguments}
        blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                       "input": arguments if isinstance(arguments, dict) else {"value": arguments}})
    return ("assistant" if role == "assistant" else "user"), blocks


def _json_tool(response_format: Any) -> JsonObject | None:
    if not isinstance(response_format, dict):
        return None
    kind = response_format.get("type")
    if kind == "json_object":
        return {"name": JSON_TOOL, "description": "Give the answer as one JSON object.",
                "input_schema": {"type": "object"}}
    if kind == "json_schema":
        spec = response_format.get("json_schema") or {}
        return {"name": JSON_TOOL,
                "description": spec.get("description") or f"Give the answer as JSON "
                                                           f"({spec.get('name', 'the schema')}).",
                "input_schema": spec.get("schema") or {"type": "object"}}
    return None


def _tool_choice(value: Any) -> Any:
    if value == "auto":
        return {"type": "auto"}
    if value == "none":
        return {"type": "none"}
    if value in ("required", "any"):
        return {"type": "any"}
    if isinstance(value, dict):
        if value.get("type") == "function" and isinstance(value.get("function"), dict):
            return {"type": "tool", "name": value["function"].get("name")}
        if set(value) == {"name"}:
            return {"type": "tool", "name": value["name"]}
    return value


def from_wire(data: Any, *, scenario: str, json_tool: str | None = None, label: str = "anthropic",
              secrets: tuple[str, ...] = ()) -> ChatResponse:
    """The canonical response of a messages answer; refuses anything malformed."""
    def bad(problem: str) -> ProviderError:
        return malformed(scenario, label, problem, data, secrets)

    if not isinstance(data, dict):
        raise bad("the answer is not a JSON object")
    if data.get("type") == "error" or data.get("error"):
        raise bad("the answer is an error object")
    blocks = data.get("content")
    if not isinstance(blocks, list):
        raise bad("the answer has no content blocks")
    texts, calls, json_input = _read_blocks(blocks, json_tool, bad)
    raw_reason = data.get("stop_reason")
    if raw_reason not in STOP_REASONS:
        expected = ", ".join(sorted(STOP_REASONS))
        raise bad(f"stop reason {raw_reason!r} is unknown (expected one of {expected})")
    finish_reason = STOP_REASONS[raw_reason]
    content: str | None = "".join(texts) if texts else None
    if json_input is not None:
        content = json.dumps(json_input, ensure_ascii=False, indent=2)
        if not calls and finish_reason == "tool_calls":
            finish_reason = "stop"
    if not (content or "").strip() and not calls:
        hint = " (the token limit was reached: raise max_tokens)" if finish_reason == "length" else ""
        raise bad(f"the content is empty and there is no tool call{hint}")
    raw_usage = data.get("usage")
    usage: JsonObject = raw_usage if isinstance(raw_usage, dict) else {}
    input_tokens = sum(_int(usage.get(k)) for k in
                       ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    model = data.get("model")
    return ChatResponse(content=content, tool_calls=tuple(calls), finish_reason=finish_reason,
                        usage=Usage(input_tokens, _int(usage.get("output_tokens"))),
                        model=model if isinstance(model, str) else None)


def _read_blocks(
    blocks: list[Any], json_tool: str | None, bad: Callable[[str], ProviderError]
) -> tuple[list[str], list[ToolCall], Any]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    json_input: Any = None
    for index, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if not isinstance(block.get("text"), str):
                raise bad(f"text block {index} has no text")
            texts.append(block["text"])
        elif kind == "tool_use":
            name, arguments = block.get("name"), block.get("input")
            if not isinstance(name, str) or not isinstance(arguments, dict):
                raise bad(f"tool_use block {index} has no name or no object input")
            if json_tool is not None and name == json_tool:
                json_input = arguments
            else:
                calls.append(ToolCall(name=name, arguments=arguments))
        elif kind not in _IGNORED_BLOCKS:
            raise bad(f"content block {index} has an unknown type {kind!r}")
    return texts, calls, json_input


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
