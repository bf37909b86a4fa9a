"""What every wire codec shares: the error, the encoded answer, SSE framing, ids, JSON.

The codecs of the three LLM APIs (:mod:`codecs_chat`, :mod:`codecs_responses`,
:mod:`codecs_anthropic`, :mod:`codecs_embeddings`) read recorded bytes and write
scripted ones; the parts here are the ones they would otherwise each copy: a
strict reader of untrusted JSON that only ever raises :class:`WireDecodeError`,
the server-sent-events parser and writer, deterministic ids and text splitting.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from harness.core.entities import JsonObject
from harness.documents.jsonscan import scan


class WireDecodeError(ValueError):
    """A recorded answer that cannot be read: the reason says what is wrong, briefly."""


@dataclass(frozen=True, slots=True)
class EncodedAnswer:
    """The bytes a server of one API sends for one answer."""

    status: int
    headers: dict[str, str]
    """At least ``content-type``."""
    body: bytes


JSON_TYPE = "application/json"
SSE_TYPE = "text/event-stream; charset=utf-8"


# --- reading untrusted JSON ---------------------------------------------------------------

def load_json(text: str | bytes, where: str) -> Any:
    """``json.loads`` whose every failure (bad UTF-8, bad JSON, absurd nesting) is a WireDecodeError."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return scan(text)  # json.loads, faster
    except UnicodeDecodeError:
        raise WireDecodeError(f"{where} is not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise WireDecodeError(f"{where} is not valid JSON ({exc.msg} at char {exc.pos})") from None
    except RecursionError:
        raise WireDecodeError(f"{where} is nested too deeply to read") from None


def obj(value: Any, where: str) -> JsonObject:
    """``value`` as a JSON object, or a WireDecodeError naming ``where``."""
    if not isinstance(value, dict):
        raise WireDecodeError(f"{where} is not a JSON object (got {type_name(value)})")
    return value


def array(value: Any, where: str) -> list[Any]:
    """``value`` as a JSON array, or a WireDecodeError naming ``where``."""
    if not isinstance(value, list):
        raise WireDecodeError(f"{where} is not a JSON array (got {type_name(value)})")
    return value


def text_or_none(value: Any, where: str) -> str | None:
    """A string or null, or a WireDecodeError naming ``where``."""
    if value is None or isinstance(value, str):
        return value
    raise WireDecodeError(f"{where} is not a string (got {type_name(value)})")


def text(value: Any, where: str) -> str:
    """A string, or a WireDecodeError naming ``where``."""
    if not isinstance(value, str):
        raise WireDecodeError(f"{where} is not a string (got {type_name(value)})")
    return value


def count(value: Any) -> int:
    """A token count: a non-negative int, anything else (absent, null, garbage) counts as zero."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def index(value: Any, where: str) -> int:
    """A list index as the APIs send it in stream events (a non-negative int)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > 10_000:
        raise WireDecodeError(f"{where} is not a valid index (got {value!r:.40})")
    return value


def type_name(value: Any) -> str:
    """The JSON name of a decoded value's type, for reasons."""
    names = {dict: "object", list: "array", str: "string", bool: "boolean", int: "number",
             float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def api_error(data: Any) -> str | None:
    """The reason of an API error body or ``error`` event (OpenAI and Anthropic shapes), else None."""
    if not isinstance(data, dict):
        return None
    error = data.get("error")
    if data.get("type") == "error" or isinstance(error, (dict, str)):
        detail = error if isinstance(error, dict) else {"message": error} if isinstance(error, str) else data
        kind = detail.get("code") or detail.get("type") or "error"
        message = detail.get("message") or "no message"
        return f"the provider answered with an error ({str(kind):.60}: {str(message):.200})"
    return None


def arguments_from_text(raw: str) -> JsonObject:
    """Tool-call arguments as the model wrote them: a JSON object, else ``{"_raw": text}``."""
    try:
        value = scan(raw)  # json.loads, faster
    except (json.JSONDecodeError, RecursionError):
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_raw": raw}


def arguments_from_value(value: Any) -> JsonObject:
    """Anthropic ``input``: an object as is; anything else becomes ``{"_raw": <its JSON>}``."""
    if isinstance(value, dict):
        return value
    return {"_raw": dumps(value)}


def arguments_text(arguments: JsonObject) -> str:
    """The JSON-string form of arguments (OpenAI formats); ``{"_raw": text}`` gives the text back."""
    if set(arguments) == {"_raw"} and isinstance(arguments["_raw"], str):
        return arguments["_raw"]
    return dumps(arguments)


def none_if_empty(value: str | None) -> str | None:
    """The assistant text, None when there is none (the empty string included)."""
    return value or None


# --- server-sent events -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Event:
    """One server-sent event: its ``event:`` name (empty when absent) and its ``data`` text."""

    name: str
    data: str


def is_event_stream(body: bytes, content_type: str = "") -> bool:
    """Whether ``body`` is an SSE stream: from the content type when it says, else by sniffing."""
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind == "text/event-stream":
        return True
    if kind.endswith("json"):
        return False
    head = body.lstrip(b"\xef\xbb\xbf \t\r\n")[:6]
    return head.startswith((b"data:", b"event:", b"id:", b":"))


def parse_events(body: bytes) -> list[Event]:
    """The events of an SSE body, parsed as the SDKs' SSE decoders do (comments and ids skipped)."""
    try:
        decoded = body.decode("utf-8")
    except UnicodeDecodeError:
        raise WireDecodeError("the event stream is not valid UTF-8") from None
    decoded = decoded.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    events: list[Event] = []
    name, data = "", list[str]()
    for line in decoded.split("\n"):
        if not line:
            if data:
                events.append(Event(name, "\n".join(data)))
            name, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        events.append(Event(name, "\n".join(data)))
    return events


def event_data(event: Event, where: str) -> JsonObject:
    """The JSON object an event carries; an ``error`` event becomes a WireDecodeError."""
    data = load_json(event.data, where)
    reason = api_error(data)
    if reason or event.name == "error":
        raise WireDecodeError(f"{where}: {reason or 'an error event'}")
    return obj(data, where)


def sse(events: list[tuple[str, JsonObject]]) -> bytes:
    """SSE bytes: ``event: <name>`` before each data line when a name is given."""
    parts = []
    for name, data in events:
        prefix = f"event: {name}\n" if name else ""
        parts.append(f"{prefix}data: {dumps(data)}\n\n")
    return "".join(parts).encode("utf-8")


# --- writing ------------------------------------------------------------------------------

def dumps(value: Any) -> str:
    """JSON as the APIs send it: compact separators, UTF-8 text (no ``\\u`` escapes)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_answer(data: JsonObject) -> EncodedAnswer:
    """A 200 JSON answer."""
    return EncodedAnswer(200, {"content-type": JSON_TYPE}, dumps(data).encode("utf-8"))


def stream_answer(body: bytes) -> EncodedAnswer:
    """A 200 event-stream answer."""
    return EncodedAnswer(200, {"content-type": SSE_TYPE}, body)


class Ids:
    """Deterministic ids from a seed: the n-th id of a kind is always the same string.

    Re-encoding an answer must give identical bytes (the committed cache is diffed
    and hashed), so nothing random or time-based goes into an id.
    """

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self._counts: dict[str, int] = {}

    def next(self, prefix: str, length: int = 24) -> str:
        """``prefix`` + hex of sha256(seed, prefix, n), n counting per prefix from 0."""
        n = self._counts.get(prefix, 0)
        self._counts[prefix] = n + 1
        digest = hashlib.sha256(f"{self.seed}\x00{prefix}\x00{n}".encode()).hexdigest()
        return prefix + digest[:length]


def split_text(value: str, parts: int = 3) -> list[str]:
    """``value`` cut into at most ``parts`` non-empty pieces, the same cut every time."""
    if not value:
        return []
    size = -(-len(value) // parts)
    return [value[i:i + size] for i in range(0, len(value), size)]


def model_of(model: str | None, request: JsonObject) -> str:
    """The model an answer echoes: the response's own, else the one the request asked for."""
    requested = request.get("model")
    return model or (requested if isinstance(requested, str) else "") or "unknown-model"
