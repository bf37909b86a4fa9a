"""OpenAI Responses, ``POST /v1/responses``: a JSON response object, or typed events over SSE.

The fake keeps server-side state as the real service does: every response
(unless ``store`` is false) is remembered with its conversation, and a request
naming ``previous_response_id`` continues that conversation. An id the fake
never issued is a 400 ``previous_response_not_found``, and a
``function_call_output`` whose ``call_id`` no earlier ``function_call`` made is a
400 too: a replay that sends ids from another recording session meets exactly
this. Streamed events carry ``sequence_number`` and end with
``response.completed`` (no ``[DONE]``).
"""

from __future__ import annotations

import copy
import json
import threading
from typing import Any

from .brain import Brain, tokens, tool_calls_of
from .wire import JsonObject, Reply, created, new_id, openai_error, pieces, sse


class ResponsesState:
    """The conversations of the responses this fake issued, by response id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conversations: dict[str, list[JsonObject]] = {}

    def issued(self) -> list[str]:
        with self._lock:
            return list(self._conversations)

    def history(self, response_id: str) -> list[JsonObject]:
        with self._lock:
            if response_id not in self._conversations:
                raise openai_error(400, f"Previous response with id '{response_id}' not found.",
                                   param="previous_response_id", code="previous_response_not_found")
            return copy.deepcopy(self._conversations[response_id])

    def remember(self, response_id: str, conversation: list[JsonObject]) -> None:
        with self._lock:
            self._conversations[response_id] = copy.deepcopy(conversation)


def _items(value: Any) -> list[JsonObject]:
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if isinstance(value, list):
        return [dict(item) for item in value]
    raise openai_error(400, "Invalid type for 'input': expected a string or an array.", param="input")


def _check_outputs(conversation: list[JsonObject]) -> None:
    calls = {item.get("call_id") for item in conversation if item.get("type") == "function_call"}
    for item in conversation:
        if item.get("type") == "function_call_output" and item.get("call_id") not in calls:
            raise openai_error(400, f"No tool call found for function call output with call_id "
                                    f"{item.get('call_id')}.", param="input")


def answer(body: JsonObject, brain: Brain, state: ResponsesState) -> Reply:
    """Answer one responses request (JSON, or SSE events when ``stream`` is true)."""
    if not isinstance(body.get("model"), str):
        raise openai_error(400, "Missing required parameter: 'model'.", param="model",
                           code="missing_required_parameter")
    previous = body.get("previous_response_id")
    conversation = (state.history(previous) if previous else []) + _items(body.get("input", []))
    _check_outputs(conversation)
    result = brain("responses", {**body, "input": conversation})
    calls = tool_calls_of(result)
    if calls is not None and body.get("parallel_tool_calls") is False:
        calls = calls[:1]
    if calls is not None:
        output = [{"type": "function_call", "id": new_id("fc_", 40), "call_id": new_id("call_"),
                   "name": c.name, "arguments": json.dumps(c.arguments), "status": "completed"}
                  for c in calls]
        text = ""
    else:
        text = str(result)
        output = [{"type": "message", "id": new_id("msg_", 40), "status": "completed", "role": "assistant",
                   "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}]
    response = _response(body, output, text or json.dumps(output))
    if body.get("store", True):
        state.remember(response["id"], conversation + output)
    if body.get("stream"):
        return Reply(events=_stream(response))
    return Reply(body=response)


def _response(body: JsonObject, output: list[JsonObject], said: str) -> JsonObject:
    prompt = tokens(json.dumps(body.get("input", "")))
    completion = tokens(said)
    return {
        "id": new_id("resp_", 48), "object": "response", "created_at": created(), "status": "completed",
        "background": False, "error": None, "incomplete_details": None,
        "instructions": body.get("instructions"), "max_output_tokens": body.get("max_output_tokens"),
        "model": body["model"], "output": output,
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": body.get("store", True), "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [], "top_p": body.get("top_p", 1.0), "truncation": "disabled",
        "usage": {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": completion, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": prompt + completion},
        "user": None, "metadata": body.get("metadata") or {},
    }


def _stream(response: JsonObject) -> list[bytes]:
    frames: list[bytes] = []

    def emit(kind: str, **fields: Any) -> None:
        frames.append(sse({"type": kind, "sequence_number": len(frames), **fields}, event=kind))

    emit("response.created", response={**response, "status": "in_progress", "output": [], "usage": None})
    emit("response.in_progress", response={**response, "status": "in_progress", "output": [], "usage": None})
    for position, item in enumerate(response["output"]):
        if item["type"] == "function_call":
            emit("response.output_item.added", output_index=position,
                 item={**item, "arguments": "", "status": "in_progress"})
            for piece in pieces(item["arguments"]):
                emit("response.function_call_arguments.delta", item_id=item["id"], output_index=position,
                     delta=piece)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=position,
                 arguments=item["arguments"], name=item["name"])
        else:
            text = item["content"][0]["text"]
            emit("response.output_item.added", output_index=position,
                 item={**item, "content": [], "status": "in_progress"})
            empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", item_id=item["id"], output_index=position, content_index=0,
                 part=empty)
            for piece in pieces(text):
                emit("response.output_text.delta", item_id=item["id"], output_index=position, content_index=0,
                     delta=piece, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=position, content_index=0,
                 text=text, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=position, content_index=0,
                 part=item["content"][0])
        emit("response.output_item.done", output_index=position, item=item)
    emit("response.completed", response=response)
    return frames
