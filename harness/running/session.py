"""One run, step by step: :class:`EvalSession` loads, selects, runs one iteration at a
time, and finishes (stamp, ``rerecord-failed.json``, ``run.json``).

The CLI loops over a session through :func:`harness.running.api.run_evals`; the pytest
plugin and the replay endpoint (:mod:`harness.running.serving`) drive one directly, one
item or one request at a time. How a whole run is scheduled (serial, threads, jobs,
batch rounds) is :mod:`harness.running.api`'s; what one iteration does is
:mod:`harness.running.iteration`'s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cache.rerecords import (
    FailedRerecord,
    failed_path,
    read_failed,
    selected_marks,
    update_failed,
    warning_text,
)
from harness.cache.stamp import check_stamp, refuse_newer_format, stamp_path, write_stamp
from harness.cache.store import CacheStore
from harness.core.clock import utc_now
from harness.core.declared import Scenario
from harness.core.entities import REPLAY_FAILURES
from harness.core.forked import ForkedCall
from harness.documents.links import symlinks_under
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset, load_dataset
from harness.refresh.ledger import Ledger
from harness.requests.key import canonical_json, request_digest
from harness.results.record import IterationResult
from harness.results.recordwriter import ResultWriter
from harness.results.runsummary import RunSummary, new_run_id
from harness.running.factory import ClientFactory
from harness.running.iteration import run_iteration, with_counterexamples
from harness.running.options import RunOptions, validate_options
from harness.running.provenance_gate import gate, requirement
from harness.running.scoring import metric_values, score_iteration
from harness.running.selection import select_scenarios
from harness.running.shards import plan_shard

if TYPE_CHECKING:
    from harness.refresh.interrupt import RunInterrupted
    from harness.running.batch_recorder import BatchRecorder
    from harness.running.plan import CallPlan


class EvalSession:
    """One run, step by step: the CLI loops over it, the pytest plugin runs one item at a time.

    Construction loads and validates everything and raises
    :class:`~harness.core.errors.DatasetError` or :class:`~harness.core.errors.ConfigError`
    (exit 2) before any call is made. ``worker`` names this process's records file
    when several processes write one run (pytest-xdist workers).
    """

    def __init__(
        self,
        config: HarnessConfig,
        options: RunOptions | None = None,
        *,
        dataset: Dataset | None = None,
        clock: Callable[[], datetime] = utc_now,
        run_id: str | None = None,
        worker: str = "",
    ) -> None:
        self.config = config
        self.options = options or RunOptions()
        validate_options(self.options)
        self.dataset, cache_links = self._load(config, dataset)
        self.scenarios = select_scenarios(config, self.dataset, self.options, cache_links)
        self.shard_record: dict[str, Any] | None = None
        """What run.json records of the split when this run is one shard (else None)."""
        if self.options.shard is not None:
            shard = plan_shard(self.options.shard, self.scenarios, self.iterations_of)
            self.scenarios, self.shard_record = shard.scenarios, shard.record
        self.failed_rerecords = read_failed(config.cache)
        """Iterations whose last refresh did not obtain every answer (rerecord-failed.json)."""
        self.clock = clock
        self.store = CacheStore(config.cache, ttl_days=config.ttl_days)
        self.ledger = Ledger()
        """What this run has paid for, live (recording runs; the progress line reads it)."""
        run_id = run_id or new_run_id(datetime.now(UTC))
        if self.options.max_calls is not None and self.options.mode != "offline" \
                and not self.options.scripted:
            from harness.refresh import budget_dir
            from harness.refresh.budget import CallBudget

            self.ledger.budget = CallBudget(budget_dir(config.results), run_id, self.options.max_calls)
        self.clients = ClientFactory(config, self.dataset, self.store, self.options, clock,
                                     self.ledger, run_id)
        if self.options.mode != "offline":  # every selected agent's credentials, before any call
            refuse_newer_format(config.cache)
            self.clients.prepare(self.dataset.agents[s.agent] for s in self.scenarios)
        self._lock = threading.Lock()
        self._started: set[tuple[str, int]] = set()
        self.summary = RunSummary(run_id=run_id,
                                  started=clock(), results_dir=config.results,
                                  datasets=config.relative(config.datasets))
        self._writer = ResultWriter(config.results, self.summary.run_id, worker)
        self.summary.results_dir = self._writer.run_dir
        self.summary.shard = self.shard_record
        if self.options.mode == "offline":
            stamp = check_stamp(config.cache)
            self.summary.stamp_problem = "" if stamp.ok else str(stamp)
        if warning := self.rerecord_warning():
            self.summary.notes.append(warning)

    def _load(self, config: HarnessConfig, dataset: Dataset | None,
              ) -> tuple[Dataset, list[Path] | None]:
        """The dataset (``dataset``, else loaded) and, when a helper walked it meanwhile, the
        symbolic links under the cache. An offline ``--jobs N`` run (N > 1) has the cores to
        spare before its jobs start: half of the scenario files load in a forked helper, and
        another walks the cache (:mod:`harness.core.forked`)."""
        if dataset is not None:
            return dataset, None
        split = self.options.jobs > 1 and self.options.mode == "offline"
        walk = ForkedCall(partial(symlinks_under, config.cache)) if split else None
        try:
            loaded = load_dataset(config, agents=self._agents_read(), split=split)
        except BaseException:
            if walk is not None:
                walk.cancel()
            raise
        return loaded, walk.result() if walk is not None else None

    def write_records_as(self, worker: str) -> None:
        """From now on write this process's records to ``records-<worker>.jsonl`` of the same run
        folder (a forked job of ``--jobs``: :mod:`harness.running.jobs`)."""
        self._writer = ResultWriter(self.config.results, self.summary.run_id, worker)

    def close_records(self) -> None:
        """Close this process's records file (a forked job, before it exits)."""
        self._writer.close()

    def _agents_read(self) -> tuple[str, ...]:
        """The agent folders an offline run reads: the ``--agent`` ones (empty: all). A recording
        run reads every agent: rerecord-failed.json and a batch journal are kept per scenario
        of the whole tree, and a scenario missing from the dataset would look deleted there."""
        return self.options.selection.agents if self.options.mode == "offline" else ()

    def iterations_of(self, scenario: Scenario) -> int:
        """How many iterations a scenario runs (the override, else its own count)."""
        return self.options.iterations or scenario.iterations

    def plan(self) -> list[tuple[Scenario, int]]:
        """Every selected (scenario, iteration) pair, in dataset order."""
        return list(self.pairs())

    def pairs(self) -> Iterator[tuple[Scenario, int]]:
        """:meth:`plan` one pair at a time (an offline run of 50,000 scenarios need not hold a
        list of them beside the scenarios)."""
        return ((s, i) for s in self.scenarios for i in range(self.iterations_of(s)))

    def planned(self) -> int:
        """How many iterations :meth:`plan` holds."""
        return sum(self.iterations_of(s) for s in self.scenarios)

    def call_plan(self) -> CallPlan:
        """What this run would call, before any call (see :mod:`harness.running.plan`)."""
        from harness.running.plan import make_plan

        return make_plan(self.dataset, self.store, self.plan(), mode=self.options.mode,
                         scripted=self.options.scripted, prices=self.config.prices,
                         now=self.clock())

    def run_one(self, scenario: Scenario, iteration: int) -> IterationResult:
        """Run, assert and record one scenario iteration (thread-safe)."""
        result, record = self._execute(scenario, iteration)
        with self._lock:  # folded from the record just written: no second projection of it
            self.summary.add(result, record)
        return result

    def execute(self, scenario: Scenario, iteration: int) -> IterationResult:
        """Run, assert and write the record of one iteration, without adding it to the summary."""
        return self._execute(scenario, iteration)[0]

    def _execute(self, scenario: Scenario, iteration: int) -> tuple[IterationResult, dict[str, Any]]:
        """:meth:`execute`, and the record it wrote."""
        agent = self.dataset.agents[scenario.agent]
        request = self.dataset.request_for(scenario)
        client = self.clients.for_agent(agent).bind(scenario.id, iteration)
        wire = (self.clients.wire_binding(agent, scenario.id, iteration, client.calls)
                if agent.at_the_wire else None)
        first = True
        if self.options.mode != "offline":  # a --batch run executes an iteration once per round:
            with self._lock:  # count it once (offline runs keep no accounting: no set of 50k ids)
                first = (scenario.id, iteration) not in self._started
                self._started.add((scenario.id, iteration))
        if first:
            self.ledger.iteration_started()
        started = time.perf_counter()
        try:
            encoded = canonical_json(request)  # once, for the digest and the key of its call
            if not agent.at_the_wire:  # a declared agent sends this very object, unchanged
                client.encoded = (request, encoded)
            result, output = run_iteration(agent, scenario, iteration, request, client,
                                           request_digest(request, encoded), wire,
                                           self.dataset.tenant_params(scenario))
            result = score_iteration(agent, request, result, output, client)  # judges, metrics
            result = with_counterexamples(agent, scenario, result, output)  # no model call
            result = gate(result, requirement(agent, self.config.require_provenance),
                          self._stale_mark(scenario, iteration))
            if self.options.mutants and output is not None:  # no model call either
                from harness.mutants import check_mutants

                result = replace(result, mutants=check_mutants(agent, scenario, output).to_json())
            result.set_duration((time.perf_counter() - started) * 1000)  # made by this call
            record = self._writer.write(result)
        finally:
            self.ledger.iteration_done()
        return result, record

    def _stale_mark(self, scenario: Scenario, iteration: int) -> FailedRerecord | None:
        """The failed-refresh mark an iteration replays under (a refresh asks again: none)."""
        if self.options.mode == "refresh":
            return None
        return self.failed_rerecords.get((scenario.id, iteration))

    def rerecord_warning(self) -> str:
        """The selected iterations that replay answers a failed refresh left (empty: none)."""
        if self.options.mode == "refresh":
            return ""
        marks = selected_marks(self.failed_rerecords, ((s.id, i) for s, i in self.plan()))
        return warning_text(marks, self.config.relative(failed_path(self.config.cache)))

    def record_failed_rerecords(self) -> list[FailedRerecord]:
        """After a refresh: list in rerecord-failed.json the iterations of this run that did not
        obtain every answer, drop those that did (from the run's records: every process's)."""
        if self.options.mode != "refresh":
            return []
        if not self.failed_rerecords and not self._writer.failed_calls and self._writer.sole_writer():
            return []  # nothing listed, no call failed: nothing to change, no record read back
        from harness.report.load import load_records

        records = load_records(self._writer.run_dir)
        update_failed(self.config.cache, records, self.clock(),
                      scenarios={s.id for s in self.dataset.scenarios})
        self.failed_rerecords = read_failed(self.config.cache)
        ran = {(str(r["scenario"]), int(r["iteration"])) for r in records}
        marks = [mark for key, mark in sorted(self.failed_rerecords.items()) if key in ran]
        if marks:
            file = self.config.relative(failed_path(self.config.cache))
            self.summary.notes.append(warning_text(marks, file, this_run=True))
        return marks

    def update_stamp(self) -> None:
        """After a recording run that wrote entries, make sure the stamp names this cache format.

        The journal then forgets the answers this run materialised if every call
        was answered; after a failed call they stay, so re-running the same
        command pays only for what is still missing.
        """
        counts = self.summary.counts
        complete = not any(counts[status] for status in REPLAY_FAILURES)
        missing_stamp = not stamp_path(self.config.cache).is_file() and complete
        if self.options.mode != "offline" and (self.clients.wrote_entries or missing_stamp):
            # A missing stamp alone is written by any recording run whose every call was
            # answered (the keys it read are current by definition): no paid refresh needed.
            self.store.sync()  # the entries are durable before the journal forgets their answers
            write_stamp(self.config.cache, ttl_days=self.config.ttl_days)
        self.clients.settle(complete=not counts["error"])

    def write_run_file(self, summary: RunSummary | None = None) -> None:
        """Write run.json for ``summary`` (the pytest controller passes the merged one)."""
        summary = summary or self.summary
        summary.finished = self.clock()
        if self.options.mode != "offline" and summary.accounting is None:
            tally = self.ledger.tally()
            if summary is not self.summary and not tally.iterations_started:
                # the pytest-xdist controller: its workers made the calls; sum their records
                from harness.refresh.ledger import tally_of_records
                from harness.report.load import load_records

                summary.accounting = tally_of_records(load_records(self._writer.run_dir))
            else:
                summary.accounting = {**tally.to_json(), "iterations_done": summary.iterations}
        summary.metrics = metric_values(self.dataset.agents.values(), summary.totals)
        selection = _selection_record(self.options)
        if self.shard_record is not None:
            selection["shard"] = self.shard_record
        self._writer.finish(summary, selection)

    def finish(self) -> RunSummary:
        """Update the stamp (and rerecord-failed.json) after a recording run, write run.json,
        return the summary."""
        self.update_stamp()
        self.record_failed_rerecords()
        self.write_run_file()
        return self.summary

    def note_journal(self, note: Callable[[str], None]) -> None:
        """Say so when an earlier run's journaled answers are left unused (no ``--resume``)."""
        journal = self.clients.journal
        if journal is not None and (earlier := journal.earlier_answers()):
            note(f"note: {earlier} answer(s) journaled by an earlier run are not reused: a refresh "
                 "pays for fresh answers (--resume reuses them without paying)")

    def batch_recorder(self, note: Callable[[str], None]) -> BatchRecorder:
        """The recorder a ``--batch`` run submits its rounds through."""
        return self.clients.batch_recorder(note)

    def interrupted(self) -> RunInterrupted:
        """After Ctrl-C: keep everything paid for (the journal is not forgotten), say what resumes."""
        from harness.refresh.interrupt import interrupted

        journal = self.clients.journal
        pending = len(journal.pending_batches()) if journal is not None else 0
        folder = self.config.relative(journal.directory) if journal is not None else None
        written = sum(client.written for client in self.clients.clients())
        self.clients.settle(complete=False)
        return interrupted(written=written, journal=folder, pending_batches=pending)


def _selection_record(options: RunOptions) -> dict[str, object]:
    s = options.selection
    return {"agents": list(s.agents), "tenants": list(s.tenants), "types": list(s.types),
            "scenarios": list(s.scenarios), "iterations": options.iterations,
            "mode": options.mode, "scripted": options.scripted}
