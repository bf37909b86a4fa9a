"""The wire codecs: round trips, embeddings, documented provider answers.

What the real SDKs make of the encoded bytes is proven in test_wire_codecs_sdks.py,
and hostile bodies in test_wire_codecs_hostile.py; here the codecs are checked
against themselves (encode -> decode gives the same answer, the same bytes twice)
and against answers transcribed from the providers' API references
(tests/fixtures/wire/).
"""

from __future__ import annotations

import base64
import json
import struct

import pytest
from wire_support import CASES, CHAT_APIS, FIXTURES, encode

from harness.core.entities import ChatResponse, ToolCall, Usage
from harness.wire.codecs import (
    ANTHROPIC_MESSAGES,
    OPENAI_CHAT,
    OPENAI_EMBEDDINGS,
    OPENAI_RESPONSES,
    WireDecodeError,
    canonical_stream_flag,
    decode_answer,
    encode_answer,
    is_event_stream,
)

# --- round trips --------------------------------------------------------------------------

@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("stream", [False, True], ids=["json", "stream"])
@pytest.mark.parametrize("api", CHAT_APIS)
def test_encode_then_decode_gives_the_same_answer(api: str, stream: bool, case: str) -> None:
    response = CASES[case]
    body, content_type = encode(api, response, stream, stream_options={"include_usage": True})
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
    chat = json.loads(encode(OPENAI_CHAT, response, False)[0])
    assert chat["id"].startswith("chatcmpl-") and chat["created"] == 1_700_000_000
    assert chat["choices"][0]["message"]["tool_calls"][0]["id"].startswith("call_")
    responses = json.loads(encode(OPENAI_RESPONSES, response, False)[0])
    assert responses["id"].startswith("resp_") and responses["created_at"] == 1_700_000_000
    assert [item["id"][:3] for item in responses["output"]] == ["msg", "fc_"]
    anthropic = json.loads(encode(ANTHROPIC_MESSAGES, response, False)[0])
    assert anthropic["id"].startswith("msg_") and anthropic["content"][1]["id"].startswith("toolu_")


def test_json_bodies_are_compact_utf8() -> None:
    body, content_type = encode(OPENAI_CHAT, CASES["unicode"], False)
    assert content_type == "application/json"
    assert "日本語 🧾".encode() in body and b"\\u" not in body and b", " not in body and b": " not in body


@pytest.mark.parametrize("api", CHAT_APIS)
def test_the_model_echoed_is_the_answer_s_else_the_requested_one(api: str) -> None:
    bare = ChatResponse("hi", model=None)
    assert decode_answer(api, encode(api, bare, True)[0]).model == "requested"
    assert decode_answer(api, encode(api, CASES["text"], False)[0]).model == "model-a"


def test_chat_streams_split_text_and_arguments_into_several_deltas() -> None:
    body, _ = encode(OPENAI_CHAT, CASES["single_tool"], True)
    chunks = [json.loads(line[6:]) for line in body.decode().split("\n\n") if line.startswith("data: {")]
    texts = [c["choices"][0]["delta"].get("content") for c in chunks if c["choices"]]
    pieces = [c["choices"][0]["delta"]["tool_calls"][0]["function"].get("arguments") for c in chunks
              if c["choices"] and c["choices"][0]["delta"].get("tool_calls")]
    assert len([t for t in texts if t]) > 1 and len([p for p in pieces if p]) > 1
    assert body.endswith(b"data: [DONE]\n\n")
    assert all("usage" not in c for c in chunks), "no usage chunk unless include_usage asks for it"


def test_chat_stream_usage_chunk_only_when_include_usage() -> None:
    body, _ = encode(OPENAI_CHAT, CASES["text"], True, stream_options={"include_usage": True})
    last = json.loads(body.decode().split("\n\n")[-3][6:])
    assert last["choices"] == [] and last["usage"]["prompt_tokens"] == 31
    without, _ = encode(OPENAI_CHAT, CASES["text"], True)
    assert decode_answer(OPENAI_CHAT, without).usage == Usage(), "a stream without usage reports none"


@pytest.mark.parametrize("api", CHAT_APIS)
def test_streams_use_the_api_s_own_framing(api: str) -> None:
    body, content_type = encode(api, CASES["text"], True)
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
    body, _ = encode(OPENAI_RESPONSES, CASES["single_tool"], True)
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
