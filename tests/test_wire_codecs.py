"""The wire codecs: round trips, documented provider answers, hostile bodies.

What the real SDKs make of the encoded bytes is proven in test_wire_codecs_sdks.py;
here the codecs are checked against themselves (encode -> decode gives the same
answer, the same bytes twice), against answers transcribed from the providers'
API references (tests/fixtures/wire/), and against bodies that must be refused
with a WireDecodeError and nothing else.
"""

from __future__ import annotations

import base64
import copy
import json
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.entities import ChatResponse, ToolCall, Usage
from harness.wire.codecs import (
    ANTHROPIC_MESSAGES,
    APIS,
    OPENAI_CHAT,
    OPENAI_EMBEDDINGS,
    OPENAI_RESPONSES,
    WireDecodeError,
    canonical_stream_flag,
    decode_answer,
    encode_answer,
    is_event_stream,
)

FIXTURES = Path(__file__).parent / "fixtures" / "wire"
CHAT_APIS = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES)

#: Answers every chat-like API can carry exactly (finish reasons consistent with the content).
CASES = {
    "text": ChatResponse("The invoice is overdue by 12 days.", (), "stop", Usage(31, 9), "model-a"),
    "single_tool": ChatResponse("Looking it up.", (ToolCall("lookup_invoice", {"id": "INV-7"}),),
                                "tool_calls", Usage(40, 12), "model-a"),
    "parallel_tools": ChatResponse(None, (ToolCall("lookup_invoice", {"id": "INV-7"}),
                                          ToolCall("lookup_customer", {"id": 42, "deep": [1, {"x": None}]}),
                                          ToolCall("ping", {})),
                                   "tool_calls", Usage(55, 30), "model-b"),
    "unicode": ChatResponse("Olá — ünïcödé ✓ 日本語 🧾 \"quoted\" \\ back\nline", (), "stop", Usage(3, 4),
                            "model-ü"),
    "empty_content_tool": ChatResponse(None, (ToolCall("declare_open_question",
                                                       {"question": "Which account? ✓"}),),
                                       "tool_calls", Usage(10, 2), "model-a"),
    "raw_arguments": ChatResponse(None, (ToolCall("broken", {"_raw": "{not json"}),), "tool_calls",
                                  Usage(1, 1), "model-a"),
    "length": ChatResponse("A long answer that was cut", (), "length", Usage(8, 200), "model-a"),
    "content_filter": ChatResponse("I can't", (), "content_filter", Usage(8, 2), "model-a"),
}


def _encode(api: str, response: ChatResponse, stream: bool, **request: Any) -> tuple[bytes, str]:
    answer = encode_answer(api, response, request={"model": "requested", "stream": stream, **request},
                           seed="seed-1", created=1_700_000_000)
    assert answer.status == 200
    return answer.body, answer.headers["content-type"]


# --- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", CHAT_APIS)
def test_encode_then_decode_gives_the_same_answer(api: str, stream: bool, case: str) -> None:
    response = CASES[case]
    body, content_type = _encode(api, response, stream, stream_options={"include_usage": True})
    assert is_event_stream(body, content_type) is stream
    assert decode_answer(api, body, content_type=content_type) == response
    assert decode_answer(api, body) == response, "sniffing the body must find the same format"


@pytest.mark.parametrize("api", CHAT_APIS)
def test_the_same_answer_encodes_to_the_same_bytes_and_ids_follow_the_seed(api: str) -> None:
    response = CASES["parallel_tools"]
    first = encode_answer(api, response, request={"model": "m", "stream": True}, seed="a")
    again = encode_answer(api, response, request={"model": "m", "stream": True}, seed="a")
    other = encode_answer(api, response, request={"model": "m", "stream": True}, seed="b")
    assert first == again
    assert first.body != other.body
    assert decode_answer(api, other.body) == decode_answer(api, first.body)


def test_ids_and_timestamps_are_the_given_ones() -> None:
    response = CASES["single_tool"]
    chat = json.loads(_encode(OPENAI_CHAT, response, False)[0])
    assert chat["id"].startswith("chatcmpl-") and chat["created"] == 1_700_000_000
    assert chat["choices"][0]["message"]["tool_calls"][0]["id"].startswith("call_")
    responses = json.loads(_encode(OPENAI_RESPONSES, response, False)[0])
    assert responses["id"].startswith("resp_") and responses["created_at"] == 1_700_000_000
    assert [item["id"][:3] for item in responses["output"]] == ["msg", "fc_"]
    anthropic = json.loads(_encode(ANTHROPIC_MESSAGES, response, False)[0])
    assert anthropic["id"].startswith("msg_") and anthropic["content"][1]["id"].startswith("toolu_")


def test_json_bodies_are_compact_utf8() -> None:
    body, content_type = _encode(OPENAI_CHAT, CASES["unicode"], False)
    assert content_type == "application/json"
    assert "日本語 🧾".encode() in body and b"\\u" not in body and b", " not in body and b": " not in body


@pytest.mark.parametrize("api", CHAT_APIS)
def test_the_model_echoed_is_the_answer_s_else_the_requested_one(api: str) -> None:
    bare = ChatResponse("hi", model=None)
    assert decode_answer(api, _encode(api, bare, True)[0]).model == "requested"
    assert decode_answer(api, _encode(api, CASES["text"], False)[0]).model == "model-a"


def test_chat_streams_split_text_and_arguments_into_several_deltas() -> None:
    body, _ = _encode(OPENAI_CHAT, CASES["single_tool"], True)
    chunks = [json.loads(line[6:]) for line in body.decode().split("\n\n") if line.startswith("data: {")]
    texts = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    pieces = [c["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments") for c in chunks
              if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    assert len([t for t in texts if t]) > 1 and len([p for p in pieces if p]) > 1
    assert body.endswith(b"data: [DONE]\n\n")
    assert all("usage" not in c for c in chunks), "no usage chunk unless include_usage asks for it"


def test_chat_stream_usage_chunk_only_when_include_usage() -> None:
    body, _ = _encode(OPENAI_CHAT, CASES["text"], True, stream_options={"include_usage": True})
    last = json.loads(body.decode().split("\n\n")[-3][6:])
    assert last["choices"] == [] and last["usage"]["prompt_tokens"] == 31
    without, _ = _encode(OPENAI_CHAT, CASES["text"], True)
    assert decode_answer(OPENAI_CHAT, without).usage == Usage(), "a stream without usage reports none"


@pytest.mark.parametrize("api", CHAT_APIS)
def test_streams_use_the_api_s_own_framing(api: str) -> None:
    body, content_type = _encode(api, CASES["text"], True)
    assert content_type.startswith("text/event-stream")
    has_event_lines = body.startswith(b"event: ")
    assert has_event_lines is (api != OPENAI_CHAT)


def test_canonical_stream_flag() -> None:
    assert canonical_stream_flag(OPENAI_CHAT, {"stream": True})
    assert not canonical_stream_flag(OPENAI_CHAT, {"stream": "yes"})
    assert not canonical_stream_flag(ANTHROPIC_MESSAGES, {})
    assert not canonical_stream_flag(OPENAI_EMBEDDINGS, {"stream": True})
    with pytest.raises(WireDecodeError, match="unknown wire api"):
        canonical_stream_flag("openai.completions", {})


# --- embeddings ---------------------------------------------------------------------------

def _vectors(body: bytes) -> list[list[float]]:
    out = []
    for item in json.loads(body)["data"]:
        value = item["embedding"]
        if isinstance(value, str):
            raw = base64.b64decode(value)
            value = list(struct.unpack(f"<{len(raw) // 4}f", raw))
        out.append(value)
    return out


def test_embeddings_one_deterministic_unit_vector_per_input() -> None:
    request = {"model": "emb-1", "input": ["alpha", "beta", "alpha"], "dimensions": 16}
    answer = encode_answer(OPENAI_EMBEDDINGS, ChatResponse(None, usage=Usage(6)), request=request, seed="s")
    vectors = _vectors(answer.body)
    assert len(vectors) == 3 and all(len(v) == 16 for v in vectors)
    assert vectors[0] == vectors[2] != vectors[1]
    assert all(abs(sum(x * x for x in v) - 1.0) < 1e-5 for v in vectors)
    assert decode_answer(OPENAI_EMBEDDINGS, answer.body) == ChatResponse(None, usage=Usage(6), model="emb-1")


def test_embeddings_base64_carries_the_same_float32_numbers() -> None:
    request = {"model": "emb-1", "input": "hello"}
    floats = encode_answer(OPENAI_EMBEDDINGS, ChatResponse(None), request=request, seed="s")
    b64 = encode_answer(OPENAI_EMBEDDINGS, ChatResponse(None),
                        request={**request, "encoding_format": "base64"}, seed="s")
    assert isinstance(json.loads(b64.body)["data"][0]["embedding"], str)
    assert _vectors(floats.body) == _vectors(b64.body) and len(_vectors(b64.body)[0]) == 8


def test_embeddings_given_vectors_are_used_and_counted() -> None:
    given_vectors = [[0.5, -0.25], [1.0, 0.0]]
    answer = encode_answer(OPENAI_EMBEDDINGS, ChatResponse(None), request={"model": "e", "input": ["a", "b"]},
                           seed="s", embedding=given_vectors)
    assert _vectors(answer.body) == given_vectors
    with pytest.raises(ValueError, match="2 embeddings given for 1 inputs"):
        encode_answer(OPENAI_EMBEDDINGS, ChatResponse(None), request={"model": "e", "input": "a"},
                      seed="s", embedding=given_vectors)


# --- documented answers from the providers' references ------------------------------------

def _fixture(name: str) -> tuple[bytes, str]:
    body = (FIXTURES / name).read_bytes()
    return body, "text/event-stream" if name.endswith(".sse") else "application/json"


@pytest.mark.parametrize(("api", "name", "expected"), [
    (OPENAI_CHAT, "openai_chat_tool_call.json",
     ChatResponse(None, (ToolCall("get_current_weather", {"location": "Boston, MA"}),), "tool_calls",
                  Usage(82, 17), "gpt-4o-mini")),
    (OPENAI_CHAT, "openai_chat_stream.sse", ChatResponse("Hello", (), "stop", Usage(), "gpt-4o-mini")),
    (OPENAI_RESPONSES, "openai_responses_function_call.json",
     ChatResponse(None, (ToolCall("get_current_weather", {"location": "Boston, MA", "unit": "celsius"}),),
                  "tool_calls", Usage(291, 23), "gpt-5.4")),
    # The documented stream elides most deltas: the final response object is what counts.
    (OPENAI_RESPONSES, "openai_responses_stream.sse",
     ChatResponse("Hi there! How can I assist you today?", (), "stop", Usage(37, 11), "gpt-5.4")),
    (OPENAI_EMBEDDINGS, "openai_embeddings.json",
     ChatResponse(None, (), "stop", Usage(8, 0), "text-embedding-ada-002")),
    (ANTHROPIC_MESSAGES, "anthropic_messages_text.json",
     ChatResponse("Hi! My name is Claude.", (), "stop", Usage(2095, 503), "claude-3-5-sonnet-20240620")),
    (ANTHROPIC_MESSAGES, "anthropic_messages_tool_use.json",
     ChatResponse("I'll check the current weather.",
                  (ToolCall("get_weather", {"location": "San Francisco, CA", "unit": "celsius"}),),
                  "tool_calls", Usage(), "claude-opus-4-7")),
    (ANTHROPIC_MESSAGES, "anthropic_messages_stream.sse",
     ChatResponse("Hello!", (), "stop", Usage(25, 15), "claude-opus-4-6")),
    (ANTHROPIC_MESSAGES, "anthropic_messages_stream_tool_use.sse",
     ChatResponse("Okay, let's check the weather for San Francisco, CA:",
                  (ToolCall("get_weather", {"location": "San Francisco, CA", "unit": "fahrenheit"}),),
                  "tool_calls", Usage(472, 89), "claude-opus-4-6")),
    (ANTHROPIC_MESSAGES, "anthropic_messages_stream_thinking.sse",
     ChatResponse("The greatest common divisor of 1071 and 462 is **21**.", (), "stop", Usage(),
                  "claude-opus-4-6")),
])
def test_documented_answers_decode(api: str, name: str, expected: ChatResponse) -> None:
    body, content_type = _fixture(name)
    assert decode_answer(api, body, content_type=content_type) == expected
    assert decode_answer(api, body) == expected


def test_the_documented_anthropic_error_event_is_refused_with_its_reason() -> None:
    body, content_type = _fixture("anthropic_messages_stream_error.sse")
    with pytest.raises(WireDecodeError, match="overloaded_error: Overloaded"):
        decode_answer(ANTHROPIC_MESSAGES, body, content_type=content_type)


def test_crlf_line_endings_read_like_lf() -> None:
    body, _ = _fixture("anthropic_messages_stream_tool_use.sse")
    crlf = body.replace(b"\n", b"\r\n")
    assert decode_answer(ANTHROPIC_MESSAGES, crlf) == decode_answer(ANTHROPIC_MESSAGES, body)


def test_responses_stream_without_output_in_the_final_object_is_rebuilt_from_events() -> None:
    body, _ = _encode(OPENAI_RESPONSES, CASES["single_tool"], True)
    events = body.decode().split("\n\n")
    final = json.loads(events[-2].split("\n", 1)[1][6:])
    final["response"]["output"] = []
    events[-2] = "event: response.completed\ndata: " + json.dumps(final)
    rebuilt = "\n\n".join(events).encode()
    assert decode_answer(OPENAI_RESPONSES, rebuilt) == CASES["single_tool"]


def test_chat_stream_names_and_arguments_are_concatenated_as_the_sdk_does() -> None:
    lines = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "id": "b", "function": {"name": "second", "arguments": "{\"n\":"}},
            {"index": 0, "id": "a", "function": {"name": "first", "arguments": ""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "function": {"arguments": "2}"}},
            {"index": 0, "function": {"arguments": "[1]"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    body = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
    decoded = decode_answer(OPENAI_CHAT, body.encode())
    assert decoded.tool_calls == (ToolCall("first", {"_raw": "[1]"}), ToolCall("second", {"n": 2}))


# --- hostile bodies -----------------------------------------------------------------------

@pytest.mark.parametrize("api", CHAT_APIS)
def test_every_truncation_of_a_stream_is_refused(api: str) -> None:
    body, content_type = _encode(api, CASES["parallel_tools"], True, stream_options={"include_usage": True})
    for cut in range(0, len(body) - 2, 7):
        with pytest.raises(WireDecodeError):
            decode_answer(api, body[:cut], content_type=content_type)


@pytest.mark.parametrize(("api", "event", "reason"), [
    (OPENAI_CHAT, 'data: {"error":{"message":"Rate limited","type":"rate_limit_error"}}\n\n',
     "rate_limit_error: Rate limited"),
    (OPENAI_RESPONSES, 'event: error\ndata: {"type":"error","code":"server_error","message":"Boom",'
                       '"param":null,"sequence_number":3}\n\n', "server_error: Boom"),
    (OPENAI_RESPONSES, 'event: response.failed\ndata: {"type":"response.failed","response":{"id":"r",'
                       '"status":"failed","error":{"code":"server_error","message":"Broke"},"output":[]}}\n\n',
     "server_error: Broke"),
    (ANTHROPIC_MESSAGES, 'event: error\ndata: {"type":"error","error":{"type":"api_error",'
                         '"message":"Internal"}}\n\n', "api_error: Internal"),
])
def test_an_error_event_in_a_stream_is_refused_with_its_reason(api: str, event: str, reason: str) -> None:
    body, _ = _encode(api, CASES["text"], True)
    events = body.decode().split("\n\n")
    spliced = "\n\n".join(events[:2]) + "\n\n" + event + "\n\n".join(events[2:])
    with pytest.raises(WireDecodeError, match=reason):
        decode_answer(api, spliced.encode(), content_type="text/event-stream")


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("body", [b"", b"{", b"not json", b"\xff\xfe{}", b"[]", b"null", b"42",
                                  b"[" * 100_000 + b"]" * 100_000])
def test_bodies_that_are_not_an_answer_are_refused(api: str, body: bytes) -> None:
    with pytest.raises(WireDecodeError):
        decode_answer(api, body, content_type="application/json")


@pytest.mark.parametrize(("api", "body", "reason"), [
    (OPENAI_CHAT, {"choices": "many"}, "choices is not a JSON array"),
    (OPENAI_CHAT, {"choices": []}, "choices is empty"),
    (OPENAI_CHAT, {"choices": [{"message": {"content": 7}, "finish_reason": "stop"}]},
     "content is not a string"),
    (OPENAI_CHAT, {"choices": [{"message": {"content": "x"}, "finish_reason": "exploded"}]},
     "not a known finish reason"),
    (OPENAI_CHAT, {"choices": [{"message": {"tool_calls": [{"function": {"name": 3}}]},
                                "finish_reason": "tool_calls"}]}, "function.name is not a string"),
    (OPENAI_CHAT, {"error": {"message": "Incorrect API key", "type": "invalid_request_error",
                             "code": "invalid_api_key"}}, "invalid_api_key: Incorrect API key"),
    (OPENAI_RESPONSES, {"object": "response", "status": "in_progress", "output": []}, "not a finished"),
    (OPENAI_RESPONSES, {"object": "response", "status": "incomplete", "output": [],
                        "incomplete_details": {"reason": "gremlins"}}, "unknown reason"),
    (OPENAI_RESPONSES, {"object": "response", "status": "completed", "output": {"a": 1}},
     "output is not a JSON array"),
    (ANTHROPIC_MESSAGES, {"content": [{"type": "text", "text": ["a"]}], "stop_reason": "end_turn"},
     r"content\[0\].text is not a string"),
    (ANTHROPIC_MESSAGES, {"content": [], "stop_reason": None}, "not a known stop reason"),
    (ANTHROPIC_MESSAGES, {"type": "error", "error": {"type": "not_found_error", "message": "no model"}},
     "not_found_error: no model"),
    (OPENAI_EMBEDDINGS, {"data": [{"embedding": "%%%"}]}, "not valid base64"),
    (OPENAI_EMBEDDINGS, {"data": [{"embedding": [1, "two"]}]}, "other than numbers"),
])
def test_wrong_types_are_refused_with_a_reason(api: str, body: dict[str, Any], reason: str) -> None:
    with pytest.raises(WireDecodeError, match=reason):
        decode_answer(api, json.dumps(body).encode())


def test_unknown_api_and_streams_where_none_exist_are_refused() -> None:
    with pytest.raises(WireDecodeError, match="unknown wire api 'openai.completions'"):
        decode_answer("openai.completions", b"{}")
    with pytest.raises(WireDecodeError, match="never event streams"):
        decode_answer(OPENAI_EMBEDDINGS, b"data: {}\n\n")
    with pytest.raises(WireDecodeError, match="not bytes"):
        decode_answer(OPENAI_CHAT, "{}")  # type: ignore[arg-type]


def test_anthropic_events_out_of_order_are_refused() -> None:
    delta = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,' \
            '"delta":{"type":"text_delta","text":"x"}}\n\n'
    with pytest.raises(WireDecodeError, match="before message_start"):
        decode_answer(ANTHROPIC_MESSAGES, delta.encode())
    start = 'event: message_start\ndata: {"type":"message_start","message":{"content":[]}}\n\n'
    with pytest.raises(WireDecodeError, match="never started"):
        decode_answer(ANTHROPIC_MESSAGES, (start + delta).encode())


# --- property: decode returns a ChatResponse or raises WireDecodeError, nothing else -------

JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**64), max_value=2**64),
              st.floats(allow_nan=False), st.text(max_size=12)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=12,
)


def _decodes_or_refuses(api: str, body: bytes, content_type: str = "") -> None:
    try:
        result = decode_answer(api, body, content_type=content_type)
    except WireDecodeError as exc:
        assert str(exc)
    else:
        assert isinstance(result, ChatResponse)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    children: Any = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else []
    for key, item in children:
        found += _paths(item, (*prefix, key))
    return found


def _replace(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copied = copy.deepcopy(document)
    node = copied
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return copied


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(api=st.sampled_from(APIS), body=st.binary(max_size=300),
       content_type=st.sampled_from(["", "application/json", "text/event-stream"]))
def test_random_bytes_decode_or_are_refused(api: str, body: bytes, content_type: str) -> None:
    _decodes_or_refuses(api, body, content_type)


@FUZZ
@given(api=st.sampled_from(APIS), value=JSON_VALUES, framed=st.booleans())
def test_random_json_decodes_or_is_refused(api: str, value: Any, framed: bool) -> None:
    text = json.dumps(value)
    _decodes_or_refuses(api, f"data: {text}\n\n".encode() if framed else text.encode())


@FUZZ
@given(api=st.sampled_from(CHAT_APIS), case=st.sampled_from(sorted(CASES)), stream=st.booleans(),
       data=st.data())
def test_valid_answers_with_one_part_replaced_decode_or_are_refused(api: str, case: str, stream: bool,
                                                                    data: st.DataObject) -> None:
    body, _ = _encode(api, CASES[case], stream, stream_options={"include_usage": True})
    replacement = data.draw(JSON_VALUES)
    if not stream:
        document = json.loads(body)
        path = data.draw(st.sampled_from(_paths(document)))
        _decodes_or_refuses(api, json.dumps(_replace(document, path, replacement)).encode())
        return
    events = body.decode().split("\n\n")
    number = data.draw(st.integers(0, len(events) - 2))
    head, _, payload = events[number].rpartition("data: ")
    if payload.startswith("{"):
        document = json.loads(payload)
        path = data.draw(st.sampled_from(_paths(document)))
        events[number] = head + "data: " + json.dumps(_replace(document, path, replacement))
    _decodes_or_refuses(api, "\n\n".join(events).encode(), "text/event-stream")
