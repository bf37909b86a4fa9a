"""Batch recording (``--batch``): every call that must be paid goes through a provider batch API.

A call depends on the answers before it (a tool loop's follow-up needs the
first answer, a judge needs the agent's output, a Python agent decides its
next call from the last one), so a batch run goes in **rounds**:

1. every planned iteration runs; the first call that has no answer yet (not in
   the cache for ``--record-missing``, not answered earlier in this run) is
   queued and the iteration stops there (:class:`CallDeferred`), nothing written;
2. the queued calls go out as one batch per agent and provider; the batch id
   and its custom_id -> key map are journaled *before* waiting, then the batch
   is polled until it ends and every answer is journaled (``obtained: batch``);
3. the stopped iterations run again: their answered calls are materialised from
   the journal, the next call is queued, and so on until no iteration stops.

Round 1 holds every first call, round 2 what those answers unlock (tool-loop
follow-ups, judges: all judges of an iteration go in the same round), and so
on; a scenario with k dependent calls needs k rounds. Entries and keys are the
ones a synchronous recording writes: the same request body goes out, the same
parser reads the answer, the same store writes the entry.

A killed process leaves its batches in the journal: ``--resume`` polls them
and collects their answers instead of paying again. A request the provider
answered with an error (or left unanswered: an expired or cancelled batch)
fails its iteration with the provider's reason, naming the scenario; with
``retry_errors`` it is paid again synchronously instead. What an expired batch
completed is kept.

This module runs the rounds (the client that defers, the guard against paying
twice, the round loop); step 2, the provider side of a round (the queue, batches
created, journaled, polled and collected), is :mod:`harness.running.batch_recorder`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

from harness.clients.base import ChatClient
from harness.core.declared import Scenario
from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import ProviderError
from harness.refresh.deferral import CallDeferred
from harness.refresh.journal import Journal, describe
from harness.requests.key import compute_key
from harness.results.record import IterationResult
from harness.running.batch_recorder import BatchQueue, BatchRecorder, Deferred

#: A run needing more rounds than this is looping (no scenario has that many dependent calls).
MAX_ROUNDS = 100


class DeferringClient:
    """The inner client of a batch run: queues each call that reaches it instead of paying."""

    def __init__(self, routing: ChatClient, agent: str, queue: BatchQueue, *,
                 prepare: Callable[[str], ChatClient], retry_errors: bool) -> None:
        self.provider = routing.provider
        self.model = routing.model
        self._routing = routing
        self._prepare = prepare
        self._agent = agent
        self._queue = queue
        self._retry_errors = retry_errors

    def endpoint_kind_of(self, provider: str) -> object:
        """The endpoint kind (``openai``, ``azure-openai``...) of the client that routes
        ``provider``, for the entry provenance; None when the routing client cannot tell."""
        routed = getattr(self._routing, "endpoint_kind_of", None)
        return routed(provider) if callable(routed) else None

    def complete(self, call: ChatCall) -> ChatResponse:
        key = compute_key(call)
        failure = self._queue.failed.get(key)
        if failure is not None:
            if self._retry_errors:
                return self._routing.complete(call)  # paid synchronously, as asked
            raise ProviderError(f"{failure}. Nothing was written to the cache; --batch-retry-errors "
                                "pays for it synchronously instead")
        self._queue.defer(Deferred(key, call, self._agent, self._prepare(call.provider)))
        raise CallDeferred(key)


class BatchPending(ProviderError):
    """An earlier run left batches at the provider: collect them (``--resume``) before paying again."""

    code = "eval-batch-pending"
    exit_code = 2


def refuse_pending(journal: Journal) -> None:
    """A run that is not resumed must not pay again for calls an earlier run's batch holds."""
    pending = [b for b in journal.pending_batches() if b.get("run") != journal.run]
    if pending:
        listed = "; ".join(f"{describe(b)} created {b.get('created', '?')}" for b in pending)
        raise BatchPending(
            f"an earlier run left {len(pending)} batch(es) at the provider, already paid for: "
            f"{listed}. Re-run with --resume to collect their answers without paying again, or "
            f"delete the journal folder {journal.directory} to pay for the calls again")


def run_batched(
    execute: Callable[[Scenario, int], IterationResult],
    plan: list[tuple[Scenario, int]],
    recorder: BatchRecorder,
    *,
    resume: bool,
    advance: Callable[[IterationResult], None] | None = None,
    workers: int = 1,
) -> list[IterationResult]:
    """Run ``plan`` in rounds (see the module docstring); the results in plan order.

    Within a round, up to ``workers`` iterations run at once (cache reads, entry
    writes, and synchronous retries when asked).
    """
    if resume:
        recorder.collect_pending()
    results: dict[int, IterationResult] = {}
    todo = list(range(len(plan)))
    for number in range(1, MAX_ROUNDS + 1):
        stopped = _run_round(execute, plan, todo, workers, results, advance)
        deferred = recorder.queue.drain()
        if not stopped:
            break
        if not deferred:  # pragma: no cover (a deferral always queues its call first)
            raise ProviderError("batch recording stopped iterations without queueing a call")
        recorder.note(f"batch round {number}: {len(deferred)} call(s) for {len(stopped)} iteration(s)")
        recorder.record_round(number, deferred)
        todo = stopped
    else:
        raise ProviderError(f"batch recording needed more than {MAX_ROUNDS} rounds; record these "
                            "scenarios without --batch")
    return [results[index] for index in range(len(plan))]


def _run_round(
    execute: Callable[[Scenario, int], IterationResult],
    plan: list[tuple[Scenario, int]],
    todo: list[int],
    workers: int,
    results: dict[int, IterationResult],
    advance: Callable[[IterationResult], None] | None,
) -> list[int]:
    """Run the ``todo`` iterations; fill ``results``; the indexes that stopped at a deferred call."""
    stopped: list[int] = []

    def finished(index: int, result: IterationResult) -> None:
        results[index] = result
        if advance is not None:
            advance(result)

    if workers <= 1 or len(todo) <= 1:
        for index in todo:
            try:
                finished(index, execute(*plan[index]))
            except CallDeferred:
                stopped.append(index)
        return stopped
    with ThreadPoolExecutor(max_workers=min(workers, len(todo)),
                            thread_name_prefix="harness-batch") as pool:
        futures = {pool.submit(execute, *plan[index]): index for index in todo}
        for future in as_completed(futures):
            index = futures[future]
            try:
                finished(index, future.result())
            except CallDeferred:
                stopped.append(index)
    return sorted(stopped)
