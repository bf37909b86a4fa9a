"""The calls an agent makes around its model calls: token counts and moderations, at the wire.

- ``anthropic.count_tokens``: ``POST .../v1/messages/count_tokens`` answers
  ``{"input_tokens": N}`` (an agent trims its context before it calls the model);
- ``openai.input_tokens``: ``POST .../responses/input_tokens`` answers
  ``{"object": "response.input_tokens", "input_tokens": N}``;
- ``openai.moderations``: ``POST .../moderations`` answers one result per input,
  ``flagged`` and a score per category (an agent screens a message before it answers).

None of them is a model turn: decoding checks the shape and keeps the input
tokens and the model, with no text and no tool calls, so tool assertions and
transcripts never see them. The scripted encoder answers without the agent's
script: a token count estimated as a quarter of the request's characters, and
every input "not flagged", so a cache seeded for free holds the answers a real
server gives a harmless request.
"""

from __future__ import annotations

from typing import Any

from harness.core.entities import ChatResponse, JsonObject, Usage
from harness.wire.codecs_common import (
    EncodedAnswer,
    WireDecodeError,
    api_error,
    array,
    dumps,
    json_answer,
    obj,
)

#: The categories of OpenAI's ``omni-moderation`` models, as its answers name them.
MODERATION_CATEGORIES = (
    "harassment", "harassment/threatening", "hate", "hate/threatening", "illicit", "illicit/violent",
    "self-harm", "self-harm/intent", "self-harm/instructions", "sexual", "sexual/minors",
    "violence", "violence/graphic")
#: What a token-count request is counted over (the rest of its body is options).
_COUNTED = ("system", "instructions", "messages", "input", "tools")


def _model(data: JsonObject) -> str | None:
    model = data.get("model")
    return model if isinstance(model, str) and model else None


def decode_count(data: Any) -> ChatResponse:
    """A token count (``count_tokens`` or ``input_tokens``): no text, the count as input tokens."""
    reason = api_error(data)
    if reason:
        raise WireDecodeError(reason)
    body = obj(data, "the answer")
    tokens = body.get("input_tokens")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise WireDecodeError(f"input_tokens is not a count (got {tokens!r:.40})")
    return ChatResponse(content=None, usage=Usage(tokens, 0), model=_model(body))


def decode_moderation(data: Any) -> ChatResponse:
    """A moderation: every result has ``flagged`` (a boolean); no text, no tokens. The finish
    reason is ``content_filter`` when an input was flagged (what reports show), else ``stop``."""
    reason = api_error(data)
    if reason:
        raise WireDecodeError(reason)
    body = obj(data, "the answer")
    flagged = False
    for i, raw in enumerate(array(body.get("results"), "results")):
        value = obj(raw, f"results[{i}]").get("flagged")
        if not isinstance(value, bool):
            raise WireDecodeError(f"results[{i}].flagged is not true or false")
        flagged = flagged or value
    return ChatResponse(content=None, finish_reason="content_filter" if flagged else "stop",
                        model=_model(body))


def estimated_tokens(request: JsonObject) -> int:
    """The scripted token count of a request: a quarter of the characters it is counted over."""
    counted = {name: request[name] for name in _COUNTED if name in request}
    return max(1, len(dumps(counted)) // 4)


def encode_count(request: JsonObject, *, anthropic: bool) -> EncodedAnswer:
    """The scripted answer of a token count, in the shape of the API asked."""
    tokens = estimated_tokens(request)
    if anthropic:
        return json_answer({"input_tokens": tokens})
    return json_answer({"object": "response.input_tokens", "input_tokens": tokens})


def encode_moderation(request: JsonObject, seed: str) -> EncodedAnswer:
    """The scripted answer of a moderation: one "not flagged" result per input."""
    raw = request.get("input")
    inputs = len(raw) if isinstance(raw, list) and raw else 1
    result = {"flagged": False,
              "categories": dict.fromkeys(MODERATION_CATEGORIES, False),
              "category_scores": dict.fromkeys(MODERATION_CATEGORIES, 0.0),
              "category_applied_input_types": {name: ["text"] for name in MODERATION_CATEGORIES}}
    model = request.get("model")
    return json_answer({"id": f"modr-{seed[:24]}",
                        "model": model if isinstance(model, str) and model else "omni-moderation-latest",
                        "results": [result] * inputs})
