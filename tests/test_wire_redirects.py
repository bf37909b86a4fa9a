"""A paid recording never follows a provider's redirect: the request stays with its host.

The official SDKs build their httpx client with ``follow_redirects=True``, and the harness
puts the real key (from the credentials file) in place of its placeholder in every LLM API
request it forwards. A base URL that answered 307 to another host had the SDK send the
request there as a second paid attempt. With the SDKs installed here that follow-up
carried no key (httpx drops ``Authorization`` across origins; anthropic 2.17 sent no
``x-api-key`` either), so whether the key went along was up to the SDK's version. A 3xx
answer to a request the harness sent is now the iteration's error
(eval-provider-redirect, as for declared agents), given to the SDK as an answer it raises
on without retrying, and nothing is stored or sent on.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=8)


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


@pytest.fixture
def redirector(fake: WireFake) -> Iterator[str]:
    """A base URL whose every request is answered ``307`` to the same path on the fake (another
    port: another origin)."""

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", f"{fake.url}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("module", "variable", "base"), [
    ("anthropic_tools", "ANTHROPIC", ""),
    ("openai_tools", "OPENAI", "/v1"),
])
def test_a_redirect_is_refused_and_the_credentials_key_never_reaches_another_host(
        tmp_path: Path, fake: WireFake, redirector: str, module: str, variable: str, base: str) -> None:
    project = SdkProject(tmp_path, module, output="text" if module.startswith("anthropic") else "json")
    key = fake.anthropic_key if variable == "ANTHROPIC" else fake.openai_key
    (project.root / ".env.evals").write_text(f"{variable}_API_KEY={key}\n", encoding="utf-8")
    recorded = project.harness("run", "--record-missing", env={f"{variable}_BASE_URL": redirector + base})
    assert recorded.code == 1, recorded.out + recorded.err
    assert "Traceback" not in recorded.err
    assert not any(key in str(request) for request in fake.requests)  # the key stayed home
    assert fake.requests == []  # nothing was sent to the other host at all
    assert project.entries() == []  # a redirect is no answer: nothing stored
    records = project.records()
    assert [r["status"] for r in records] == ["error", "error"]
    for record in records:
        assert "307 redirect" in record["message"] and "eval-provider-redirect" in record["message"]
        assert fake.url in record["message"]  # where it pointed


MODELS_FIRST = '''
from openai import OpenAI

client = OpenAI()


def triage(scenario):
    available = [model.id for model in client.models.list()]  # no LLM API call: passed through
    return f"{len(available)} models"
'''


def test_a_redirect_of_a_request_that_is_no_llm_call_is_refused_too(
        tmp_path: Path, fake: WireFake, redirector: str) -> None:
    """``client.models.list()`` goes out with the real key in place of the placeholder; its 307
    is kept from the SDK's client as well."""
    project = SdkProject(tmp_path, "openai_tools", output="text", tools=False)
    (project.root / "openai_tools.py").write_text(MODELS_FIRST, encoding="utf-8")
    (project.root / ".env.evals").write_text(f"OPENAI_API_KEY={fake.openai_key}\n", encoding="utf-8")
    recorded = project.harness("run", "--record-missing", env={"OPENAI_BASE_URL": redirector + "/v1"})
    assert recorded.code == 1, recorded.out + recorded.err
    assert fake.requests == []
    assert {r["status"] for r in project.records()} == {"error"}
    assert all("307 redirect" in r["message"] for r in project.records())
