"""Anthropic Message Batches: create, poll ``processing_status``, read the results JSONL.

Each request is ``{"custom_id", "params"}`` where ``params`` is exactly the body
a synchronous call sends (:func:`harness.providers.anthropic.to_wire`), and each
``succeeded`` result's ``message`` is read by the synchronous parser
(:func:`harness.providers.anthropic.from_wire`), so the entry is byte for byte
the one a synchronous recording writes. A batch ends (``processing_status:
ended``) with every request ``succeeded``, ``errored``, ``canceled`` or
``expired``. The results are read from the batch's own path under the
configured base URL, never from a ``results_url`` on another host (the key
would travel with the request).
"""

from __future__ import annotations

import json
from typing import Any

from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import ProviderError
from harness.providers.anthropic import AnthropicProvider, from_wire, to_wire
from harness.providers.batching import (
    BatchResults,
    BatchStatus,
    json_lines,
    json_object,
    provider_secrets,
    required_id,
)
from harness.providers.redaction import scrub_answer


class AnthropicBatchAPI:
    """Message batches at the base URL of an Anthropic provider."""

    provider = "anthropic"

    def __init__(self, client: AnthropicProvider) -> None:
        self.client = client
        base = client.transport.base_url.rstrip("/")
        self._root = "messages/batches" if base.endswith("/v1") else "v1/messages/batches"
        self.http_requests = 0

    def create(self, requests: list[tuple[str, ChatCall]]) -> str:
        items = []
        for custom_id, call in requests:
            params, _ = to_wire(call.request, call.model, scenario=call.scenario_id)
            items.append({"custom_id": custom_id, "params": params})
        batch = self._json("POST", self._root, json.dumps({"requests": items},
                                                          ensure_ascii=False).encode("utf-8"))
        return required_id(batch, self.client.transport.label, "creating the batch")

    def status(self, batch_id: str) -> BatchStatus:
        return batch_status(self._json("GET", f"{self._root}/{batch_id}"))

    def results(self, batch_id: str, status: BatchStatus, calls: dict[str, ChatCall]) -> BatchResults:
        self.http_requests += 1
        body = self.client.transport.request_bytes("GET", f"{self._root}/{batch_id}/results",
                                                  scenario="--batch")
        label = self.client.transport.label
        answers: dict[str, ChatResponse] = {}
        failures: dict[str, str] = {}
        for line in json_lines(body):
            if not isinstance(line.get("custom_id"), str):
                continue
            custom_id = line["custom_id"]
            call = calls.get(custom_id)
            raw_result = line.get("result")
            result: dict[str, Any] = raw_result if isinstance(raw_result, dict) else {}
            if call is None or custom_id in answers:
                continue
            kind = result.get("type")
            if kind == "succeeded":
                _, json_tool = to_wire(call.request, call.model, scenario=call.scenario_id)
                try:
                    answers[custom_id] = from_wire(scrub_answer(result.get("message"),  # before any write
                                                                provider_secrets(self.client)),
                                                   scenario=call.scenario_id,
                                                   json_tool=json_tool, label=label,
                                                   secrets=provider_secrets(self.client))
                except ProviderError as exc:
                    failures[custom_id] = str(exc)
            else:
                failures[custom_id] = f"{call.scenario_id}: {label} batch request {kind or 'failed'}" \
                    + error_detail(result.get("error"))
        for custom_id, call in calls.items():
            if custom_id not in answers and custom_id not in failures:
                failures[custom_id] = (f"{call.scenario_id}: {label} batch {batch_id} returned no "
                                       "result for this request")
        return BatchResults(answers, failures)

    def _json(self, method: str, path: str, data: bytes | None = None) -> dict[str, Any]:
        self.http_requests += 1
        body = self.client.transport.request_bytes(method, path, data, scenario="--batch")
        return json_object(body, self.client.transport.label, f"{method} {path}")


def batch_status(batch: dict[str, Any]) -> BatchStatus:
    """One poll's answer (a message batch object) as a :class:`BatchStatus` (also read by
    :mod:`harness.wire.batch`, which batches SDK request bodies)."""
    state = str(batch.get("processing_status", ""))
    raw = batch.get("request_counts")
    counts = {k: v for k, v in raw.items() if isinstance(v, int)} if isinstance(raw, dict) else {}
    return BatchStatus(state == "ended", state, counts)


def error_detail(error: Any) -> str:
    """``: <type>: <message>`` of an errored result (``{"type": "error", "error": {...}}``)."""
    inner = error.get("error") if isinstance(error, dict) else None
    if isinstance(inner, dict):
        return f": {inner.get('type', 'error')}: {inner.get('message', '')}"
    return ""
