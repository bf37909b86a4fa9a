"""The library API: load, select, replay (or re-record), assert, record.

The CLI and the pytest plugin are thin layers over :func:`run_evals`; anything
they can do, a script can do by calling it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

from harness.assertions import evaluate, overall
from harness.cache.layout import worst_relative_path
from harness.cache.stamp import check_stamp, write_stamp
from harness.cache.store import CacheStore, utc_now
from harness.clients.base import ChatClient
from harness.clients.caching import BoundClient, CachingClient
from harness.clients.offline import OfflineClient
from harness.clients.scripted import ScriptedClient
from harness.config import HarnessConfig
from harness.datasets import Dataset, Selection, load_dataset
from harness.entities import Agent, Scenario, Status
from harness.errors import CacheError, ConfigError, HarnessError, ProviderError
from harness.execution import run_declared_agent
from harness.results import IterationResult, ResultWriter, RunSummary, new_run_id, request_digest

#: offline: cache or fail. refresh: re-record every selected call. record-missing: only misses.
Mode = Literal["offline", "refresh", "record-missing"]


@dataclass(frozen=True)
class RunOptions:
    """What to run and how."""

    selection: Selection = field(default_factory=Selection)
    iterations: int | None = None
    """Overrides every scenario's own iteration count when set."""
    mode: Mode = "offline"
    scripted: bool = False
    """Answer refresh calls from each agent's script file instead of the real provider."""


def run_evals(
    config: HarnessConfig,
    options: RunOptions | None = None,
    *,
    dataset: Dataset | None = None,
    on_result: Callable[[IterationResult], None] | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> RunSummary:
    """Run the selected scenarios and return the summary; records go to ``config.results``.

    Raises :class:`~harness.errors.DatasetError` or :class:`~harness.errors.ConfigError`
    (exit 2) before any call when the datasets or options are invalid.
    """
    options = options or RunOptions()
    dataset = dataset or load_dataset(config)
    scenarios = options.selection.apply(dataset.scenarios)
    _check_iteration_override(config, scenarios, options.iterations)
    store = CacheStore(config.cache, ttl_days=config.ttl_days)
    clients = _ClientFactory(config, dataset, store, options, clock)
    started = clock()
    run_id = new_run_id(datetime.now(UTC))
    summary = RunSummary(run_id=run_id, started=started, results_dir=config.results)
    writer = ResultWriter(config.results, summary.run_id)
    summary.results_dir = writer.run_dir
    if options.mode == "offline":
        stamp = check_stamp(config.cache)
        summary.stamp_problem = "" if stamp.ok else str(stamp)
    for scenario in scenarios:
        agent = dataset.agents[scenario.agent]
        request = dataset.request_for(scenario)
        digest = request_digest(request)
        for iteration in range(options.iterations or scenario.iterations):
            client = clients.for_agent(agent).bind(scenario.id, iteration)
            result = _run_iteration(agent, scenario, iteration, request, client, digest)
            writer.write(result)
            summary.results.append(result)
            if on_result is not None:
                on_result(result)
    if options.mode != "offline" and clients.wrote_entries:
        write_stamp(config.cache, ttl_days=config.ttl_days, now=clock())
    summary.finished = clock()
    writer.finish(summary, _selection_record(options))
    return summary


def _run_iteration(
    agent: Agent,
    scenario: Scenario,
    iteration: int,
    request: dict[str, object],
    client: BoundClient,
    digest: str,
) -> IterationResult:
    try:
        output = run_declared_agent(agent, request, client)
    except CacheError as exc:
        return IterationResult(scenario, iteration, exc.status, message=str(exc),  # type: ignore[arg-type]
                               calls=tuple(client.calls), request_digest=digest)
    except HarnessError as exc:
        return IterationResult(scenario, iteration, "error", message=str(exc),
                               calls=tuple(client.calls), request_digest=digest)
    verdicts = tuple(evaluate(scenario.expect, output, output_kind=agent.output,
                              output_schema=agent.output_schema))
    calls = tuple(client.calls)
    base = IterationResult(scenario, iteration, "passed", verdicts, "", calls, output.response, digest)
    if not verdicts:
        return _replace(base, "unchecked", "the scenario has no hard assertion (expect is empty): "
                                           "a scenario that checks nothing cannot pass")
    verdict = overall(verdicts)
    if verdict == "reject":
        rejected = [v for v in verdicts if v.outcome == "reject"]
        return _replace(base, "rejected", "; ".join(f"{v.assertion}: {v.reason}" for v in rejected))
    if verdict == "not_evaluated":
        return _replace(base, "unchecked", "no assertion could be evaluated (all not_evaluated): "
                                           "the scenario checked nothing")
    return base


def _replace(result: IterationResult, status: Status, message: str) -> IterationResult:
    return replace(result, status=status, message=message)


def _check_iteration_override(
    config: HarnessConfig, scenarios: list[Scenario], iterations: int | None
) -> None:
    if iterations is None:
        return
    if iterations < 1:
        raise ConfigError(f"--iterations must be at least 1, got {iterations}")
    cache_rel = config.relative(config.cache)
    for scenario in scenarios:
        worst = worst_relative_path(cache_rel, scenario.id, iterations)
        if len(worst) > config.path_budget:
            raise ConfigError(
                f"--iterations {iterations}: {scenario.id} would need a {len(worst)}-character "
                f"cache path, over the budget of {config.path_budget}")


def _selection_record(options: RunOptions) -> dict[str, object]:
    s = options.selection
    return {"agents": list(s.agents), "tenants": list(s.tenants), "types": list(s.types),
            "scenarios": list(s.scenarios), "iterations": options.iterations,
            "mode": options.mode, "scripted": options.scripted}


class _ClientFactory:
    """One caching client per agent; the inner client depends on the mode."""

    def __init__(self, config: HarnessConfig, dataset: Dataset, store: CacheStore,
                 options: RunOptions, clock: Callable[[], datetime]) -> None:
        self.config = config
        self.dataset = dataset
        self.store = store
        self.options = options
        self.clock = clock
        self._clients: dict[str, CachingClient] = {}

    @property
    def wrote_entries(self) -> bool:
        return any(client.written for client in self._clients.values())

    def for_agent(self, agent: Agent) -> CachingClient:
        client = self._clients.get(agent.name)
        if client is None:
            client = CachingClient(self._inner(agent), self.store,
                                   refresh=self.options.mode == "refresh", clock=self.clock)
            self._clients[agent.name] = client
        return client

    def _inner(self, agent: Agent) -> ChatClient:
        if self.options.mode == "offline":
            return OfflineClient(agent.provider, agent.model, store=self.store,
                                 project_root=self.config.root,
                                 credentials_file=self.config.credentials_file,
                                 api_key_env=agent.endpoint.get("api_key_env"))
        if self.options.scripted:
            if agent.script_file is None:
                raise ConfigError(f"agent {agent.name} has no script file: add 'script:' to "
                                  f"{agent.name}/agent.yaml or refresh without --scripted")
            return ScriptedClient.from_file(agent.provider, agent.model, agent.script_file)
        raise ProviderError(
            f"agent {agent.name}: recording against the real '{agent.provider}' provider is not "
            "available in this version; seed the cache from the agent's script with --scripted")
