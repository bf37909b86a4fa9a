"""The OpenAI-compatible provider against a real loopback server: wire form, answers, refusals."""

from __future__ import annotations

import json
from typing import Any

import pytest
from provider_server import (
    CONVERSATION,
    TEST_KEY,
    TOOLS,
    ProviderServer,
    Reply,
    make_agent,
    make_credentials,
    openai_answer,
)

from harness.core.entities import ChatCall, ToolCall
from harness.core.errors import ConfigError, ProviderError
from harness.providers import build_provider
from harness.providers.http import Transport


def call(request: dict[str, Any], model: str = "gpt-test-1") -> ChatCall:
    return ChatCall("helper/acme/greeting", 0, "openai", model, request)


def test_the_canonical_request_goes_on_the_wire_as_chat_completions(server: ProviderServer) -> None:
    client = build_provider(make_agent(), make_credentials(server.url + "/v1"))
    options = {"temperature": 0, "max_tokens": 200, "seed": 7, "tool_choice": {"name": "ping"},
               "response_format": {"type": "json_object"}}
    server.queue(Reply(body=openai_answer(None, tool_calls=[{"name": "ping"}])))
    client.complete(call({"messages": CONVERSATION, "options": options, "tools": TOOLS}))
    sent = server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {TEST_KEY}"
    body = sent.body
    assert body["model"] == "gpt-test-1" and body["seed"] == 7 and body["max_tokens"] == 200
    assert body["response_format"] == {"type": "json_object"}
    assert body["tool_choice"] == {"type": "function", "function": {"name": "ping"}}
    assert [m["role"] for m in body["messages"]] == ["system", "system", "user", "assistant", "tool",
                                                     "user"]
    assert body["messages"][3]["tool_calls"] == [
        {"id": "call_0", "type": "function",
         "function": {"name": "lookup_order", "arguments": '{"order": "A-1"}'}}]
    assert body["messages"][4] == {"role": "tool", "content": '{"status": "shipped"}',
                                   "tool_call_id": "call_0"}
    assert body["tools"][0] == {"type": "function", "function": {
        "name": "lookup_order", "description": "Find an order.", "parameters": TOOLS[0]["parameters"]}}
    assert body["tools"][1]["function"]["parameters"] == {"type": "object", "properties": {}}


def test_tool_calls_finish_reason_and_usage_come_back_canonical(server: ProviderServer) -> None:
    server.queue(Reply(body=openai_answer(None, tool_calls=[
        {"name": "lookup_order", "arguments": {"order": "A-1"}}, {"name": "ping"}],
        usage=(31, 9), model="gpt-test-1-2026")))
    response = build_provider(make_agent(), make_credentials(server.url + "/v1")).complete(
        call({"messages": CONVERSATION[:3], "options": {}}))
    assert response.content is None
    assert response.tool_calls == (ToolCall("lookup_order", {"order": "A-1"}), ToolCall("ping", {}))
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (31, 9)
    assert response.model == "gpt-test-1-2026"


def test_json_schema_response_format_is_sent_verbatim_and_the_answer_kept(server: ProviderServer) -> None:
    schema = {"type": "json_schema", "json_schema": {"name": "answer", "strict": True, "schema": {
        "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}}}
    response = build_provider(make_agent(), make_credentials(server.url + "/v1")).complete(
        call({"messages": CONVERSATION[:3], "options": {"response_format": schema}}))
    assert server.requests[0].body["response_format"] == schema
    assert json.loads(response.content or "") == {"answer": "yes"}
    assert response.finish_reason == "stop"


MALFORMED = {
    "invalid JSON": (Reply(body="{not json"), "body is not valid JSON"),
    "no choices": (Reply(body={"id": "x", "choices": []}), "the answer has no choices"),
    "no message": (Reply(body={"choices": [{"finish_reason": "stop"}]}), "has no message"),
    "empty content": (Reply(body=openai_answer("")), "the content is empty and there is no tool call"),
    "empty at the limit": (Reply(body=openai_answer("", finish_reason="length")),
                           "the token limit was reached"),
    "unknown finish reason": (Reply(body=openai_answer("hi", finish_reason="sleepy")),
                              "finish reason 'sleepy' is unknown"),
    "no finish reason": (Reply(body={"choices": [{"message": {"content": "hi"}, "finish_reason": None}]}),
                         "finish reason None is unknown"),
    "bad tool arguments": (Reply(body={"choices": [{"finish_reason": "tool_calls", "message": {
        "content": None, "tool_calls": [{"function": {"name": "f", "arguments": "{oops"}}]}}]}),
        "arguments of tool call 0 (f) are not valid JSON"),
    "error object": (Reply(body={"error": {"message": "model overloaded"}}), "is an error object"),
    "not an object": (Reply(body=[1, 2]), "is not a JSON object"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_answers_are_refused_with_a_clear_message(server: ProviderServer, case: str) -> None:
    reply, expected = MALFORMED[case]
    server.queue(reply)
    client = build_provider(make_agent(), make_credentials(server.url + "/v1"))
    with pytest.raises(ProviderError) as info:
        client.complete(call({"messages": CONVERSATION[:3], "options": {}}))
    message = str(info.value)
    assert message.startswith("eval-provider-error: helper/acme/greeting: openai at 127.0.0.1:")
    assert expected in message and message.endswith("Nothing was written to the cache")


def test_azure_hosts_get_the_api_key_header_and_keep_the_api_version() -> None:
    base = "https://acme.openai.azure.com/openai/deployments/gpt4?api-version=2024-10-21"
    client = build_provider(make_agent(), make_credentials(base))
    transport: Transport = client.transport  # type: ignore[attr-defined]
    assert transport._headers["api-key"] == TEST_KEY and "Authorization" not in transport._headers
    assert TEST_KEY not in repr(make_credentials(base))


def test_endpoint_settings_reach_the_transport_and_never_the_call(server: ProviderServer) -> None:
    configured = make_agent(endpoint={"max_retries": 3, "timeout_s": 4.5})
    client = build_provider(configured, make_credentials(server.url + "/v1"))
    transport: Transport = client.transport  # type: ignore[attr-defined]
    assert transport.policy.max_attempts == 4 and transport.timeout_s == 4.5


def test_options_the_harness_sets_are_refused_naming_agent_yaml() -> None:
    with pytest.raises(ConfigError, match=r"helper/agent.yaml: options stream are set by the harness"):
        build_provider(make_agent(options={"stream": True}), make_credentials("http://x"))
    with pytest.raises(ConfigError, match=r"helper/agent.yaml: provider 'cohere' cannot be recorded"):
        build_provider(make_agent(provider="cohere"), make_credentials("http://x", "cohere"))


def test_a_base_url_that_is_not_http_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"the openai base URL 'localhost:8000' \(from test\) is not"):
        build_provider(make_agent(), make_credentials("localhost:8000"))
