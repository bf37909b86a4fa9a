"""The loopback server: routes, auth, injected failures, the request log, and a stop that closes.

:class:`WireFake` is a real ``ThreadingHTTPServer`` on ``127.0.0.1`` (port 0)
speaking HTTP/1.1 with keep-alive, as the SDKs' connection pools expect;
streamed answers go out with chunked transfer encoding, one SSE frame per
chunk. ``stop()`` closes the listening socket AND every open keep-alive
connection, so a pooled client cannot keep talking to a stopped fake: a test
that stops it really proves that a replay opened no connection to it.

Quirks of real servers, on by default: random ids and timestamps per answer,
a random request id header (``x-request-id`` for OpenAI, ``request-id`` for
Anthropic), auth checks answered 401 in each API's shape, the ``anthropic-
version`` header required (400), and ``fail_first=N``: the first N API
requests that pass auth are answered 429 (``retry-after: 0``), 500, 429, ...
before the fake answers normally, to watch the SDKs retry.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import socket
import threading
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import anthropic_messages, auxiliary, batches, embeddings, openai_chat, openai_responses
from .brain import Brain, triage_brain
from .wire import Reply, WireError, anthropic_error, openai_error

#: The keys the fake accepts unless told otherwise (placeholders, not secrets).
OPENAI_KEY = "wirefake-openai-key"
ANTHROPIC_KEY = "wirefake-anthropic-key"
#: Route -> (api family, api name).
ROUTES = {
    "/v1/chat/completions": ("openai", "chat"),
    "/v1/responses": ("openai", "responses"),
    "/v1/embeddings": ("openai", "embeddings"),
    "/v1/messages": ("anthropic", "messages"),
    "/v1/messages/count_tokens": ("anthropic", "count_tokens"),
    "/v1/responses/input_tokens": ("openai", "input_tokens"),
    "/v1/moderations": ("openai", "moderations"),
    "/v1/models": ("openai", "models"),
}


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the fake received it, with the status it answered."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: Any
    """The parsed JSON body (None when absent or not JSON)."""
    raw: bytes
    status: int
    api: str | None
    """``chat``, ``responses``, ``messages``, ``embeddings``, ``batch`` (the batch APIs and their
    files, :mod:`.batches`), or None for an unknown route."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: WireFake

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about a kept-alive connection that ``stop()`` closed under its handler."""
        if not self.fake.running:
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def setup(self) -> None:
        super().setup()
        # One answer is one write; without this, delayed ACKs add ~40 ms to every small answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Quiet: the request log is the record."""

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.server.fake._serve(self)

    do_GET = do_POST  # noqa: N815
    do_DELETE = do_POST  # noqa: N815

    def read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            body = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))


class WireFake:
    """A loopback fake of the OpenAI (chat, responses, embeddings, moderations, input token counts) and
    Anthropic (messages, token counts) APIs.

    ``with WireFake() as fake:`` starts it; ``fake.env()`` is what an agent's
    process needs (``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL``,
    ``ANTHROPIC_API_KEY``); ``fake.requests`` is the log; ``fake.stop()`` closes
    every socket (``fake.url`` still names where it was).
    """

    def __init__(self, brain: Brain = triage_brain, *, fail_first: int = 0,
                 openai_key: str = OPENAI_KEY, anthropic_key: str = ANTHROPIC_KEY,
                 check_auth: bool = True, retry_after: str = "0", batch_pending_polls: int = 0,
                 batch_expire_after: int | None = None) -> None:
        self.brain = brain
        self.fail_first = fail_first
        self.openai_key = openai_key
        self.anthropic_key = anthropic_key
        self.check_auth = check_auth
        self.retry_after = retry_after
        self.responses_state = openai_responses.ResponsesState()
        self.batches = batches.BatchState(batch_pending_polls, batch_expire_after)
        self._lock = threading.Lock()
        self._log: list[LoggedRequest] = []
        self._failed = 0
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # -- life cycle ------------------------------------------------------------------------------

    def start(self) -> WireFake:
        if self._server is not None:
            raise RuntimeError("this WireFake is already running")
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="wire-fake", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket and every open connection."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            open_connections = list(self._connections)
            self._connections.clear()
        for connection in open_connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
            connection.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> WireFake:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- what tests read -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    @property
    def anthropic_base_url(self) -> str:
        return self.url

    def env(self) -> dict[str, str]:
        """The environment of an agent pointed at this fake, as production code reads it."""
        return {"OPENAI_BASE_URL": self.openai_base_url, "OPENAI_API_KEY": self.openai_key,
                "ANTHROPIC_BASE_URL": self.anthropic_base_url, "ANTHROPIC_API_KEY": self.anthropic_key}

    @property
    def requests(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._log)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._log)

    def requests_to(self, api: str) -> list[LoggedRequest]:
        """The logged requests of one api (``chat``, ``responses``, ``messages``, ``embeddings``)."""
        return [r for r in self.requests if r.api == api]

    def clear(self) -> None:
        with self._lock:
            self._log.clear()

    # -- serving ---------------------------------------------------------------------------------

    def _track(self, connection: socket.socket, opened: bool) -> None:
        with self._lock:
            if opened:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def _serve(self, handler: _Handler) -> None:
        raw = handler.read_body()
        path = handler.path.split("?", 1)[0]
        headers = {name.lower(): value for name, value in handler.headers.items()}
        family, api = ROUTES.get(path, ("openai", None))
        batch = batches.handles(path)
        if batch:
            family, api = ("anthropic" if path.startswith("/v1/messages/") else "openai"), "batch"
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        try:
            if batch:
                self._authenticate(family, headers)
                reply = batches.serve(self.batches, self.compute, self.url, handler.command, path, body,
                                      raw, headers.get("content-type", ""))
            else:
                reply = self._answer(handler.command, family, api, headers, body)
        except WireError as error:
            reply = error.reply()
        id_header = "request-id" if family == "anthropic" else "x-request-id"
        reply.headers.setdefault(id_header, "req_" + secrets.token_hex(16))
        with self._lock:
            self._log.append(LoggedRequest(len(self._log), handler.command, path, headers, body, raw,
                                           reply.status, api))
        _write(handler, reply)

    def _answer(self, method: str, family: str, api: str | None, headers: dict[str, str],
                body: Any) -> Reply:
        if api == "models":  # GET /v1/models: the SDK's client.models.list(), behind the same auth
            self._authenticate("openai", headers)
            return Reply(body={"object": "list", "data": [
                {"id": name, "object": "model", "created": 1_700_000_000, "owned_by": "wire-fake"}
                for name in ("gpt-4o-mini", "gpt-4.1-mini", "omni-moderation-latest")]})
        if api is None:
            raise openai_error(404, "Invalid URL (the wire fake serves /v1/chat/completions, /v1/responses, "
                                    "/v1/embeddings, /v1/moderations, /v1/responses/input_tokens, "
                                    "/v1/messages and /v1/messages/count_tokens)", code="unknown_url")
        if method != "POST":
            raise (openai_error(405, f"Method {method} not allowed") if family == "openai"
                   else anthropic_error(405, f"Method {method} not allowed"))
        self._authenticate(family, headers)
        with self._lock:
            failing = self._failed < self.fail_first
            attempt = self._failed
            self._failed += failing
        if failing:
            return self._failure(family, attempt)
        return self.compute(family, api, body)

    def compute(self, family: str, api: str, body: Any) -> Reply:
        """The answer of one API body (also each request of a batch: the same answer)."""
        if not isinstance(body, dict):
            if family == "anthropic":
                raise anthropic_error(400, "The request body is not valid JSON.")
            raise openai_error(400, "We could not parse the JSON body of your request.")
        try:
            if api == "chat":
                return openai_chat.answer(body, self.brain)
            if api == "responses":
                return openai_responses.answer(body, self.brain, self.responses_state)
            if api == "embeddings":
                return embeddings.answer(body)
            if api == "count_tokens":
                return auxiliary.count_tokens(body)
            if api == "input_tokens":
                return auxiliary.input_tokens(body)
            if api == "moderations":
                return auxiliary.moderation(body)
            return anthropic_messages.answer(body, self.brain)
        except WireError:
            raise
        except Exception as exc:  # a brain or fake bug: fail fast, the SDK must not retry it
            message = f"the wire fake failed: {exc!r}\n{traceback.format_exc()}"
            failure = openai_error(500, message, kind="server_error") if family == "openai" else (
                anthropic_error(500, message, "api_error"))
            failure.headers["x-should-retry"] = "false"
            raise failure from exc

    def _authenticate(self, family: str, headers: dict[str, str]) -> None:
        if family == "anthropic":
            # The key comes as ``x-api-key`` (the API's documented header, older SDKs) or as
            # ``Authorization: Bearer`` (what anthropic 2.x sends for ANTHROPIC_API_KEY).
            bearer = headers.get("authorization", "")
            key = headers.get("x-api-key") or (bearer[7:].strip() if bearer.startswith("Bearer ") else None)
            if self.check_auth and not key:
                raise anthropic_error(401, "x-api-key header is required", "authentication_error")
            if self.check_auth and key != self.anthropic_key:
                raise anthropic_error(401, "invalid x-api-key", "authentication_error")
            if "anthropic-version" not in headers:
                raise anthropic_error(400, "anthropic-version: header is required")
            return
        if not self.check_auth:
            return
        auth = headers.get("authorization", "")
        if not auth.startswith("Bearer ") or not auth[7:].strip():
            raise openai_error(401, "You didn't provide an API key. You need to provide your API key in an "
                                    "Authorization header using Bearer auth (i.e. Authorization: Bearer "
                                    "YOUR_KEY).")
        key = auth[7:].strip()
        if key != self.openai_key:
            shown = key[:3] + "*" * 4 + key[-4:] if len(key) > 8 else "****"
            raise openai_error(401, f"Incorrect API key provided: {shown}.", code="invalid_api_key")

    def _failure(self, family: str, attempt: int) -> Reply:
        """The ``attempt``-th injected failure: 429 with ``retry-after``, then 500, alternating."""
        if attempt % 2 == 0:
            error = (openai_error(429, "Rate limit reached for requests", kind="requests",
                                  code="rate_limit_exceeded") if family == "openai"
                     else anthropic_error(429, "Number of requests has exceeded your rate limit",
                                          "rate_limit_error"))
            error.headers["retry-after"] = self.retry_after
        else:
            error = (openai_error(500, "The server had an error while processing your request.",
                                  kind="server_error") if family == "openai"
                     else anthropic_error(500, "Internal server error", "api_error"))
        return error.reply()


def _write(handler: _Handler, reply: Reply) -> None:
    """Send the status line, headers and a JSON body in one write; a stream as one chunk per frame."""
    handler.send_response_only(reply.status)
    handler.send_header("Date", handler.date_time_string())
    for name, value in reply.headers.items():
        handler.send_header(name, value)
    if reply.raw is not None:
        payload = reply.raw
        handler.send_header("Content-Length", str(len(payload)))
    elif reply.events is None:
        payload = json.dumps(reply.body).encode()
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
    else:
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
    head = b"".join(handler._headers_buffer) + b"\r\n"
    handler._headers_buffer = []
    try:
        if reply.events is None:
            handler.wfile.write(head + payload)
            return
        handler.wfile.write(head)
        for frame in reply.events:
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        handler.wfile.write(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        handler.close_connection = True


def serve(monkeypatch: Any, **options: Any) -> Iterator[WireFake]:
    """A pytest fixture body: start a fake, point the environment at it, stop it after.

        @pytest.fixture
        def fake(monkeypatch):
            yield from serve(monkeypatch)
    """
    with WireFake(**options) as fake:
        for name, value in fake.env().items():
            monkeypatch.setenv(name, value)
        yield fake
