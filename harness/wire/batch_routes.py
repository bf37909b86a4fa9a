"""Which SDK requests can go through a provider batch API, and which may share one batch.

:mod:`harness.wire.batch` sends the batches; this module holds what is decided
before anything is sent, from each request's own method, URL, headers and body:
an item to batch (:class:`WireBatchItem`), why a request has no batch form
(:func:`refusal`: a streamed request, Azure OpenAI, an API without a batch
endpoint...), the route items must share to go in one batch (:func:`batch_route`),
and what the journal keeps of a route to poll its batch after a restart
(:func:`route_record`). None of it holds a secret: a route carries a fingerprint
of the credential headers, a route record leaves them out.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Final

from harness.wire.exchange import (
    CHAT,
    EMBEDDINGS,
    KEYED_HEADERS,
    MESSAGES,
    RESPONSES,
    WireRequest,
    family_of,
)

#: The path an API's request URL ends in; what precedes it is the base URL.
SUFFIXES: Final = {CHAT: "/chat/completions", RESPONSES: "/responses", EMBEDDINGS: "/embeddings",
                   MESSAGES: "/messages"}
#: The custom ids both providers accept.
CUSTOM_ID: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: Request headers that describe one HTTP message, not the caller: never sent with batch calls.
_PER_MESSAGE: Final = frozenset({
    "host", "content-length", "content-type", "content-encoding", "transfer-encoding", "connection",
    "keep-alive", "proxy-connection", "te", "trailer", "upgrade", "expect", "accept",
    "accept-encoding", "user-agent", "idempotency-key"})
#: Header names whose values are credentials (redacted from every message).
CREDENTIAL_NAME: Final = re.compile(r"auth|key|token|secret|cookie", re.IGNORECASE)


@dataclass(frozen=True)
class WireBatchItem:
    """One SDK request to batch: its custom id (unique in its batch), wire API and request.

    ``request`` carries the real key; it is left out of the ``repr`` so an item in a
    message or a log line never shows it.
    """

    custom_id: str
    api: str
    request: WireRequest = field(repr=False)

    def __post_init__(self) -> None:
        if not CUSTOM_ID.fullmatch(self.custom_id):
            raise ValueError(f"batch custom_id {self.custom_id[:80]!r} must match "
                             f"{CUSTOM_ID.pattern} (both providers refuse anything else)")


def batch_route(item: WireBatchItem) -> tuple[str, ...]:
    """What items must share to go in one batch.

    ``(family, base URL, api, *keyed headers as "name=value", "credentials:<fingerprint>")``:
    one provider endpoint (OpenAI takes one endpoint per batch), the headers that change
    the answers (Anthropic applies a batch's ``anthropic-beta`` to all its requests), and
    a sha256 fingerprint of the other forwarded headers (the key among them), so two keys
    never share a batch. The route holds no secret and may be journaled.
    """
    request = item.request
    keyed = tuple(f"{name}={value}" for name in KEYED_HEADERS
                  if (value := request.header(name)) is not None)
    others = sorted((name, value) for name, value in forwarded(request) if name not in KEYED_HEADERS)
    fingerprint = hashlib.sha256(json.dumps(others).encode("utf-8")).hexdigest()[:16]
    return (family_of(item.api), base_url(item.api, request), item.api, *keyed,
            f"credentials:{fingerprint}")


def refusal(api: str, request: WireRequest) -> str | None:
    """Why a request cannot go through a batch API, or None when it can.

    Refused: an API with no batch endpoint, anything but a POST to the API's path, Azure
    OpenAI (its batch API has other paths and deployments), a body that is not a JSON
    object, and a streamed request (``"stream": true``: a batch answers JSON objects).
    The text is shown as the iteration's error.
    """
    if api not in SUFFIXES:
        return (f"the {api} API has no provider batch API (batches take "
                f"{', '.join(sorted(SUFFIXES))}); record this agent without --batch")
    if request.method.upper() != "POST":
        return f"a {request.method} request has no batch form (batches take POST requests)"
    path = urllib.parse.urlsplit(request.url).path.rstrip("/")
    if not path.endswith(SUFFIXES[api]):
        return (f"the {api} request URL {_clip(request.url)} does not end in {SUFFIXES[api]}, so "
                "its base URL (where the batch API lives) is unknown")
    host = (urllib.parse.urlsplit(request.url).hostname or "").lower()
    if ("api-version=" in request.url or host.endswith(".azure.com")
            or request.header("api-key") is not None):
        return ("Azure OpenAI's batch API (other paths, deployments, api-version) is not supported: "
                "record this agent without --batch")
    try:
        body = json.loads(request.body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return f"the {api} request body is not JSON ({exc}); a batch carries JSON bodies only"
    if not isinstance(body, dict):
        return f"the {api} request body is not a JSON object; a batch carries JSON objects only"
    if body.get("stream") is True:
        return (f'the {api} request asks for a stream ("stream": true): a batch API answers JSON '
                "objects, never event streams. Call without streaming, or record this agent "
                "without --batch")
    return None


def route_record(item: WireBatchItem) -> dict[str, Any]:
    """What the journal keeps of a batch's route, to poll it again after a restart (``--resume``):
    family, API, base URL and the forwarded headers that are no credential. Never the key: the
    resumed run puts its own in place (:meth:`harness.wire.batch.WireBatchAPI.from_route`)."""
    headers = {name: value for name, value in forwarded(item.request)
               if not CREDENTIAL_NAME.search(name)}
    return {"family": family_of(item.api), "api": item.api,
            "base_url": base_url(item.api, item.request), "headers": headers}


def base_url(api: str, request: WireRequest) -> str:
    """The request URL without the API's path suffix (query kept): where the batch API lives."""
    parts = urllib.parse.urlsplit(request.url)
    path = parts.path.rstrip("/")
    suffix = SUFFIXES.get(api, "")
    if suffix and path.endswith(suffix):
        path = path[: -len(suffix)]
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def forwarded(request: WireRequest) -> tuple[tuple[str, str], ...]:
    """The request's headers that go with every batch call: the key, the keyed headers, and
    whatever else the caller sent (organisation, project, a proxy's own headers)."""
    return tuple((name, value) for name, value in request.headers
                 if name not in _PER_MESSAGE and not name.startswith("x-stainless-"))


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
