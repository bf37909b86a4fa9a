"""OpenAI Chat Completions at the wire: ``POST .../chat/completions``, JSON or SSE chunks.

Decoding reads the first choice, as the harness does everywhere (``n`` > 1 is
not an agent's answer). A stream is reassembled the way the ``openai`` SDK's
stream accumulator does it: ``delta.content`` pieces concatenated, tool-call
fragments merged by their ``index`` (string fields concatenated, names
included), the usage of the final chunk with empty ``choices`` that
``stream_options.include_usage`` asks for. A stream without ``data: [DONE]``
was cut short and is refused rather than read as a shorter answer.
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
    dumps,
    event_data,
    index,
    json_answer,
    model_of,
    none_if_empty,
    obj,
    parse_events,
    split_text,
    stream_answer,
    text,
    text_or_none,
)

#: Wire finish reasons and their normalised names.
FINISH_REASONS = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "content_filter",
    "eos": "stop",
    "eos_token": "stop",
    "stop_sequence": "stop",
}


def finish_reason(raw: Any, where: str) -> str:
    """The normalised finish reason of a wire value; unknown values are refused with the list."""
    if isinstance(raw, str) and raw in FINISH_REASONS:
        return FINISH_REASONS[raw]
    known = ", ".join(sorted(FINISH_REASONS))
    raise WireDecodeError(f"{where} {raw!r:.40} is not a known finish reason ({known})")


def _usage(data: JsonObject) -> Usage:
    raw = data.get("usage")
    usage = raw if isinstance(raw, dict) else {}
    return Usage(count(usage.get("prompt_tokens")), count(usage.get("completion_tokens")))


def _model(data: JsonObject) -> str | None:
    model = data.get("model")
    return model if isinstance(model, str) and model else None


def _content(value: Any, where: str) -> str | None:
    """Message content: a string, null, or a list of text parts (some compatible servers)."""
    if isinstance(value, list):
        parts = [obj(part, f"{where}[{i}]") for i, part in enumerate(value)]
        return "".join(text(p.get("text"), f"{where}[{i}].text") for i, p in enumerate(parts)
                       if p.get("type") == "text")
    return text_or_none(value, where)


def decode_json(data: Any) -> ChatResponse:
    """A ``chat.completion`` object."""
    reason = api_error(data)
    if reason:
        raise WireDecodeError(reason)
    body = obj(data, "the answer")
    choices = array(body.get("choices"), "choices")
    if not choices:
        raise WireDecodeError("choices is empty")
    choice = obj(choices[0], "choices[0]")
    message = obj(choice.get("message"), "choices[0].message")
    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls")
    if raw_calls is None and isinstance(message.get("function_call"), dict):
        raw_calls = [{"type": "function", "function": message["function_call"]}]
    for i, item in enumerate(array(raw_calls or [], "choices[0].message.tool_calls")):
        where = f"choices[0].message.tool_calls[{i}]"
        function = obj(obj(item, where).get("function"), f"{where}.function")
        name = text(function.get("name"), f"{where}.function.name")
        arguments = text_or_none(function.get("arguments"), f"{where}.function.arguments")
        calls.append(ToolCall(name, arguments_from_text(arguments or "{}")))
    return ChatResponse(
        content=none_if_empty(_content(message.get("content"), "choices[0].message.content")),
        tool_calls=tuple(calls),
        finish_reason=finish_reason(choice.get("finish_reason"), "choices[0].finish_reason"),
        usage=_usage(body),
        model=_model(body),
    )


def decode_stream(body: bytes) -> ChatResponse:
    """A stream of ``chat.completion.chunk`` events ending with ``data: [DONE]``."""
    content: list[str] = []
    calls: dict[int, dict[str, str]] = {}
    reason: str | None = None
    usage = Usage()
    model: str | None = None
    done = False
    for number, event in enumerate(parse_events(body)):
        if done:
            break
        if event.data.strip() == "[DONE]":
            done = True
            continue
        where = f"chunk {number}"
        chunk = event_data(event, where)
        model = model or _model(chunk)
        if isinstance(chunk.get("usage"), dict):
            usage = _usage(chunk)
        for choice_number, raw in enumerate(array(chunk.get("choices") or [], f"{where} choices")):
            choice = obj(raw, f"{where} choices[{choice_number}]")
            if choice.get("index", 0) != 0:
                continue
            delta = obj(choice.get("delta") or {}, f"{where} delta")
            piece = _content(delta.get("content"), f"{where} delta.content")
            if piece:
                content.append(piece)
            _merge_tool_calls(calls, delta.get("tool_calls"), where)
            if choice.get("finish_reason") is not None:
                reason = finish_reason(choice.get("finish_reason"), f"{where} finish_reason")
    if not done:
        raise WireDecodeError("the stream ends before data: [DONE] (it was cut short)")
    if reason is None:
        raise WireDecodeError("the stream has no finish_reason")
    tool_calls = []
    for position in sorted(calls):
        call = calls[position]
        if not call["name"]:
            raise WireDecodeError(f"streamed tool call {position} has no function name")
        tool_calls.append(ToolCall(call["name"], arguments_from_text(call["arguments"] or "{}")))
    return ChatResponse(content=none_if_empty("".join(content)), tool_calls=tuple(tool_calls),
                        finish_reason=reason, usage=usage, model=model)


def _merge_tool_calls(calls: dict[int, dict[str, str]], raw: Any, where: str) -> None:
    """Merge tool-call fragments by index, concatenating strings as the SDK's accumulator does."""
    for n, item in enumerate(array(raw or [], f"{where} delta.tool_calls")):
        fragment = obj(item, f"{where} delta.tool_calls[{n}]")
        position = index(fragment.get("index"), f"{where} delta.tool_calls[{n}].index")
        call = calls.setdefault(position, {"name": "", "arguments": ""})
        function = obj(fragment.get("function") or {}, f"{where} delta.tool_calls[{n}].function")
        for field in ("name", "arguments"):
            piece = text_or_none(function.get(field), f"{where} delta.tool_calls[{n}].function.{field}")
            call[field] += piece or ""


# --- encoding -----------------------------------------------------------------------------

def encode(response: ChatResponse, request: JsonObject, ids: Ids, created: int,
           stream: bool) -> EncodedAnswer:
    """The chat-completions answer for ``response``: one JSON object, or its chunk stream."""
    model = model_of(response.model, request)
    answer_id = ids.next("chatcmpl-")
    call_ids = [ids.next("call_") for _ in response.tool_calls]
    usage = {"prompt_tokens": response.usage.input_tokens,
             "completion_tokens": response.usage.output_tokens,
             "total_tokens": response.usage.input_tokens + response.usage.output_tokens}
    if not stream:
        message: JsonObject = {"role": "assistant", "content": response.content, "refusal": None}
        if response.tool_calls:
            message["tool_calls"] = [
                {"id": call_id, "type": "function",
                 "function": {"name": call.name, "arguments": arguments_text(call.arguments)}}
                for call_id, call in zip(call_ids, response.tool_calls, strict=True)]
        return json_answer({
            "id": answer_id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": response.finish_reason}],
            "usage": usage})
    options = request.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    head: JsonObject = {"id": answer_id, "object": "chat.completion.chunk", "created": created,
                        "model": model}

    def chunk(delta: JsonObject, reason: str | None = None) -> JsonObject:
        data: JsonObject = {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                 "finish_reason": reason}]}
        if include_usage:
            data["usage"] = None
        return data

    chunks = [chunk({"role": "assistant", "content": "" if response.content else None,
                     "refusal": None})]
    chunks += [chunk({"content": piece}) for piece in split_text(response.content or "")]
    for position, (call_id, call) in enumerate(zip(call_ids, response.tool_calls, strict=True)):
        chunks.append(chunk({"tool_calls": [{"index": position, "id": call_id, "type": "function",
                                             "function": {"name": call.name, "arguments": ""}}]}))
        chunks += [chunk({"tool_calls": [{"index": position, "function": {"arguments": piece}}]})
                   for piece in split_text(arguments_text(call.arguments))]
    chunks.append(chunk({}, response.finish_reason))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": usage})
    lines = "".join(f"data: {dumps(data)}\n\n" for data in chunks) + "data: [DONE]\n\n"
    return stream_answer(lines.encode("utf-8"))
