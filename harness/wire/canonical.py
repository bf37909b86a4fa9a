"""The canonical form of a wire request: what its key is computed over.

An SDK's request body is JSON the harness did not write, so the key cannot be
a hash of its bytes: field order, whitespace, ids and bookkeeping fields differ
between two runs that mean the same request. The canonical form keeps what
changes the answer and nothing else:

- **kept**: the API, the model, messages / input, tools, every option in the
  body (temperature, max tokens, response format, ``stream``,
  ``stream_options``...), and the headers that change the answer
  (``anthropic-version``, ``anthropic-beta``, ``openai-beta``);
- **dropped**: the host and base URL, auth, every other header (user agent,
  ``x-stainless-*``, idempotency keys, retry counters, timeouts), and body
  fields that only label a request (``user``, ``metadata``,
  ``safety_identifier``, ``prompt_cache_key``);
- **renamed**: volatile ids. Tool-call ids (``call_...``, ``toolu_...``,
  ``fc_...``) and output item ids inside the conversation become
  ``id_0``, ``id_1``... in order of first appearance, so a tool loop keys the
  same however the server numbered its calls;
- **resolved**: ``previous_response_id`` names server-side state. It is
  replaced by the position of the earlier exchange of the same iteration that
  returned that id (``exchange:1``); an id this iteration never received is
  state the cache cannot replay, and the request is refused with that reason;
- **refused**: a Responses request with ``background: true`` (its answer stays on the
  server, polled with GET requests), before anything is sent.

The shape (``messages``, ``tools``, ``options``) is the one declared agents
key with, so a miss explains itself with the same diff (system prompt lines,
tools, options, messages).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core.entities import JsonObject
from harness.documents.jsonscan import scan
from harness.wire.exchange import KEYED_HEADERS, RESPONSES, WireRequest

#: Body fields that label a request without changing its answer.
UNKEYED_FIELDS = frozenset({"user", "metadata", "safety_identifier", "prompt_cache_key"})
#: Fields whose string value is a volatile id, wherever they appear in the conversation.
_ID_FIELDS = frozenset({"id", "call_id", "tool_call_id", "tool_use_id"})
#: Conversation fields, per API: the list of turns the ids live in.
_CONVERSATION = ("messages", "input")
_KEYED = frozenset(KEYED_HEADERS)


class WireRefused(Exception):
    """A request the cache cannot key (not JSON, or state it cannot replay); the reason says why."""


def canonical_request(api: str, request: WireRequest,
                      earlier_ids: Mapping[str, int]) -> tuple[str, JsonObject]:
    """The model and canonical request of an SDK request (see the module docstring).

    ``earlier_ids`` maps response ids returned earlier in this iteration to their
    exchange position (for ``previous_response_id``).
    """
    try:
        body = scan(request.body.decode("utf-8")) if request.body else None  # json.loads, faster
    except (UnicodeDecodeError, ValueError) as exc:
        raise WireRefused(f"the {api} request body is not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise WireRefused(f"the {api} request body is not a JSON object")
    if body.get("background") is True and api == RESPONSES:
        raise WireRefused(
            "a Responses request with background: true leaves its answer on the provider's server, "
            "polled with GET requests the cache cannot replay; it was not sent. Call without "
            "background (stream: true gives the same progress events)")
    model = body.get("model")
    if not isinstance(model, str):
        model = ""
    renames: dict[str, str] = {}
    options: JsonObject = {}
    conversation: Any = []
    for name, value in body.items():
        if name in UNKEYED_FIELDS or name in ("model", "tools"):
            continue
        if name in _CONVERSATION and isinstance(value, list):
            conversation = _rename_ids(value, renames)
        elif name == "previous_response_id" and value is not None:
            options[name] = _earlier(value, earlier_ids)
        else:
            options[name] = value
    canonical: JsonObject = {"api": api, "messages": conversation, "tools": body.get("tools") or [],
                             "options": options}
    headers: dict[str, str] = {}
    for name, value in reversed(request.headers):  # one pass, the first value of a name wins; keys
        # are written sorted, so the order here never shows
        if name in _KEYED:
            headers[name] = value
    if headers:
        canonical["headers"] = headers
    return model, canonical


def _earlier(value: Any, earlier_ids: Mapping[str, int]) -> str:
    if isinstance(value, str) and value in earlier_ids:
        return f"exchange:{earlier_ids[value]}"
    raise WireRefused(
        f"previous_response_id {str(value)[:40]!r} names a response this scenario iteration did not "
        "receive: the server-side state it points at cannot be replayed from the cache. Start the "
        "conversation inside the iteration (or send the full input instead of previous_response_id)")


def _rename_ids(value: Any, renames: dict[str, str]) -> Any:
    """The conversation with every volatile id replaced by its order of appearance.

    Renamed in place (the body was parsed for this call alone, nothing else holds
    it), walking containers only: this runs for every request of a replay.
    """
    if type(value) is list:
        for item in value:
            if type(item) is dict or type(item) is list:
                _rename_ids(item, renames)
    elif type(value) is dict:
        for name, item in value.items():
            kind = type(item)
            if kind is str:
                if name in _ID_FIELDS:
                    value[name] = renames.setdefault(item, f"id_{len(renames)}")
            elif kind is dict or kind is list:
                _rename_ids(item, renames)
    return value


def declared_tools(canonical: JsonObject) -> list[JsonObject]:
    """The function tools a canonical request declares, in agent.yaml's shape
    (``name``, ``description``, ``parameters``), whichever API declared them."""
    found: list[JsonObject] = []
    for tool in canonical.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function")
        spec: JsonObject = function if isinstance(function, dict) else tool
        name = spec.get("name")
        if not isinstance(name, str):
            continue
        parameters = spec.get("parameters", spec.get("input_schema"))
        found.append({"name": name, "description": spec.get("description", ""),
                      "parameters": parameters if isinstance(parameters, dict) else {}})
    return found
