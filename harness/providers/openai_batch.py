"""The OpenAI Batch API: upload a JSONL file, create a batch, poll it, download its files.

Each input line is ``{"custom_id", "method": "POST", "url": "/v1/chat/completions",
"body"}`` with exactly the body a synchronous call sends
(:func:`harness.providers.openai.to_wire`), and each output line's
``response.body`` is read by the synchronous parser
(:func:`harness.providers.openai.from_wire`): an answer recorded by batch is
byte for byte the entry a synchronous recording writes. A batch ends
``completed``, ``expired`` (what finished is in the output file, the rest in
the error file), ``cancelled`` or ``failed`` (the input was refused: nothing
ran). Azure OpenAI's batch API uses other paths and deployments; it is refused.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import ConfigError, ProviderError
from harness.providers.batching import (
    BatchResults,
    BatchStatus,
    json_lines,
    json_object,
    provider_secrets,
    required_id,
)
from harness.providers.openai import OpenAIProvider, from_wire, to_wire
from harness.providers.redaction import scrub_answer

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
#: Statuses after which the batch no longer changes.
ENDED = frozenset({"completed", "expired", "cancelled", "failed"})


class OpenAIBatchAPI:
    """Batches at the base URL of an OpenAI provider (``.../v1``)."""

    provider = "openai"

    def __init__(self, client: OpenAIProvider) -> None:
        if "api-version=" in client.transport.base_url or ".azure.com" in client.transport.base_url:
            raise ConfigError(f"{client.transport.label}: --batch supports the OpenAI Batch API, not "
                              "Azure OpenAI's (other paths and deployments); record without --batch")
        self.client = client
        self.http_requests = 0

    def create(self, requests: list[tuple[str, ChatCall]]) -> str:
        lines = [json.dumps({"custom_id": custom_id, "method": "POST", "url": ENDPOINT,
                             "body": to_wire(call.request, call.model)}, ensure_ascii=False)
                 for custom_id, call in requests]
        upload = self._json("POST", "files", *multipart({"purpose": "batch"},
                                                          ("batch.jsonl", "\n".join(lines) + "\n")))
        file_id = required_id(upload, self.client.transport.label, "the file upload")
        batch = self._json("POST", "batches", json.dumps(
            {"input_file_id": file_id, "endpoint": ENDPOINT,
             "completion_window": COMPLETION_WINDOW}).encode("utf-8"), "application/json")
        return required_id(batch, self.client.transport.label, "creating the batch")

    def status(self, batch_id: str) -> BatchStatus:
        return batch_status(self._json("GET", f"batches/{batch_id}"))

    def results(self, batch_id: str, status: BatchStatus, calls: dict[str, ChatCall]) -> BatchResults:
        answers: dict[str, ChatResponse] = {}
        failures: dict[str, str] = {}
        output_id, error_id = status.files
        for line in self._lines(output_id) + self._lines(error_id):
            custom_id = line.get("custom_id")
            if not isinstance(custom_id, str):
                continue
            call = calls.get(custom_id)
            if call is None or custom_id in answers:
                continue
            response = line.get("response") if isinstance(line.get("response"), dict) else None
            error = line.get("error")
            if response is not None and response.get("status_code") == 200 and not error:
                try:
                    answers[custom_id] = from_wire(scrub_answer(response.get("body"),  # before any write
                                                                provider_secrets(self.client)),
                                                   scenario=call.scenario_id,
                                                   label=self.client.transport.label,
                                                   secrets=provider_secrets(self.client))
                except ProviderError as exc:
                    failures[custom_id] = str(exc)
                continue
            failures[custom_id] = _failure(call, response, error, self.client.transport.label)
        ended = f"the batch ended {status.state}" + (f" ({status.problem})" if status.problem else "")
        for custom_id, call in calls.items():
            if custom_id not in answers and custom_id not in failures:
                failures[custom_id] = (f"{call.scenario_id}: {self.client.transport.label} batch "
                                       f"{batch_id} returned no result for this request ({ended})")
        return BatchResults(answers, failures)

    def _lines(self, file_id: str) -> list[dict[str, Any]]:
        if not file_id:
            return []
        self.http_requests += 1
        return json_lines(self.client.transport.request_bytes("GET", f"files/{file_id}/content",
                                                              scenario="--batch"))

    def _json(self, method: str, path: str, data: bytes | None = None,
              content_type: str = "application/json") -> dict[str, Any]:
        self.http_requests += 1
        body = self.client.transport.request_bytes(method, path, data, content_type=content_type,
                                                  scenario="--batch")
        return json_object(body, self.client.transport.label, f"{method} {path}")


def batch_status(batch: dict[str, Any]) -> BatchStatus:
    """One poll's answer (a batch object) as a :class:`BatchStatus` (also read by
    :mod:`harness.wire.batch`, which batches SDK request bodies)."""
    state = str(batch.get("status", ""))
    counts = batch.get("request_counts") if isinstance(batch.get("request_counts"), dict) else {}
    problem = ""
    if state == "failed":
        raw_errors = batch.get("errors")
        errors = raw_errors.get("data") if isinstance(raw_errors, dict) else None
        problem = "; ".join(str(e.get("message", e)) for e in errors or []
                            if isinstance(e, dict)) or "the batch failed validation"
    return BatchStatus(state in ENDED, state, {k: int(v) for k, v in (counts or {}).items()
                                                if isinstance(v, int)},
                       problem, _files(batch))


def _files(batch: dict[str, Any]) -> tuple[str, str]:
    output, error = batch.get("output_file_id"), batch.get("error_file_id")
    return (output if isinstance(output, str) else "", error if isinstance(error, str) else "")


def _failure(call: ChatCall, response: dict[str, Any] | None, error: Any, label: str) -> str:
    """The reason one request has no answer, as the provider put it."""
    return f"{call.scenario_id}: {label} batch request failed: {failure_detail(response, error)}"


def failure_detail(response: dict[str, Any] | None, error: Any) -> str:
    """Why one output or error line carries no answer: its ``error`` (``code: message``), or the
    status and error message of its ``response``."""
    if isinstance(error, dict) and error:
        return f"{error.get('code', 'error')}: {error.get('message', '')}".rstrip(": ")
    if response is not None:
        body = response.get("body")
        inner = body.get("error") if isinstance(body, dict) else None
        message = inner.get("message") if isinstance(inner, dict) else json.dumps(body)[:300]
        return f"HTTP {response.get('status_code')}: {message}"
    return "no answer"


def multipart(fields: dict[str, str], file: tuple[str, str]) -> tuple[bytes, str]:
    """A multipart/form-data body: the form fields, then the file (the Files API's upload form)."""
    boundary = f"harness-{secrets.token_hex(12)}"
    parts: list[bytes] = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                     f"{value}\r\n".encode())
    filename, text = file
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{filename}"\r\nContent-Type: application/jsonl\r\n\r\n'.encode()
                 + text.encode("utf-8") + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"
