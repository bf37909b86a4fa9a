"""OpenAI Responses at the wire: ``POST .../responses``, a response object or semantic events.

The answer text is what the SDK's ``response.output_text`` gives (the
``output_text`` parts of ``message`` items, in order); tool calls are the
``function_call`` items. The finish reason comes from ``status`` and
``incomplete_details``: ``completed`` is ``stop`` (``tool_calls`` when the
model called a function), ``incomplete`` is ``length`` or ``content_filter``.
A stream ends with ``response.completed`` or ``response.incomplete`` carrying
the final response object, which is preferred; its items are rebuilt from the
``output_item``, ``output_text`` and ``function_call_arguments`` events only
when it comes without them. ``response.failed`` and ``error`` events are refused.
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
    arguments_text,
    array,
    count,
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
    text_or_none,
)

#: ``incomplete_details.reason`` values and their normalised finish reasons.
INCOMPLETE_REASONS = {"max_output_tokens": "length", "content_filter": "content_filter"}
#: Events that end a stream with a final response object.
TERMINAL_EVENTS = ("response.completed", "response.incomplete")


def decode_response(data: Any, where: str = "the answer") -> ChatResponse:
    """A ``response`` object (a JSON body, or the one a terminal stream event carries)."""
    response = obj(data, where)
    status = response.get("status")
    if status == "failed" or isinstance(response.get("error"), dict):
        raise WireDecodeError(api_error(response) or f"{where} has status failed")
    texts: list[str] = []
    calls: list[ToolCall] = []
    for i, raw in enumerate(array(response.get("output"), f"{where} output")):
        item = obj(raw, f"{where} output[{i}]")
        if item.get("type") == "message":
            for j, raw_part in enumerate(array(item.get("content") or [], f"{where} output[{i}].content")):
                part = obj(raw_part, f"{where} output[{i}].content[{j}]")
                if part.get("type") == "output_text":
                    texts.append(text(part.get("text"), f"{where} output[{i}].content[{j}].text"))
        elif item.get("type") == "function_call":
            name = text(item.get("name"), f"{where} output[{i}].name")
            arguments = text_or_none(item.get("arguments"), f"{where} output[{i}].arguments")
            calls.append(ToolCall(name, arguments_from_text(arguments or "{}")))
    if status == "completed":
        reason = "tool_calls" if calls else "stop"
    elif status == "incomplete":
        details = response.get("incomplete_details")
        why = details.get("reason") if isinstance(details, dict) else None
        if not isinstance(why, str) or why not in INCOMPLETE_REASONS:
            raise WireDecodeError(f"{where} is incomplete for an unknown reason {why!r:.40} "
                                  f"(known: {', '.join(INCOMPLETE_REASONS)})")
        reason = INCOMPLETE_REASONS[why]
    else:
        raise WireDecodeError(f"{where} has status {status!r:.40}, not a finished answer "
                              "(completed or incomplete)")
    raw_usage = response.get("usage")
    usage = raw_usage if isinstance(raw_usage, dict) else {}
    model = response.get("model")
    return ChatResponse(content=none_if_empty("".join(texts)), tool_calls=tuple(calls),
                        finish_reason=reason,
                        usage=Usage(count(usage.get("input_tokens")), count(usage.get("output_tokens"))),
                        model=model if isinstance(model, str) and model else None)


def decode_json(data: Any) -> ChatResponse:
    """A JSON body: an error object is refused, a response object decoded."""
    if not (isinstance(data, dict) and data.get("object") == "response"):
        reason = api_error(data)
        if reason:
            raise WireDecodeError(reason)
    return decode_response(data)


class _Assembly:
    """Output items rebuilt from stream events, for a terminal response that lacks them."""

    def __init__(self) -> None:
        self.items: dict[int, JsonObject] = {}
        self.texts: dict[tuple[int, int], str] = {}
        self.arguments: dict[int, str] = {}
        self.positions: dict[str, int] = {}

    def position(self, data: JsonObject, where: str) -> int:
        item_id = data.get("item_id")
        if data.get("output_index") is None and isinstance(item_id, str) and item_id in self.positions:
            return self.positions[item_id]
        return index(data.get("output_index"), f"{where} output_index")

    def take(self, kind: str, data: JsonObject, where: str) -> None:
        if kind in ("response.output_item.added", "response.output_item.done"):
            position = self.position(data, where)
            item = obj(data.get("item"), f"{where} item")
            self.items[position] = item
            if isinstance(item.get("id"), str):
                self.positions[item["id"]] = position
            if kind.endswith(".done") and item.get("type") == "function_call":
                self.arguments[position] = text_or_none(item.get("arguments"), f"{where} arguments") or ""
        elif kind == "response.output_text.delta":
            key = (self.position(data, where), index(data.get("content_index", 0), f"{where} content_index"))
            self.texts[key] = self.texts.get(key, "") + text(data.get("delta"), f"{where} delta")
        elif kind == "response.output_text.done":
            key = (self.position(data, where), index(data.get("content_index", 0), f"{where} content_index"))
            self.texts[key] = text(data.get("text"), f"{where} text")
        elif kind == "response.function_call_arguments.delta":
            position = self.position(data, where)
            self.arguments[position] = self.arguments.get(position, "") + text(data.get("delta"),
                                                                                 f"{where} delta")
        elif kind == "response.function_call_arguments.done":
            self.arguments[self.position(data, where)] = text(data.get("arguments"), f"{where} arguments")

    def output(self) -> list[JsonObject]:
        output = []
        for position in sorted(self.items):
            item = dict(self.items[position])
            if item.get("type") == "message":
                parts = sorted((key[1], value) for key, value in self.texts.items() if key[0] == position)
                item["content"] = [{"type": "output_text", "text": value} for _, value in parts]
            elif item.get("type") == "function_call":
                item["arguments"] = self.arguments.get(position, item.get("arguments") or "")
            output.append(item)
        return output


def decode_stream(body: bytes) -> ChatResponse:
    """A stream of semantic events ending with ``response.completed`` or ``response.incomplete``."""
    assembly = _Assembly()
    for number, event in enumerate(parse_events(body)):
        where = f"event {number}"
        data = event_data(event, where)
        kind = data.get("type") if isinstance(data.get("type"), str) else event.name
        if kind == "response.failed":
            response = data.get("response")
            raise WireDecodeError(f"{where}: " + (api_error(response) or "the response failed"))
        if kind in TERMINAL_EVENTS:
            final = obj(data.get("response"), f"{where} response")
            if not final.get("output"):
                final = {**final, "output": assembly.output()}
            return decode_response(final, f"{where} response")
        assembly.take(str(kind), data, where)
    raise WireDecodeError("the stream ends before response.completed (it was cut short)")


# --- encoding -----------------------------------------------------------------------------

def _items(response: ChatResponse, ids: Ids) -> list[JsonObject]:
    items: list[JsonObject] = []
    if response.content:
        items.append({"id": ids.next("msg_", 48), "type": "message", "status": "completed",
                      "role": "assistant",
                      "content": [{"type": "output_text", "text": response.content, "annotations": [],
                                   "logprobs": []}]})
    for call in response.tool_calls:
        items.append({"id": ids.next("fc_", 48), "type": "function_call", "status": "completed",
                      "call_id": ids.next("call_"), "name": call.name,
                      "arguments": arguments_text(call.arguments)})
    return items


def _response(response: ChatResponse, request: JsonObject, answer_id: str, created: int,
              output: list[JsonObject], final: bool) -> JsonObject:
    incomplete = response.finish_reason in ("length", "content_filter")
    status = ("incomplete" if incomplete else "completed") if final else "in_progress"
    reason = "max_output_tokens" if response.finish_reason == "length" else "content_filter"
    tools = request.get("tools")
    usage = {"input_tokens": response.usage.input_tokens, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": response.usage.output_tokens,
             "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": response.usage.input_tokens + response.usage.output_tokens}
    return {
        "id": answer_id, "object": "response", "created_at": created, "status": status,
        "error": None, "incomplete_details": {"reason": reason} if final and incomplete else None,
        "instructions": request.get("instructions"), "max_output_tokens": request.get("max_output_tokens"),
        "model": model_of(response.model, request), "output": output, "parallel_tool_calls": True,
        "previous_response_id": request.get("previous_response_id"), "reasoning": {"effort": None,
                                                                                "summary": None},
        "store": request.get("store", True), "temperature": request.get("temperature", 1.0),
        "text": {"format": {"type": "text"}}, "tool_choice": request.get("tool_choice", "auto"),
        "tools": tools if isinstance(tools, list) else [], "top_p": request.get("top_p", 1.0),
        "truncation": "disabled", "usage": usage if final else None, "user": None, "metadata": {},
    }


def encode(response: ChatResponse, request: JsonObject, ids: Ids, created: int,
           stream: bool) -> EncodedAnswer:
    """The Responses answer for ``response``: a response object, or its event stream."""
    answer_id = ids.next("resp_", 48)
    items = _items(response, ids)
    final = _response(response, request, answer_id, created, items, final=True)
    if not stream:
        return json_answer(final)
    events: list[tuple[str, JsonObject]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    started = _response(response, request, answer_id, created, [], final=False)
    emit("response.created", response=started)
    emit("response.in_progress", response=started)
    for position, item in enumerate(items):
        if item["type"] == "message":
            whole = item["content"][0]["text"]
            emit("response.output_item.added", output_index=position,
                 item={**item, "status": "in_progress", "content": []})
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            emit("response.content_part.added", item_id=item["id"], output_index=position,
                 content_index=0, part=part)
            for piece in split_text(whole):
                emit("response.output_text.delta", item_id=item["id"], output_index=position,
                     content_index=0, delta=piece, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=position,
                 content_index=0, text=whole, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=position,
                 content_index=0, part={**part, "text": whole})
        else:
            emit("response.output_item.added", output_index=position,
                 item={**item, "status": "in_progress", "arguments": ""})
            for piece in split_text(item["arguments"]):
                emit("response.function_call_arguments.delta", item_id=item["id"],
                     output_index=position, delta=piece)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=position,
                 name=item["name"], arguments=item["arguments"])
        emit("response.output_item.done", output_index=position, item=item)
    emit("response.incomplete" if final["status"] == "incomplete" else "response.completed",
         response=final)
    return stream_answer(sse(events))
