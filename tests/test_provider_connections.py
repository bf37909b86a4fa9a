"""Provider calls reuse their connections (issue 20 item 3), without losing a bound.

A raw HTTP/1.1 server on 127.0.0.1 counts the connections it accepts and plays
each way a kept connection can end: kept open, closed on request
(``Connection: close``), dropped by the server while idle, or held by a server
that drips its answer (the attempt's deadline still cuts it off). Behind a
proxy the calls go through the proxy, as the environment says.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from http_support import read_request
from provider_server import ProviderServer, Reply

from harness.core.errors import ProviderError
from harness.providers.http import Transport
from harness.providers.retries import Receipt, RetryPolicy

BODY = json.dumps({"choices": []}).encode()

#: How the server ends the n-th answer (0-based, over all connections): keep, close, drop, drip.
Plan = Callable[[int], str]


class RawServer:
    """Accepts connections, reads requests, answers each as ``plan(n)`` says."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.connections = 0
        self.requests = 0
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()

    def _serve(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn, conn.makefile("rb") as reader:
            while True:
                if read_request(reader) is None:
                    return
                with self._lock:
                    n, self.requests = self.requests, self.requests + 1
                how = self.plan(n)
                close = b"Connection: close\r\n" if how == "close" else b""
                head_out = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + close +
                            b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n")
                try:
                    if how == "drip":
                        conn.sendall(head_out)
                        for byte in BODY:
                            time.sleep(0.5)
                            conn.sendall(bytes([byte]))
                        return
                    conn.sendall(head_out + BODY)
                except OSError:
                    return
                if how in ("close", "drop"):
                    return  # "drop": closed without saying so, as an idle timeout does


@pytest.fixture
def serve() -> Iterator[Callable[[Plan], RawServer]]:
    servers: list[RawServer] = []

    def start(plan: Plan) -> RawServer:
        server = RawServer(plan).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__()


def _transport(url: str, timeout_s: float = 5.0) -> Transport:
    return Transport(url + "/v1", label="test", headers={}, timeout_s=timeout_s,
                     policy=RetryPolicy(max_attempts=1))


def test_calls_in_turn_share_one_connection(serve: Callable[[Plan], RawServer]) -> None:
    server = serve(lambda n: "keep")
    transport = _transport(server.url)
    for _ in range(5):
        assert transport.post_json("chat/completions", {}, scenario="s") == {"choices": []}
    assert (server.connections, server.requests) == (1, 5)


def test_concurrent_calls_open_one_connection_each_at_most(
        serve: Callable[[Plan], RawServer]) -> None:
    server = serve(lambda n: "keep")
    transport = _transport(server.url)

    def calls() -> None:
        for _ in range(10):
            transport.post_json("chat/completions", {}, scenario="s")

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.requests == 40 and 1 <= server.connections <= 4


def test_a_connection_the_server_closes_is_not_reused(serve: Callable[[Plan], RawServer]) -> None:
    server = serve(lambda n: "close")
    transport = _transport(server.url)
    for _ in range(3):
        transport.post_json("chat/completions", {}, scenario="s")
    assert (server.connections, server.requests) == (3, 3)


def test_a_connection_dropped_while_idle_is_replaced_without_counting_an_attempt(
        serve: Callable[[Plan], RawServer]) -> None:
    server = serve(lambda n: "drop")  # every answer, then the server hangs up silently
    transport = _transport(server.url)
    transport.post_json("chat/completions", {}, scenario="s")
    time.sleep(0.1)  # the server's close has arrived: the kept connection is stale
    receipt = Receipt()
    assert transport.post_json("chat/completions", {}, scenario="s", receipt=receipt) == {
        "choices": []}
    assert receipt.attempts == 1 and receipt.retries == 0
    assert (server.connections, server.requests) == (2, 2)


def test_a_reused_connection_is_still_cut_off_at_the_attempts_deadline(
        serve: Callable[[Plan], RawServer]) -> None:
    server = serve(lambda n: "keep" if n == 0 else "drip")
    transport = _transport(server.url, timeout_s=1.5)
    transport.post_json("chat/completions", {}, scenario="s")
    started = time.monotonic()
    with pytest.raises(ProviderError) as info:
        transport.post_json("chat/completions", {}, scenario="s")
    assert time.monotonic() - started < 4
    assert "no complete answer within 1.5s" in str(info.value)
    assert server.connections == 1  # the drip came on the kept connection


def test_behind_a_proxy_calls_go_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with ProviderServer() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        transport = _transport("http://provider.invalid")
        transport.post_json("chat/completions", {"model": "m"}, scenario="s")
        assert [r.path for r in proxy.requests] == ["http://provider.invalid/v1/chat/completions"]


def test_behind_a_proxy_a_redirect_is_refused_not_followed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxy path keeps the no-redirect rule of the direct one: a 302 the proxy relays is a
    provider error naming the Location, and no second request goes out (the key would go along)."""
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    location = "http://elsewhere.invalid/v1/chat/completions"
    with ProviderServer(lambda received: Reply(302, "", headers={"Location": location})) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        with pytest.raises(ProviderError) as info:
            _transport("http://provider.invalid").post_json("chat/completions", {"model": "m"},
                                                            scenario="s")
        assert f"redirect to {location} refused" in str(info.value)
        assert [r.path for r in proxy.requests] == ["http://provider.invalid/v1/chat/completions"]
