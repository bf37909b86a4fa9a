"""Provider batch APIs for the SDK's own request bodies: submit, poll, answer each as wire bytes.

A declared agent's batch client (:mod:`harness.providers.openai_batch`,
:mod:`harness.providers.anthropic_batch`) builds the provider request from the
harness's canonical call. An SDK agent's request was built by its SDK, so here
the request *body* goes into the batch exactly as the SDK sent it, and the
request's own URL and headers say where and how: the base URL is the request
URL minus the API path (a proxy or a compatible server is batched at its own
address), the key is the one in the request's auth header (put there by
:func:`harness.wire.placeholder.with_real_key`).

- **OpenAI Batch API**: the bodies are uploaded as one JSONL file
  (``POST {base}/files``, purpose ``batch``), one batch is created per endpoint
  (``POST {base}/batches``, ``completion_window: 24h``), polled
  (``GET {base}/batches/{id}``), and its output and error files are downloaded.
- **Anthropic Message Batches**: ``POST {base}/messages/batches`` with
  ``requests: [{custom_id, params}]`` (``base`` ends in ``/v1``) and the
  request's ``anthropic-version`` / ``anthropic-beta`` headers, which then apply
  to every request of the batch; polled, then its results are read from the
  batch's own path under the base URL, never from a ``results_url`` on another
  host (the key would travel there).

A batch answer is the provider's JSON answer object, re-serialised (compact,
UTF-8): not the bytes a synchronous call would have received (those are never
sent), but what the SDK parses into the same object. It is checked with the
wire codec before it is handed back, so a body the harness could not read is a
failure here, not an error when the entry is written. A streamed request has no
batch form (a batch answers objects, not event streams) and is refused, as is
anything else :func:`refusal` names.

The key never leaves the transport: it is not in an item's ``repr``, not in a
route (:func:`batch_route` holds a fingerprint of the credential headers, not
the headers), and it is redacted from every message and every answer. The
transport (:class:`harness.providers.http.Transport`) follows no redirect and
gives each HTTP request a deadline; polls and downloads are retried, the batch
creation is sent once (a retried creation could start a second, paid batch).

What may be batched, and which requests share a batch, is decided before anything is
sent, by :mod:`harness.wire.batch_routes`; this module sends the batches.
"""

from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Iterable
from typing import Any, Final

from harness.core.errors import ProviderError
from harness.providers.batching import MAX_REQUESTS, BatchStatus, json_lines, json_object, required_id
from harness.providers.http import Transport
from harness.providers.redaction import redact, scrub_answer
from harness.providers.retries import RetryPolicy
from harness.wire.batch_routes import (
    CREDENTIAL_NAME,
    SUFFIXES,
    WireBatchItem,
    base_url,
    batch_route,
    forwarded,
    refusal,
)
from harness.wire.exchange import CHAT, EMBEDDINGS, RESPONSES, WireAnswer, WireRequest, family_of
from harness.wire.placeholder import PLACEHOLDER

#: The OpenAI batch endpoint of each OpenAI wire API (the ``url`` of an input line).
ENDPOINTS: Final = {CHAT: "/v1/chat/completions", RESPONSES: "/v1/responses",
                    EMBEDDINGS: "/v1/embeddings"}
COMPLETION_WINDOW: Final = "24h"
_AUTH_HEADERS: Final = ("authorization", "x-api-key", "api-key")
#: HTTP statuses of the batch endpoints, explained.
_HINTS: Final = {
    404: "the server at this base URL has no batch API (an OpenAI-compatible server often has none); "
         "record this agent without --batch",
    401: "the provider refused the key the SDK request carried",
}


class WireBatchAPI:
    """Create, poll and collect batches of one route (:func:`batch_route`) over HTTPS.

    Built from the route's items: their base URL, and their headers (key included, and
    any header a proxy needs) are sent with every batch call; the key is redacted from
    every message this class produces. A journaled batch is polled and collected after a
    restart by a new instance built from the same requests (the key put back in place).

    Attributes: ``provider`` (``openai`` | ``anthropic``), ``api`` (the wire API of the
    route), ``route`` (:func:`batch_route` of the items), ``base_url``, ``label`` (how
    messages name this client; no secret), ``http_requests`` (HTTP requests sent: upload,
    create, polls, downloads; a retry is not counted again).
    """

    def __init__(self, route_items: list[WireBatchItem], *, timeout_s: float = 60.0,
                 policy: RetryPolicy | None = None, sleep: Callable[[float], None] = time.sleep) -> None:
        if not route_items:
            raise ValueError("a WireBatchAPI is built from the items of its route; none were given")
        first = route_items[0]
        self.route = batch_route(first)
        self.api = first.api
        self.provider = family_of(first.api)
        self.http_requests = 0
        problems = [f"{item.custom_id}: {reason}" for item in route_items
                    if (reason := refusal(item.api, item.request)) is not None]
        problems += [f"{item.custom_id}: route {batch_route(item)[:3]} is not {self.route[:3]}"
                     for item in route_items if batch_route(item) != self.route]
        if problems:
            raise ValueError("items that cannot share this batch route: " + "; ".join(problems))
        headers = dict(forwarded(first.request))
        self._secrets = tuple(_credentials(headers.items()))
        if not any(name in headers for name in _AUTH_HEADERS):
            raise ProviderError(f"the {self.api} request carries no API key (no authorization or "
                                "x-api-key header): a batch cannot be created without one")
        if any(PLACEHOLDER in value for value in headers.values()):
            raise ProviderError(f"the {self.api} request still carries the harness's placeholder key: "
                                "put the real key in place (with_real_key) before batching it")
        self.base_url = base_url(first.api, first.request)
        parts = urllib.parse.urlsplit(self.base_url)
        where = (parts.hostname or "") + (f":{parts.port}" if parts.port else "") + parts.path
        self.label = f"{self.provider} batch API at {where}"
        common: dict[str, Any] = {"label": self.label, "headers": headers, "secrets": self._secrets,
                                  "timeout_s": timeout_s, "sleep": sleep, "status_hints": _HINTS}
        self._transport = Transport(self.base_url, policy=policy, **common)
        self._create_transport = Transport(self.base_url, policy=RetryPolicy(max_attempts=1), **common)
        self._root = "messages/batches"

    @classmethod
    def from_route(cls, route: dict[str, Any], key: str, *, timeout_s: float = 60.0) -> WireBatchAPI:
        """The client of a journaled route (:func:`route_record`) with ``key`` put in place: how a
        resumed run polls and collects a batch an earlier process created."""
        api = str(route.get("api"))
        if api not in SUFFIXES or not isinstance(route.get("base_url"), str):
            raise ProviderError(f"a journaled batch route names no known wire API ({api[:40]!r})")
        raw = route.get("headers")
        headers = [(str(k).lower(), str(v)) for k, v in (raw.items() if isinstance(raw, dict) else [])
                   if not CREDENTIAL_NAME.search(str(k))]
        headers.append(("x-api-key", key) if family_of(api) == "anthropic" else
                       ("authorization", f"Bearer {key}"))
        url = str(route["base_url"]).rstrip("/") + SUFFIXES[api]
        parts = urllib.parse.urlsplit(url)
        request = WireRequest("POST", url, parts.path, parts.hostname or "", tuple(headers), b"{}")
        return cls([WireBatchItem("resumed", api, request)], timeout_s=timeout_s)

    # -- the three steps ----------------------------------------------------------------------

    def create(self, items: list[WireBatchItem]) -> str:
        """Submit ``items`` (this route's, custom ids unique) as one batch; its id, accepted."""
        self._check(items)
        if self.provider == "anthropic":
            payload = {"requests": [{"custom_id": item.custom_id, "params": _body(item)} for item in items]}
            return self._id(self._send(self._create_transport, "POST", self._root,
                                       _dumps(payload).encode("utf-8")), "creating the batch")
        endpoint = ENDPOINTS[self.api]
        lines = "".join(_dumps({"custom_id": item.custom_id, "method": "POST", "url": endpoint,
                                "body": _body(item)}) + "\n" for item in items)
        from harness.providers.openai_batch import multipart

        data, content_type = multipart({"purpose": "batch"}, ("batch.jsonl", lines))
        file_id = self._id(self._send(self._transport, "POST", "files", data, content_type),
                           "the file upload")
        batch = self._send(self._create_transport, "POST", "batches", _dumps(
            {"input_file_id": file_id, "endpoint": endpoint,
             "completion_window": COMPLETION_WINDOW}).encode("utf-8"))
        return self._id(batch, "creating the batch")

    def status(self, batch_id: str) -> BatchStatus:
        """Poll the batch once."""
        quoted = urllib.parse.quote(batch_id, safe="")
        if self.provider == "anthropic":
            from harness.providers.anthropic_batch import batch_status as anthropic_status

            return anthropic_status(self._json("GET", f"{self._root}/{quoted}"))
        from harness.providers.openai_batch import batch_status as openai_status

        return openai_status(self._json("GET", f"batches/{quoted}"))

    def results(self, batch_id: str, status: BatchStatus, custom_ids: list[str]
                ) -> tuple[dict[str, WireAnswer], dict[str, str]]:
        """The answers (by custom id) of an ended batch, and why each other request has none.

        Only ``custom_ids`` are reported; each one is in exactly one of the two maps.
        """
        if not status.ended:
            raise ValueError(f"batch {batch_id} has not ended ({status.state}): poll until it has")
        wanted = set(custom_ids)
        answers: dict[str, WireAnswer] = {}
        failures: dict[str, str] = {}
        for custom_id, answer, problem in self._outcomes(batch_id, status):
            if custom_id not in wanted or custom_id in answers:
                continue
            if answer is not None:
                read = self._answer(answer)
                if isinstance(read, WireAnswer):
                    answers[custom_id] = read
                    failures.pop(custom_id, None)
                    continue
                problem = read
            failures.setdefault(custom_id, self._reason(batch_id, problem))
        ended = f"the batch ended {status.state}" + (f": {status.problem}" if status.problem else "")
        for custom_id in custom_ids:
            if custom_id not in answers and custom_id not in failures:
                failures[custom_id] = self._reason(
                    batch_id, f"no result for this request ({redact(ended, self._secrets)})")
        return answers, failures

    # -- reading the results ------------------------------------------------------------------

    def _outcomes(self, batch_id: str, status: BatchStatus) -> Iterable[tuple[str, Any, str]]:
        """``(custom_id, answer object or None, why there is none)`` of each result line."""
        if self.provider == "anthropic":
            from harness.providers.anthropic_batch import error_detail

            quoted = urllib.parse.quote(batch_id, safe="")
            for line in json_lines(self._bytes("GET", f"{self._root}/{quoted}/results")):
                raw = line.get("result")
                result: dict[str, Any] = raw if isinstance(raw, dict) else {}
                custom_id = line.get("custom_id")
                if not isinstance(custom_id, str):
                    continue
                kind = result.get("type")
                if kind == "succeeded":
                    yield custom_id, result.get("message"), ""
                else:
                    yield custom_id, None, f"request {kind or 'failed'}{error_detail(result.get('error'))}"
            return
        from harness.providers.openai_batch import failure_detail

        output_id, error_id = status.files
        for file_id in (output_id, error_id):
            if not file_id:
                continue
            quoted = urllib.parse.quote(file_id, safe="")
            for line in json_lines(self._bytes("GET", f"files/{quoted}/content")):
                custom_id = line.get("custom_id")
                if not isinstance(custom_id, str):
                    continue
                response = line.get("response") if isinstance(line.get("response"), dict) else None
                error = line.get("error")
                if response is not None and response.get("status_code") == 200 and not error:
                    yield custom_id, response.get("body"), ""
                else:
                    yield custom_id, None, f"request failed: {failure_detail(response, error)}"

    def _answer(self, value: Any) -> WireAnswer | str:
        """The wire answer of one answer object, or why it cannot be one."""
        from harness.wire.codecs import WireDecodeError, decode_answer

        if not isinstance(value, dict):
            return "the batch answered something that is not a JSON object for this request"
        body = _dumps(scrub_answer(value, self._secrets)).encode("utf-8")
        try:
            decode_answer(self.api, body, content_type="application/json")
        except WireDecodeError as exc:
            return f"its {self.api} answer cannot be read: {exc}"
        return WireAnswer(200, (("content-type", "application/json"),), body)

    def _reason(self, batch_id: str, problem: str) -> str:
        return redact(f"{self.label}: batch {batch_id}: {problem}", self._secrets)

    # -- HTTP ---------------------------------------------------------------------------------

    def _check(self, items: list[WireBatchItem]) -> None:
        if not items:
            raise ValueError("a batch needs at least one request")
        if len(items) > MAX_REQUESTS:
            raise ValueError(f"{len(items)} requests in one batch: split them every {MAX_REQUESTS}")
        seen: set[str] = set()
        for item in items:
            if item.custom_id in seen:
                raise ValueError(f"custom_id {item.custom_id!r} appears twice in one batch")
            seen.add(item.custom_id)
            reason = refusal(item.api, item.request)
            if reason is not None:
                raise ValueError(f"{item.custom_id}: {reason}")
            if batch_route(item) != self.route:
                raise ValueError(f"{item.custom_id}: its route {batch_route(item)[:3]} is not this "
                                 f"batch's {self.route[:3]}")

    def _id(self, answer: dict[str, Any], what: str) -> str:
        return required_id(answer, self.label, what)

    def _json(self, method: str, path: str) -> dict[str, Any]:
        return self._send(self._transport, method, path)

    def _send(self, transport: Transport, method: str, path: str, data: bytes | None = None,
              content_type: str = "application/json") -> dict[str, Any]:
        self.http_requests += 1
        body = transport.request_bytes(method, path, data, content_type=content_type, scenario="batch")
        return json_object(body, self.label, f"{method} {path}")

    def _bytes(self, method: str, path: str) -> bytes:
        self.http_requests += 1
        return self._transport.request_bytes(method, path, scenario="batch")


def _credentials(headers: Iterable[tuple[str, str]]) -> Iterable[str]:
    """The secret values among ``headers`` (each whole value, and a bearer token alone)."""
    for name, value in headers:
        if not CREDENTIAL_NAME.search(name) or not value:
            continue
        yield value
        scheme, _, token = value.partition(" ")
        if token and scheme.lower() in ("bearer", "basic", "token"):
            yield token.strip()


def _body(item: WireBatchItem) -> Any:
    return json.loads(item.request.body.decode("utf-8"))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
