"""Which requests are model calls, and what a recording does with an answer it cannot read.

Two agents as teams write them, run through the real CLI against real loopback servers:

- one posts its answer to the team's own chat connector, ``POST /api/messages``. The path
  ends like Anthropic's Messages API, but the request has no ``anthropic-version`` header
  (which the Anthropic API requires of every request): it is the agent's own service and
  passes through, never keyed. It used to be keyed as an Anthropic call, its ``201`` read as
  a Message, and every iteration of the recording failed with a decoding error;
- one is pointed at a proxy that answers ``200`` with something that is no Message. That
  answer is not stored, the iteration's error says it is the provider's answer that cannot be
  read (it used to say "the harness failed"), the SDK is told not to retry, and the run's
  accounting counts a failed call (it used to count two calls in flight forever).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sdk_support import SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=20)


class _Service:
    """A loopback HTTP service answering every POST with one fixed JSON body; it counts them."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        self.paths: list[str] = []
        service = self
        payload = json.dumps(body).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                self.rfile.read(int(self.headers.get("content-length") or 0))
                service.paths.append(self.path)
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                """Quiet."""

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def connector() -> Iterator[_Service]:
    service = _Service(201, {"ok": True, "id": "msg-1"})
    yield service
    service.close()


def _posting(project: SdkProject, url: str) -> None:
    """The agent, changed as a team would: its answer is also posted to the support channel."""
    agent = project.root / "anthropic_tools.py"
    code = agent.read_text(encoding="utf-8").replace("def triage(scenario):", "def _triage(scenario):")
    code += ("\n\ndef triage(scenario):\n    import httpx\n    answer = _triage(scenario)\n"
             f"    httpx.post('{url}/api/messages', json={{'channel': 'support', 'text': answer}})"
             ".raise_for_status()\n    return answer\n")
    agent.write_text(code, encoding="utf-8")


def test_a_post_to_the_agents_own_messages_endpoint_is_no_model_call(tmp_path: Path,
                                                                     connector: _Service) -> None:
    project = SdkProject(tmp_path, "anthropic_tools", output="text")
    _posting(project, connector.url)
    with WireFake() as fake:
        recorded = project.harness("run", "--record-missing", env=fake.env())
        assert recorded.code == 0, recorded.out + recorded.err
        model_calls = len(fake.requests)
    assert connector.paths == ["/api/messages"] * 2  # passed through, once per iteration
    assert len(project.entries()) == model_calls  # only the model calls were stored
    assert {e["request"]["api"] for e in project.entries()} == {"anthropic.messages"}
    replay = project.harness("run")  # the provider gone; the loopback connector still answers
    assert replay.code == 0, replay.out + replay.err
    assert connector.paths == ["/api/messages"] * 4


def test_a_paid_answer_that_is_no_message_is_named_not_stored_and_counted_failed(tmp_path: Path) -> None:
    proxy = _Service(200, {"ok": True})  # a misconfigured proxy: 200, and no Message
    try:
        project = SdkProject(tmp_path, "anthropic_tools", output="text")
        env = {"ANTHROPIC_BASE_URL": proxy.url, "ANTHROPIC_API_KEY": "proxy-key-not-a-secret"}
        recorded = project.harness("run", "--record-missing", env=env)
    finally:
        proxy.close()
    assert recorded.code == 1, recorded.out + recorded.err
    assert proxy.paths == ["/v1/messages"] * 2  # one per iteration: the SDK did not retry
    assert "is no anthropic.messages answer" in recorded.out
    assert "Traceback" not in recorded.out + recorded.err
    assert project.entries() == []
    accounting = project.last_run()["accounting"]
    assert (accounting["paid_attempts"], accounting["failed_calls"], accounting["paid_calls"],
            accounting["in_flight"]) == (2, 2, 0, 0)
    assert {r["status"] for r in project.records()} == {"error"}


BACKGROUND = '''
import time

from openai import OpenAI


def triage(scenario):
    client = OpenAI()
    response = client.responses.create(model="gpt-4.1-mini", input=scenario.input, background=True)
    while response.status in ("queued", "in_progress"):
        time.sleep(0.1)
        response = client.responses.retrieve(response.id)
    return response.output_text
'''


def test_a_background_responses_call_is_refused_before_anything_is_paid(tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "anthropic_tools", output="text", tools=False)
    (project.root / "anthropic_tools.py").write_text(BACKGROUND, encoding="utf-8")
    with WireFake() as fake:
        recorded = project.harness("run", "--record-missing", env=fake.env())
        assert fake.requests == []  # nothing sent, nothing paid
    assert recorded.code == 1
    assert "background: true leaves its answer on the provider's server" in recorded.out
    assert {r["status"] for r in project.records()} == {"error"}


MODELS_FIRST = '''
from openai import OpenAI

client = OpenAI()


def triage(scenario):
    available = {model.id for model in client.models.list()}  # no LLM API call: passed through
    reply = client.chat.completions.create(model="gpt-4o-mini",
                                           messages=[{"role": "user", "content": scenario.input}])
    return f"{reply.choices[0].message.content} ({len(available)} models)"
'''


def test_the_placeholder_key_never_leaves_with_a_request_that_is_no_llm_call(tmp_path: Path) -> None:
    """``client.models.list()`` goes to the provider with the real key in a paid recording; with
    the placeholder it is sent nowhere, not even to a loopback server (it used to reach both)."""
    project = SdkProject(tmp_path, "anthropic_tools", output="text", tools=False)
    (project.root / "anthropic_tools.py").write_text(MODELS_FIRST, encoding="utf-8")
    with WireFake() as fake:
        (project.root / ".env.evals").write_text(f"OPENAI_API_KEY={fake.openai_key}\n", encoding="utf-8")
        env = {k: v for k, v in fake.env().items() if k != "OPENAI_API_KEY"}  # the key is in .env.evals
        recorded = project.harness("run", "--record-missing", env=env)
        assert recorded.code == 0, recorded.out + recorded.err
        listed = [r for r in fake.requests if r.path == "/v1/models"]
        assert len(listed) == 2 and {r.status for r in listed} == {200}
        assert {r.headers["authorization"] for r in fake.requests} == {f"Bearer {fake.openai_key}"}
        sent = len(fake.requests)
        replay = project.harness("run", env={"OPENAI_BASE_URL": fake.openai_base_url})  # no key
        assert len(fake.requests) == sent  # the loopback fake is up, and got nothing
    assert replay.code == 1
    assert "carries the harness's placeholder key, which never leaves the process" in replay.out
    assert [e["request"]["api"] for e in project.entries()] == ["openai.chat"] * 2  # never cached
