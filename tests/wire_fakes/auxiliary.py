"""The calls around the model calls: token counts and moderations, as the real servers answer them.

- ``POST /v1/messages/count_tokens`` (Anthropic): ``model`` and ``messages`` required, options a
  model call takes but a count does not (``max_tokens``, ``stream``, ``temperature``) refused
  with 400 as the real API refuses them; answers ``{"input_tokens": N}``.
- ``POST /v1/responses/input_tokens`` (OpenAI): ``input`` or ``previous_response_id`` required;
  answers ``{"object": "response.input_tokens", "input_tokens": N}``.
- ``POST /v1/moderations`` (OpenAI): ``input`` a string or a list of strings; a random ``modr-``
  id per answer (a quirk every replay must not key on), an input flagged ``harassment`` and
  ``violence`` when one of its words starts with a stem of :data:`HOSTILE`.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from .brain import tokens
from .wire import JsonObject, Reply, anthropic_error, openai_error

#: Word stems that make the fake's moderation flag an input (a stand-in for a real classifier).
HOSTILE = frozenset({"idiot", "kill", "destroy"})
CATEGORIES = ("harassment", "harassment/threatening", "hate", "hate/threatening", "illicit",
              "illicit/violent", "self-harm", "self-harm/intent", "self-harm/instructions", "sexual",
              "sexual/minors", "violence", "violence/graphic")
_NOT_COUNTED = ("max_tokens", "stream", "temperature", "top_p", "top_k", "stop_sequences", "metadata")


def _counted(body: JsonObject, names: tuple[str, ...]) -> int:
    return tokens(" ".join(json.dumps(body.get(name), ensure_ascii=False) for name in names if name in body))


def count_tokens(body: JsonObject) -> Reply:
    """Anthropic's token count of a would-be Messages request."""
    if not isinstance(body.get("model"), str):
        raise anthropic_error(400, "model: Field required")
    if not isinstance(body.get("messages"), list):
        raise anthropic_error(400, "messages: Field required")
    for name in _NOT_COUNTED:
        if name in body:
            raise anthropic_error(400, f"{name}: Extra inputs are not permitted")
    return Reply(body={"input_tokens": _counted(body, ("system", "messages", "tools"))})


def input_tokens(body: JsonObject) -> Reply:
    """OpenAI's token count of a would-be Responses request."""
    if "input" not in body and "previous_response_id" not in body:
        raise openai_error(400, "Missing required parameter: 'input'.", param="input")
    return Reply(body={"object": "response.input_tokens",
                       "input_tokens": _counted(body, ("instructions", "input", "tools"))})


def moderation(body: JsonObject) -> Reply:
    """OpenAI's moderation of one input or a list of them."""
    given = body.get("input")
    texts = [given] if isinstance(given, str) else given
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise openai_error(400, "'input' must be a string or a non-empty array of strings.", param="input")
    results: list[Any] = []
    for text in texts:
        hostile = any(word.startswith(stem) for word in re.findall(r"[a-z]+", text.lower())
                      for stem in HOSTILE)
        flags = {name: hostile and name in ("harassment", "violence") for name in CATEGORIES}
        results.append({"flagged": hostile, "categories": flags,
                        "category_scores": {name: 0.91 if on else 0.0004 for name, on in flags.items()},
                        "category_applied_input_types": {name: ["text"] for name in CATEGORIES}})
    return Reply(body={"id": "modr-" + secrets.token_hex(12),
                       "model": body.get("model") or "omni-moderation-latest", "results": results})
