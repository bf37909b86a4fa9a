"""Agents in any language: ``command:`` runs against the loopback replay endpoint.

A Node.js agent that calls the chat completions API with plain ``fetch``, and a
Python command that uses the official SDK in its own process, are recorded
through the endpoint against the loopback fake, then replayed offline with the
fake stopped. The endpoint listens on 127.0.0.1 only and serves nothing but the
iteration's LLM API calls.
"""

from __future__ import annotations

import ast
import json
import shutil
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sdk_support import LATE, SdkProject
from wire_fakes import WireFake

from harness.wire.serve import ReplayEndpoint

pytestmark = pytest.mark.slow(seconds=30)

NODE_AGENT = r"""
const scenario = JSON.parse(require("fs").readFileSync(0, "utf8"));
async function main() {
  const response = await fetch(process.env.OPENAI_BASE_URL + "/chat/completions", {
    method: "POST",
    headers: {"content-type": "application/json", "authorization": "Bearer " + process.env.OPENAI_API_KEY},
    body: JSON.stringify({model: "gpt-4o-mini", temperature: 0, messages: [
      {role: "system", content: "You triage support messages; answer JSON."},
      {role: "user", content: scenario.input}]}),
  });
  if (!response.ok) { console.error(await response.text()); process.exit(3); }
  const body = await response.json();
  process.stdout.write(body.choices[0].message.content);
}
main();
"""

PYTHON_COMMAND = """
import json, sys
from openai import OpenAI

scenario = json.load(sys.stdin)
reply = OpenAI().chat.completions.create(model="gpt-4o-mini", messages=[
    {"role": "system", "content": "You triage support messages; answer JSON."},
    {"role": "user", "content": scenario["input"]}])
print(reply.choices[0].message.content)
"""


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


def command_project(root: Path, command: list[str], file: str, code: str) -> SdkProject:
    project = SdkProject(root, "openai_tools", tools=False)
    (root / "openai_tools.py").unlink()
    project.write(f"eval-datasets/triage/{file}", code)
    project.write("eval-datasets/triage/agent.yaml", {"command": command, "output": "json"})
    return project


@pytest.mark.parametrize("language", ["python", "node"])
def test_a_command_agent_records_through_the_endpoint_and_replays_offline(
        tmp_path: Path, fake: WireFake, language: str) -> None:
    if language == "node":
        if shutil.which("node") is None:
            pytest.skip("node is not installed on this machine")
        project = command_project(tmp_path, ["node", "agent.js"], "agent.js", NODE_AGENT)
    else:
        project = command_project(tmp_path, [sys.executable, "agent_cli.py"], "agent_cli.py", PYTHON_COMMAND)
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert len(fake.requests) == 2 and len(project.entries()) == 2
    assert {r.headers["authorization"] for r in fake.requests} == {f"Bearer {fake.openai_key}"}
    fake.stop()
    replay = project.harness("run")
    assert replay.code == 0, replay.out + replay.err
    assert "2 passed, 0 failed" in replay.out


def test_a_command_agent_miss_is_explained_and_its_failure_is_an_error_verdict(
        tmp_path: Path, fake: WireFake) -> None:
    project = command_project(tmp_path, [sys.executable, "agent_cli.py"], "agent_cli.py", PYTHON_COMMAND)
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    project.write("eval-datasets/triage/acme/late-order.yaml", {
        "type": "positive", "description": "Never recorded.", "input": LATE + " Please hurry.",
        "expect": [{"contains": "shipping"}]})
    replay = project.harness("run")
    assert replay.code == 1
    assert "[missed] triage/acme/late-order iteration 0" in replay.out
    assert "re-record: python -m harness run --record-missing --scenario triage/acme/late-order" in replay.out
    assert "Traceback" not in replay.err


def test_the_endpoint_listens_on_loopback_and_serves_only_llm_api_calls() -> None:
    with ReplayEndpoint(lambda: None) as endpoint:
        assert endpoint._server.server_address[0] == "127.0.0.1"
        for path in ("/", "/openai/v1/models", "/anthropic/v1/messages", "/other/v1/chat/completions"):
            request = urllib.request.Request(f"http://127.0.0.1:{endpoint.port}{path}", data=b"{}",
                                             method="POST")
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request, timeout=5)
            assert refused.value.code == 404
            assert "serves only the LLM API calls" in json.loads(refused.value.read())["error"]["message"]
        assert endpoint.requests == 0


def _serve(project: SdkProject, *args: str,
           env: dict[str, str] | None = None) -> tuple[Any, dict[str, str]]:
    import os
    import subprocess

    from sdk_support import PROVIDER_VARIABLES

    clean = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
    clean.update(env or {})
    process = subprocess.Popen([sys.executable, "-m", "harness", "--project", str(project.root), "serve",
                                "triage/acme/late-order", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=clean)
    assert process.stdout is not None
    urls: dict[str, str] = {}
    for line in process.stdout:
        if line.startswith("serving "):
            break
        name, _, value = line.strip().partition("=")
        urls[name] = value
    return process, urls


def _ask(urls: dict[str, str], text: str) -> Any:
    from openai import OpenAI

    client = OpenAI(base_url=urls["OPENAI_BASE_URL"], api_key="anything", max_retries=0)
    return client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": text}])


def test_harness_serve_records_then_replays_one_iteration_for_any_client(tmp_path: Path,
                                                                         fake: WireFake) -> None:
    import signal

    project = command_project(tmp_path, [sys.executable, "agent_cli.py"], "agent_cli.py", PYTHON_COMMAND)
    process, urls = _serve(project, "--record-missing", env=fake.env())
    recorded = _ask(urls, LATE).choices[0].message.content
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, out + err
    assert "1 exchange(s) answered, 0 failed" in out and len(project.entries()) == 1
    fake.stop()
    process, urls = _serve(project)
    assert _ask(urls, LATE).choices[0].message.content == recorded  # the same bytes, offline
    from openai import BadRequestError

    miss = "harness: eval-cache-miss: triage/acme/late-order iteration 0 has no cache"
    with pytest.raises(BadRequestError, match=miss):
        _ask(urls, "Something never recorded")
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 1
    assert "1 exchange(s) answered, 1 failed" in out and "expected entry: eval-cache/cache/" in out


def test_the_replay_endpoint_asks_no_resolver_anything_offline(tmp_path: Path, fake: WireFake) -> None:
    """``http.server`` looks the bound address up (``socket.getfqdn``): a DNS query where
    /etc/hosts does not name 127.0.0.1. The endpoint only binds its loopback socket."""
    project = command_project(tmp_path, [sys.executable, "agent_cli.py"], "agent_cli.py", PYTHON_COMMAND)
    assert project.harness("run", "--record-missing", env=fake.env()).code == 0
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0, replay.out + replay.err
    events = replay.out.rsplit("SOCKET_EVENTS ", 1)[1].strip()
    assert set(ast.literal_eval(events)) == {"socket.__new__", "socket.bind"}, events
