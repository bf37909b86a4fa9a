"""The wire codecs refuse hostile bodies with a WireDecodeError that says why, never another error.

Truncated streams, error events, bodies that are not answers, wrong types, an
unknown api, and a Hypothesis property over random bytes, random JSON and valid
answers with one part replaced: decode returns a ChatResponse or raises
WireDecodeError.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_support import CASES, CHAT_APIS, encode

from harness.core.entities import ChatResponse
from harness.wire.codecs import (
    ANTHROPIC_COUNT_TOKENS,
    ANTHROPIC_MESSAGES,
    APIS,
    OPENAI_CHAT,
    OPENAI_EMBEDDINGS,
    OPENAI_INPUT_TOKENS,
    OPENAI_MODERATIONS,
    OPENAI_RESPONSES,
    WireDecodeError,
    decode_answer,
)

# --- hostile bodies -----------------------------------------------------------------------

@pytest.mark.parametrize("api", CHAT_APIS)
def test_every_truncation_of_a_stream_is_refused(api: str) -> None:
    body, content_type = encode(api, CASES["parallel_tools"], True, stream_options={"include_usage": True})
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
    body, _ = encode(api, CASES["text"], True)
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
    (ANTHROPIC_COUNT_TOKENS, {"input_tokens": "12"}, "input_tokens is not a count"),
    (ANTHROPIC_COUNT_TOKENS, {"input_tokens": True}, "input_tokens is not a count"),
    (OPENAI_INPUT_TOKENS, {"object": "response.input_tokens", "input_tokens": -1}, "not a count"),
    (OPENAI_INPUT_TOKENS, {"error": {"message": "no input", "code": "missing"}}, "missing: no input"),
    (OPENAI_MODERATIONS, {"results": {"flagged": False}}, "results is not a JSON array"),
    (OPENAI_MODERATIONS, {"results": [{"flagged": "no"}]}, r"results\[0\].flagged is not true or false"),
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
    body, _ = encode(api, CASES[case], stream, stream_options={"include_usage": True})
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
