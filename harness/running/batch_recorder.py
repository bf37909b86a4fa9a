"""What a batch round sends and gets back: the queue of deferred calls, and the recorder that pays it.

:mod:`harness.running.batch` runs a ``--batch`` recording in rounds; this module is
the provider side of each round. A round's calls wait in the :class:`BatchQueue`;
:class:`BatchRecorder` turns them into one batch per route (a declared agent's
calls through :func:`batch_api`, an SDK agent's request bodies through
:class:`harness.wire.batch.WireBatchAPI`), journals each batch *before* waiting
on it, polls it until it ends and journals every answer, so that a killed run
resumes polling (``--resume``) instead of paying again. A request without an
answer is kept in :attr:`BatchQueue.failed` for its iteration to report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.clients.base import ChatClient
from harness.core.entities import ChatCall
from harness.core.errors import ConfigError, ProviderError
from harness.providers.batching import MAX_REQUESTS, BatchAPI
from harness.refresh.journal import Journal, describe

if TYPE_CHECKING:
    from harness.wire.recorder import WireDeferred


#: Seconds between two polls of a batch unless ``--batch-poll`` says otherwise.
DEFAULT_POLL_S = 30.0


@dataclass(frozen=True)
class Deferred:
    """One queued call: its key, the call, and the synchronous client of its provider."""

    key: str
    call: ChatCall
    agent: str
    client: ChatClient


@dataclass
class BatchQueue:
    """The calls of the current round, and the keys whose batch request failed."""

    items: dict[str, Deferred | WireDeferred] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def defer(self, item: Deferred | WireDeferred) -> None:
        with self.lock:
            self.items.setdefault(item.key, item)

    def drain(self) -> list[Deferred | WireDeferred]:
        with self.lock:
            items, self.items = list(self.items.values()), {}
            return items



def batch_api(client: ChatClient) -> BatchAPI:
    """The batch API of a synchronous provider client."""
    from harness.providers.anthropic import AnthropicProvider
    from harness.providers.anthropic_batch import AnthropicBatchAPI
    from harness.providers.openai import OpenAIProvider
    from harness.providers.openai_batch import OpenAIBatchAPI

    if isinstance(client, OpenAIProvider):
        return OpenAIBatchAPI(client)
    if isinstance(client, AnthropicProvider):
        return AnthropicBatchAPI(client)
    raise ConfigError(f"provider {client.provider} has no batch API: record without --batch")


@dataclass
class BatchRecorder:
    """Submits a round's calls, journals the batches, waits for them and journals the answers."""

    journal: Journal
    queue: BatchQueue
    resolve: Callable[[str, str], ChatClient]
    """(agent name, provider) -> the synchronous client of that route, for a journaled batch."""
    resolve_wire: Callable[[dict[str, Any]], Any] | None = None
    """A journaled SDK batch's route (family, base URL, API, headers) -> its batch client, with
    the key from the credentials (``--resume``; the key is never journaled)."""
    poll_s: float = DEFAULT_POLL_S
    note: Callable[[str], None] = lambda text: None
    sleep: Callable[[float], None] = time.sleep
    apis: list[Any] = field(default_factory=list)
    """The batch clients this run used (:class:`BatchAPI`, or an SDK route's ``WireBatchAPI``)."""
    batches_created: int = 0

    @property
    def http_requests(self) -> int:
        """HTTP requests the batch clients sent (create, poll, download)."""
        return sum(api.http_requests for api in self.apis)

    def collect_pending(self) -> None:
        """``--resume``: wait for the batches an earlier (killed) run left, journal their answers."""
        for record in self.journal.pending_batches():
            self.note(f"resuming {describe(record)} created {record.get('created', '?')}: polling "
                      "it instead of paying again")
            wire = record.get("wire")
            if isinstance(wire, dict):
                if self.resolve_wire is None:  # pragma: no cover - the factory always passes one
                    raise ConfigError("a journaled SDK batch cannot be resumed by this run")
                api: Any = self.resolve_wire(wire)
                self.apis.append(api)
            else:
                api = self._api(self.resolve(str(record.get("agent")), str(record.get("route"))))
            self._wait(api, record)

    def record_round(self, number: int, deferred: list[Deferred | WireDeferred]) -> None:
        """One round: one batch per route (chunked), each journaled, then waited for."""
        from harness.wire.recorder import WireDeferred

        routes: dict[tuple[str, str], list[Deferred]] = {}
        wire_routes: dict[tuple[str, ...], list[WireDeferred]] = {}
        for item in deferred:
            if isinstance(item, WireDeferred):
                from harness.wire.batch_routes import batch_route

                wire_routes.setdefault(batch_route(_batch_item(item, "route")), []).append(item)
            else:
                routes.setdefault((item.agent, item.call.provider), []).append(item)
        created: list[tuple[Any, dict[str, object]]] = []
        for wire_items in wire_routes.values():
            created.extend(self._create_wire(number, wire_items))
        for (agent, route), items in routes.items():
            api = self._api(items[0].client)
            for start in range(0, len(items), MAX_REQUESTS):
                chunk = items[start:start + MAX_REQUESTS]
                requests = [(f"r{number}-{n}-{item.key[:24]}", item.call) for n, item in enumerate(chunk)]
                try:
                    batch_id = api.create(requests)
                except ProviderError as exc:
                    raise BatchFailed(
                        f"{_text(exc)}. Creating a batch of {len(requests)} request(s) for agent {agent} "
                        "failed, so nothing of it was paid for; if this server has no batch API, "
                        "record without --batch") from None
                record: dict[str, object] = {
                    "id": batch_id, "provider": api.provider, "agent": agent, "route": route,
                    "round": number,
                    "requests": {cid: _call_record(item)
                                 for (cid, _), item in zip(requests, chunk, strict=True)},
                }
                self.journal.add_batch(record)  # before waiting: a killed run resumes polling it
                self.batches_created += 1
                self.note(f"batch round {number}: created {describe(record)} for agent {agent}")
                created.append((api, record))
        for api, record in created:
            self._wait(api, record)

    def _create_wire(self, number: int, items: list[WireDeferred]) -> list[tuple[Any, dict[str, object]]]:
        """The batches of one route of SDK requests: created, journaled (before any wait)."""
        from harness.wire.batch import WireBatchAPI
        from harness.wire.batch_routes import route_record

        created: list[tuple[Any, dict[str, object]]] = []
        first = items[0]
        for start in range(0, len(items), MAX_REQUESTS):
            chunk = items[start:start + MAX_REQUESTS]
            batch_items = [_batch_item(item, f"r{number}-{n}-{item.key[:24]}")
                           for n, item in enumerate(chunk)]
            api = WireBatchAPI(batch_items)
            self.apis.append(api)
            try:
                batch_id = api.create(batch_items)
            except ProviderError as exc:
                raise BatchFailed(
                    f"{_text(exc)}. Creating a batch of {len(chunk)} request(s) for agent {first.agent} "
                    "failed, so nothing of it was paid for; if this server has no batch API, record "
                    "without --batch") from None
            record: dict[str, object] = {
                "id": batch_id, "provider": api.provider, "agent": first.agent, "route": first.api,
                "round": number, "wire": route_record(batch_items[0]),
                "requests": {b.custom_id: {**_call_record(item), "api": item.api}
                             for b, item in zip(batch_items, chunk, strict=True)},
            }
            self.journal.add_batch(record)  # before waiting: a killed run resumes polling it
            self.batches_created += 1
            self.note(f"batch round {number}: created {describe(record)} for agent {first.agent}")
            created.append((api, record))
        return created

    def _api(self, client: ChatClient) -> BatchAPI:
        api = batch_api(client)
        self.apis.append(api)
        return api

    def _wait(self, api: Any, record: dict[str, object]) -> None:
        batch_id = str(record["id"])
        raw = record.get("requests")
        requests = {cid: value for cid, value in (raw.items() if isinstance(raw, dict) else [])
                    if isinstance(value, dict)}
        calls = {cid: _call_of(value) for cid, value in requests.items()}
        keys = {cid: str(value.get("key")) for cid, value in requests.items()}
        last = ""
        while True:
            try:
                status = api.status(batch_id)
            except ProviderError as exc:
                raise BatchFailed(f"{_text(exc)}. The batch {batch_id} is journaled: re-run with --resume "
                                  "to poll it again without paying for it twice") from None
            counts = ", ".join(f"{name} {count}" for name, count in status.counts.items())
            shown = f"{status.state} ({counts})" if counts else status.state
            if shown != last:
                self.note(f"batch {batch_id}: {shown}")
                last = shown
            if status.ended:
                break
            self.sleep(self.poll_s)
        run = str(record.get("run") or self.journal.run)
        try:
            if isinstance(record.get("wire"), dict):
                answers, failures = api.results(batch_id, status, list(calls))
                for cid, answer in answers.items():
                    self.journal.put_wire(keys[cid], calls[cid], str(requests[cid].get("api")), answer,
                                          obtained="batch", run=run)
            else:
                results = api.results(batch_id, status, calls)
                answers, failures = results.answers, results.failures
                for cid, response in results.answers.items():
                    self.journal.put(keys[cid], calls[cid], response, obtained="batch", run=run)
        except ProviderError as exc:
            raise BatchFailed(f"{_text(exc)}. The batch {batch_id} is journaled: re-run with --resume to "
                              "download its results again without paying for it twice") from None
        for cid, reason in failures.items():
            self.queue.failed[keys[cid]] = reason
        if failures:
            self.note(f"batch {batch_id} ended {status.state}: {len(answers)} answered, "
                      f"{len(failures)} without an answer (reported with their scenarios)")
        self.journal.finish_batch(batch_id)


def _text(exc: ProviderError) -> str:
    """The message of an error without its code (the new error carries its own)."""
    return str(exc.args[0]).rstrip(".") if exc.args else type(exc).__name__


def _call_record(item: Deferred | WireDeferred) -> dict[str, object]:
    """What the journal keeps of a queued call: key, scenario and canonical request (never a
    header or the SDK's request, which carries the real key)."""
    call = item.call
    return {"key": item.key, "scenario": call.scenario_id, "iteration": call.iteration,
            "provider": call.provider, "model": call.model, "purpose": call.purpose,
            "request": call.request}


def _batch_item(item: WireDeferred, custom_id: str) -> Any:
    from harness.wire.batch_routes import WireBatchItem

    return WireBatchItem(custom_id, item.api, item.request)


def _call_of(value: dict[str, object]) -> ChatCall:
    request = value.get("request")
    return ChatCall(str(value.get("scenario")), int(str(value.get("iteration", 0))),
                    str(value.get("provider")), str(value.get("model")),
                    request if isinstance(request, dict) else {}, str(value.get("purpose") or ""))


class BatchFailed(ProviderError):
    """A batch could not be created, polled or downloaded; what is journaled stays journaled."""

    code = "eval-batch-failed"
