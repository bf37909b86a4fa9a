"""A local replay endpoint: OpenAI- and Anthropic-compatible base URLs for an agent in any language.

An agent that is not Python (``command: [node, agent.js]``), or Python that does
not use httpx, cannot be intercepted in process. It can be pointed at a base
URL instead, as every official SDK allows (``OPENAI_BASE_URL``,
``ANTHROPIC_BASE_URL``). :class:`ReplayEndpoint` listens on 127.0.0.1 only
(an ephemeral port, nothing else is served: any other path is a 404) and
answers each request through the same :class:`~harness.wire.binding.WireBinding`
as the in-process interceptor: the same keys, the offline refusal with its
miss explanation, the record modes. In a paid recording it forwards the request
to the provider's real endpoint (``endpoint.base_url`` of agent.yaml, else the
official one) with the real key in place of the placeholder, never following a
redirect.
"""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.wire.binding import WireBinding
from harness.wire.exchange import WireAnswer, WireRequest, api_of
from harness.wire.placeholder import PLACEHOLDER
from harness.wire.recorder import Pending

#: The official endpoints a paid recording forwards to when agent.yaml names none.
UPSTREAMS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}
#: Path prefixes of the two families on the endpoint (``<base>/openai/v1``, ``<base>/anthropic``).
PREFIXES = {"openai": "/openai/v1", "anthropic": "/anthropic"}
#: Request headers never forwarded (hop-by-hop, or rewritten by the client that forwards).
_HOP = frozenset({"host", "content-length", "connection", "transfer-encoding", "accept-encoding"})


class _LoopbackServer(ThreadingHTTPServer):
    """``http.server`` without its reverse lookup of the bound address: ``server_bind`` asks
    ``socket.getfqdn("127.0.0.1")``, a DNS query where ``/etc/hosts`` does not name it (a
    minimal container), and an offline run asks no resolver anything."""

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)


class ReplayEndpoint:
    """A loopback HTTP server answering one scenario iteration's LLM API requests."""

    def __init__(self, binding: Callable[[], WireBinding | None], *,
                 upstreams: dict[str, str] | None = None, timeout_s: float = 120.0) -> None:
        self._binding = binding
        self.upstreams = {**UPSTREAMS, **(upstreams or {})}
        self.timeout_s = timeout_s
        self.requests = 0
        handler = _handler(self)
        self._server = _LoopbackServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="harness-serve",
                                        daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_urls(self) -> dict[str, str]:
        """The environment that points the official SDKs at this endpoint."""
        root = f"http://127.0.0.1:{self.port}"
        return {"OPENAI_BASE_URL": root + PREFIXES["openai"],
                "ANTHROPIC_BASE_URL": root + PREFIXES["anthropic"]}

    def start(self) -> ReplayEndpoint:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ReplayEndpoint:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def answer(self, method: str, path: str, headers: list[tuple[str, str]], body: bytes) -> WireAnswer:
        """The answer to one request the endpoint received."""
        binding = self._binding()
        family = next((name for name, prefix in PREFIXES.items() if path.startswith(prefix + "/")), None)
        tail = path[len(PREFIXES[family]):] if family else path
        api = api_of(method, tail) if family else None
        if binding is None or api is None:
            return WireAnswer(404, (("content-type", "application/json"),),
                              b'{"error": {"message": "harness: this endpoint serves only the LLM API '
                              b'calls of the scenario iteration that is running"}}')
        self.requests += 1
        upstream = self.upstreams[family or "openai"].rstrip("/")
        url = upstream + _upstream_path(upstream, tail)
        wire = WireRequest(method, url, tail, "127.0.0.1", _own_auth(headers), body)
        found = binding.begin(api, wire)
        if not isinstance(found, Pending):
            return found
        try:
            sent = self._forward(found)
        except Exception as exc:
            binding.failed_send(found, str(exc))
            return WireAnswer(502, (("content-type", "application/json"),),
                              b'{"error": {"message": "harness: the provider could not be reached"}}')
        return binding.finish(found, sent)

    def _forward(self, pending: Pending) -> WireAnswer:
        import httpx

        out = pending.outgoing
        headers = [(k, v) for k, v in out.headers if k not in _HOP]
        with httpx.Client(timeout=self.timeout_s, follow_redirects=False) as client:
            response = client.request(out.method, out.url, headers=headers, content=out.body)
            return WireAnswer(response.status_code,
                              tuple((k.lower(), v) for k, v in response.headers.multi_items()),
                              response.content)


def _own_auth(headers: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """The request's headers with whatever key the client sent replaced by the placeholder: the
    endpoint, not its client, holds the credentials (a paid recording puts the real key in)."""
    owned: list[tuple[str, str]] = []
    for name, value in headers:
        name = name.lower()
        if name == "authorization":
            value = f"Bearer {PLACEHOLDER}"
        elif name in ("x-api-key", "api-key"):
            value = PLACEHOLDER
        owned.append((name, value))
    return tuple(owned)


def _upstream_path(upstream: str, tail: str) -> str:
    """``tail`` (``/v1/chat/completions``) under an upstream that may already end in ``/v1``."""
    if upstream.endswith("/v1") and tail.startswith("/v1/"):
        return tail[3:]
    return tail


def _handler(endpoint: ReplayEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            answer = endpoint.answer(self.command, self.path, list(self.headers.items()), body)
            self.send_response(answer.status)
            for name, value in answer.headers:
                if name not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        do_POST = _serve
        do_GET = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            return

    return Handler
