"""Anthropic Messages at the wire: ``POST .../v1/messages``, a message object or its events.

The answer text is the ``text`` blocks joined; tool calls are the ``tool_use``
blocks with their ``input`` objects (server tools, thinking and other blocks
are not the agent's tool calls and are skipped). ``stop_reason`` is
normalised: ``end_turn`` / ``stop_sequence`` / ``pause_turn`` are ``stop``,
``tool_use`` is ``tool_calls``, ``max_tokens`` is ``length``, ``refusal`` is
``content_filter``. Input tokens count the cached ones too, as the harness's
own Anthropic provider does. A stream is rebuilt as the ``anthropic`` SDK's
accumulator does: ``message_start``, blocks opened by ``content_block_start``
and grown by ``text_delta`` / ``input_json_delta``, ``message_delta`` carrying
the stop reason and cumulative usage; it must end with ``message_stop``.
"""

from __future__ import annotations

from typing import Any

from harness.core.entities import ChatResponse, JsonObject, ToolCall, Usage
from harness.wire.codecs_common import (
    EncodedAnswer,
    Ids,
    WireDecodeError,
    api_error,
    arguments_from_text,
    arguments_from_value,
    array,
    count,
    dumps,
    event_data,
    index,
    json_answer,
    model_of,
    none_if_empty,
    obj,
    parse_events,
    split_text,
    sse,
    stream_answer,
    text,
)

STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}
#: Normalised finish reasons and the stop reason a scripted answer sends for each.
WIRE_STOP_REASONS = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens",
                     "content_filter": "refusal"}


def _stop_reason(raw: Any, where: str) -> str:
    if isinstance(raw, str) and raw in STOP_REASONS:
        return STOP_REASONS[raw]
    raise WireDecodeError(f"{where} {raw!r:.40} is not a known stop reason "
                          f"({', '.join(sorted(STOP_REASONS))})")


def _input_tokens(usage: JsonObject) -> int:
    return sum(count(usage.get(k)) for k in
               ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))


def _model(data: JsonObject) -> str | None:
    model = data.get("model")
    return model if isinstance(model, str) and model else None


def _read_blocks(blocks: list[Any], where: str) -> tuple[list[str], list[ToolCall]]:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, raw in enumerate(blocks):
        block = obj(raw, f"{where}[{i}]")
        if block.get("type") == "text":
            texts.append(text(block.get("text"), f"{where}[{i}].text"))
        elif block.get("type") == "tool_use":
            calls.append(ToolCall(text(block.get("name"), f"{where}[{i}].name"),
                                  arguments_from_value(block.get("input"))))
    return texts, calls


def decode_json(data: Any) -> ChatResponse:
    """A ``message`` object."""
    reason = api_error(data)
    if reason:
        raise WireDecodeError(reason)
    message = obj(data, "the answer")
    texts, calls = _read_blocks(array(message.get("content"), "content"), "content")
    raw_usage = message.get("usage")
    usage = raw_usage if isinstance(raw_usage, dict) else {}
    return ChatResponse(content=none_if_empty("".join(texts)), tool_calls=tuple(calls),
                        finish_reason=_stop_reason(message.get("stop_reason"), "stop_reason"),
                        usage=Usage(_input_tokens(usage), count(usage.get("output_tokens"))),
                        model=_model(message))


def decode_stream(body: bytes) -> ChatResponse:
    """The ``message_start`` ... ``message_stop`` event stream of one message."""
    message: JsonObject | None = None
    blocks: dict[int, JsonObject] = {}
    partial: dict[int, str] = {}
    usage: JsonObject = {}
    stop_reason: Any = None
    for number, event in enumerate(parse_events(body)):
        where = f"event {number}"
        data = event_data(event, where)
        kind = data.get("type") if isinstance(data.get("type"), str) else event.name
        if kind == "ping":
            continue
        if kind == "message_start":
            message = obj(data.get("message"), f"{where} message")
            raw_usage = message.get("usage")
            usage = dict(raw_usage) if isinstance(raw_usage, dict) else {}
            continue
        if message is None:
            raise WireDecodeError(f"{where} ({str(kind):.40}) comes before message_start")
        if kind == "content_block_start":
            position = index(data.get("index"), f"{where} index")
            blocks[position] = dict(obj(data.get("content_block"), f"{where} content_block"))
        elif kind == "content_block_delta":
            position = index(data.get("index"), f"{where} index")
            if position not in blocks:
                raise WireDecodeError(f"{where} grows block {position}, which was never started")
            delta = obj(data.get("delta"), f"{where} delta")
            if delta.get("type") == "text_delta":
                block = blocks[position]
                block["text"] = text(block.get("text", ""), f"block {position} text") + text(
                    delta.get("text"), f"{where} delta.text")
            elif delta.get("type") == "input_json_delta":
                partial[position] = partial.get(position, "") + text(delta.get("partial_json"),
                                                                     f"{where} delta.partial_json")
        elif kind == "message_delta":
            delta = obj(data.get("delta") or {}, f"{where} delta")
            if delta.get("stop_reason") is not None:
                stop_reason = delta["stop_reason"]
            raw_usage = data.get("usage")
            if isinstance(raw_usage, dict):
                usage.update({k: v for k, v in raw_usage.items() if v is not None})
        elif kind == "message_stop":
            return _finish(message, blocks, partial, usage, stop_reason)
    raise WireDecodeError("the stream ends before message_stop (it was cut short)")


def _finish(message: JsonObject, blocks: dict[int, JsonObject], partial: dict[int, str],
            usage: JsonObject, stop_reason: Any) -> ChatResponse:
    for position, raw in partial.items():
        block = blocks[position]
        if block.get("type") == "tool_use":
            block["input"] = arguments_from_text(raw) if raw.strip() else block.get("input") or {}
    texts, calls = _read_blocks([blocks[k] for k in sorted(blocks)], "streamed content")
    reason = stop_reason if stop_reason is not None else message.get("stop_reason")
    return ChatResponse(content=none_if_empty("".join(texts)), tool_calls=tuple(calls),
                        finish_reason=_stop_reason(reason, "stop_reason"),
                        usage=Usage(_input_tokens(usage), count(usage.get("output_tokens"))),
                        model=_model(message))


# --- encoding -----------------------------------------------------------------------------

def encode(response: ChatResponse, request: JsonObject, ids: Ids, created: int,
           stream: bool) -> EncodedAnswer:
    """The messages answer for ``response``: a message object, or its event stream.

    ``created`` is unused: a message carries no timestamp.
    """
    del created
    blocks: list[JsonObject] = []
    if response.content:
        blocks.append({"type": "text", "text": response.content})
    for call in response.tool_calls:
        blocks.append({"type": "tool_use", "id": ids.next("toolu_"), "name": call.name,
                       "input": call.arguments})
    head: JsonObject = {"id": ids.next("msg_"), "type": "message", "role": "assistant",
                        "model": model_of(response.model, request)}
    stop_reason = WIRE_STOP_REASONS.get(response.finish_reason, "end_turn")
    usage = {"input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens}
    if not stream:
        return json_answer({**head, "content": blocks, "stop_reason": stop_reason,
                            "stop_sequence": None, "usage": usage})
    events: list[tuple[str, JsonObject]] = [
        ("message_start", {"type": "message_start",
                           "message": {**head, "content": [], "stop_reason": None, "stop_sequence": None,
                                       "usage": {"input_tokens": response.usage.input_tokens,
                                                 "output_tokens": 0}}})]
    for position, block in enumerate(blocks):
        opened = {**block, "text": ""} if block["type"] == "text" else {**block, "input": {}}
        events.append(("content_block_start", {"type": "content_block_start", "index": position,
                                               "content_block": opened}))
        if position == 0:
            events.append(("ping", {"type": "ping"}))
        if block["type"] == "text":
            pieces = [{"type": "text_delta", "text": piece} for piece in split_text(block["text"])]
        else:
            pieces = [{"type": "input_json_delta", "partial_json": piece}
                      for piece in ["", *split_text(dumps(block["input"]))]]
        events += [("content_block_delta", {"type": "content_block_delta", "index": position, "delta": d})
                   for d in pieces]
        events.append(("content_block_stop", {"type": "content_block_stop", "index": position}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                     "usage": {"output_tokens": response.usage.output_tokens}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return stream_answer(sse(events))
