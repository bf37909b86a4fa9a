"""The batch APIs of the wire fake: OpenAI's Batch API and Anthropic's Message Batches.

Both take the request bodies the synchronous endpoints take (what an SDK
sends) and answer each one with exactly what the synchronous endpoint of the
same fake answers (the same brain, the same validation): a body the endpoint
refuses is that request's error, in the provider's batch shape.

- OpenAI: ``POST /v1/files`` (multipart, ``purpose=batch``), ``POST /v1/batches``
  (``endpoint`` one of chat completions, responses, embeddings; every line's
  ``url`` must be that endpoint, custom ids unique, else the batch ends
  ``failed`` with the reasons), ``GET /v1/batches/{id}``,
  ``GET /v1/files/{id}/content`` (answers in the output file, errors and expired
  requests in the error file);
- Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}``,
  ``GET /v1/messages/batches/{id}/results`` (lines in reverse order: matched
  by custom id, never by position).

Settings on the :class:`BatchState` of a fake: ``pending_polls`` (polls answered
``in_progress`` before a batch ends) and ``expire_after`` (requests from that
index on are left unprocessed: an expired batch). Auth is the synchronous
endpoints' (bearer key; ``x-api-key`` and ``anthropic-version`` for Anthropic).
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .wire import JsonObject, Reply, WireError, anthropic_error, new_id, openai_error

#: OpenAI batch endpoint -> the api name of the synchronous route.
OPENAI_ENDPOINTS = {"/v1/chat/completions": "chat", "/v1/responses": "responses",
                    "/v1/embeddings": "embeddings"}
_CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
#: ``compute(family, api, body) -> Reply``: the synchronous answer of one body.
Compute = Callable[[str, str, Any], Reply]


@dataclass
class FakeBatch:
    """One batch as the fake keeps it."""

    id: str
    family: str
    api: str
    requests: list[tuple[str, Any]]
    """(custom_id, body) in submitted order."""
    problems: list[str] = field(default_factory=list)
    """Why OpenAI refused the input (the batch is ``failed``)."""
    polls: int = 0
    results: list[tuple[str, int, JsonObject | None]] | None = None
    """(custom_id, status, answer or error body; None: expired), once the batch has ended."""
    files: tuple[str, str] = ("", "")


@dataclass
class BatchState:
    """The files and batches of one fake, and how its batches behave."""

    pending_polls: int = 0
    expire_after: int | None = None
    batches: dict[str, FakeBatch] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def batched_requests(self) -> int:
        """Requests submitted in batches so far."""
        return sum(len(batch.requests) for batch in self.batches.values())


def handles(path: str) -> bool:
    """Whether ``path`` is a batch route (files included)."""
    return path.startswith(("/v1/files", "/v1/batches", "/v1/messages/batches"))


def serve(state: BatchState, compute: Compute, base_url: str, method: str, path: str,
          body: Any, raw: bytes, content_type: str) -> Reply:
    """Answer one request to a batch route (auth already checked)."""
    family = "anthropic" if path.startswith("/v1/messages/") else "openai"
    routes: list[tuple[str, str, Callable[..., Reply]]] = [
        ("POST", r"/v1/files", lambda: _upload(state, raw, content_type)),
        ("GET", r"/v1/files/([\w-]+)/content", lambda file_id: _download(state, file_id)),
        ("POST", r"/v1/batches", lambda: _create_openai(state, body)),
        ("GET", r"/v1/batches/([\w-]+)", lambda batch_id: _poll(state, compute, base_url, batch_id,
                                                                "openai")),
        ("POST", r"/v1/messages/batches", lambda: _create_anthropic(state, body, base_url)),
        ("GET", r"/v1/messages/batches/([\w-]+)", lambda batch_id: _poll(state, compute, base_url,
                                                                         batch_id, "anthropic")),
        ("GET", r"/v1/messages/batches/([\w-]+)/results",
         lambda batch_id: _anthropic_results(state, batch_id)),
    ]
    for verb, pattern, action in routes:
        match = re.fullmatch(pattern, path)
        if match is not None and verb == method:
            return action(*match.groups())
    if family == "anthropic":
        raise anthropic_error(404, f"no route {method} {path}", "not_found_error")
    raise openai_error(404, f"no route {method} {path}", code="unknown_url")


# -- OpenAI ----------------------------------------------------------------------------------------


def _upload(state: BatchState, raw: bytes, content_type: str) -> Reply:
    fields = _multipart(content_type, raw)
    if fields.get("purpose") != b"batch" or "file" not in fields:
        raise openai_error(400, "'purpose' must be 'batch' and a 'file' part is required", param="purpose")
    with state.lock:
        file_id = new_id("file-")
        state.files[file_id] = fields["file"]
    return Reply(body={"id": file_id, "object": "file", "purpose": "batch", "bytes": len(fields["file"]),
                       "filename": "batch.jsonl", "status": "processed"})


def _download(state: BatchState, file_id: str) -> Reply:
    with state.lock:
        content = state.files.get(file_id)
    if content is None:
        raise openai_error(404, f"No such File object: {file_id}", param="id")
    return Reply(raw=content, headers={"content-type": "application/octet-stream"})


def _create_openai(state: BatchState, body: Any) -> Reply:
    if not isinstance(body, dict):
        raise openai_error(400, "We could not parse the JSON body of your request.")
    endpoint = body.get("endpoint")
    if endpoint not in OPENAI_ENDPOINTS:
        raise openai_error(400, f"Invalid value for 'endpoint': {endpoint!r}.", param="endpoint")
    if body.get("completion_window") != "24h":
        raise openai_error(400, "Invalid value for 'completion_window': only '24h' is supported.",
                           param="completion_window")
    with state.lock:
        content = state.files.get(str(body.get("input_file_id")))
    if content is None:
        raise openai_error(404, f"No such File object: {body.get('input_file_id')}", param="input_file_id")
    requests: list[tuple[str, Any]] = []
    problems: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            problems.append(f"line {number}: not valid JSON")
            continue
        custom_id = str(item.get("custom_id"))
        if item.get("method") != "POST" or item.get("url") != endpoint:
            problems.append(f"line {number}: the url must be the batch's endpoint {endpoint} (POST)")
        if custom_id in seen:
            problems.append(f"line {number}: the custom_id {custom_id} is not unique")
        if not isinstance(item.get("body"), dict):
            problems.append(f"line {number}: body must be an object")
        seen.add(custom_id)
        requests.append((custom_id, item.get("body")))
    batch = _new(state, "batch_", "openai", OPENAI_ENDPOINTS[endpoint], requests)
    batch.problems = problems
    return Reply(body=_openai_view(state, batch))


def _openai_view(state: BatchState, batch: FakeBatch) -> JsonObject:
    view: JsonObject = {"id": batch.id, "object": "batch", "endpoint": _endpoint_of(batch.api),
                        "completion_window": "24h", "status": "in_progress", "output_file_id": None,
                        "error_file_id": None, "errors": None,
                        "request_counts": {"total": len(batch.requests), "completed": 0, "failed": 0}}
    if batch.problems:
        view.update(status="failed", errors={"object": "list", "data": [
            {"code": "invalid_request", "message": problem, "line": None} for problem in batch.problems]})
        return view
    if batch.results is None:
        return view
    done = [(cid, body) for cid, status, body in batch.results if status == 200]
    failed = [(cid, status, body) for cid, status, body in batch.results if status != 200]
    if batch.files == ("", ""):
        output = [{"id": new_id("batch_req_"), "custom_id": cid,
                   "response": {"status_code": 200, "request_id": new_id("req_"), "body": body},
                   "error": None} for cid, body in done]
        errors = [{"id": new_id("batch_req_"), "custom_id": cid, "response": None,
                   "error": {"code": "batch_expired", "message": "This request could not be executed "
                             "before the completion window expired."}} if body is None else
                  {"id": new_id("batch_req_"), "custom_id": cid,
                   "response": {"status_code": status, "request_id": new_id("req_"), "body": body},
                   "error": None} for cid, status, body in failed]
        batch.files = (_file(state, output), _file(state, errors))
    expired = any(body is None for _, _, body in failed)
    view.update(status="expired" if expired else "completed",
                output_file_id=batch.files[0] or None, error_file_id=batch.files[1] or None,
                request_counts={"total": len(batch.requests), "completed": len(done),
                                "failed": len(failed)})
    return view


def _endpoint_of(api: str) -> str:
    return next(endpoint for endpoint, name in OPENAI_ENDPOINTS.items() if name == api)


def _file(state: BatchState, lines: list[JsonObject]) -> str:
    if not lines:
        return ""
    with state.lock:
        file_id = new_id("file-")
        state.files[file_id] = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return file_id


# -- Anthropic -------------------------------------------------------------------------------------


def _create_anthropic(state: BatchState, body: Any, base_url: str) -> Reply:
    items = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(items, list) or not items:
        raise anthropic_error(400, "requests: Field required (a non-empty list)")
    seen: set[str] = set()
    for index, item in enumerate(items):
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str) or not _CUSTOM_ID.fullmatch(custom_id):
            raise anthropic_error(400, f"requests.{index}.custom_id: String should match pattern "
                                       "'^[a-zA-Z0-9_-]{1,64}$'")
        if custom_id in seen:
            raise anthropic_error(400, f"requests.{index}.custom_id: duplicate custom_id {custom_id}")
        seen.add(custom_id)
        if not isinstance(item.get("params"), dict):
            raise anthropic_error(400, f"requests.{index}.params: Input should be an object")
    batch = _new(state, "msgbatch_", "anthropic", "messages",
                 [(item["custom_id"], item["params"]) for item in items])
    return Reply(body=_anthropic_view(batch, base_url))


def _anthropic_view(batch: FakeBatch, base_url: str) -> JsonObject:
    results = batch.results
    counts = {"processing": len(batch.requests) if results is None else 0, "succeeded": 0, "errored": 0,
              "canceled": 0, "expired": 0}
    for _, status, body in results or []:
        counts["expired" if body is None else "succeeded" if status == 200 else "errored"] += 1
    ended = results is not None
    return {"id": batch.id, "type": "message_batch", "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts, "ended_at": "2026-01-01T00:00:00Z" if ended else None,
            "created_at": "2026-01-01T00:00:00Z", "expires_at": "2026-01-02T00:00:00Z",
            "cancel_initiated_at": None, "archived_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{batch.id}/results" if ended else None}


def _anthropic_results(state: BatchState, batch_id: str) -> Reply:
    batch = _batch(state, batch_id, "anthropic")
    if batch.results is None:
        raise anthropic_error(400, f"Batch {batch_id} has not ended yet")
    lines = []
    for custom_id, status, body in batch.results:
        if body is None:
            result: JsonObject = {"type": "expired"}
        elif status == 200:
            result = {"type": "succeeded", "message": body}
        else:
            result = {"type": "errored", "error": body}
        lines.append({"custom_id": custom_id, "result": result})
    raw = "".join(json.dumps(line) + "\n" for line in reversed(lines)).encode()
    return Reply(raw=raw, headers={"content-type": "application/binary"})


# -- both ------------------------------------------------------------------------------------------


def _new(state: BatchState, prefix: str, family: str, api: str, requests: list[tuple[str, Any]]) -> FakeBatch:
    with state.lock:
        batch = FakeBatch(new_id(prefix), family, api, requests)
        state.batches[batch.id] = batch
    return batch


def _batch(state: BatchState, batch_id: str, family: str) -> FakeBatch:
    with state.lock:
        batch = state.batches.get(batch_id)
    if batch is None or batch.family != family:
        if family == "anthropic":
            raise anthropic_error(404, f"No batch found with id {batch_id}", "not_found_error")
        raise openai_error(404, f"No batch found with id '{batch_id}'.", param="batch_id")
    return batch


def _poll(state: BatchState, compute: Compute, base_url: str, batch_id: str, family: str) -> Reply:
    batch = _batch(state, batch_id, family)
    with state.lock:
        batch.polls += 1
        ending = batch.results is None and not batch.problems and batch.polls > state.pending_polls
    if ending:
        batch.results = _run(state, compute, batch)
    return Reply(body=_openai_view(state, batch) if family == "openai" else _anthropic_view(batch, base_url))


def _run(state: BatchState, compute: Compute, batch: FakeBatch) -> list[tuple[str, int, JsonObject | None]]:
    """Each request answered by the synchronous endpoint (a stream cannot be batched)."""
    results: list[tuple[str, int, JsonObject | None]] = []
    for index, (custom_id, body) in enumerate(batch.requests):
        if state.expire_after is not None and index >= state.expire_after:
            results.append((custom_id, 0, None))
            continue
        try:
            reply = compute(batch.family, batch.api, body)
            if reply.events is not None:
                raise (anthropic_error(400, "stream: batch requests cannot stream") if batch.family ==
                       "anthropic" else openai_error(400, "Streaming is not supported in batches.",
                                                     param="stream"))
        except WireError as error:
            results.append((custom_id, error.status, error.body))
            continue
        results.append((custom_id, reply.status, reply.body))
    return results


def _multipart(content_type: str, raw: bytes) -> dict[str, bytes]:
    """The named parts of a multipart/form-data body, read by the standard library's MIME parser."""
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + raw)
    fields: dict[str, bytes] = {}
    if not message.is_multipart():
        return fields
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            fields[name] = payload
    return fields
