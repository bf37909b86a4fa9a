"""Provider calls have two bounds no server can talk its way past (issue 19, items 1 and 7).

A redirect is never followed, so the key never goes to another host: a second loopback address
(127.0.0.2) plays the other host and counts what reaches it. And ``timeout_s`` bounds a whole
attempt: a server that drips one byte every 0.5 s is cut off at the deadline.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from provider_server import TEST_KEY, ProviderServer, Reply, point_agent

import harness.providers
from conftest import Project
from harness.core.errors import ProviderError
from harness.providers.http import Transport
from harness.providers.retries import RetryPolicy

ONE_ATTEMPT = RetryPolicy(max_attempts=1)


class OtherHost:
    """An HTTP server on 127.0.0.2 that counts every request and the headers it carried."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, dict[str, str]]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                owner.seen.append((self.command, self.path, dict(self.headers.items())))
                body = b'{"choices": []}'
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = _any  # noqa: N815 (http.server's naming)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.2:{self._httpd.server_address[1]}"

    def __enter__(self) -> OtherHost:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def other_host() -> Iterator[OtherHost]:
    try:
        host = OtherHost()
    except OSError as exc:  # pragma: no cover - every Linux loopback holds 127.0.0.0/8
        pytest.skip(f"no second loopback address: {exc}")
    with host:
        yield host


def _transport(base_url: str, timeout_s: float = 2.0) -> Transport:
    return Transport(base_url, label="openai at test", secrets=(TEST_KEY,),
                     headers={"Authorization": f"Bearer {TEST_KEY}"}, timeout_s=timeout_s,
                     policy=ONE_ATTEMPT)


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_is_a_provider_error_naming_the_location(
        server: ProviderServer, other_host: OtherHost, status: int) -> None:
    location = f"{other_host.url}/v1/chat/completions"
    server.answer = lambda received: Reply(status, "", headers={"Location": location})
    with pytest.raises(ProviderError) as info:
        _transport(server.url + "/v1").post_json("chat/completions", {"model": "m"}, scenario="s")
    message = str(info.value)
    assert f"HTTP {status} redirect to {location} refused" in message
    assert "eval-provider-redirect" in message and "base_url" in message
    assert other_host.seen == []  # the key never left for the other host
    assert len(server.requests) == 1


def test_a_recording_run_behind_a_redirect_writes_nothing_and_fails(
        project: Project, server: ProviderServer, other_host: OtherHost,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY", ONE_ATTEMPT)
    point_agent(project, server)
    project.scenario("helper/acme/greeting")
    server.answer = lambda received: Reply(302, "", headers={
        "Location": f"{other_host.url}/v1/chat/completions"})
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1, outcome.out + outcome.err
    assert "redirect to http://127.0.0.2:" in outcome.out
    assert other_host.seen == []
    assert not list(project.cache.rglob("entry.json"))


class DripServer:
    """A raw TCP server that answers headers at once (or drips them too), then one body byte
    every ``interval_s`` seconds of a long Content-Length."""

    def __init__(self, interval_s: float = 0.5, *, drip_headers: bool = False) -> None:
        self.interval_s = interval_s
        self.drip_headers = drip_headers
        self.stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        self._sock.settimeout(0.1)
        while not self.stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:  # closed by __exit__
                return
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn: socket.socket) -> None:
        body = b'{"choices": []}'  # 7.5 s of drip: well past the 1.5 s deadline
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
        with conn:
            conn.recv(65536)
            try:
                if not self.drip_headers:
                    conn.sendall(head)
                for byte in (head + body if self.drip_headers else body):
                    if self.stop.is_set():
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.interval_s)
            except OSError:
                return

    def __enter__(self) -> DripServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(1)
        self._sock.close()


@pytest.mark.parametrize("drip_headers", [False, True], ids=["body", "headers"])
def test_a_dripping_server_is_cut_off_at_the_deadline(drip_headers: bool) -> None:
    with DripServer(0.5, drip_headers=drip_headers) as drip:
        transport = _transport(drip.url + "/v1", timeout_s=1.5)
        started = time.monotonic()
        with pytest.raises(ProviderError) as info:
            transport.post_json("chat/completions", {}, scenario="s")
        elapsed = time.monotonic() - started
    # a per-socket-operation timeout never fires here (a byte comes every 0.5 s); the deadline
    # of the whole attempt does, at 1.5 s (plus at most one scheduling slice)
    assert 1.4 <= elapsed < 3.0, elapsed
    assert "no complete answer within 1.5s" in str(info.value) and "timeout" in str(info.value)


def test_a_fast_answer_is_untouched_by_the_deadline(server: ProviderServer) -> None:
    transport = _transport(server.url + "/v1", timeout_s=0.5)
    for _ in range(3):
        assert transport.post_json("chat/completions", {}, scenario="s")["choices"]
    time.sleep(0.6)  # the timers of finished attempts were cancelled: nothing fires later
    assert transport.post_json("chat/completions", {}, scenario="s")["choices"]
