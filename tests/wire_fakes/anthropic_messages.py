"""Anthropic Messages, ``POST /v1/messages``: a JSON message, or typed events over SSE.

Validated like the real endpoint: ``model``, ``max_tokens`` and ``messages``
are required, and every ``tool_result`` block must answer a ``tool_use`` id of
the assistant message right before it (400 otherwise). Tool calls become
``tool_use`` blocks with random ``toolu_…`` ids and ``stop_reason: tool_use``.
A stream is ``message_start``, a ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``text_delta`` or ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` and ``message_stop``.
(The ``anthropic-version`` and ``x-api-key`` checks live in the server.)
"""

from __future__ import annotations

import json
from typing import Any

from .brain import Brain, tokens, tool_calls_of
from .wire import JsonObject, Reply, anthropic_error, new_id, pieces, sse


def _validate(body: JsonObject) -> None:
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            raise anthropic_error(400, f"{name}: Field required")
    previous: list[Any] = []
    for index, message in enumerate(body["messages"]):
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        if message.get("role") == "user":
            asked = {b.get("id") for b in previous if isinstance(b, dict) and b.get("type") == "tool_use"}
            for block in blocks:
                if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                    raise anthropic_error(400, f"messages.{index}.content: unexpected `tool_use_id` found in "
                                               "`tool_result` blocks. Each `tool_result` block must have a "
                                               "corresponding `tool_use` block in the previous message.")
        elif message.get("role") != "assistant":
            raise anthropic_error(400, f"messages.{index}.role: Input should be 'user' or 'assistant'")
        previous = blocks


def answer(body: JsonObject, brain: Brain) -> Reply:
    """Answer one messages request (JSON, or SSE events when ``stream`` is true)."""
    _validate(body)
    result = brain("messages", body)
    calls = tool_calls_of(result)
    if calls is not None:
        content = [{"type": "tool_use", "id": new_id("toolu_01"), "name": c.name, "input": c.arguments}
                   for c in calls]
        said = json.dumps([c.arguments for c in calls])
    else:
        said = str(result)
        content = [{"type": "text", "text": said}]
    message = {"id": new_id("msg_01"), "type": "message", "role": "assistant", "model": body["model"],
               "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
               "usage": {"input_tokens": tokens(json.dumps(body["messages"])), "output_tokens": tokens(said),
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                         "service_tier": "standard"}}
    if body.get("stream"):
        return Reply(events=_stream(message))
    return Reply(body=message)


def _stream(message: JsonObject) -> list[bytes]:
    frames: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        frames.append(sse({"type": kind, **fields}, event=kind))

    usage = message["usage"]
    emit("message_start", message={**message, "content": [], "stop_reason": None,
                                   "usage": {**usage, "output_tokens": 1}})
    emit("ping")
    for index, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            emit("content_block_start", index=index, content_block={**block, "input": {}})
            for piece in pieces(json.dumps(block["input"])):
                emit("content_block_delta", index=index,
                     delta={"type": "input_json_delta", "partial_json": piece})
        else:
            emit("content_block_start", index=index, content_block={"type": "text", "text": ""})
            for piece in pieces(block["text"]):
                emit("content_block_delta", index=index, delta={"type": "text_delta", "text": piece})
        emit("content_block_stop", index=index)
    emit("message_delta", delta={"stop_reason": message["stop_reason"], "stop_sequence": None},
         usage={"output_tokens": usage["output_tokens"]})
    emit("message_stop")
    return frames
