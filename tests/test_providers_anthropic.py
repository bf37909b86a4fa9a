"""The Anthropic messages provider against a real loopback server: wire form, answers, refusals."""

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
    anthropic_answer,
    make_agent,
    make_credentials,
)

from harness.core.entities import ChatCall, ToolCall
from harness.core.errors import ConfigError, ProviderError
from harness.providers import build_provider


def claude(server: ProviderServer, **fields: Any) -> Any:
    configured = make_agent("anthropic", model="claude-test-1", **fields)
    return build_provider(configured, make_credentials(server.url, "anthropic"))


def call(request: dict[str, Any]) -> ChatCall:
    return ChatCall("helper/acme/greeting", 0, "anthropic", "claude-test-1", request)


def test_the_canonical_request_goes_on_the_wire_as_messages(server: ProviderServer) -> None:
    options = {"temperature": 0.2, "max_tokens": 300, "seed": 7, "stop": "END", "top_k": 5,
               "tool_choice": "required"}
    claude(server).complete(call({"messages": CONVERSATION, "options": options, "tools": TOOLS}))
    sent = server.requests[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == TEST_KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in sent.headers
    body = sent.body
    assert body["system"] == "You are the acme helper.\n\nContext:\nThe user is a beginner."
    assert body["model"] == "claude-test-1" and body["max_tokens"] == 300
    assert body["stop_sequences"] == ["END"] and body["top_k"] == 5 and "seed" not in body
    assert body["tool_choice"] == {"type": "any"}
    assert body["tools"][0] == {"name": "lookup_order", "description": "Find an order.",
                                "input_schema": TOOLS[0]["parameters"]}
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "tool_use", "id": "call_0", "name": "lookup_order", "input": {"order": "A-1"}}]
    assert body["messages"][2]["content"] == [  # the tool result and the next user turn, merged
        {"type": "tool_result", "tool_use_id": "call_0", "content": '{"status": "shipped"}'},
        {"type": "text", "text": "Thanks. Draft a note."}]


def test_tool_uses_stop_reason_and_usage_come_back_canonical(server: ProviderServer) -> None:
    server.queue(Reply(body=anthropic_answer("Let me look.", tool_uses=[
        {"name": "lookup_order", "input": {"order": "A-1"}}], usage=(40, 11))))
    response = claude(server).complete(call({"messages": CONVERSATION[:3], "options": {"max_tokens": 9}}))
    assert response.content == "Let me look."
    assert response.tool_calls == (ToolCall("lookup_order", {"order": "A-1"}),)
    assert response.finish_reason == "tool_calls"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (40, 11)


def test_a_json_response_format_is_one_forced_tool_whose_input_is_the_content(
    server: ProviderServer,
) -> None:
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    server.queue(Reply(body=anthropic_answer(None, tool_uses=[
        {"name": "json_output", "input": {"answer": "yes"}}])))
    options = {"max_tokens": 50, "response_format": {"type": "json_schema",
                                                     "json_schema": {"name": "a", "schema": schema}}}
    response = claude(server).complete(call({"messages": CONVERSATION[:3], "options": options}))
    body = server.requests[0].body
    assert body["tools"] == [{"name": "json_output", "description": "Give the answer as JSON (a).",
                              "input_schema": schema}]
    assert body["tool_choice"] == {"type": "tool", "name": "json_output"}
    assert "response_format" not in body
    assert json.loads(response.content or "") == {"answer": "yes"}
    assert response.tool_calls == () and response.finish_reason == "stop"


def test_json_object_with_real_tools_lets_the_model_choose_any_tool(server: ProviderServer) -> None:
    options = {"max_tokens": 50, "response_format": {"type": "json_object"}}
    claude(server).complete(call({"messages": CONVERSATION[:3], "options": options, "tools": TOOLS}))
    body = server.requests[0].body
    assert [t["name"] for t in body["tools"]] == ["lookup_order", "ping", "json_output"]
    assert body["tool_choice"] == {"type": "any"}


def test_a_base_url_ending_in_v1_is_not_doubled(server: ProviderServer) -> None:
    configured = make_agent("anthropic", model="claude-test-1")
    build_provider(configured, make_credentials(server.url + "/v1", "anthropic")).complete(
        call({"messages": CONVERSATION[:3], "options": {"max_tokens": 5}}))
    assert server.requests[0].path == "/v1/messages"


MALFORMED = {
    "invalid JSON": (Reply(body=b"\x00garbage"), "body is not valid JSON"),
    "truncated body": (Reply(body=anthropic_answer("a long answer"), truncate_to=30), "truncated body"),
    "no content": (Reply(body={"type": "message", "stop_reason": "end_turn"}), "has no content blocks"),
    "empty content": (Reply(body=anthropic_answer("  ")), "the content is empty"),
    "unknown stop reason": (Reply(body=anthropic_answer("hi", stop_reason="pause_turn")),
                            "stop reason 'pause_turn' is unknown"),
    "unknown block": (Reply(body={**anthropic_answer("hi"), "content": [{"type": "hologram"}]}),
                      "unknown type 'hologram'"),
    "error object": (Reply(body={"type": "error", "error": {"type": "overloaded_error"}}),
                     "is an error object"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_answers_are_refused_with_a_clear_message(server: ProviderServer, case: str) -> None:
    reply, expected = MALFORMED[case]
    server.queue(reply)
    with pytest.raises(ProviderError) as info:
        claude(server).complete(call({"messages": CONVERSATION[:3], "options": {"max_tokens": 5}}))
    message = str(info.value)
    assert message.startswith("eval-provider-error: helper/acme/greeting: anthropic at 127.0.0.1:")
    assert expected in message and message.endswith(("Nothing was written to the cache",
                                                     "reached the provider: counted as paid)"))


def test_anthropic_needs_max_tokens_before_any_call(server: ProviderServer) -> None:
    with pytest.raises(ConfigError, match="provider anthropic needs options.max_tokens"):
        claude(server, options={"temperature": 0})
    assert server.requests == []
