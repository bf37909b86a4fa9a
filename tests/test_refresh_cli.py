"""``run --refresh-cache`` / ``--record-missing`` against a real provider on 127.0.0.1, end to end."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
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
from harness.loading.config import load_config
from harness.providers.retries import RetryPolicy
from harness.refresh import journal_dir
from harness.refresh.journal import Journal
from harness.report.load import load_records
from harness.running.api import RunOptions, run_evals


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02))


def three_scenarios(project: Project, server: ProviderServer) -> None:
    point_agent(project, server)
    for name in ("greeting", "farewell"):
        project.scenario(f"helper/acme/{name}")
    project.scenario("helper/globex/greeting", type="negative")


def latest_records(project: Project) -> dict[str, dict[str, Any]]:
    run = sorted((project.results / "results").iterdir())[-1]
    return {record["scenario"]: record for record in load_records(run)}


def entries(project: Project) -> list[Path]:
    return sorted(project.cache.rglob("entry.json"))


def journal_size(project: Project) -> int:
    folder = journal_dir(project.results)
    if not folder.exists():
        return 0
    journal = Journal(folder)
    try:
        return len(journal)
    finally:
        journal.close()


def test_refresh_records_and_ends_with_the_verdicts_of_an_offline_replay(
    project: Project, server: ProviderServer
) -> None:
    three_scenarios(project, server)
    recorded = project.run("run", "--refresh-cache")
    assert recorded.code == 0, recorded.out + recorded.err
    assert len(server.requests) == 3 and len(entries(project)) == 3
    assert (project.cache / ".eval-cache.json").is_file()
    assert "recording (paid) 3/3 100%" in recorded.err
    assert "paid 3 (3 answered), journal 0, cache 0 | tokens 36 in, 15 out" in recorded.err
    during = latest_records(project)
    assert {r["usage"]["input_tokens"] for r in during.values()} == {12}
    replay = project.run("run")
    assert replay.code == 0, replay.out
    after = latest_records(project)
    assert all(r["cache_hit"] for r in after.values())
    for scenario, record in during.items():
        assert (record["status"], record["verdicts"], record["response"]) == \
            (after[scenario]["status"], after[scenario]["verdicts"], after[scenario]["response"])
    assert journal_size(project) == 0  # a complete run forgets what it journaled


def test_record_missing_pays_only_for_the_scenario_that_misses(
    project: Project, server: ProviderServer
) -> None:
    three_scenarios(project, server)
    assert project.run("run", "--refresh-cache").code == 0
    project.scenario("helper/acme/new-one")
    outcome = project.run("run", "--record-missing")
    assert outcome.code == 0, outcome.out
    assert len(server.requests) == 4
    assert "paid 1 (1 answered), journal 0, cache 3" in outcome.err
    assert project.run("run", "--refresh-cache").code == 0  # an explicit refresh pays again
    assert len(server.requests) == 8


def test_the_base_url_never_enters_the_key(project: Project, server: ProviderServer) -> None:
    three_scenarios(project, server)
    assert project.run("run", "--refresh-cache").code == 0
    for entry in entries(project):
        assert server.url not in entry.read_text() and "127.0.0.1" not in entry.read_text()
    with ProviderServer() as elsewhere:
        point_agent(project, elsewhere, endpoint={"timeout_s": 9, "max_retries": 2})
        outcome = project.run("run", "--record-missing")
        assert outcome.code == 0 and elsewhere.requests == []
    assert project.run("run").code == 0


def test_a_final_failure_names_scenario_status_and_body_and_writes_nothing(
    project: Project, server: ProviderServer
) -> None:
    point_agent(project, server, endpoint={"max_retries": 2})
    project.scenario("helper/acme/greeting")
    server.answer = lambda received: Reply(503, {"error": {"message": "the model is overloaded"}})
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1
    assert "[error] helper/acme/greeting iteration 0" in outcome.out
    assert "helper/acme/greeting: openai at 127.0.0.1:" in outcome.out
    assert "call failed after 3 attempts: HTTP 503:" in outcome.out
    assert "the model is overloaded" in outcome.out
    assert len(server.requests) == 3
    assert entries(project) == [] and journal_size(project) == 0
    assert not (project.cache / ".eval-cache.json").exists()


@pytest.mark.parametrize("reply, expected", [
    (Reply(body="<html>502 Bad Gateway</html>"), "body is not valid JSON"),
    (Reply(body=openai_answer({"answer": "yes"}), truncate_to=25), "truncated body"),
    (Reply(body={"choices": []}), "no choices"),
    (Reply(body=openai_answer("")), "the content is empty"),
    (Reply(body=openai_answer("hi", finish_reason="eaten")), "finish reason 'eaten' is unknown"),
], ids=["invalid-json", "truncated", "no-choices", "empty-content", "unknown-finish-reason"])
def test_a_malformed_answer_fails_clearly_and_writes_nothing(
    project: Project, server: ProviderServer, reply: Reply, expected: str
) -> None:
    point_agent(project, server)
    project.scenario("helper/acme/greeting")
    server.answer = lambda received: reply
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1
    assert "[error] helper/acme/greeting" in outcome.out and expected in outcome.out
    assert "Nothing was written to the cache" in outcome.out
    assert entries(project) == [] and journal_size(project) == 0


def test_an_anthropic_agent_records_tool_calls(project: Project, server: ProviderServer) -> None:
    tools = [{"name": "file_draft", "description": "File a draft.",
              "parameters": {"type": "object", "properties": {"body": {"type": "string"}}}}]
    point_agent(project, server, provider="anthropic", model="claude-test-1", output="text",
                tools=tools)
    project.scenario("helper/acme/draft", expect=[
        {"tool_args": {"name": "file_draft", "args": {"body": "Hello"}}}, {"contains": "filed"}])
    server.answer = lambda received: Reply(body=anthropic_answer(
        "I filed the draft.", tool_uses=[{"name": "file_draft", "input": {"body": "Hello"}}]))
    recorded = project.run("run", "--refresh-cache")
    assert recorded.code == 0, recorded.out
    assert server.requests[0].path == "/v1/messages"
    assert server.requests[0].body["tools"][0]["name"] == "file_draft"
    assert project.run("run").code == 0


def test_an_api_key_never_reaches_the_tree_records_logs_or_messages(
    project: Project, server: ProviderServer
) -> None:
    three_scenarios(project, server)

    def answer(received: Received) -> Reply:
        if "farewell" in json.dumps(received.body):  # a provider that echoes the key it refused
            return Reply(401, {"error": {"message": f"Incorrect API key provided: {TEST_KEY}"}})
        return Reply(body=openai_answer({"answer": "yes"}))

    server.answer = answer
    outputs = [project.run("run", "--refresh-cache"), project.run("run"),
               project.run("run", "--record-missing")]
    assert outputs[0].code == 1 and "HTTP 401" in outputs[0].out
    assert "the key was refused: check OPENAI_API_KEY (the environment)" in outputs[0].out
    assert all(r.headers["authorization"] == f"Bearer {TEST_KEY}" for r in server.requests)
    secret = TEST_KEY.encode()
    leaks = [p for p in project.root.rglob("*") if p.is_file() and secret in p.read_bytes()]
    assert leaks == []
    assert journal_dir(project.results).is_dir()  # the journal was searched too
    for outcome in outputs:
        assert TEST_KEY not in outcome.out + outcome.err


def test_iterations_run_concurrently_and_report_in_plan_order(
    project: Project, server: ProviderServer
) -> None:
    point_agent(project, server)
    names = [f"s{i:02d}" for i in range(8)]
    for name in names:
        project.scenario(f"helper/acme/{name}")
    server.latency_s = 0.25
    config = load_config(project.root)
    started = time.perf_counter()
    parallel: list[str] = []
    summary = run_evals(config, RunOptions(mode="refresh", concurrency=8),
                        on_result=lambda r: parallel.append(r.scenario.name))
    elapsed = time.perf_counter() - started
    assert summary.exit_code == 0 and len(server.requests) == 8
    assert elapsed < 1.0, f"8 calls of 0.25 s at concurrency 8 took {elapsed:.2f}s"
    assert parallel == names and summary.iterations == 8
    serial: list[str] = []
    run_evals(config, RunOptions(mode="refresh", concurrency=1),
              on_result=lambda r: serial.append(r.scenario.name))
    assert serial == names


def test_concurrency_must_be_positive(project: Project, server: ProviderServer) -> None:
    three_scenarios(project, server)
    outcome = project.run("run", "--refresh-cache", "--concurrency", "0")
    assert outcome.code == 2 and "--concurrency must be at least 1" in outcome.err
    assert server.requests == []


def test_a_judge_on_another_provider_is_recorded_and_its_key_checked_up_front(
    project: Project, server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    point_agent(project, server, judge={"provider": "anthropic", "model": "claude-judge-1",
                                        "evaluators": ["relevance"]})
    project.scenario("helper/acme/greeting")

    def answer(received: Received) -> Reply:
        if received.path.endswith("/messages"):
            return Reply(body=anthropic_answer('{"score": 4, "reason": "On topic."}'))
        return Reply(body=openai_answer({"answer": "yes"}))

    server.answer = answer
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)  # the judge is not the agent: no endpoint
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    refused = project.run("run", "--refresh-cache")
    assert refused.code == 2 and "ANTHROPIC_API_KEY" in refused.err and server.requests == []
    monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
    recorded = project.run("run", "--refresh-cache")
    assert recorded.code == 0, recorded.out
    assert sorted(r.path for r in server.requests) == ["/v1/chat/completions", "/v1/messages"]
    judged = [e for e in entries(project) if json.loads(e.read_text()).get("purpose")]
    assert len(judged) == 1 and json.loads(judged[0].read_text())["provider"] == "anthropic"
    replay = project.run("run")
    record = latest_records(project)["helper/acme/greeting"]
    assert replay.code == 0 and record["cache_hit"]
    assert [(j["name"], j["score"]) for j in record["judges"]] == [("relevance", 4)]
