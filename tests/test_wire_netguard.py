"""The offline backstop below every HTTP client (harness/wire/netguard.py).

A request the httpx interceptor does not see (aiohttp, urllib, a raw socket) used to leave
an offline run as it was: litellm's ``acompletion`` connected to api.openai.com with the
placeholder key. Offline, a connection or a name lookup off this machine is now refused
before it happens, and the iteration fails with the reason even when the agent shrugs the
error off; loopback services stay reachable. The agent here looks its tool up with urllib.
"""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import SdkProject

from harness.report.load import load_records

pytestmark = pytest.mark.slow(seconds=10)


@pytest.fixture
def project(tmp_path: Path, local_service: str) -> SdkProject:
    """The project, recorded (no model call: the stamp is written) with its tool reachable."""
    made = SdkProject(tmp_path, "urllib_tool", tools=False)
    recorded = made.harness("run", "--record-missing", env={"TOOL_URL": local_service})
    assert recorded.code == 0, recorded.out + recorded.err
    return made


@pytest.fixture
def local_service() -> Iterator[str]:
    class Status(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            body = b"delayed, with DHL"
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Status)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/orders/A-1001"
    server.shutdown()


@pytest.mark.parametrize(("url", "shown"), [
    ("http://203.0.113.9:81/orders/A-1001", "203.0.113.9:81"),  # TEST-NET-3: would hang to its timeout
    ("http://status.example.com/orders/A-1001", "status.example.com:80"),  # refused at the name lookup
])
def test_offline_a_connection_no_httpx_transport_made_is_refused_and_fails_the_iteration(
        project: SdkProject, url: str, shown: str) -> None:
    started = time.monotonic()
    outcome = project.harness("run", env={"TOOL_URL": url}, audited=True)
    assert time.monotonic() - started < 20  # two iterations, none waited for a 3 s timeout
    assert outcome.code == 1, outcome.out + outcome.err
    last = sorted((project.root / "eval-results" / "results").iterdir())[-1]
    records = load_records(last)
    assert [r["status"] for r in records] == ["error", "error"]
    for record in records:
        assert f"the offline run refused a connection to {shown}" in record["message"]
        assert "harness serve" in record["message"]  # the way such a client gets the cache
    assert "socket.connect" not in outcome.out  # refused before it was made


def test_offline_a_loopback_service_stays_reachable(project: SdkProject, local_service: str) -> None:
    outcome = project.harness("run", env={"TOOL_URL": local_service})
    assert outcome.code == 0, outcome.out + outcome.err
    assert project.last_run()["counts"] == {"passed": 2}


@pytest.mark.parametrize(("url", "fix"), [
    ("https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json",
     "LITELLM_LOCAL_MODEL_COST_MAP=True"),
    ("https://api.openai.com/v1/traces/ingest", "OPENAI_AGENTS_DISABLE_TRACING=1"),
])
def test_a_refused_request_a_framework_makes_on_its_own_names_the_switch_that_stops_it(
        tmp_path: Path, url: str, fix: str) -> None:
    """litellm's cost map at import and the Agents SDK's trace upload are no model calls: an
    offline run refuses them, and the iteration's error says which setting turns them off."""
    from datetime import UTC, datetime

    from harness.cache.store import CacheStore
    from harness.wire.binding import NetworkRefused, WireBinding
    from harness.wire.exchange import WireRequest
    from harness.wire.recorder import WireRecorder

    recorder = WireRecorder("offline", CacheStore(tmp_path, ttl_days=365), refresh=False,
                            clock=lambda: datetime.now(UTC))
    binding = WireBinding(recorder, "agent/tenant/scenario", 0, [])
    host = url.split("/")[2]
    with pytest.raises(NetworkRefused, match=fix.replace(".", r"\.")):
        binding.check_passthrough(WireRequest("GET", url, "/" + url.split("/", 3)[3], host, (), b""))
    assert fix in binding.errors[0]
