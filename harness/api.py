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


class EvalSession:
    """One run, step by step: the CLI loops over it, the pytest plugin runs one item at a time.

    Construction loads and validates everything and raises
    :class:`~harness.errors.DatasetError` or :class:`~harness.errors.ConfigError`
    (exit 2) before any call is made.
    """

    def __init__(
        self,
        config: HarnessConfig,
        options: RunOptions | None = None,
        *,
        dataset: Dataset | None = None,
        clock: Callable[[], datetime] = utc_now,
        run_id: str | None = None,
    ) -> None:
        self.config = config
        self.options = options or RunOptions()
        self.dataset = dataset or load_dataset(config)
        self.scenarios = self.options.selection.apply(self.dataset.scenarios)
        _check_iteration_override(config, self.scenarios, self.options.iterations)
        self.clock = clock
        self.store = CacheStore(config.cache, ttl_days=config.ttl_days)
        self._clients = _ClientFactory(config, self.dataset, self.store, self.options, clock)
        self.summary = RunSummary(run_id=run_id or new_run_id(datetime.now(UTC)),
                                  started=clock(), results_dir=config.results)
        self._writer = ResultWriter(config.results, self.summary.run_id)
        self.summary.results_dir = self._writer.run_dir
        if self.options.mode == "offline":
            stamp = check_stamp(config.cache)
            self.summary.stamp_problem = "" if stamp.ok else str(stamp)

    def iterations_of(self, scenario: Scenario) -> int:
        """How many iterations a scenario runs (the override, else its own count)."""
        return self.options.iterations or scenario.iterations

    def plan(self) -> list[tuple[Scenario, int]]:
        """Every selected (scenario, iteration) pair, in dataset order."""
        return [(s, i) for s in self.scenarios for i in range(self.iterations_of(s))]

    def run_one(self, scenario: Scenario, iteration: int) -> IterationResult:
        """Run, assert and record one scenario iteration."""
        agent = self.dataset.agents[scenario.agent]
        request = self.dataset.request_for(scenario)
        client = self._clients.for_agent(agent).bind(scenario.id, iteration)
        result = _run_iteration(agent, scenario, iteration, request, client, request_digest(request))
        self._writer.write(result)
        self.summary.results.append(result)
        return result

    def finish(self) -> RunSummary:
        """Update the stamp after a recording run, write run.json, return the summary."""
        if self.options.mode != "offline" and self._clients.wrote_entries:
            write_stamp(self.config.cache, ttl_days=self.config.ttl_days, now=self.clock())
        self.summary.finished = self.clock()
        self._writer.finish(self.summary, _selection_record(self.options))
        return self.summary


def run_evals(
    config: HarnessConfig,
    options: RunOptions | None = None,
    *,
    dataset: Dataset | None = None,
    on_result: Callable[[IterationResult], None] | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> RunSummary:
    """Run the selected scenarios and return the summary; records go to ``config.results``."""
    session = EvalSession(config, options, dataset=dataset, clock=clock)
    for scenario, iteration in session.plan():
        result = session.run_one(scenario, iteration)
        if on_result is not None:
            on_result(result)
    return session.finish()


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
