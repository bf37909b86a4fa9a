"""A configured key never lands in the cache, a record or a message, whatever its shape, and
``check`` finds the value of any configured credential variable anywhere in the trees.

The keys are assembled at run time, so this file holds no value a scanner would flag.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from batch_server import batch_serving
from check_support import check, healthy, messages
from provider_server import (
    TEST_KEY,
    ProviderServer,
    Received,
    Reply,
    anthropic_answer,
    openai_answer,
    point_agent,
)

import harness.providers
from conftest import Project
from harness.providers.retries import RetryPolicy

#: A 32-hex key, the shape of an Azure OpenAI key: no ``sk-`` prefix for a pattern to catch.
AZURE_KEY = "".join("0123456789abcdef"[(7 * i + 3) % 16] for i in range(32))


def _sent_key(received: Received) -> str:
    header = received.headers.get("authorization", "")
    return header.removeprefix("Bearer ") or received.headers.get("api-key", "")


def echo_key(received: Received) -> Reply:
    """A misbehaving endpoint: the key it was sent comes back in the content, a tool call and
    a debug field of the 200 answer."""
    key = _sent_key(received)
    answer = openai_answer({"answer": "yes", "note": f"you sent {key}"},
                           tool_calls=[{"name": "lookup_order", "arguments": {"token": key}}])
    answer["debug"] = {"authorization": f"Bearer {key}"}
    answer["choices"][0]["message"]["content"] = json.dumps({"answer": "yes",
                                                            "note": f"you sent {key}"})
    return Reply(body=answer)


@pytest.fixture
def server() -> Iterator[ProviderServer]:
    with ProviderServer(echo_key) as running:
        yield running


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=1, base_delay_s=0.01, max_delay_s=0.02))


def _everything(root: Path) -> bytes:
    return b"\n".join(p.read_bytes() for p in sorted(root.rglob("*"))
                      if p.is_file() and p.name != ".env.evals")


@pytest.mark.parametrize("key", [TEST_KEY, AZURE_KEY], ids=["sk-key", "azure-32-hex-key"])
def test_a_key_echoed_in_a_200_answer_is_redacted_before_anything_is_written(
        project: Project, server: ProviderServer, monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (project.root / ".env.evals").write_text(f"OPENAI_API_KEY={key}\n", encoding="utf-8")
    point_agent(project, server, tools=[{"name": "lookup_order"}])
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert len(server.requests) == 1 and _sent_key(server.requests[0]) == key  # the key was sent...
    assert key not in outcome.out + outcome.err  # ...and never shown,
    assert key.encode() not in _everything(project.root)  # stored or recorded anywhere
    contents = [json.loads(p.read_bytes()) for p in project.cache.rglob("contents.data")]
    assert len(contents) == 1
    assert json.loads(contents[0]["content"])["note"] == "you sent [REDACTED]"
    assert contents[0]["tool_calls"] == [{"name": "lookup_order", "arguments": {"token": "[REDACTED]"}}]
    record = project.records()[0]
    assert key not in json.dumps(record) and "[REDACTED]" in json.dumps(record)


def test_an_error_body_echoing_a_32_hex_key_is_redacted_in_the_message(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(received: Received) -> Reply:
        return Reply(status=401, body={"error": {"message": f"Incorrect API key: {_sent_key(received)}"}})

    with ProviderServer(refuse) as refusing:
        monkeypatch.setenv("OPENAI_API_KEY", AZURE_KEY)
        point_agent(project, refusing)
        project.scenario("helper/acme/greeting")
        outcome = project.run("run", "--refresh-cache")
    assert outcome.code != 0
    assert "Incorrect API key: [REDACTED]" in outcome.out + outcome.err
    assert AZURE_KEY.encode() not in _everything(project.root)


def test_a_short_placeholder_key_of_a_local_server_leaves_answers_intact(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    def local_time(received: Received) -> Reply:
        return Reply(body=openai_answer({"answer": "yes", "note": "in local time"}))

    with ProviderServer(local_time) as local:
        monkeypatch.setenv("OPENAI_API_KEY", "local")
        point_agent(project, local)
        project.scenario("helper/acme/greeting")
        assert project.run("run", "--refresh-cache").code == 0
    (contents,) = [json.loads(p.read_bytes()) for p in project.cache.rglob("contents.data")]
    assert json.loads(contents["content"])["note"] == "in local time"


@pytest.mark.parametrize("where", ["environment", "credentials file"])
def test_check_finds_the_value_of_a_configured_key_whatever_its_shape(
        project: Project, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    healthy(project, monkeypatch)
    key = AZURE_KEY if where == "environment" else "gw." + secrets.token_urlsafe(24)
    if where == "environment":
        monkeypatch.setenv("OPENAI_API_KEY", key)
    else:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        (project.root / ".env.evals").write_text(f"# gateway\nGATEWAY_TOKEN={key}\n", encoding="utf-8")
    assert messages(check(project), "secrets") == []
    project.write("eval-datasets/helper/notes.md", f"# Notes\n\nThe key is {key} for now.\n")
    entry = sorted(project.cache.rglob("contents.data"))[0]
    entry.write_bytes(entry.read_bytes().replace(b'"content": "', f'"content": "{key} '.encode(), 1))
    found = messages(check(project), "secrets")
    variable, source = (("OPENAI_API_KEY", "the environment") if where == "environment"
                        else ("GATEWAY_TOKEN", ".env.evals"))
    assert found[0] == (
        f"[secrets] eval-datasets/helper/notes.md:3: {variable}: the value of {variable} (from "
        f"{source}) at column 12\n    fix: remove it and re-record what held it; then rotate the key: "
        "it may already be in the git history of every clone")
    assert any(f.startswith(f"[secrets] {project.cache.name}/cache/") and variable in f for f in found)
    assert len(found) == 2 and all(key not in f and key[:4] not in f for f in found)


def test_check_names_a_custom_api_key_env_of_an_agent(project: Project,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    agent_file = project.datasets / "helper" / "agent.yaml"
    agent_file.write_text(agent_file.read_text(encoding="utf-8")
                          + "endpoint: {api_key_env: ACME_GATEWAY_CREDENTIAL}\n", encoding="utf-8")
    monkeypatch.setenv("ACME_GATEWAY_CREDENTIAL", AZURE_KEY.upper())
    project.write("eval-datasets/helper/notes.md", f"{AZURE_KEY.upper()}\n")
    found = messages(check(project), "secrets")
    assert found and found[0].startswith("[secrets] eval-datasets/helper/notes.md:1: "
                                         "ACME_GATEWAY_CREDENTIAL: the value of ACME_GATEWAY_CREDENTIAL")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_key_echoed_in_a_batch_result_is_redacted_before_anything_is_written(
        project: Project, monkeypatch: pytest.MonkeyPatch, provider: str) -> None:
    def echo(kind: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        text = json.dumps({"answer": "yes", "note": f"key {AZURE_KEY}"})
        return 200, (openai_answer(text) if kind == "openai" else anthropic_answer(text))

    monkeypatch.setenv(f"{provider.upper()}_API_KEY", AZURE_KEY)
    with batch_serving(answer=echo) as fake:
        model = "gpt-test-1" if provider == "openai" else "claude-test-1"
        project.agent("helper", provider=provider, model=model,
                      endpoint={"base_url": fake.url + ("/v1" if provider == "openai" else ""),
                                "max_retries": 0})
        project.scenario("helper/acme/greeting")
        outcome = project.run("run", "--refresh-cache", "--batch", "--batch-poll", "0.01")
    assert outcome.code == 0, outcome.out + outcome.err
    assert AZURE_KEY.encode() not in _everything(project.root)
    (contents,) = [json.loads(p.read_bytes()) for p in project.cache.rglob("contents.data")]
    assert json.loads(contents["content"])["note"] == "key [REDACTED]"
