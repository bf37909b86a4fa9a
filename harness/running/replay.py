"""What an offline replay reads: the one answer to "which entries does this tree still use?".

``check`` (the unused guard) and ``prune`` ask this module, never a second
derivation of keys: it runs each selected scenario iteration exactly as an
offline ``run`` does (:func:`harness.running.iteration.run_iteration`, then the judges), through
the same caching client over the same offline client, and notes every key it
read and the first call that could not be answered. Nothing is written: the
offline client refuses every call, and no result record is kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from harness.cache.store import CacheStore
from harness.clients.caching import BoundClient, CachingClient
from harness.clients.offline import OfflineClient
from harness.core.entities import REPLAY_FAILURES, ChatCall, ChatResponse, JsonObject
from harness.core.errors import CacheError
from harness.core.rerecord import Rerecord
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset
from harness.loading.selecting import Selection
from harness.requests.key import compute_key
from harness.running.iteration import run_iteration
from harness.running.scoring import score_iteration
from harness.wire.binding import WireBinding
from harness.wire.recorder import WireRecorder


@dataclass(frozen=True)
class IterationReplay:
    """One scenario iteration replayed offline: the keys it read, and how it failed (if it did)."""

    scenario_id: str
    iteration: int
    keys: frozenset[str]
    """Full keys of the entries the replay read (agent calls, loop follow-ups, judges)."""
    failure: str = ""
    """Empty when every call was answered; else ``missed``, ``expired``, ``corrupt`` or ``error``."""
    message: str = ""
    missed_key: str = ""
    """The key of the call that missed (only for ``missed``)."""
    crashes: tuple[str, ...] = ()
    """``label: reason`` of every assertion whose check raised (a crash is no verdict)."""


class _ReadingClient(BoundClient):
    """A bound client that also remembers the calls the cache could not answer.

    A judge's miss does not fail a run (the score is ``not_evaluated``), but the
    replay did not read what it would have read: the iteration is incomplete.
    """

    def __init__(self, parent: CachingClient, scenario_id: str, iteration: int) -> None:
        super().__init__(parent, scenario_id, iteration)
        self.failures: list[tuple[str, str, str]] = []

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        try:
            return super().complete(request, provider=provider, model=model, purpose=purpose)
        except CacheError as exc:
            call = ChatCall(self.scenario_id, self.iteration, provider or self.parent.provider,
                            model or self.parent.model, request, purpose)
            self.failures.append((exc.status, str(exc), compute_key(call)))
            raise


def replay_reads(config: HarnessConfig, dataset: Dataset, selection: Selection,
                 now: datetime) -> list[IterationReplay]:
    """Replay every selected scenario iteration offline at ``now``; what each read, in plan order."""
    store = CacheStore(config.cache, ttl_days=config.ttl_days)
    clients: dict[str, CachingClient] = {}
    replays: list[IterationReplay] = []
    for scenario in selection.apply(dataset.scenarios):
        agent = dataset.agents[scenario.agent]
        caching = clients.get(agent.name)
        if caching is None:
            offline = OfflineClient(agent.provider, agent.model, store=store, project_root=config.root,
                                    credentials_file=config.credentials_file,
                                    api_key_env=agent.endpoint.get("api_key_env"),
                                    rerecord=Rerecord.of(agent))
            caching = clients[agent.name] = CachingClient(offline, store, clock=lambda: now,
                                                          rerecord=Rerecord.of(agent))
        request = dataset.request_for(scenario)
        for iteration in range(scenario.iterations):
            client = _ReadingClient(caching, scenario.id, iteration)
            wire = None
            if agent.at_the_wire:  # its SDK calls read the cache too, and never leave the machine
                assert isinstance(caching.inner, OfflineClient)
                recorder = WireRecorder("offline", store, refresh=False, clock=lambda: now,
                                        offline=caching.inner, rerecord=Rerecord.of(agent))
                wire = WireBinding(recorder, scenario.id, iteration, client.calls)
            failure = message = ""
            crashes: tuple[str, ...] = ()
            try:
                result, output = run_iteration(agent, scenario, iteration, request, client, "", wire,
                                               dataset.tenant_params(scenario))
                crashes = tuple(f"{v.assertion}: {v.reason}" for v in result.verdicts if v.crashed)
                if result.status in REPLAY_FAILURES:
                    failure, message = result.status, result.message
                else:
                    score_iteration(agent, request, result, output, client)  # the judges' calls
            except Exception as exc:  # noqa: BLE001 - a Python agent's own bug fails its replay
                failure, message = "error", f"{type(exc).__name__}: {exc}"
            missed = ""
            if client.failures:
                status, text, key = client.failures[0]
                failure, message = failure or status, message or text
                missed = key if status == "missed" else ""
            keys = frozenset(c.key for c in client.calls if c.cache_hit)
            replays.append(IterationReplay(scenario.id, iteration, keys, failure, message, missed,
                                           crashes))
    return replays
