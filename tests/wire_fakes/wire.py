"""What every API module of the fake shares: random ids, the reply, SSE frames, error shapes."""

from __future__ import annotations

import json
import secrets
import string
import time
from dataclasses import dataclass, field
from typing import Any

JsonObject = dict[str, Any]
_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str, length: int = 24) -> str:
    """A random id like the real servers' (``chatcmpl-…``, ``resp_…``, ``toolu_…``): new per answer."""
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


def created() -> int:
    """A ``created`` timestamp: now, give or take a few seconds, as a fleet of servers reports it."""
    return int(time.time()) - secrets.randbelow(5)


@dataclass
class Reply:
    """One HTTP answer: a JSON body, a list of server-sent-event frames sent chunked, or raw
    bytes (a batch's results file)."""

    status: int = 200
    body: JsonObject | None = None
    events: list[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None


class WireError(Exception):
    """An API error answered in the API's own error shape."""

    def __init__(self, status: int, body: JsonObject, headers: dict[str, str] | None = None) -> None:
        super().__init__(json.dumps(body))
        self.status = status
        self.body = body
        self.headers = headers or {}

    def reply(self) -> Reply:
        return Reply(self.status, self.body, headers=dict(self.headers))


def openai_error(status: int, message: str, *, kind: str = "invalid_request_error",
                 param: str | None = None, code: str | None = None) -> WireError:
    """OpenAI's error shape: ``{"error": {"message", "type", "param", "code"}}``."""
    return WireError(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


def anthropic_error(status: int, message: str, kind: str = "invalid_request_error") -> WireError:
    """Anthropic's error shape: ``{"type": "error", "error": {"type", "message"}}``."""
    return WireError(status, {"type": "error", "error": {"type": kind, "message": message}})


def sse(data: JsonObject | str, event: str | None = None) -> bytes:
    """One server-sent event frame (``event:`` line when named, one ``data:`` line)."""
    payload = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


def pieces(text: str, size: int = 7) -> list[str]:
    """Split ``text`` into stream deltas of ``size`` characters (one empty text is one delta)."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]

