"""The loopback wire fakes, driven through the official ``openai`` and ``anthropic`` SDKs.

Every agent of ``tests/sdk_agents`` runs unchanged against a :class:`WireFake`
(its environment pointing at the fake, as production points at the real API)
and returns the expected triage decision; the fake's real-server quirks are
observable through the SDKs (random ids, 401, 400 for an unknown
``previous_response_id``, retried 429/500), and the raw wire (SSE framing, the
``anthropic-version`` rule, a stop that closes every socket) through plain
sockets.
"""

from __future__ import annotations

import asyncio
import http.client
import importlib
import json
import socket
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import anthropic
import openai
import pytest
from pydantic import BaseModel
from wire_fakes import OPENAI_KEY, WireFake, serve, triage_brain

LATE = "Where is my order A-1001? It was due last week."
TWO = "I ordered A-1001 and A-1002, where are they? This is urgent."
CHAT = "/v1/chat/completions"


@dataclass(frozen=True)
class Scenario:
    """What the harness hands an entrypoint: the user's text or messages, params and tenant."""

    input: str | None = None
    messages: list[dict[str, str]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    tenant: str = "acme"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[WireFake]:
    yield from serve(monkeypatch)


def agent(name: str) -> ModuleType:
    """Import an agent afresh, so a client built at import time reads this test's environment."""
    sys.modules.pop(f"sdk_agents.{name}", None)
    return importlib.import_module(f"sdk_agents.{name}")


def raw(fake: WireFake, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, bytes]:
    """One request over a plain socket: the status and the exact bytes of the body."""
    connection = http.client.HTTPConnection("127.0.0.1", fake.port, timeout=5)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json", **headers})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def events(stream: bytes) -> list[tuple[str | None, str]]:
    """(event name, data) of every server-sent event in a body."""
    found = []
    for frame in stream.decode().split("\n\n"):
        if frame.strip():
            lines = dict(line.split(": ", 1) for line in frame.splitlines())
            found.append((lines.get("event"), lines["data"]))
    return found


# -- the agents, unchanged, through the real SDKs ---------------------------------------------------


def test_chat_tool_loop_agent_built_at_import_returns_the_decision(fake: WireFake) -> None:
    decision = agent("openai_tools").triage(Scenario(LATE))
    assert decision == {"category": "shipping", "priority": "high",
                        "reply": "Thanks for reaching out: order A-1001 is delayed."}
    first, second = fake.requests_to("chat")
    assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "tool"]
    call_id = second.body["messages"][2]["tool_calls"][0]["id"]
    assert call_id.startswith("call_") and second.body["messages"][3]["tool_call_id"] == call_id
    assert first.headers["authorization"] == f"Bearer {OPENAI_KEY}" and first.method == "POST"


def test_two_orders_are_two_parallel_tool_calls_in_one_answer(fake: WireFake) -> None:
    decision = agent("openai_tools").triage(Scenario(TWO, tenant="globex"))
    assert decision["reply"] == "Thanks for reaching out: order A-1001 is delayed; order A-1002 is delivered."
    assert decision["priority"] == "high"
    assistant = fake.requests_to("chat")[1].body["messages"][2]
    assert [json.loads(c["function"]["arguments"]) for c in assistant["tool_calls"]] == [
        {"order_id": "A-1001"}, {"order_id": "A-1002"}]
    assert fake.count == 2


def test_async_agent_built_per_call(fake: WireFake) -> None:
    scenario = Scenario(messages=[{"role": "user", "content": LATE}])
    decision = asyncio.run(agent("openai_async").triage(scenario))
    assert decision["category"] == "shipping" and "A-1001 is delayed" in decision["reply"]
    assert [r.headers["x-stainless-async"] for r in fake.requests] == ["async:asyncio"] * 2


def test_streaming_agent_collects_the_deltas_and_the_usage_chunk(fake: WireFake) -> None:
    module = agent("openai_stream")
    text = module.triage(Scenario("I was charged twice for A-1002, please refund me."))
    assert json.loads(text) == {"category": "billing", "priority": "normal", "reply":
                                "Thanks for reaching out about order A-1002; a billing agent will follow up."}
    assert module.last_usage is not None and module.last_usage.total_tokens > 0
    (sent,) = fake.requests
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}


def test_responses_agent_streams_and_continues_with_previous_response_id(fake: WireFake) -> None:
    text = agent("openai_responses").triage(Scenario(LATE))
    assert json.loads(text)["reply"] == "Thanks for reaching out: order A-1001 is delayed."
    first, second = fake.requests_to("responses")
    assert "previous_response_id" not in first.body
    assert second.body["previous_response_id"] in fake.responses_state.issued()
    assert second.body["input"][0]["type"] == "function_call_output"


def test_anthropic_tool_loop_agent_built_per_call(fake: WireFake) -> None:
    text = agent("anthropic_tools").triage(Scenario("My package B-2001 never arrived!", tenant="initech"))
    assert json.loads(text) == {"category": "shipping", "priority": "high",
                                "reply": "Thanks for reaching out: order B-2001 is lost."}
    first, second = fake.requests_to("messages")
    assert "anthropic-version" in first.headers and first.body["system"].startswith("You triage")
    tool_use = second.body["messages"][1]["content"][0]
    assert tool_use["type"] == "tool_use" and tool_use["id"].startswith("toolu_")
    assert second.body["messages"][2]["content"][0]["tool_use_id"] == tool_use["id"]


def test_embeddings_agent_gets_base64_from_the_sdk_and_picks_the_nearest(fake: WireFake) -> None:
    route = agent("embeddings_agent").triage
    assert route(Scenario("My login fails with an error in the app")) == "technical"
    assert route(Scenario("Where is my package? The delivery is late")) == "shipping"
    assert fake.requests[0].body["encoding_format"] == "base64"  # the SDK's default, decoded by the SDK
    as_floats = openai.OpenAI().embeddings.create(model="e", input="refund", encoding_format="float")
    as_base64 = openai.OpenAI().embeddings.create(model="e", input="refund")
    assert as_floats.data[0].embedding == pytest.approx(as_base64.data[0].embedding, abs=1e-6)


# -- more of each wire format through the SDKs ------------------------------------------------------


class Decision(BaseModel):
    category: str
    priority: str


def test_chat_structured_output_json_schema_is_parsed_by_the_sdk(fake: WireFake) -> None:
    completion = openai.OpenAI().chat.completions.parse(
        model="gpt-4o-mini", messages=[{"role": "user", "content": LATE}], response_format=Decision)
    assert completion.choices[0].message.parsed == Decision(category="shipping", priority="normal")
    assert fake.requests[0].body["response_format"]["type"] == "json_schema"


def test_chat_stream_of_tool_calls_is_assembled_by_the_sdk(fake: WireFake) -> None:
    tools = agent("openai_async").TOOLS
    with openai.OpenAI().chat.completions.stream(
            model="gpt-4o-mini", messages=[{"role": "user", "content": TWO}], tools=tools) as stream:
        final = stream.get_final_completion()
    calls = final.choices[0].message.tool_calls
    assert [c.function.parsed_arguments if c.function.parsed_arguments else json.loads(c.function.arguments)
            for c in calls] == [{"order_id": "A-1001"}, {"order_id": "A-1002"}]
    assert final.choices[0].finish_reason == "tool_calls" and calls[0].id != calls[1].id


def test_anthropic_stream_of_text_and_of_tool_input_json(fake: WireFake) -> None:
    client = anthropic.Anthropic()
    tools = agent("anthropic_tools").TOOLS
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=100, tools=tools,
                                messages=[{"role": "user", "content": LATE}]) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use" and message.content[0].input == {"order_id": "A-1001"}
    with client.messages.stream(model="claude-sonnet-4-5", max_tokens=100,
                                messages=[{"role": "user", "content": "Hello"}]) as stream:
        text = "".join(stream.text_stream)
    assert json.loads(text)["category"] == "general"


def test_responses_json_answer_and_a_custom_brain(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[dict[str, Any]]] = []

    def brain(api: str, request: dict[str, Any]) -> Any:
        seen.append(request["input"])
        return [("lookup_order", {"order_id": "A-1"})] if len(seen) == 1 else "done"

    for fake in serve(monkeypatch, brain=brain):
        client = openai.OpenAI()
        first = client.responses.create(model="m", input="hi", tools=agent("openai_responses").TOOLS)
        call = first.output[0]
        second = client.responses.create(model="m", previous_response_id=first.id, input=[
            {"type": "function_call_output", "call_id": call.call_id, "output": "{}"}])
        assert second.output_text == "done" and fake.count == 2
    # the brain saw the server-side state resolved: the first input, the call, then its output
    assert [item.get("type") for item in seen[1]] == ["message", "function_call", "function_call_output"]


# -- quirks of real servers -------------------------------------------------------------------------


def test_ids_and_request_ids_differ_between_two_identical_calls(fake: WireFake) -> None:
    client = openai.OpenAI()
    tools = agent("openai_async").TOOLS
    asked = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": LATE}], "tools": tools}
    one, two = client.chat.completions.create(**asked), client.chat.completions.create(**asked)
    assert one.choices[0].message.tool_calls[0].function.arguments == \
        two.choices[0].message.tool_calls[0].function.arguments
    assert one.id != two.id and one.id.startswith("chatcmpl-")
    assert one.choices[0].message.tool_calls[0].id != two.choices[0].message.tool_calls[0].id
    assert one._request_id != two._request_id and one.system_fingerprint != two.system_fingerprint
    messages = anthropic.Anthropic().messages
    first, again = (messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
                    for _ in range(2))
    assert first.id != again.id and first.id.startswith("msg_") and first.content == again.content
    assert first._request_id != again._request_id


def test_a_wrong_key_is_401_in_each_api_and_not_retried(fake: WireFake) -> None:
    with pytest.raises(openai.AuthenticationError) as wrong:
        openai.OpenAI(api_key="sk-wrong-key-1234").chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}])
    assert wrong.value.code == "invalid_api_key" and "1234" in wrong.value.message
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(api_key="wrong").messages.create(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
    assert [r.status for r in fake.requests] == [401, 401]


def test_anthropic_version_header_is_required_and_x_api_key_is_accepted(fake: WireFake) -> None:
    body = {"model": "c", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    status, answer = raw(fake, "/v1/messages", body, {"x-api-key": fake.anthropic_key})
    assert status == 400 and json.loads(answer)["error"]["message"] == "anthropic-version: header is required"
    status, answer = raw(fake, "/v1/messages", body, {"anthropic-version": "2023-06-01"})
    assert status == 401 and json.loads(answer)["error"]["type"] == "authentication_error"
    status, answer = raw(fake, "/v1/messages", body,
                         {"x-api-key": fake.anthropic_key, "anthropic-version": "2023-06-01"})
    assert status == 200 and json.loads(answer)["stop_reason"] == "end_turn"
    assert fake.requests[0].headers["x-api-key"] == fake.anthropic_key


def test_an_unknown_previous_response_id_is_400(fake: WireFake) -> None:
    client = openai.OpenAI()
    unstored = client.responses.create(model="m", input="hi", store=False)
    for unknown in ("resp_never_issued", unstored.id):
        with pytest.raises(openai.BadRequestError) as refused:
            client.responses.create(model="m", input="and then?", previous_response_id=unknown)
        assert refused.value.code == "previous_response_not_found" and unknown in refused.value.message
    assert [r.status for r in fake.requests] == [200, 400, 400]


def test_tool_answers_for_ids_the_model_never_issued_are_400(fake: WireFake) -> None:
    with pytest.raises(openai.BadRequestError):
        openai.OpenAI().chat.completions.create(model="m", messages=[
            {"role": "user", "content": LATE}, {"role": "tool", "tool_call_id": "call_x", "content": "{}"}])
    with pytest.raises(openai.BadRequestError, match="No tool call found"):
        openai.OpenAI().responses.create(model="m", input=[
            {"type": "function_call_output", "call_id": "call_x", "output": "{}"}])
    with pytest.raises(anthropic.BadRequestError, match="tool_use_id"):
        result = {"type": "tool_result", "tool_use_id": "toolu_x", "content": "{}"}
        anthropic.Anthropic().messages.create(model="c", max_tokens=10,
                                              messages=[{"role": "user", "content": [result]}])


def test_a_429_then_a_500_are_retried_by_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    for fake in serve(monkeypatch, fail_first=2):
        decision = agent("openai_tools").triage(Scenario(LATE))
        assert decision["reply"] == "Thanks for reaching out: order A-1001 is delayed."
        statuses = [(r.status, r.headers["x-stainless-retry-count"]) for r in fake.requests]
        assert statuses[:3] == [(429, "0"), (500, "1"), (200, "2")] and fake.count == 4
    for fake in serve(monkeypatch, fail_first=1):
        message = anthropic.Anthropic().messages.create(
            model="c", max_tokens=10, messages=[{"role": "user", "content": "hi"}])
        assert message.stop_reason == "end_turn" and [r.status for r in fake.requests] == [429, 200]


# -- the raw wire -----------------------------------------------------------------------------------


def test_raw_streams_have_each_apis_framing(fake: WireFake) -> None:
    bearer = {"Authorization": f"Bearer {fake.openai_key}"}
    _, chat = raw(fake, CHAT, {"model": "m", "stream": True, "stream_options": {"include_usage": True},
                               "messages": [{"role": "user", "content": LATE}]}, bearer)
    frames = events(chat)
    assert frames[-1] == (None, "[DONE]")
    usage = json.loads(frames[-2][1])
    assert usage["choices"] == [] and usage["usage"]["total_tokens"] > 0
    assert all(json.loads(data)["usage"] is None for _, data in frames[:-2])
    _, responses = raw(fake, "/v1/responses", {"model": "m", "stream": True, "input": LATE,
                                               "tools": agent("openai_responses").TOOLS}, bearer)
    names = [name for name, _ in events(responses)]
    assert names[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert "response.function_call_arguments.delta" in names and names[-2:] == [
        "response.output_item.done", "response.completed"]
    _, messages = raw(fake, "/v1/messages", {"model": "c", "max_tokens": 9, "stream": True,
                                             "messages": [{"role": "user", "content": "hi"}]},
                      {"x-api-key": fake.anthropic_key, "anthropic-version": "2023-06-01"})
    names = [name for name, _ in events(messages)]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-4:] == ["content_block_delta", "content_block_stop", "message_delta", "message_stop"]


def test_the_request_log_records_every_request(fake: WireFake) -> None:
    raw(fake, "/v1/nowhere", {}, {})
    raw(fake, CHAT, {"model": "m", "messages": []}, {"Authorization": f"Bearer {fake.openai_key}"})
    first, second = fake.requests
    assert (first.path, first.status, first.api) == ("/v1/nowhere", 404, None)
    assert (second.path, second.status, second.api, second.body) == (
        CHAT, 400, "chat", {"model": "m", "messages": []})
    assert second.headers["content-type"] == "application/json" and fake.count == 2
    fake.clear()
    assert fake.count == 0


def test_stop_closes_the_listener_and_the_pooled_connections(fake: WireFake) -> None:
    client = openai.OpenAI(max_retries=0)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])  # pools one
    fake.stop()
    assert not fake.running
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", fake.port), timeout=2):
        pass
    assert fake.count == 1


def test_the_default_brain_is_deterministic_per_request() -> None:
    request = {"messages": [{"role": "user", "content": TWO}]}
    assert triage_brain("chat", request) == triage_brain("chat", json.loads(json.dumps(request)))
    assert json.loads(str(triage_brain("chat", request)))["priority"] == "high"
