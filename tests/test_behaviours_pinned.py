"""Behaviours a user relies on that no test pinned (issue 19, item 13): each test here kills one
mutation of ``tests/mutations/run_probe.py`` that survived every earlier test run."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from verdicts import outcomes, rejected

from conftest import Project
from harness.assertions import evaluate
from harness.cache.store import CacheStore
from harness.core.entities import AgentOutput, ChatCall, ChatResponse, ToolCall
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset


def _request(project: Project) -> dict[str, Any]:
    dataset = load_dataset(load_config(project.root))
    return dataset.request_for(dataset.scenarios[0])


def test_a_scenarios_context_reaches_the_request_as_a_system_message(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", context="Member since {{since}}.\r\nPlan: pro.",
                     params={"since": 2021})
    messages = _request(project)["messages"]
    assert messages[1] == {"role": "system", "content": "Context:\nMember since 2021.\nPlan: pro."}
    assert messages[2]["role"] == "user"


def test_a_messages_name_is_kept_in_the_request(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", input=None, messages=[
        {"role": "user", "name": "ana", "content": "Hello"},
        {"role": "assistant", "content": "Hi"},
        {"role": "user", "content": "Again"}])
    path = project.datasets / "helper" / "acme" / "greeting.yaml"
    data = path.read_text(encoding="utf-8").replace("input: null\n", "")
    path.write_text(data, encoding="utf-8")
    messages = _request(project)["messages"]
    assert messages[1] == {"role": "user", "name": "ana", "content": "Hello"}
    assert "name" not in messages[2]


def test_agent_tenant_and_scenario_params_all_reach_the_request_in_precedence(
        project: Project) -> None:
    project.agent(params={"brand": "Acme Fit", "tone": "plain", "limit": 3})
    project.write("eval-datasets/helper/system.md",
                  "{{brand}} / {{tone}} / {{limit}} / {{tenant}} / {{agent}}\n")
    project.write("eval-datasets/helper/acme/tenant.yaml", {"params": {"tone": "warm", "limit": 4}})
    project.scenario("helper/acme/greeting", params={"limit": 5})
    assert _request(project)["messages"][0]["content"] == "Acme Fit / warm / 5 / acme / helper\n"


def test_a_multi_step_counterexample_is_judged_on_its_last_answer(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"}, counterexamples=[{
        "why": "agrees first, then takes it back",
        "answer": [{"json": {"answer": "yes"}}, {"json": {"answer": "no"}}]}])
    project.record()
    assert project.run("run").code == 0
    (found,) = project.records()[-1]["counterexamples"]
    assert found["caught"] is True and found["rejected"] == ["json_path answer == 'yes'"]


def test_assertion_strength_counts_each_scenario_once_whatever_its_iterations(
        project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"}, iterations=3, counterexamples=[
        {"why": "says no", "answer": {"json": {"answer": "no"}}},
        {"why": "says nothing", "answer": {"json": {"answer": ""}}}])
    project.record()
    assert project.run("run").code == 0
    run = sorted((project.results / "results").iterdir())[-1]
    strength = json.loads((run / "run.json").read_text(encoding="utf-8"))["strength"]
    assert strength == {"helper": {"caught": 2, "total": 2}}


def test_not_contains_on_a_tool_argument_finds_the_string_inside_a_list() -> None:
    call = ToolCall("file_draft", {"body": "Hello", "cc": ["ops@example.test",
                                                          "approval hash 9f3a"]})
    output = AgentOutput(ChatResponse("Filed.", (call,)), "Filed.", None)
    (verdict,) = evaluate([{"not_contains": {"value": "approval hash", "tool": "file_draft"}}],
                          output, output_kind="text", output_schema=None)
    assert rejected(verdict).startswith("file_draft#0.cc[1]:")


def test_json_path_equals_on_lists_of_different_lengths_is_a_real_reject() -> None:
    doc = {"options": ["strength", "endurance"]}
    output = AgentOutput(ChatResponse(json.dumps(doc)), json.dumps(doc), doc)
    verdicts = evaluate([{"json_path": {"path": "options", "equals": ["strength"]}},
                         {"json_path": {"path": "options", "in": [["strength"], ["x", "y", "z"]]}}],
                        output, output_kind="json", output_schema=None)
    assert outcomes(verdicts) == ["reject", "reject"]


def _valid_json_not_a_response(project: Project, payload: bytes) -> Path:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    (entry,) = project.cache.rglob("entry.json")
    meta = json.loads(entry.read_text(encoding="utf-8"))
    import hashlib

    meta["contents_sha256"] = hashlib.sha256(payload).hexdigest()
    (entry.parent / "contents.data").write_bytes(payload)
    entry.write_text(json.dumps(meta, indent=2), encoding="utf-8")
    return entry.parent


@pytest.mark.parametrize("payload", [b'{"answer": "yes"}', b"[]", b'{"content": 5}'])
def test_a_payload_that_is_json_but_not_a_response_is_corrupt_for_run_and_check(
        project: Project, payload: bytes) -> None:
    folder = _valid_json_not_a_response(project, payload)
    outcome = project.run("run")
    assert outcome.code == 1 and "eval-cache-corrupt" in outcome.out + outcome.err
    checked = project.run("check")
    assert checked.code == 1
    assert "contents.data does not decode as a response" in checked.out
    assert folder.name in checked.out


def test_sync_makes_every_written_entry_durable_once(tmp_path: Path) -> None:
    store = CacheStore(tmp_path / "eval-cache", ttl_days=730)
    now = datetime(2027, 6, 1, tzinfo=UTC)
    for iteration in range(3):
        call = ChatCall("helper/acme/greeting", iteration, "openai", "gpt-test-1",
                        {"messages": [{"role": "user", "content": "hi"}]})
        store.write(call, "ab" * 32, ChatResponse("yes"), now)
    assert store.sync() == 3  # every entry written since the last sync
    assert store.sync() == 0


def test_an_entry_read_at_its_exact_expiry_instant_is_expired_in_a_run(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    (entry,) = project.cache.rglob("entry.json")
    expires = datetime.fromisoformat(json.loads(entry.read_text())["expires"].replace("Z", "+00:00"))
    before = (expires - timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    monkeypatch.setenv("HARNESS_CLOCK", before)
    assert project.run("run").code == 0
    monkeypatch.setenv("HARNESS_CLOCK", expires.strftime("%Y-%m-%dT%H:%M:%SZ"))
    outcome = project.run("run")
    assert outcome.code == 1 and "eval-cache-expired" in outcome.out + outcome.err
