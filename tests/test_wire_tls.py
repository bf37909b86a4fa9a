"""The shared TLS context of offline iterations (harness/wire/tls.py), with the real SDKs.

Inside an offline iteration every client asking for the default verifying
context gets one shared context; recording (a paid binding: the real TLS path)
and code outside an iteration build their own, as before. A real HTTPS server on
127.0.0.1 with a self-signed certificate (made by the ``openssl`` command) shows
that verification is unchanged either way: trusted through ``SSL_CERT_FILE`` the
request goes through, untrusted it is refused.
"""

from __future__ import annotations

import http.server
import shutil
import ssl
import subprocess
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx
import httpx2
import openai
import pytest

from harness.cache.store import CacheStore
from harness.wire import intercept
from harness.wire.binding import WireBinding
from harness.wire.recorder import WireRecorder


def _binding(mode: Any, tmp_path: Path) -> WireBinding:
    store = CacheStore(tmp_path / "eval-cache", ttl_days=365)
    recorder = WireRecorder(mode, store, refresh=mode != "offline", clock=lambda: datetime.now(UTC))
    return WireBinding(recorder, "agent/tenant/scenario", 0, [])


def _contexts() -> list[ssl.SSLContext]:
    """The TLS context of each client an agent might build (openai, anthropic, plain httpx)."""
    clients = [openai.OpenAI(api_key="sk-test")._client, anthropic.Anthropic(api_key="sk-test")._client,
               openai.OpenAI(api_key="sk-test")._client, httpx2.Client(), httpx.Client(),
               httpx.Client()]
    return [client._transport._pool._ssl_context for client in clients]


def test_clients_of_an_offline_iteration_share_one_context_per_httpx(tmp_path: Path) -> None:
    intercept.install()
    with intercept.bound(_binding("offline", tmp_path)):
        inside = _contexts()
    # openai and anthropic ship httpx2: all four of their clients share one; httpx has its own
    assert len({id(c) for c in inside[:4]}) == 1 and inside[4] is inside[5]
    assert inside[0] is not inside[4]
    assert all(c.verify_mode == ssl.CERT_REQUIRED and c.check_hostname for c in inside)
    outside = _contexts()
    assert len({id(c) for c in outside}) == len(outside)  # outside an iteration: one each
    assert not {id(c) for c in outside} & {id(c) for c in inside}


def test_recording_builds_every_context_as_before(tmp_path: Path) -> None:
    intercept.install()
    with intercept.bound(_binding("offline", tmp_path)):
        shared = _contexts()
    for mode in ("paid", "scripted"):
        with intercept.bound(_binding(mode, tmp_path)):
            own = _contexts()
        assert len({id(c) for c in own}) == len(own), mode
        assert not {id(c) for c in own} & {id(c) for c in shared}, mode
    with intercept.bound(_binding("offline", tmp_path)):
        asked = httpx2.Client(verify=False)._transport._pool._ssl_context
        assert asked.verify_mode == ssl.CERT_NONE  # a client's own choice is kept


@pytest.fixture(scope="module")
def https_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A loopback HTTPS server with a fresh self-signed certificate: (its URL, the cert)."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command makes the test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)

    class Health(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Health)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}/health", cert
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", ["offline", "paid"])
def test_a_real_tls_connection_verifies_as_before(mode: str, https_server: tuple[str, Path],
                                                  tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    url, cert = https_server
    intercept.install()
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with intercept.bound(_binding(mode, tmp_path)):  # a loopback call passes through, over TLS
        with httpx2.Client() as client:
            assert client.get(url).json() == {"ok": True}
        with httpx.Client() as client:
            assert client.get(url).json() == {"ok": True}
    monkeypatch.delenv("SSL_CERT_FILE")
    with intercept.bound(_binding(mode, tmp_path)):  # untrusted: refused, shared or not
        with httpx2.Client() as client, pytest.raises(httpx2.ConnectError, match="CERTIFICATE"):
            client.get(url)
        with httpx.Client() as client, pytest.raises(httpx.ConnectError, match="CERTIFICATE"):
            client.get(url)
