"""One caching client per agent, with the inner client the run's mode asks for.

Split from :mod:`harness.running.api` because it is the one place that knows how a
mode becomes clients: offline (the refusing client), scripted, a paid provider
(with the journal, the shared rate limit and, under ``--batch``, the deferring
client of the batch rounds). :class:`~harness.running.session.EvalSession` owns one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from harness.cache.store import CacheStore
from harness.clients.base import ChatClient
from harness.clients.caching import CachingClient, CallRecord
from harness.clients.offline import OfflineClient
from harness.clients.scripted import ScriptedClient
from harness.core.declared import Agent
from harness.core.errors import ConfigError, HarnessError
from harness.core.rerecord import Rerecord
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset
from harness.refresh.ledger import Ledger

if TYPE_CHECKING:
    from harness.refresh.journal import Journal
    from harness.refresh.ratelimit import RateLimiter
    from harness.running.batch_recorder import BatchQueue, BatchRecorder
    from harness.running.options import RunOptions
    from harness.wire.binding import WireBinding
    from harness.wire.recorder import WireMode, WireRecorder


class ClientFactory:
    """One caching client per agent; the inner client depends on the mode.

    Recording against a real provider adds the journal (paid answers survive a
    crash) and, when ``requests_per_minute`` is set, a rate limiter shared by
    every process of the project.
    """

    def __init__(self, config: HarnessConfig, dataset: Dataset, store: CacheStore,
                 options: RunOptions, clock: Callable[[], datetime], ledger: Ledger,
                 run_id: str = "") -> None:
        self.config = config
        self.ledger = ledger
        self.dataset = dataset
        self.store = store
        self.options = options
        self.clock = clock
        self._clients: dict[str, CachingClient] = {}
        self._lock = threading.RLock()
        self._paid = options.mode != "offline" and not options.scripted
        self._journal: Journal | None = None
        self._limiters: dict[str, RateLimiter] = {}
        self.run_id = run_id
        self._batch_queue: BatchQueue | None = None
        self._wire: dict[str, WireRecorder] = {}

    @property
    def journal(self) -> Journal | None:
        """The journal of a paid recording run (opened by :meth:`prepare`), else None."""
        return self._journal

    def clients(self) -> list[CachingClient]:
        with self._lock:
            return list(self._clients.values())

    @property
    def wrote_entries(self) -> bool:
        return any(client.written for client in self._clients.values()) or any(
            recorder.written for recorder in self._wire.values())

    def prepare(self, agents: Iterable[Agent]) -> None:
        """Build the client of every agent now, so missing credentials fail before any call."""
        for agent in agents:
            self.for_agent(agent)

    def for_agent(self, agent: Agent) -> CachingClient:
        with self._lock:
            client = self._clients.get(agent.name)
            if client is None:
                client = CachingClient(self._inner(agent), self.store,
                                       refresh=self.options.mode == "refresh", clock=self.clock,
                                       journal=self._journal_of() if self._paid else None,
                                       ledger=self.ledger if self.options.mode != "offline"
                                       else None, rounds=self.options.batch,
                                       rerecord=Rerecord.of(agent, self.options.iterations))
                self._clients[agent.name] = client
            return client

    def wire_for(self, agent: Agent) -> WireRecorder:
        """What answers the wire exchanges of ``agent``'s SDK calls (:mod:`harness.wire`)."""
        from harness.wire.recorder import WireRecorder

        with self._lock:
            recorder = self._wire.get(agent.name)
            if recorder is None:
                caching = self.for_agent(agent)
                inner = caching.inner
                mode: WireMode = "offline" if isinstance(inner, OfflineClient) else (
                    "scripted" if isinstance(inner, ScriptedClient) else "paid")
                recorder = WireRecorder(
                    mode, self.store, refresh=self.options.mode == "refresh", clock=self.clock,
                    offline=inner if isinstance(inner, OfflineClient) else None,
                    script=inner if isinstance(inner, ScriptedClient) else None,
                    resolve_key=self._wire_key if mode == "paid" else None,
                    ledger=caching.ledger, rerecord=caching.rerecord,
                    journal=self._journal_of() if mode == "paid" else None,
                    batch=self._batch_queue if mode == "paid" and self.options.batch else None,
                    batch_retry_errors=self.options.batch_retry_errors,
                    limit=self._wire_limit(agent) if mode == "paid" else None, agent=agent.name)
                self._wire[agent.name] = recorder
            return recorder

    def wire_binding(self, agent: Agent, scenario_id: str, iteration: int,
                     calls: list[CallRecord]) -> WireBinding:
        """The binding of one iteration of ``agent``'s SDK calls; its call records go to ``calls``
        (imported here: a run of declared agents never loads the wire binding)."""
        from harness.wire.binding import WireBinding

        return WireBinding(self.wire_for(agent), scenario_id, iteration, calls)

    def _wire_key(self, family: str) -> str:
        """The real key of a provider family, for a paid wire recording (environment, then file)."""
        from harness.providers.credentials import resolve_credentials

        return resolve_credentials(
            family, credentials_file=self.config.credentials_file,
            shown_file=(self.config.relative(self.config.credentials_file)
                        if self.config.credentials_file else None)).api_key

    def settle(self, *, complete: bool) -> None:
        """After the run: forget journaled answers if every call was answered; close handles."""
        if self._journal is not None:
            self.store.sync()
            if complete:
                for client in self._clients.values():
                    self._journal.forget(client.journaled)
                for recorder in self._wire.values():
                    self._journal.forget(recorder.journaled)
            self._journal.close()
            self._journal = None
        for limiter in self._limiters.values():
            limiter.close()
        self._limiters.clear()

    def _journal_of(self) -> Journal:
        from harness.refresh import journal_dir
        from harness.refresh.journal import Journal

        if self._journal is None:
            journal = Journal(journal_dir(self.config.results), run=self.run_id,
                              resume=self.options.resume)
            if not self.options.resume:
                from harness.running.batch import refuse_pending

                try:
                    refuse_pending(journal)
                except HarnessError:
                    journal.close()
                    raise
            self._journal = journal
        return self._journal

    def batch_recorder(self, note: Callable[[str], None]) -> BatchRecorder:
        from harness.running.batch_recorder import BatchRecorder

        assert self._batch_queue is not None, "batch_recorder() of a run without --batch"
        agents = self.dataset.agents

        def resolve(agent: str, provider: str) -> ChatClient:
            if agent not in agents:
                raise ConfigError(f"a journaled batch belongs to agent {agent}, which no longer "
                                  f"exists: restore it, or delete {journal_dir_of(self.config)} "
                                  "to give up the batch's answers")
            return self._provider(agents[agent], provider)

        def resolve_wire(route: dict[str, Any]) -> Any:
            from harness.wire.batch import WireBatchAPI

            return WireBatchAPI.from_route(route, self._wire_key(str(route.get("family"))))

        return BatchRecorder(self._journal_of(), self._batch_queue, resolve, resolve_wire,
                             poll_s=self.options.batch_poll_s, note=note)

    def _provider(self, agent: Agent, name: str | None = None) -> ChatClient:
        from harness.providers import build_provider, check_agent
        from harness.providers.credentials import resolve_credentials

        provider = name or agent.provider
        check_agent(agent, provider)
        credentials = resolve_credentials(
            provider, agent=agent, credentials_file=self.config.credentials_file,
            shown_file=(self.config.relative(self.config.credentials_file)
                        if self.config.credentials_file else None))
        endpoint = agent.endpoint if provider == agent.provider else {}
        per_minute = int(endpoint.get("requests_per_minute") or self.config.requests_per_minute)
        return build_provider(agent, credentials, provider=provider,
                              limiter=self._limiter(provider, credentials.base_url, per_minute),
                              observer=self.ledger)

    def _wire_limit(self, agent: Agent) -> Callable[[str, str], None] | None:
        """The rate limit of an SDK agent's paid requests: the one its provider's declared agents
        share (same name: family and base URL), from agent.yaml ``endpoint.requests_per_minute``
        or ``[tool.harness] requests_per_minute``; None without one."""
        per_minute = int(agent.endpoint.get("requests_per_minute") or self.config.requests_per_minute)
        if per_minute <= 0:
            return None

        def limit(provider: str, base_url: str) -> None:
            limiter = self._limiter(provider, base_url, per_minute)
            if limiter is not None:
                limiter.acquire()

        return limit

    def _limiter(self, provider: str, base_url: str, per_minute: int) -> RateLimiter | None:
        from harness.refresh import ratelimit_dir
        from harness.refresh.ratelimit import RateLimiter

        if per_minute <= 0:
            return None
        name = f"{provider} {base_url}"
        with self._lock:
            if name not in self._limiters:
                self._limiters[name] = RateLimiter(ratelimit_dir(self.config.results), name, per_minute)
            return self._limiters[name]

    def _inner(self, agent: Agent) -> ChatClient:
        if self.options.mode == "offline":
            return OfflineClient(agent.provider, agent.model, store=self.store,
                                 project_root=self.config.root,
                                 credentials_file=self.config.credentials_file,
                                 api_key_env=agent.endpoint.get("api_key_env"),
                                 rerecord=Rerecord.of(agent, self.options.iterations))
        if self.options.scripted:
            if agent.script_file is None:
                raise ConfigError(f"agent {agent.name} has no script file: add 'script:' to "
                                  f"{agent.name}/agent.yaml or refresh without --scripted")
            return ScriptedClient.from_file(agent.provider, agent.model, agent.script_file)
        from harness.providers import RoutingClient

        primary = self._provider(agent) if agent.provider else None  # a wire-only agent has none
        client = RoutingClient(primary, lambda name: self._provider(agent, name))
        judge_provider = agent.judge.get("provider")
        if isinstance(judge_provider, str) and judge_provider:
            client.prepare(judge_provider)  # the default judge's key is checked up front too
        if self.options.batch:
            from harness.running.batch import DeferringClient
            from harness.running.batch_recorder import BatchQueue, batch_api

            if not agent.at_the_wire:  # an SDK agent's route is known from its requests only
                batch_api(client.prepare(agent.provider))  # a provider without a batch API fails now
            if self._batch_queue is None:
                self._batch_queue = BatchQueue()
            return DeferringClient(client, agent.name, self._batch_queue, prepare=client.prepare,
                                   retry_errors=self.options.batch_retry_errors)
        return client


def journal_dir_of(config: HarnessConfig) -> str:
    """The journal folder of a project, relative to its root, for messages."""
    from harness.refresh import journal_dir

    return config.relative(journal_dir(config.results))
