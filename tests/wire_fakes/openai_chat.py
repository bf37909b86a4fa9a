"""OpenAI Chat Completions, ``POST /v1/chat/completions``: a JSON answer, or chunks over SSE.

Validated like the real endpoint: ``model`` and a non-empty ``messages`` list
are required, and a ``tool`` message must answer a ``tool_calls`` id of an
earlier assistant message (400 otherwise). Tool calls get random ``call_…``
ids; ``n`` choices are answered; a stream ends with ``data: [DONE]`` and, with
``stream_options.include_usage``, a last chunk of empty ``choices`` carrying
``usage`` (every other chunk then has ``"usage": null``).
"""

from __future__ import annotations

import json
from typing import Any

from .brain import Brain, ToolCall, tokens, tool_calls_of
from .wire import JsonObject, Reply, created, new_id, openai_error, pieces, sse


def _validate(body: JsonObject) -> None:
    if not isinstance(body.get("model"), str):
        raise openai_error(400, "you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise openai_error(400, "[] is too short - 'messages'", param="messages", code="empty_array")
    issued: set[str] = set()
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in (
                "system", "developer", "user", "assistant", "tool"):
            raise openai_error(400, f"Invalid value for 'messages[{index}].role'.",
                               param=f"messages[{index}].role", code="invalid_value")
        for call in message.get("tool_calls") or []:
            issued.add(call.get("id", ""))
        if message["role"] == "tool" and message.get("tool_call_id") not in issued:
            raise openai_error(
                400, "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                     "message with 'tool_calls'.", param=f"messages.[{index}].role")


def _usage(body: JsonObject, text: str) -> JsonObject:
    prompt = tokens(json.dumps(body.get("messages", [])))
    completion = tokens(text)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                          "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}


def _wire_calls(calls: list[ToolCall]) -> list[JsonObject]:
    return [{"id": new_id("call_"), "type": "function",
             "function": {"name": c.name, "arguments": json.dumps(c.arguments)}} for c in calls]


def answer(body: JsonObject, brain: Brain) -> Reply:
    """Answer one chat-completions request (JSON, or SSE when ``stream`` is true)."""
    _validate(body)
    result = brain("chat", body)
    calls = tool_calls_of(result)
    text = "" if calls is not None else str(result)
    if calls is not None and body.get("parallel_tool_calls") is False:
        calls = calls[:1]
    head = {"id": new_id("chatcmpl-", 29), "created": created(), "model": body["model"],
            "system_fingerprint": new_id("fp_", 10), "service_tier": "default"}
    choices = max(1, int(body.get("n") or 1))
    if body.get("stream"):
        return Reply(events=_stream(head, body, text, calls, choices))
    message: JsonObject = {"role": "assistant", "content": None if calls else text, "refusal": None,
                           "annotations": []}
    if calls:
        message["tool_calls"] = _wire_calls(calls)
    return Reply(body={**head, "object": "chat.completion", "choices": [
        {"index": i, "message": message, "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}
        for i in range(choices)], "usage": _usage(body, text or json.dumps(message.get("tool_calls")))})


def _stream(head: JsonObject, body: JsonObject, text: str, calls: list[ToolCall] | None,
            choices: int) -> list[bytes]:
    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    extra: JsonObject = {"usage": None} if include_usage else {}

    def chunk(index: int, delta: JsonObject, finish: str | None = None) -> bytes:
        return sse({**head, "object": "chat.completion.chunk", **extra, "choices": [
            {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]})

    frames: list[bytes] = []
    for index in range(choices):
        frames.append(chunk(index, {"role": "assistant", "content": None if calls else "", "refusal": None}))
        if calls:
            for position, call in enumerate(_wire_calls(calls)):
                function = call["function"]
                opening = {"index": position, "id": call["id"], "type": "function",
                           "function": {"name": function["name"], "arguments": ""}}
                frames.append(chunk(index, {"tool_calls": [opening]}))
                for piece in pieces(function["arguments"]):
                    frames.append(chunk(index, {"tool_calls": [{"index": position,
                                                                "function": {"arguments": piece}}]}))
        else:
            frames += [chunk(index, {"content": piece}) for piece in pieces(text)]
        frames.append(chunk(index, {}, "tool_calls" if calls else "stop"))
    if include_usage:
        usage: Any = _usage(body, text or json.dumps([c.arguments for c in calls or []]))
        frames.append(sse({**head, "object": "chat.completion.chunk", "choices": [], "usage": usage}))
    frames.append(sse("[DONE]"))
    return frames
