"""Wire compatibility: every known server quirk reproduced on 127.0.0.1, recorded through it.

Each test starts a loopback fake that validates requests like the real server
(tests/quirk_servers.py) and drives the real CLI: the default wire form or the
agent's ``endpoint.compat`` gets the answers recorded, the offline replay is
green, and a quirk the harness cannot work around fails at once (no paid retry)
with a message that names the fix. The profile never enters the key.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import quirk_servers as quirks
from provider_server import TEST_KEY, ProviderServer, point_agent

import harness.providers
from conftest import Project
from harness.providers.retries import RetryPolicy

TOOLS = [{"name": "lookup_order", "parameters": {"type": "object",
                                                 "properties": {"order": {"type": "string"}}}}]
JSON_OBJECT = {"temperature": 0, "max_tokens": 200, "response_format": {"type": "json_object"}}


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.02))


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ProviderServer] = []

    def start(answer: quirks.Answer) -> ProviderServer:
        server = ProviderServer(answer).__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def keys(project: Project) -> set[str]:
    return {json.loads(p.read_text())["key"] for p in project.cache.rglob("entry.json")}


def tool_loop_scenario(project: Project) -> None:
    project.scenario("helper/acme/order", tool_results={"lookup_order": {"status": "shipped"}},
                     expect=[{"tool_called": "lookup_order"},
                             {"json_path": {"path": "answer", "equals": "yes"}}])


def record_and_replay(project: Project, *extra: str) -> None:
    recorded = project.run("run", "--refresh-cache", *extra)
    assert recorded.code == 0, recorded.out + recorded.err
    replay = project.run("run")
    assert replay.code == 0, replay.out


def test_llama_cpp_tool_call_turns_go_out_with_empty_content_and_record(
        project: Project, serve: Any) -> None:
    server = serve(quirks.llama_cpp())
    point_agent(project, server, tools=TOOLS, endpoint={"max_retries": 2})
    tool_loop_scenario(project)
    record_and_replay(project)
    assert len(server.requests) == 2  # the first call and its follow-up; no 500, no retry
    follow_up = server.requests[1].body["messages"]
    assistant = next(m for m in follow_up if m.get("tool_calls"))
    assert assistant["content"] == ""
    entry_requests = [json.loads(p.read_text())["request"] for p in project.cache.rglob("entry.json")]
    stored = next(r for r in entry_requests if len(r["messages"]) > 2)
    assert next(m for m in stored["messages"] if m.get("tool_calls"))["content"] is None  # keyed form


def test_llama_cpp_refusing_null_content_fails_at_once_naming_the_fix(
        project: Project, serve: Any) -> None:
    server = serve(quirks.llama_cpp())
    point_agent(project, server, tools=TOOLS,
                endpoint={"max_retries": 2, "compat": {"assistant_tool_content": "null"}})
    tool_loop_scenario(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1
    assert len(server.requests) == 2  # the follow-up was sent once: a 500 like this is not retried
    assert "HTTP 500" in outcome.out and "assistant_tool_content: empty" in outcome.out


def test_lm_studio_json_object_is_sent_as_an_equivalent_json_schema_with_compat(
        project: Project, serve: Any) -> None:
    point_agent(project, serve(quirks.lm_studio), options=JSON_OBJECT)
    project.scenario("helper/acme/greeting")
    refused = project.run("run", "--refresh-cache")
    assert refused.code == 1
    assert "'response_format.type' must be 'json_schema' or 'text'" in refused.out
    assert "endpoint.compat.response_format" in refused.out and "json_schema (LM Studio)" in refused.out

    server = serve(quirks.lm_studio)
    point_agent(project, server, options=JSON_OBJECT, endpoint={"compat": {"response_format":
                                                                           "json_schema"}})
    record_and_replay(project)
    assert server.requests[0].body["response_format"] == {
        "type": "json_schema", "json_schema": {"name": "json_object", "schema": {"type": "object"}}}


def test_the_compat_profile_never_changes_the_key(project: Project, serve: Any) -> None:
    point_agent(project, serve(quirks.lm_studio), options=JSON_OBJECT,
                endpoint={"compat": {"response_format": "json_schema"}})
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    record_and_replay(project)
    through_compat = keys(project)
    point_agent(project, serve(quirks.conversation_answer), options=JSON_OBJECT)
    record_and_replay(project)
    assert keys(project) == through_compat
    project.record()  # the scripted provider, no endpoint at all
    assert keys(project) == through_compat


def test_a_server_without_structured_outputs_gets_json_object(project: Project, serve: Any) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "schema": {
        "type": "object", "properties": {"answer": {"type": "string"}}}}}
    options = {"temperature": 0, "max_tokens": 200, "response_format": schema}
    server = serve(quirks.no_structured_outputs)
    point_agent(project, server, options=options, endpoint={"max_retries": 2})
    project.scenario("helper/acme/greeting")
    refused = project.run("run", "--refresh-cache")
    assert refused.code == 1 and len(server.requests) == 1
    assert "json_object (servers without structured outputs)" in refused.out
    point_agent(project, server, options=options, endpoint={"compat": {"response_format":
                                                                       "json_object"}})
    record_and_replay(project)
    assert server.requests[-1].body["response_format"] == {"type": "json_object"}


def test_vllm_without_auto_tool_choice_fails_once_naming_the_server_flags(
        project: Project, serve: Any) -> None:
    server = serve(quirks.vllm())
    point_agent(project, server, tools=TOOLS, endpoint={"max_retries": 2})
    tool_loop_scenario(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and len(server.requests) == 1
    assert "--enable-auto-tool-choice --tool-call-parser" in outcome.out
    assert "1 attempt reached the provider: counted as paid" in outcome.out

    server = serve(quirks.vllm(auto_tool_choice=True))
    point_agent(project, server, tools=TOOLS)
    record_and_replay(project)


def test_ollama_model_without_tools_fails_once_naming_the_fix(project: Project, serve: Any) -> None:
    server = serve(quirks.ollama_without_tools)
    point_agent(project, server, tools=TOOLS, endpoint={"max_retries": 2})
    tool_loop_scenario(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and len(server.requests) == 1
    assert "does not support tools" in outcome.out and "no tool support" in outcome.out


def test_llama_cpp_without_jinja_is_not_retried_six_times(project: Project, serve: Any) -> None:
    server = serve(quirks.llama_cpp(jinja=False))
    point_agent(project, server, tools=TOOLS, endpoint={"max_retries": 5})
    tool_loop_scenario(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and len(server.requests) == 1
    assert "HTTP 500" in outcome.out and "--jinja" in outcome.out


@pytest.mark.parametrize("server_answer", [quirks.llama_cpp(n_ctx=30), quirks.vllm(max_model_len=60)],
                         ids=["llama.cpp", "vllm"])
def test_a_context_overflow_is_reported_clearly_and_not_retried(
        project: Project, serve: Any, server_answer: quirks.Answer) -> None:
    server = serve(server_answer)
    point_agent(project, server, endpoint={"max_retries": 3})
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and len(server.requests) == 1
    assert "HTTP 400" in outcome.out and "context overflow" in outcome.out
    assert "--ctx-size" in outcome.out and "--max-model-len" in outcome.out
    assert not list(project.cache.rglob("entry.json"))


def test_tools_the_server_ignored_are_refused_not_recorded(project: Project, serve: Any) -> None:
    server = serve(quirks.tools_ignored)
    point_agent(project, server, tools=TOOLS)
    tool_loop_scenario(project)
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and len(server.requests) == 1
    assert "writes a tool call as text" in outcome.out and "--jinja" in outcome.out
    assert not list(project.cache.rglob("entry.json"))


def test_a_forced_tool_choice_answered_without_a_tool_call_is_refused(
        project: Project, serve: Any) -> None:
    server = serve(lambda received: quirks.conversation_answer(  # answers as if no tools were sent
        type(received)(received.path, received.headers, {**received.body, "tools": []},
                       received.at)))
    point_agent(project, server, tools=TOOLS,
                options={"temperature": 0, "max_tokens": 200, "tool_choice": "required"})
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 1 and "ignored tools or tool_choice" in outcome.out
    assert not list(project.cache.rglob("entry.json"))


def test_a_reasoning_model_gets_max_completion_tokens_with_compat(
        project: Project, serve: Any) -> None:
    server = serve(quirks.reasoning_model)
    point_agent(project, server)
    project.scenario("helper/acme/greeting")
    refused = project.run("run", "--refresh-cache")
    assert refused.code == 1 and "max_tokens_field: max_completion_tokens" in refused.out
    point_agent(project, server, endpoint={"compat": {"max_tokens_field": "max_completion_tokens"}})
    record_and_replay(project)
    sent = server.requests[-1].body
    assert sent["max_completion_tokens"] == 200 and "max_tokens" not in sent


def test_tgi_eos_token_finish_reason_is_a_normal_stop(project: Project, serve: Any) -> None:
    point_agent(project, serve(quirks.tgi))
    project.scenario("helper/acme/greeting")
    record_and_replay(project)
    payload = next(project.cache.rglob("contents.data")).read_text()
    assert json.loads(payload)["finish_reason"] == "stop"


def test_an_unknown_compat_setting_is_refused_at_load_naming_file_and_field(
        project: Project, serve: Any) -> None:
    point_agent(project, serve(quirks.conversation_answer),
                endpoint={"compat": {"response_format": "yaml", "bogus": 1}})
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 2
    text = outcome.out + outcome.err
    assert "agent.yaml" in text and "compat" in text and "response_format" in text


def test_compat_is_refused_for_anthropic(project: Project, serve: Any) -> None:
    server = serve(quirks.conversation_answer)
    point_agent(project, server, provider="anthropic",
                endpoint={"compat": {"response_format": "omit"}})
    project.scenario("helper/acme/greeting")
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 2 and "OpenAI-compatible servers only" in outcome.err
    assert not server.requests


def test_compat_settings_are_documented() -> None:
    from harness.providers.compat import SETTINGS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "recording.md").read_text()
    for name, values in SETTINGS.items():
        assert name in doc and all(value in doc for value in values)
