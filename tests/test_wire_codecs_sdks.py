"""The real ``openai`` and ``anthropic`` SDKs parse what the wire codecs encode.

A ThreadingHTTPServer on 127.0.0.1 answers each SDK request with
``encode_answer`` of the next queued answer, for the request the SDK really sent
(so ``stream``, ``stream_options`` and the embeddings ``encoding_format`` the SDK
chose are the ones honoured). Each test then checks what the SDK objects carry
and that ``decode_answer`` reads the same bytes to the same answer.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anthropic
import openai
import pytest

from harness.core.entities import ChatResponse, ToolCall, Usage
from harness.wire.codecs import (
    ANTHROPIC_COUNT_TOKENS,
    ANTHROPIC_MESSAGES,
    OPENAI_CHAT,
    OPENAI_EMBEDDINGS,
    OPENAI_INPUT_TOKENS,
    OPENAI_MODERATIONS,
    OPENAI_RESPONSES,
    EncodedAnswer,
    decode_answer,
    encode_answer,
)
from harness.wire.codecs_embeddings import derived_vector

ROUTES = {"/v1/chat/completions": OPENAI_CHAT, "/v1/responses": OPENAI_RESPONSES,
          "/v1/messages": ANTHROPIC_MESSAGES, "/v1/embeddings": OPENAI_EMBEDDINGS,
          "/v1/messages/count_tokens": ANTHROPIC_COUNT_TOKENS,
          "/v1/responses/input_tokens": OPENAI_INPUT_TOKENS, "/v1/moderations": OPENAI_MODERATIONS}
TOOLS_CHAT = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
              for n in ("lookup_invoice", "lookup_customer")]
TOOLS_RESPONSES = [{"type": "function", "name": n, "parameters": {"type": "object"}}
                   for n in ("lookup_invoice", "lookup_customer")]
TOOLS_ANTHROPIC = [{"name": n, "input_schema": {"type": "object"}}
                   for n in ("lookup_invoice", "lookup_customer")]
MESSAGES = [{"role": "user", "content": "Where is invoice INV-7?"}]

TEXT = ChatResponse("Invoice INV-7 is overdue — 12 days ✓.", (), "stop", Usage(31, 9), "model-a")
PARALLEL = ChatResponse("Checking both.", (ToolCall("lookup_invoice", {"id": "INV-7"}),
                                           ToolCall("lookup_customer", {"id": 42, "tags": ["vip", "ü"]})),
                        "tool_calls", Usage(40, 22), "model-a")
TOOLS_ONLY = ChatResponse(None, PARALLEL.tool_calls, "tool_calls", Usage(40, 20), "model-a")


@dataclass
class Exchange:
    """One request the SDK sent and the answer it got."""

    api: str
    request: dict[str, Any]
    answer: EncodedAnswer


@dataclass
class WireServer:
    """Loopback server answering SDK requests with encoded, queued answers."""

    url: str = ""
    queued: list[tuple[ChatResponse, list[list[float]] | None]] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)

    def queue(self, response: ChatResponse, embedding: list[list[float]] | None = None) -> None:
        self.queued.append((response, embedding))

    def decoded(self, number: int = -1) -> ChatResponse:
        """The recorded answer ``number`` as decode_answer reads it."""
        exchange = self.exchanges[number]
        return decode_answer(exchange.api, exchange.answer.body,
                             content_type=exchange.answer.headers["content-type"])


def _handler(server: WireServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            request = json.loads(self.rfile.read(int(self.headers["content-length"])))
            api = ROUTES[self.path]
            response, embedding = server.queued.pop(0)
            answer = encode_answer(api, response, request=request, seed=f"test-{len(server.exchanges)}",
                                   created=1_700_000_000, embedding=embedding)
            server.exchanges.append(Exchange(api, request, answer))
            self.send_response(answer.status)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            """Quiet: the tests assert on exchanges, not on logs."""

    return Handler


@pytest.fixture
def wire() -> Iterator[WireServer]:
    """A WireServer on 127.0.0.1, port chosen by the OS."""
    state = WireServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    httpd.shutdown()
    httpd.server_close()
    assert not state.queued, "every queued answer must have been asked for"


def _openai(wire: WireServer) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{wire.url}/v1", api_key="x", max_retries=0)


def _anthropic(wire: WireServer) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=wire.url, api_key="x", max_retries=0)


def _arguments(calls: Any) -> list[tuple[str, Any]]:
    return [(c.function.name, json.loads(c.function.arguments)) for c in calls]


# --- openai chat completions --------------------------------------------------------------

def test_chat_completion_text(wire: WireServer) -> None:
    wire.queue(TEXT)
    completion = _openai(wire).chat.completions.create(model="requested", messages=MESSAGES)
    choice = completion.choices[0]
    assert (choice.message.content, choice.finish_reason) == (TEXT.content, "stop")
    assert completion.model == "model-a"
    assert completion.usage is not None
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (31, 9)
    assert wire.decoded() == TEXT


def test_chat_completion_parallel_tool_calls(wire: WireServer) -> None:
    wire.queue(PARALLEL)
    completion = _openai(wire).chat.completions.create(model="requested", messages=MESSAGES,
                                                       tools=TOOLS_CHAT, parallel_tool_calls=True)
    message = completion.choices[0].message
    assert message.content == "Checking both." and completion.choices[0].finish_reason == "tool_calls"
    assert _arguments(message.tool_calls) == [(c.name, c.arguments) for c in PARALLEL.tool_calls]
    assert len({c.id for c in message.tool_calls or []}) == 2
    assert wire.decoded() == PARALLEL


def test_chat_stream_with_include_usage(wire: WireServer) -> None:
    wire.queue(PARALLEL)
    chunks = list(_openai(wire).chat.completions.create(
        model="requested", messages=MESSAGES, tools=TOOLS_CHAT, stream=True,
        stream_options={"include_usage": True}))
    assert wire.exchanges[0].request["stream"] is True
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls: dict[int, list[str]] = {}
    for chunk in chunks:
        for delta in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            entry = calls.setdefault(delta.index, ["", ""])
            entry[0] += (delta.function.name or "") if delta.function else ""
            entry[1] += (delta.function.arguments or "") if delta.function else ""
    assert text == "Checking both."
    assert [(n, json.loads(a)) for n, a in calls.values()] == [
        (c.name, c.arguments) for c in PARALLEL.tool_calls]
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (40, 22)
    assert wire.decoded() == PARALLEL


def test_chat_stream_helper_accumulates_the_final_completion(wire: WireServer) -> None:
    wire.queue(TOOLS_ONLY)
    with _openai(wire).chat.completions.stream(model="requested", messages=MESSAGES,
                                               tools=TOOLS_CHAT) as stream:
        final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content is None and final.choices[0].finish_reason == "tool_calls"
    assert _arguments(message.tool_calls) == [(c.name, c.arguments) for c in TOOLS_ONLY.tool_calls]
    assert wire.decoded() == replace(TOOLS_ONLY, usage=Usage()), "no usage without include_usage"


def test_async_openai_stream(wire: WireServer) -> None:
    wire.queue(TEXT)

    async def run() -> str:
        client = openai.AsyncOpenAI(base_url=f"{wire.url}/v1", api_key="x", max_retries=0)
        stream = await client.chat.completions.create(model="requested", messages=MESSAGES,
                                                      stream=True)
        pieces = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
        await client.close()
        return "".join(pieces)

    assert asyncio.run(run()) == TEXT.content
    assert wire.decoded() == replace(TEXT, usage=Usage())


# --- openai responses ---------------------------------------------------------------------

def test_responses_text_and_function_calls(wire: WireServer) -> None:
    wire.queue(TEXT)
    wire.queue(PARALLEL)
    client = _openai(wire)
    response = client.responses.create(model="requested", input="Where is INV-7?")
    assert response.output_text == TEXT.content and response.status == "completed"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (31, 9)
    called = client.responses.create(model="requested", input="Where is INV-7?", tools=TOOLS_RESPONSES)
    calls = [(item.name, json.loads(item.arguments)) for item in called.output
             if item.type == "function_call"]
    assert calls == [(c.name, c.arguments) for c in PARALLEL.tool_calls]
    assert called.output_text == "Checking both."
    assert [wire.decoded(0), wire.decoded(1)] == [TEXT, PARALLEL]


def test_responses_stream_events_and_helper(wire: WireServer) -> None:
    wire.queue(PARALLEL)
    wire.queue(TEXT)
    client = _openai(wire)
    events = list(client.responses.create(model="requested", input="hi", tools=TOOLS_RESPONSES,
                                          stream=True))
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == "Checking both." and events[-1].type == "response.completed"
    final = events[-1].response
    assert [(i.name, json.loads(i.arguments)) for i in final.output if i.type == "function_call"] == [
        (c.name, c.arguments) for c in PARALLEL.tool_calls]
    with client.responses.stream(model="requested", input="hi") as stream:
        helper_final = stream.get_final_response()
    assert helper_final.output_text == TEXT.content
    assert [wire.decoded(0), wire.decoded(1)] == [PARALLEL, TEXT]


# --- openai embeddings --------------------------------------------------------------------

def test_embeddings_float_and_sdk_default_base64(wire: WireServer) -> None:
    wire.queue(ChatResponse(None, usage=Usage(4)))
    wire.queue(ChatResponse(None, usage=Usage(2)))
    client = _openai(wire)
    floats = client.embeddings.create(model="emb-1", input=["alpha", "beta"], encoding_format="float")
    default = client.embeddings.create(model="emb-1", input="alpha")
    assert wire.exchanges[1].request.get("encoding_format") == "base64", "the SDK asks for base64 itself"
    assert isinstance(json.loads(wire.exchanges[1].answer.body)["data"][0]["embedding"], str)
    expected = derived_vector("alpha", 8)
    assert floats.data[0].embedding == expected and default.data[0].embedding == expected
    assert floats.data[1].embedding != expected and len(floats.data) == 2
    assert math.isclose(sum(v * v for v in default.data[0].embedding), 1.0, rel_tol=1e-5)
    assert (floats.usage.prompt_tokens, floats.model) == (4, "emb-1")
    assert wire.decoded(1) == ChatResponse(None, usage=Usage(2), model="emb-1")


# --- the calls around the model calls: token counts and moderations -------------------------

def test_token_counts_and_moderations_are_parsed_by_both_sdks(wire: WireServer) -> None:
    for _ in range(4):
        wire.queue(ChatResponse(None))  # ignored: these answers come from the request alone
    counted = _anthropic(wire).messages.count_tokens(model="claude-x", system="Triage.",
                                                     messages=MESSAGES, tools=TOOLS_ANTHROPIC)
    asked = wire.exchanges[0].request
    assert counted.input_tokens == len(json.dumps(
        {k: asked[k] for k in ("system", "messages", "tools")}, separators=(",", ":"),
        ensure_ascii=False)) // 4 > 0
    client = _openai(wire)
    tokens = client.responses.input_tokens.count(model="gpt-x", input="Where is invoice INV-7?")
    assert tokens.input_tokens > 0 and tokens.object == "response.input_tokens"
    one = client.moderations.create(model="omni-moderation-latest", input="Where is invoice INV-7?")
    many = client.moderations.create(input=["first", "second", "third"])
    assert one.results[0].flagged is False and one.results[0].categories.harassment is False
    assert one.results[0].category_scores.violence == 0.0
    assert [r.flagged for r in many.results] == [False] * 3 and many.model == "omni-moderation-latest"
    assert wire.decoded(0) == ChatResponse(None, usage=Usage(counted.input_tokens), model=None)
    assert wire.decoded(1) == ChatResponse(None, usage=Usage(tokens.input_tokens))
    assert wire.decoded(2) == ChatResponse(None, finish_reason="stop", model="omni-moderation-latest")


# --- anthropic messages -------------------------------------------------------------------

def test_anthropic_message_with_tool_use(wire: WireServer) -> None:
    wire.queue(PARALLEL)
    message = _anthropic(wire).messages.create(model="requested", max_tokens=100, messages=MESSAGES,
                                               tools=TOOLS_ANTHROPIC)
    assert message.stop_reason == "tool_use" and message.model == "model-a"
    assert [b.text for b in message.content if b.type == "text"] == ["Checking both."]
    assert [(b.name, b.input) for b in message.content if b.type == "tool_use"] == [
        (c.name, c.arguments) for c in PARALLEL.tool_calls]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (40, 22)
    assert wire.decoded() == PARALLEL


def test_anthropic_raw_stream_events(wire: WireServer) -> None:
    wire.queue(TEXT)
    events = list(_anthropic(wire).messages.create(model="requested", max_tokens=100, messages=MESSAGES,
                                                   stream=True))
    text = "".join(e.delta.text for e in events
                   if e.type == "content_block_delta" and e.delta.type == "text_delta")
    assert text == TEXT.content
    delta = next(e for e in events if e.type == "message_delta")
    assert delta.delta.stop_reason == "end_turn" and delta.usage.output_tokens == 9
    assert events[0].type == "message_start" and events[0].message.usage.input_tokens == 31
    assert events[-1].type == "message_stop"
    assert wire.decoded() == TEXT


def test_anthropic_stream_helper_final_message(wire: WireServer) -> None:
    wire.queue(PARALLEL)
    with _anthropic(wire).messages.stream(model="requested", max_tokens=100, messages=MESSAGES,
                                          tools=TOOLS_ANTHROPIC) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed_text == "Checking both."
    assert final.stop_reason == "tool_use"
    assert [(b.name, b.input) for b in final.content if b.type == "tool_use"] == [
        (c.name, c.arguments) for c in PARALLEL.tool_calls]
    assert (final.usage.input_tokens, final.usage.output_tokens) == (40, 22)
    assert wire.decoded() == PARALLEL


def test_a_cut_answer_reads_as_cut_in_each_sdk(wire: WireServer) -> None:
    cut = ChatResponse("A long answer that was", (), "length", Usage(8, 50), "model-a")
    for _ in range(3):
        wire.queue(cut)
    chat = _openai(wire).chat.completions.create(model="requested", messages=MESSAGES)
    response = _openai(wire).responses.create(model="requested", input="hi", stream=False)
    message = _anthropic(wire).messages.create(model="requested", max_tokens=50, messages=MESSAGES)
    assert chat.choices[0].finish_reason == "length"
    assert response.status == "incomplete" and response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output_text == cut.content
    assert message.stop_reason == "max_tokens"
    assert [wire.decoded(n) for n in range(3)] == [cut, cut, cut]
