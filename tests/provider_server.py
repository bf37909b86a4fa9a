"""A real HTTP provider on 127.0.0.1 for the recording tests: scripted replies, counted requests.

It speaks just enough of the OpenAI chat-completions and Anthropic messages
APIs: by default it answers ``{"answer": "yes"}`` (what the test projects'
scenarios expect), and a test can queue replies (statuses, ``Retry-After``,
latency, truncated or malformed bodies, a hold until the client is killed) or
replace the answer function. Every request is recorded with its headers, body
and arrival time; ``answered`` counts responses written in full.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from conftest import Project
from harness.core.declared import Agent
from harness.providers.credentials import Credentials

#: The API key every recording test uses; the secrets test greps the whole project for it.
TEST_KEY = "sk-harness-test-7f3a9c1e5b2d4a6f8e0c"
#: A canonical conversation with a tool round trip, and tool declarations, for the mapping tests.
TOOLS = [{"name": "lookup_order", "description": "Find an order.",
          "parameters": {"type": "object", "properties": {"order": {"type": "string"}}}},
         {"name": "ping"}]
CONVERSATION = [
    {"role": "system", "content": "You are the acme helper."},
    {"role": "system", "content": "Context:\nThe user is a beginner."},
    {"role": "user", "content": "Check order A-1."},
    {"role": "assistant", "content": None,
     "tool_calls": [{"id": "call_0", "name": "lookup_order", "arguments": {"order": "A-1"}}]},
    {"role": "tool", "tool_call_id": "call_0", "content": '{"status": "shipped"}'},
    {"role": "user", "content": "Thanks. Draft a note."},
]


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float


@dataclass
class Reply:
    """What the server sends back for one request."""

    status: int = 200
    body: Any = None
    """A JSON value, or ``str``/``bytes`` sent as they are."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    truncate_to: int | None = None
    """Announce the full Content-Length but send only this many bytes, then close."""
    hold: threading.Event | None = None
    """Wait for this event, then close the connection without answering."""


def openai_answer(content: Any = None, *, tool_calls: list[dict[str, Any]] | None = None,
                  finish_reason: str | None = None, usage: tuple[int, int] = (12, 5),
                  model: str = "gpt-test-1") -> dict[str, Any]:
    """A chat-completions answer; a non-string ``content`` is sent as JSON text."""
    text = content if content is None or isinstance(content, str) else json.dumps(content)
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
            for i, c in enumerate(tool_calls)]
    reason = finish_reason or ("tool_calls" if tool_calls else "stop")
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": sum(usage)}}


def anthropic_answer(text: str | None = None, *, tool_uses: list[dict[str, Any]] | None = None,
                     stop_reason: str | None = None, usage: tuple[int, int] = (20, 7),
                     model: str = "claude-test-1") -> dict[str, Any]:
    """A messages answer."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text is not None else []
    for i, use in enumerate(tool_uses or []):
        blocks.append({"type": "tool_use", "id": f"toolu_{i}", "name": use["name"],
                       "input": use.get("input", {})})
    reason = stop_reason or ("tool_use" if tool_uses else "end_turn")
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": model,
            "content": blocks, "stop_reason": reason, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


def default_answer(received: Received) -> Reply:
    """``{"answer": "yes"}`` in the wire format of the path that was called."""
    if received.path.endswith("/messages"):
        return Reply(body=anthropic_answer(json.dumps({"answer": "yes"})))
    return Reply(body=openai_answer({"answer": "yes"}))


class ProviderServer:
    """A threaded HTTP server on an ephemeral loopback port."""

    def __init__(self, answer: Callable[[Received], Reply] = default_answer,
                 latency_s: float = 0.0) -> None:
        self.answer = answer
        self.latency_s = latency_s
        self.requests: list[Received] = []
        self.answered = 0
        self.queued: list[Reply] = []
        self._lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def queue(self, *replies: Reply) -> None:
        """Replies for the next requests, in order; then the answer function again."""
        with self._lock:
            self.queued.extend(replies)

    def next_reply(self, received: Received) -> Reply:
        with self._lock:
            self.requests.append(received)
            if self.queued:
                return self.queued.pop(0)
        return self.answer(received)

    def mark_answered(self) -> None:
        with self._lock:
            self.answered += 1

    def __enter__(self) -> ProviderServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a burst of 64 concurrent connects must not overflow the backlog


def _handler(server: ProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = raw
            received = Received(self.path, {k.lower(): v for k, v in self.headers.items()},
                                body, time.time())
            reply = server.next_reply(received)
            if reply.hold is not None:
                reply.hold.wait()
                self.close_connection = True
                return
            delay = reply.delay_s or server.latency_s
            if delay:
                time.sleep(delay)
            payload = reply.body
            if isinstance(payload, str):
                data = payload.encode("utf-8")
            elif isinstance(payload, bytes):
                data = payload
            else:
                data = json.dumps(payload).encode("utf-8")
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                if reply.truncate_to is not None:
                    self.wfile.write(data[: reply.truncate_to])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(data)
                self.wfile.flush()
            except OSError:
                return
            server.mark_answered()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@contextmanager
def serving(answer: Callable[[Received], Reply] = default_answer,
            latency_s: float = 0.0) -> Iterator[ProviderServer]:
    """Start a server for the duration of a ``with`` block."""
    with ProviderServer(answer, latency_s) as server:
        yield server


def point_agent(project: Project, server: ProviderServer, name: str = "helper", *,
                provider: str = "openai", **fields: Any) -> None:
    """Declare an agent whose endpoint is the test server (``endpoint`` keys may be overridden)."""
    endpoint = {"base_url": server.url + ("/v1" if provider == "openai" else ""), "max_retries": 0}
    endpoint.update(fields.pop("endpoint", {}))
    options = fields.pop("options", {"temperature": 0, "max_tokens": 200})
    project.agent(name, provider=provider, endpoint=endpoint, options=options, **fields)


def make_agent(provider: str = "openai", **fields: Any) -> Agent:
    """An :class:`Agent` built in memory, for provider tests that need no project on disk."""
    values: dict[str, Any] = {
        "name": "helper", "directory": Path("/project/eval-datasets/helper"), "provider": provider,
        "model": "gpt-test-1", "system_prompt": "", "system_prompt_file": Path("system.md"),
        "options": {"temperature": 0, "max_tokens": 200}, "tools": (), "output": "json",
        "output_schema": None, "script_file": None, "endpoint": {"max_retries": 0},
    }
    values.update(fields)
    return Agent(**values)


def make_credentials(base_url: str, provider: str = "openai") -> Credentials:
    """Credentials holding :data:`TEST_KEY` for ``base_url``."""
    return Credentials(provider, f"{provider.upper()}_API_KEY", TEST_KEY, "the environment",
                       base_url, "test")
