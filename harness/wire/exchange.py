"""One wire exchange: the HTTP request an SDK sent and the bytes that answered it.

These are the plain records between the interceptor (:mod:`harness.wire.intercept`,
which speaks httpx) and the cache (:mod:`harness.wire.binding`, which speaks
keys and entries), so neither needs the other's types. An answered exchange as assertions
and reports read it (:class:`Exchange`), and the refusal answer every SDK raises on at once
(:func:`error_answer`), are plain records of the same kind. Which requests are LLM
API calls is decided here, by method and path alone: the host never matters (a
cache recorded against one base URL replays under any other).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

from harness.core.entities import ChatResponse, JsonObject

#: The wire APIs the harness keys and replays, by the path they are posted to.
CHAT: Final = "openai.chat"
RESPONSES: Final = "openai.responses"
MESSAGES: Final = "anthropic.messages"
EMBEDDINGS: Final = "openai.embeddings"
COUNT_TOKENS: Final = "anthropic.count_tokens"
INPUT_TOKENS: Final = "openai.input_tokens"
MODERATIONS: Final = "openai.moderations"
APIS: Final = (CHAT, RESPONSES, MESSAGES, EMBEDDINGS, COUNT_TOKENS, INPUT_TOKENS, MODERATIONS)
#: The calls an agent makes around its model calls (counting tokens before a call, screening
#: a message): cached and replayed like the model calls, but no model turn. They have no batch
#: form (a ``--batch`` run sends them at once) and the scripted provider answers them without
#: the script (a token estimate, "not flagged"), so a script lists the model's answers only.
AUXILIARY: Final = frozenset({COUNT_TOKENS, INPUT_TOKENS, MODERATIONS})

#: Path suffixes, most specific first (a base URL may carry any prefix: ``/v1``,
#: ``/openai/deployments/x``, a proxy's own path).
_SUFFIXES: Final = (("/chat/completions", CHAT), ("/responses/input_tokens", INPUT_TOKENS),
                    ("/responses", RESPONSES), ("/messages/count_tokens", COUNT_TOKENS),
                    ("/messages", MESSAGES), ("/embeddings", EMBEDDINGS),
                    ("/moderations", MODERATIONS))

#: Request headers that change the answer and therefore enter the key; every other header
#: (auth, user agent, ``x-stainless-*``, idempotency keys, retry counters) never does.
KEYED_HEADERS: Final = ("anthropic-version", "anthropic-beta", "openai-beta")

#: Answer headers stored with the body: what an SDK reads to parse it.
STORED_HEADERS: Final = ("content-type",)


def api_of(method: str, path: str, *, anthropic_version: bool = True) -> str | None:
    """The wire API a request belongs to, or ``None`` when it is no LLM API call.

    ``anthropic_version``: whether the request carries the ``anthropic-version`` header, which
    the Anthropic API requires of every request (its SDK and every client of it send one). A
    ``POST .../messages`` without it is the agent's own service (a chat connector, a ticket
    system), not a model call: it must not be keyed, nor its answer read as a Message.
    """
    if method.upper() != "POST":
        return None
    trimmed = path.split("?", 1)[0].rstrip("/")
    for suffix, api in _SUFFIXES:
        if trimmed.endswith(suffix):
            if not anthropic_version and api in (MESSAGES, COUNT_TOKENS):
                return None
            return api
    return None


def base_url_of(api: str, request: WireRequest) -> str:
    """The base URL the SDK was built with: the request's URL without the API's path (and, for
    the Anthropic APIs, its ``/v1``), as ``[tool.harness]`` names a provider endpoint."""
    url = request.url.split("?", 1)[0].rstrip("/")
    for suffix, named in _SUFFIXES:
        if named == api and url.endswith(suffix):
            url = url[: -len(suffix)]
            break
    if family_of(api) == "anthropic" and url.endswith("/v1"):
        url = url[:-3]
    return url


def family_of(api: str) -> str:
    """The provider family an API belongs to: its name in keys, credentials and messages."""
    return "anthropic" if api in (MESSAGES, COUNT_TOKENS) else "openai"


@dataclass(frozen=True, slots=True)
class WireRequest:
    """A request as the SDK built it (headers lower-cased, body as sent)."""

    method: str
    url: str
    path: str
    host: str
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def header(self, name: str) -> str | None:
        """The first value of a header, by lower-case name."""
        for key, value in self.headers:
            if key == name:
                return value
        return None


@dataclass(frozen=True, slots=True)
class WireAnswer:
    """What answered a request: status, the stored headers, and the body bytes exactly."""

    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    @property
    def content_type(self) -> str:
        for key, value in self.headers:
            if key == "content-type":
                return value
        return ""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def stored_headers(headers: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The answer headers worth storing (volatile request ids and dates are not)."""
    return tuple((k, v) for k, v in headers if k in STORED_HEADERS)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One answered LLM API exchange of an iteration, for assertions and reports."""

    api: str
    key: str
    response: ChatResponse
    """The provider-neutral view of the answer (text, tool calls, usage)."""
    tools: tuple[JsonObject, ...] = ()
    """The function tools the request declared (agent.yaml's shape)."""
    request: JsonObject | None = None
    """The canonical request (the transcript in reports)."""


def error_answer(api: str, message: str) -> WireAnswer:
    """An answer every SDK raises on at once: 400, ``x-should-retry: false``, the API's error shape."""
    if family_of(api) == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": f"harness: {message}"}}
    else:
        body = {"error": {"message": f"harness: {message}", "type": "harness_refused",
                          "code": "harness_refused", "param": None}}
    return WireAnswer(400, (("content-type", "application/json"), ("x-should-retry", "false")),
                      json.dumps(body).encode("utf-8"))


def response_id(answer: WireAnswer) -> str | None:
    """The id a Responses API answer gave its response (JSON body, or the stream's first event)."""
    text = answer.body.decode("utf-8", "replace")
    candidates = [text] if not text.lstrip().startswith(("event:", "data:")) else [
        line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            found = data.get("response", data) if "response" in data else data
            if isinstance(found, dict) and isinstance(found.get("id"), str):
                return str(found["id"])
    return None
