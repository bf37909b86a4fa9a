"""The wire compatibility profile of OpenAI-compatible servers, and the errors worth knowing.

The canonical request (and so the key) is the same for every server; only its
wire form adapts. By default the harness sends what the official API and the
common compatible servers all accept: an assistant message that carries tool
calls and no text goes out with ``"content": ""`` (llama.cpp's server and
llama-cpp-python answer HTTP 500 to ``null``; OpenAI, vLLM, Ollama and LM Studio
accept the empty string). What cannot be one form for all is declared per
agent in ``agent.yaml`` under ``endpoint.compat`` (never keyed)::

    endpoint:
      compat:
        assistant_tool_content: empty   # empty (default) | null | omit
        response_format: json_schema    # as-is (default) | json_object | json_schema | omit
        max_tokens_field: max_tokens    # as-is (default) | max_tokens | max_completion_tokens

:func:`diagnose` recognises the error bodies of known quirks (LM Studio refusing
``json_object``, a server without tool support, a context overflow) so the
failure names the fix and is not retried: another attempt would be paid for
and fail the same way. :func:`check_tools_honoured` refuses an answer that
shows the server ignored the declared tools.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.entities import ChatResponse, JsonObject

#: Every knob of ``endpoint.compat`` and the values it takes (the first is the default).
SETTINGS: dict[str, tuple[str, ...]] = {
    "assistant_tool_content": ("empty", "null", "omit"),
    "response_format": ("as-is", "json_object", "json_schema", "omit"),
    "max_tokens_field": ("as-is", "max_tokens", "max_completion_tokens"),
}


@dataclass(frozen=True)
class Compat:
    """One endpoint's wire profile (defaults: what every common server accepts)."""

    assistant_tool_content: str = "empty"
    response_format: str = "as-is"
    max_tokens_field: str = "as-is"


def compat_problems(value: Any) -> list[str]:
    """What is wrong with an ``endpoint.compat`` mapping (empty when it is valid)."""
    if not isinstance(value, Mapping):
        return [f"endpoint.compat must be a mapping of {', '.join(SETTINGS)}, got {value!r}"]
    problems = []
    for name, setting in value.items():
        allowed = SETTINGS.get(str(name))
        if allowed is None:
            problems.append(f"endpoint.compat.{name} is unknown: the settings are "
                            f"{', '.join(SETTINGS)}")
        elif setting not in allowed:
            problems.append(f"endpoint.compat.{name}: {setting!r} is not one of "
                            f"{', '.join(allowed)}")
    return problems


def compat_of(endpoint: Mapping[str, Any]) -> Compat:
    """The profile of an agent's ``endpoint`` (already validated by the dataset loader)."""
    raw = endpoint.get("compat") or {}
    return Compat(**{k: str(v) for k, v in raw.items() if k in SETTINGS})


def apply(body: JsonObject, compat: Compat) -> JsonObject:
    """The chat-completions ``body`` adapted to the endpoint (a new dict; ``body`` is kept)."""
    out = dict(body)
    out["messages"] = [_message(m, compat) for m in body.get("messages", [])]
    if "response_format" in out and compat.response_format != "as-is":
        adapted = _response_format(out["response_format"], compat.response_format)
        if adapted is None:
            del out["response_format"]
        else:
            out["response_format"] = adapted
    if compat.max_tokens_field != "as-is":
        other = "max_completion_tokens" if compat.max_tokens_field == "max_tokens" else "max_tokens"
        if other in out and compat.max_tokens_field not in out:
            out[compat.max_tokens_field] = out.pop(other)
    return out


def _message(message: JsonObject, compat: Compat) -> JsonObject:
    if message.get("role") != "assistant" or not message.get("tool_calls"):
        return message
    if message.get("content") not in (None, ""):
        return message
    out = dict(message)
    if compat.assistant_tool_content == "empty":
        out["content"] = ""
    elif compat.assistant_tool_content == "null":
        out["content"] = None
    else:
        out.pop("content", None)
    return out


def _response_format(value: Any, wanted: str) -> Any:
    """``value`` rewritten to the wanted type; a ``json_schema`` keeps its schema when it can."""
    kind = value.get("type") if isinstance(value, Mapping) else None
    if wanted == "omit":
        return None
    if kind not in ("json_object", "json_schema") or kind == wanted:
        return value  # text, or already the wanted type
    if wanted == "json_object":
        return {"type": "json_object"}
    # json_object -> json_schema: "any JSON object" is exactly the schema {"type": "object"}
    return {"type": "json_schema",
            "json_schema": {"name": "json_object", "schema": {"type": "object"}}}


# -- errors worth knowing ------------------------------------------------------------------------

_OVERFLOW = re.compile(
    r"context_length_exceeded|maximum context length|exceeds? the available context size|"
    r"context length of only|context window|prompt is too long|exceed_context_size",
    re.IGNORECASE)
_NULL_CONTENT = re.compile(r"content\b.{0,120}\b(null|none|nonetype)\b|"
                           r"\b(null|none)\b.{0,60}\bcontent\b", re.IGNORECASE | re.DOTALL)
_RESPONSE_FORMAT = re.compile(r"response_format|json_schema|json_object", re.IGNORECASE)
_NO_TOOLS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"tools param requires --jinja", re.IGNORECASE),
     "llama.cpp's server takes tools only when started with --jinja"),
    (re.compile(r"does not support tools", re.IGNORECASE),
     "this Ollama model has no tool support: pick a model whose template has tools"),
    (re.compile(r"enable-auto-tool-choice", re.IGNORECASE),
     "vLLM takes tools only when started with --enable-auto-tool-choice --tool-call-parser "
     "<parser>"),
)
_MAX_TOKENS = re.compile(r"max_tokens.{0,80}(not supported|unsupported).{0,80}"
                         r"max_completion_tokens", re.IGNORECASE | re.DOTALL)


def diagnose_for(agent_yaml: str) -> Callable[[int, str], tuple[str, bool] | None]:
    """A :data:`~harness.providers.retries.Diagnose` hook whose hints name ``agent_yaml``."""

    def diagnose(status: int, body: str) -> tuple[str, bool] | None:
        if status < 400:
            return None
        if _OVERFLOW.search(body):
            return ("context overflow: the request is longer than the model's context window. "
                    "Shorten the scenario or the system prompt, lower max_tokens, or give the "
                    "server a larger context (llama.cpp --ctx-size, vLLM --max-model-len, "
                    "Ollama num_ctx, LM Studio context length)", False)
        for pattern, fix in _NO_TOOLS:
            if pattern.search(body):
                return f"the server cannot take the declared tools: {fix}", False
        if _MAX_TOKENS.search(body):
            return (f"set endpoint.compat.max_tokens_field: max_completion_tokens in {agent_yaml}",
                    False)
        if _RESPONSE_FORMAT.search(body) and status in (400, 422, 500):
            return ("the server refused the response_format: set endpoint.compat.response_format "
                    f"in {agent_yaml} to json_schema (LM Studio), json_object (servers without "
                    "structured outputs) or omit", False)
        if _NULL_CONTENT.search(body) and status in (400, 422, 500):
            return ("the server refused a null message content: set "
                    f"endpoint.compat.assistant_tool_content: empty in {agent_yaml}", False)
        return None

    return diagnose


_TEXT_TOOL_CALL = re.compile(r"<tool_call>|\[TOOL_CALLS\]|<\|python_tag\|>|<function=", re.IGNORECASE)


def check_tools_honoured(request: JsonObject, response: ChatResponse) -> str | None:
    """Why an answer shows the server ignored the declared tools, or None.

    Two decidable signs: a forced tool choice (``required`` or a named tool)
    answered without a tool call, and a tool call written out as text in a
    model's own call syntax (``<tool_call>``...) instead of ``tool_calls``.
    """
    if not request.get("tools") or response.tool_calls:
        return None
    choice = (request.get("options") or {}).get("tool_choice")
    if choice == "required" or isinstance(choice, Mapping):
        return ("the tool choice forces a tool call but the answer has none: the server "
                "ignored tools or tool_choice")
    if _TEXT_TOOL_CALL.search(response.content or ""):
        return ("the answer writes a tool call as text instead of tool_calls: the server did not "
                "parse tool calls (llama.cpp: start with --jinja; vLLM: "
                "--enable-auto-tool-choice --tool-call-parser <parser>)")
    return None
