"""The OpenAI-compatible chat-completions provider.

One wire format serves OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server and
LM Studio: ``POST {base_url}/chat/completions``. The canonical request maps
almost one to one; ``options`` are passed through verbatim (so
``max_completion_tokens``, ``response_format`` with a ``json_schema``, ``seed``
all reach the endpoint as written), tools become ``{"type": "function"}``
declarations and tool-call arguments are sent as JSON strings. Answers are
validated strictly before anything is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from harness.core.entities import ChatCall, ChatResponse, JsonObject, ToolCall, Usage
from harness.core.errors import ProviderError
from harness.providers.compat import Compat, apply, check_tools_honoured
from harness.providers.http import Transport, malformed
from harness.providers.retries import CallFailed, Receipt

#: Wire finish reasons and their canonical names; anything else is refused.
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "eos_token": "stop",  # Hugging Face TGI
    "eos": "stop",
    "stop_sequence": "stop",
}
#: Body fields the harness sets itself; an option with one of these names is refused.
RESERVED_OPTIONS = frozenset({"model", "messages", "tools", "stream", "n", "functions"})


class OpenAIProvider:
    """A :class:`~harness.clients.base.ChatClient` for any OpenAI-compatible endpoint."""

    def __init__(self, model: str, transport: Transport, *, provider: str = "openai",
                 secrets: tuple[str, ...] = (), compat: Compat | None = None,
                 endpoint_kind: str = "openai-compatible") -> None:
        self.provider = provider
        self.model = model
        self.transport = transport
        self._secrets = secrets
        self.compat = compat or Compat()
        self.endpoint_kind = endpoint_kind

    def complete(self, call: ChatCall) -> ChatResponse:
        """One paid call: the canonical request on the wire, the answer back in canonical form."""
        return self.complete_with_receipt(call)[0]

    def complete_with_receipt(self, call: ChatCall) -> tuple[ChatResponse, Receipt]:
        """:meth:`complete`, and what the call cost (attempts that reached the provider)."""
        body = apply(to_wire(call.request, call.model), self.compat)
        receipt = Receipt()
        data = self.transport.post_json("chat/completions", body, scenario=call.scenario_id,
                                        receipt=receipt)
        try:
            response = from_wire(data, scenario=call.scenario_id, label=self.transport.label,
                                 secrets=self._secrets)
            ignored = check_tools_honoured(call.request, response)
            if ignored:
                raise malformed(call.scenario_id, self.transport.label, ignored, data, self._secrets)
        except CallFailed:
            raise
        except ProviderError as exc:
            raise CallFailed(Exception.__str__(exc), receipt.attempts) from None
        return response, receipt


def to_wire(request: JsonObject, model: str) -> JsonObject:
    """The chat-completions body of a canonical request, before the endpoint's
    :mod:`~harness.providers.compat` profile is applied."""
    body: JsonObject = {"model": model,
                        "messages": [_message(m) for m in request.get("messages", [])]}
    for name, value in (request.get("options") or {}).items():
        body[name] = _tool_choice(value) if name == "tool_choice" else value
    tools = request.get("tools") or []
    if tools:
        body["tools"] = [
            {"type": "function",
             "function": {"name": t["name"],
                          **({"description": t["description"]} if t.get("description") else {}),
                          "parameters": t.get("parameters") or {"type": "object", "properties": {}}}}
            for t in tools
        ]
    return body


def _message(message: JsonObject) -> JsonObject:
    out: JsonObject = {"role": message["role"], "content": message.get("content")}
    if message.get("name"):
        out["name"] = message["name"]
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {"id": call["id"], "type": "function",
             "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments"))}}
            for call in message["tool_calls"]
        ]
    if message.get("tool_call_id"):
        out["tool_call_id"] = message["tool_call_id"]
    return out


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)


def _tool_choice(value: Any) -> Any:
    """``{name: X}`` is shorthand for forcing tool X; everything else is already wire form."""
    if isinstance(value, dict) and set(value) == {"name"}:
        return {"type": "function", "function": {"name": value["name"]}}
    return value


def from_wire(data: Any, *, scenario: str, label: str = "openai",
              secrets: tuple[str, ...] = ()) -> ChatResponse:
    """The canonical response of a chat-completions answer; refuses anything malformed."""
    def bad(problem: str) -> ProviderError:
        return malformed(scenario, label, problem, data, secrets)

    if not isinstance(data, dict):
        raise bad("the answer is not a JSON object")
    if data.get("error"):
        raise bad("the answer is an error object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        raise bad("the answer has no choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise bad("the first choice has no message")
    content = _content(message.get("content"), bad)
    tool_calls = _tool_calls(message, bad)
    raw_reason = choice.get("finish_reason")
    if raw_reason not in FINISH_REASONS:
        expected = ", ".join(sorted(FINISH_REASONS))
        raise bad(f"finish reason {raw_reason!r} is unknown (expected one of {expected})")
    finish_reason = FINISH_REASONS[raw_reason]
    if not (content or "").strip() and not tool_calls:
        hint = " (the token limit was reached: raise max_tokens)" if finish_reason == "length" else ""
        raise bad(f"the content is empty and there is no tool call{hint}")
    raw_usage = data.get("usage")
    usage: JsonObject = raw_usage if isinstance(raw_usage, dict) else {}
    model = data.get("model")
    return ChatResponse(
        content=content,
        tool_calls=tuple(tool_calls),
        finish_reason=finish_reason,
        usage=Usage(_int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))),
        model=model if isinstance(model, str) else None,
    )


def _content(value: Any, bad: Callable[[str], ProviderError]) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):  # content parts, as some compatible servers answer
        texts = [p.get("text") for p in value if isinstance(p, dict) and p.get("type") == "text"]
        if all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    raise bad("the message content is neither a string nor null")


def _tool_calls(message: JsonObject, bad: Callable[[str], ProviderError]) -> list[ToolCall]:
    raw = message.get("tool_calls") or []
    if message.get("function_call") and not raw:
        raw = [{"type": "function", "function": message["function_call"]}]
    if not isinstance(raw, list):
        raise bad("tool_calls is not a list")
    calls: list[ToolCall] = []
    for index, item in enumerate(raw):
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise bad(f"tool call {index} has no function name")
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                raise bad(f"the arguments of tool call {index} ({function['name']}) are not valid "
                          "JSON") from None
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise bad(f"the arguments of tool call {index} ({function['name']}) are not a JSON object")
        calls.append(ToolCall(name=function["name"], arguments=arguments))
    return calls


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
