"""Wire codecs of the LLM APIs the harness records and replays at the HTTP layer.

Both sides of a wire exchange need them: replay reads a recorded answer's bytes
into the provider-neutral :class:`~harness.core.entities.ChatResponse` (for tool
assertions, transcripts and judges, while the agent's SDK parses the very same
bytes itself), and the scripted fake provider writes answers as a real server
of the API would, so a cache seeded for free is parsed by the real SDKs like a
paid one. One module per API does the work; this one is the public entry.

The APIs, by name: ``openai.chat`` (``POST .../chat/completions``),
``openai.responses`` (``POST .../responses``), ``anthropic.messages``
(``POST .../v1/messages``) and ``openai.embeddings`` (``POST .../embeddings``); and the
calls around them (:mod:`harness.wire.codecs_auxiliary`): ``anthropic.count_tokens``,
``openai.input_tokens`` and ``openai.moderations``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.core.entities import ChatResponse
from harness.wire import (
    codecs_anthropic,
    codecs_auxiliary,
    codecs_chat,
    codecs_embeddings,
    codecs_responses,
)
from harness.wire.codecs_common import (
    EncodedAnswer,
    Ids,
    WireDecodeError,
    is_event_stream,
    load_json,
)

OPENAI_CHAT = "openai.chat"
OPENAI_RESPONSES = "openai.responses"
ANTHROPIC_MESSAGES = "anthropic.messages"
OPENAI_EMBEDDINGS = "openai.embeddings"
ANTHROPIC_COUNT_TOKENS = "anthropic.count_tokens"
OPENAI_INPUT_TOKENS = "openai.input_tokens"
OPENAI_MODERATIONS = "openai.moderations"
#: Every API a codec exists for.
APIS: tuple[str, ...] = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES, OPENAI_EMBEDDINGS,
                         ANTHROPIC_COUNT_TOKENS, OPENAI_INPUT_TOKENS, OPENAI_MODERATIONS)
#: The APIs that never stream.
_NEVER_STREAMED = frozenset({OPENAI_EMBEDDINGS, ANTHROPIC_COUNT_TOKENS, OPENAI_INPUT_TOKENS,
                             OPENAI_MODERATIONS})

__all__ = [
    "ANTHROPIC_COUNT_TOKENS", "ANTHROPIC_MESSAGES", "APIS", "OPENAI_CHAT", "OPENAI_EMBEDDINGS",
    "OPENAI_INPUT_TOKENS", "OPENAI_MODERATIONS", "OPENAI_RESPONSES",
    "EncodedAnswer", "WireDecodeError", "canonical_stream_flag", "decode_answer", "encode_answer",
    "is_event_stream",
]

_JSON_DECODERS: dict[str, Callable[[Any], ChatResponse]] = {
    OPENAI_CHAT: codecs_chat.decode_json,
    OPENAI_RESPONSES: codecs_responses.decode_json,
    ANTHROPIC_MESSAGES: codecs_anthropic.decode_json,
    OPENAI_EMBEDDINGS: codecs_embeddings.decode_json,
    ANTHROPIC_COUNT_TOKENS: codecs_auxiliary.decode_count,
    OPENAI_INPUT_TOKENS: codecs_auxiliary.decode_count,
    OPENAI_MODERATIONS: codecs_auxiliary.decode_moderation,
}
_STREAM_DECODERS: dict[str, Callable[[bytes], ChatResponse]] = {
    OPENAI_CHAT: codecs_chat.decode_stream,
    OPENAI_RESPONSES: codecs_responses.decode_stream,
    ANTHROPIC_MESSAGES: codecs_anthropic.decode_stream,
}


def _known(api: Any) -> str:
    if api not in APIS:
        raise WireDecodeError(f"unknown wire api {api!r:.60} (known: {', '.join(APIS)})")
    return str(api)


def decode_answer(api: str, body: bytes, *, content_type: str = "") -> ChatResponse:
    """The provider-neutral view of one recorded answer of ``api`` (a JSON body or an SSE stream).

    ``content`` is the assistant text (None when there is none), ``tool_calls`` the
    calls in order with their arguments as objects (arguments that are not a JSON
    object become ``{"_raw": text}``), ``finish_reason`` one of ``stop``,
    ``tool_calls``, ``length``, ``content_filter``; usage and model as reported.
    Embeddings have no text and no tool calls. Anything unreadable (bad JSON, a
    missing part, a stream cut short, an error answer or ``error`` event, an
    unknown api) raises :class:`WireDecodeError` and nothing else.
    """
    api = _known(api)
    if not isinstance(body, bytes):
        raise WireDecodeError(f"the body is {type(body).__name__}, not bytes")
    if is_event_stream(body, content_type):
        if api not in _STREAM_DECODERS:
            raise WireDecodeError(f"{api} answers are never event streams")
        return _STREAM_DECODERS[api](body)
    return _JSON_DECODERS[api](load_json(body, "the answer"))


def encode_answer(api: str, response: ChatResponse, *, request: dict[str, Any], seed: str,
                  created: int = 0, embedding: list[list[float]] | None = None) -> EncodedAnswer:
    """The bytes a real server of ``api`` sends for ``response`` to ``request``.

    Streams when the request asks for it (chat ``stream_options.include_usage``
    honoured), with text and tool arguments cut into a few deltas. Every id is
    derived from ``seed`` and every timestamp is ``created``, so encoding the same
    answer twice gives the same bytes. Embeddings answer one vector per input:
    ``embedding`` when given, else one derived from the input text, in the
    ``encoding_format`` asked for. Token counts and moderations ignore ``response``
    (:mod:`harness.wire.codecs_auxiliary`).
    """
    api = _known(api)
    if api == OPENAI_EMBEDDINGS:
        return codecs_embeddings.encode(response, request, embedding)
    if api in (ANTHROPIC_COUNT_TOKENS, OPENAI_INPUT_TOKENS):
        return codecs_auxiliary.encode_count(request, anthropic=api == ANTHROPIC_COUNT_TOKENS)
    if api == OPENAI_MODERATIONS:
        return codecs_auxiliary.encode_moderation(request, seed)
    stream = canonical_stream_flag(api, request)
    ids = Ids(seed)
    if api == OPENAI_CHAT:
        return codecs_chat.encode(response, request, ids, created, stream)
    if api == OPENAI_RESPONSES:
        return codecs_responses.encode(response, request, ids, created, stream)
    return codecs_anthropic.encode(response, request, ids, created, stream)


def canonical_stream_flag(api: str, request: dict[str, Any]) -> bool:
    """Whether ``request`` asks ``api`` for an event stream (``"stream": true``; embeddings, token
    counts and moderations never)."""
    api = _known(api)
    return api not in _NEVER_STREAMED and request.get("stream") is True
