"""What the fake model answers: a brain reads one API request and returns text or tool calls.

A brain is ``callable(api, request_json) -> Answer``: ``api`` is one of
``chat`` (OpenAI Chat Completions), ``responses`` (OpenAI Responses, with the
server-side state of ``previous_response_id`` already resolved into ``input``),
``messages`` (Anthropic Messages). The answer is a ``str`` (the assistant's text)
or a list of :class:`ToolCall` (or ``(name, arguments)`` pairs); each API module
turns it into its own wire format, ids and timestamps random per answer.

:func:`triage_brain` is the default: a deterministic support-triage model. With
tools offered and no tool result in the conversation yet, it calls the first
tool once per order number in the user's text (two orders: two parallel calls);
once a tool result is present, or when no tool is offered, it answers the JSON
decision ``{"category", "priority", "reply"}`` derived from the conversation.
The same request always gets the same text, so a test can assert on it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    """One function call the model decides to make."""

    name: str
    arguments: JsonObject


Answer = str | Sequence[ToolCall | tuple[str, JsonObject]]
Brain = Callable[[str, JsonObject], Answer]


def tool_calls_of(answer: Answer) -> list[ToolCall] | None:
    """The answer's tool calls, or None when it is text (pairs become :class:`ToolCall`)."""
    if isinstance(answer, str):
        return None
    calls = [item if isinstance(item, ToolCall) else ToolCall(item[0], dict(item[1])) for item in answer]
    if not calls:
        raise ValueError("a brain answered an empty list of tool calls; answer text instead")
    return calls


@dataclass
class Conversation:
    """The parts of a request a triage model reads, the same for every API."""

    user_text: list[str] = field(default_factory=list)
    tool_results: list[str] = field(default_factory=list)
    tools: list[tuple[str, JsonObject]] = field(default_factory=list)
    """(name, JSON schema of the arguments) of every function tool offered."""
    schema: JsonObject | None = None
    """The structured-output JSON schema asked for, if any."""


def _texts(content: Any, kinds: tuple[str, ...] = ("text", "input_text", "output_text")) -> list[str]:
    """Text of a content field: a string or a list of typed parts."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [part["text"] for part in content
                if isinstance(part, dict) and part.get("type") in kinds and isinstance(part.get("text"), str)]
    return []


def conversation(api: str, request: JsonObject) -> Conversation:
    """Read the user text, tool results, tools and output schema of one request."""
    talk = Conversation()
    if api == "chat":
        for message in request.get("messages", []):
            if message.get("role") == "user":
                talk.user_text += _texts(message.get("content"))
            elif message.get("role") == "tool":
                talk.tool_results += _texts(message.get("content"))
        for tool in request.get("tools") or []:
            function = tool.get("function", {})
            talk.tools.append((function.get("name", ""), function.get("parameters") or {}))
        response_format = request.get("response_format") or {}
        if response_format.get("type") == "json_schema":
            talk.schema = response_format.get("json_schema", {}).get("schema")
    elif api == "responses":
        items = request.get("input")
        for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
            if item.get("type") == "function_call_output":
                talk.tool_results.append(str(item.get("output", "")))
            elif item.get("role") == "user":
                talk.user_text += _texts(item.get("content"))
        for tool in request.get("tools") or []:
            if tool.get("type") == "function":
                talk.tools.append((tool.get("name", ""), tool.get("parameters") or {}))
        text_format = (request.get("text") or {}).get("format") or {}
        if text_format.get("type") == "json_schema":
            talk.schema = text_format.get("schema")
    elif api == "messages":
        for message in request.get("messages", []):
            if message.get("role") != "user":
                continue
            talk.user_text += _texts(message.get("content"))
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    talk.tool_results += _texts(block.get("content"))
        for tool in request.get("tools") or []:
            if "input_schema" in tool:
                talk.tools.append((tool.get("name", ""), tool.get("input_schema") or {}))
    else:
        raise ValueError(f"no conversation reader for api {api!r}")
    return talk


ORDER = re.compile(r"\b[A-Z]{1,3}-\d{3,}\b")
CATEGORIES = (
    ("billing", ("refund", "charge", "charged", "invoice", "payment", "bill", "billed")),
    ("shipping", ("late", "delivery", "deliver", "shipping", "package", "arrive", "arrived", "tracking",
                  "where")),
    ("technical", ("login", "log in", "password", "error", "crash", "bug", "app")),
)
URGENT = ("urgent", "asap", "immediately", "angry", "furious", "lost", "third time")


def orders_in(text: str) -> list[str]:
    """Distinct order numbers (``A-1001``) in order of appearance."""
    return list(dict.fromkeys(ORDER.findall(text)))


def _status(result: str) -> str:
    try:
        parsed = json.loads(result)
    except ValueError:
        return result.strip()[:80]
    if isinstance(parsed, dict) and "status" in parsed:
        return str(parsed["status"])
    return result.strip()[:80]


def decision(talk: Conversation) -> JsonObject:
    """The triage decision for a conversation: category, priority and a reply."""
    text = " ".join(talk.user_text)
    lowered = text.lower()
    category = next((name for name, words in CATEGORIES if any(re.search(rf"\b{re.escape(w)}\b", lowered)
                                                               for w in words)), "general")
    statuses = [_status(result) for result in talk.tool_results]
    urgent = any(word in lowered for word in URGENT) or any(s in ("lost", "delayed") for s in statuses)
    priority = "high" if urgent else "low" if category == "general" else "normal"
    orders = orders_in(text)
    if orders and statuses:
        facts = "; ".join(f"order {o} is {s}" for o, s in zip(orders, statuses, strict=False))
        reply = f"Thanks for reaching out: {facts}."
    elif orders:
        reply = f"Thanks for reaching out about order {orders[0]}; a {category} agent will follow up."
    else:
        reply = f"Thanks for reaching out; a {category} agent will follow up."
    answer: JsonObject = {"category": category, "priority": priority, "reply": reply}
    properties = (talk.schema or {}).get("properties")
    if isinstance(properties, dict):  # structured outputs: exactly the schema's fields
        answer = {name: answer.get(name, "") for name in properties}
    return answer


def triage_brain(api: str, request: JsonObject) -> Answer:
    """The default brain: look the order up first, then answer the JSON triage decision."""
    talk = conversation(api, request)
    if talk.tools and not talk.tool_results:
        name, schema = talk.tools[0]
        properties = list((schema.get("properties") or {}).keys())
        argument = properties[0] if properties else "order_id"
        orders = orders_in(" ".join(talk.user_text)) or ["unknown"]
        return [ToolCall(name, {argument: order}) for order in orders]
    return json.dumps(decision(talk))


def embed(text: str, dimensions: int = 64) -> list[float]:
    """A deterministic bag-of-words vector (unit length): texts sharing words are near."""
    vector = [0.0] * dimensions
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimensions] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]


def tokens(text: str) -> int:
    """A stable token count for usage fields (words, at least 1)."""
    return max(1, len(text.split()))
