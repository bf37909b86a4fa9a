"""Honest accounting and provenance: every attempt that reached the provider counts as paid,
each retry is printed, records and run.json say per call how its answer was obtained, and
each entry says where its answer came from (never in the key)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from provider_server import TEST_KEY, ProviderServer, Reply, openai_answer, point_agent

import harness.providers
from conftest import Project
from harness.cache.store import CacheStore
from harness.clients.caching import CachingClient
from harness.clients.scripted import ScriptedClient
from harness.core.entities import ChatCall, ChatResponse, Usage
from harness.providers.retries import RetryPolicy
from harness.refresh.journal import Journal


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02))


def run_file(project: Project) -> dict[str, Any]:
    run = sorted((project.results / "results").iterdir())[-1]
    data: dict[str, Any] = json.loads((run / "run.json").read_text())
    return data


def provenances(project: Project) -> list[dict[str, Any] | None]:
    return [json.loads(p.read_text()).get("provenance") for p in project.cache.rglob("entry.json")]


def test_a_timeout_retry_is_printed_and_both_attempts_count_as_paid(
        project: Project, server: ProviderServer) -> None:
    point_agent(project, server, endpoint={"max_retries": 2, "timeout_s": 0.3})
    project.scenario("helper/acme/greeting")
    server.queue(Reply(body=openai_answer({"answer": "yes"}), delay_s=0.8))  # generated, too late
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 0, outcome.out + outcome.err
    assert "retry 2/3 of helper/acme/greeting" in outcome.err and "timeout" in outcome.err
    assert "paid 2 (1 answered, 1 retried)" in outcome.err
    accounting = run_file(project)["accounting"]
    assert accounting["paid_attempts"] == 2 and accounting["paid_calls"] == 1
    assert accounting["retried_calls"] == 1 and accounting["timeouts"] == 1
    call = project.records()[-1]["calls"][0]
    assert call["obtained"] == "paid" and call["attempts"] == 2 and call["retried"] is True
    (recorded,) = provenances(project)
    assert recorded is not None
    assert recorded["source"] == "provider" and recorded["endpoint_kind"] == "openai-compatible"
    assert recorded["obtained"] == "paid" and recorded["attempts"] == 2
    assert recorded["input_tokens"] == 12 and recorded["output_tokens"] == 5
    assert isinstance(recorded["latency_ms"], float) and recorded["latency_ms"] > 0
    assert call["provenance"] == recorded


def test_a_call_that_fails_for_good_still_counts_its_attempts(
        project: Project, server: ProviderServer) -> None:
    point_agent(project, server, endpoint={"max_retries": 2})
    project.scenario("helper/acme/greeting")
    server.answer = lambda received: Reply(503, {"error": {"message": "overloaded"}})
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1
    assert outcome.err.count("retry ") == 2
    accounting = run_file(project)["accounting"]
    assert (accounting["paid_attempts"], accounting["paid_calls"], accounting["failed_calls"]) \
        == (3, 0, 1)
    (call,) = project.records()[-1]["calls"]
    assert call["failed"] is True and call["attempts"] == 3 and call["obtained"] == "paid"
    assert "3 attempts reached the provider: counted as paid" in outcome.out


def test_a_refused_connection_never_counts_as_paid(project: Project) -> None:
    project.agent(endpoint={"base_url": "http://127.0.0.1:9/v1", "max_retries": 1})
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1
    assert run_file(project)["accounting"]["paid_attempts"] == 0
    assert "never reached the provider" in outcome.err


def test_scripted_entries_say_scripted_and_the_progress_never_says_paid(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    outcome = project.record()
    assert "recording (scripted) 1/1" in outcome.err and "paid" not in outcome.err
    (recorded,) = provenances(project)
    assert recorded == {"source": "scripted", "endpoint_kind": "scripted", "obtained": "scripted",
                        "attempts": 0, "latency_ms": None, "input_tokens": 0, "output_tokens": 0}
    assert run_file(project)["accounting"]["scripted"] == 1
    replay = project.run("run")
    assert replay.code == 0
    call = project.records()[-1]["calls"][0]
    assert call["obtained"] == "cache" and call["provenance"] == recorded


def test_entries_of_older_versions_without_provenance_replay_green(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    (entry,) = project.cache.rglob("entry.json")
    meta = json.loads(entry.read_text())
    del meta["provenance"]
    entry.write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    assert project.records()[-1]["calls"][0]["provenance"] is None
    assert project.cache_digest() == before


def test_an_answer_taken_from_the_journal_says_so(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "cache", ttl_days=730)
    call = ChatCall("helper/acme/greeting", 0, "openai", "gpt-test-1",
                    {"messages": [{"role": "user", "content": "hi"}], "options": {}})
    journal = Journal(tmp_path / "journal", resume=True)  # an earlier run paid; --resume
    try:
        from harness.requests.key import compute_key

        journal.put(compute_key(call), call, ChatResponse('{"answer": "yes"}', usage=Usage(7, 3)))
        inner = ScriptedClient("openai", "gpt-test-1", {})  # would fail if it were asked
        client = CachingClient(inner, store, journal=journal)
        _, record = client.complete_recorded(call)
    finally:
        journal.close()
    assert record.obtained == "journal" and record.attempts == 0
    assert record.provenance is not None and record.provenance["obtained"] == "journal"
    assert record.provenance["latency_ms"] is None and record.provenance["input_tokens"] == 7


def test_under_pytest_xdist_run_json_sums_the_workers_paid_calls(
        project: Project, server: ProviderServer) -> None:
    """The controller made no call: its accounting is its workers' records, never zeros."""
    import os
    import subprocess
    import sys

    point_agent(project, server, endpoint={"max_retries": 1})
    for index in range(4):
        project.scenario(f"helper/acme/s{index}")
    server.queue(Reply(503, {"error": {"message": "busy"}}))  # one call is retried once
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run([sys.executable, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider",
                           "--evals-refresh-cache", "-n", "2"], cwd=project.root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    accounting = run_file(project)["accounting"]
    assert len(server.requests) == 5
    assert accounting["paid_attempts"] == 5 and accounting["paid_calls"] == 4
    assert accounting["retried_calls"] == 1 and accounting["retries"] == 1
    assert accounting["timeouts"] is None  # not in the records: unknown, not zero
