"""The library API: load, select, replay (or re-record), assert, record.

The CLI and the pytest plugin are thin layers over :func:`run_evals`; anything
they can do, a script can do by calling it. A run is an
:class:`~harness.running.session.EvalSession` (re-exported here) driven to the end:
serially, on a thread pool (recording with ``--concurrency``), in forked jobs
(offline ``--jobs``) or in batch rounds (``--batch``); :func:`plan_run` is the
dry run of a recording.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import datetime
from typing import TYPE_CHECKING

from harness.cache.store import CacheStore
from harness.core.clock import utc_now
from harness.core.declared import Scenario
from harness.core.errors import ConfigError
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset, load_dataset
from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary
from harness.running.jobs import can_fork, run_jobs
from harness.running.options import DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY  # re-exported
from harness.running.options import Mode as Mode  # re-exported: the mode of RunOptions
from harness.running.options import RunOptions as RunOptions  # re-exported: the library API's options
from harness.running.options import validate_options as validate_options  # the library's option rules
from harness.running.selection import select_scenarios
from harness.running.session import EvalSession as EvalSession  # re-exported: one run, step by step
from harness.running.shards import plan_shard

if TYPE_CHECKING:
    from harness.running.plan import CallPlan
    from harness.running.progress import Progress


def run_evals(
    config: HarnessConfig,
    options: RunOptions | None = None,
    *,
    dataset: Dataset | None = None,
    on_result: Callable[[IterationResult], None] | None = None,
    clock: Callable[[], datetime] = utc_now,
    progress: Progress | None = None,
    on_plan: Callable[[CallPlan], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RunSummary:
    """Run the selected scenarios and return the summary; records go to ``config.results``.

    A recording run first computes its plan (calls, estimated tokens and cost),
    hands it to ``on_plan`` and refuses, before any call, to exceed
    ``options.max_calls`` (:class:`~harness.running.plan.PlanOverBudget`, exit 2).

    A recording run calls up to ``options.concurrency`` iterations at once;
    results and ``on_result`` calls still come in plan order. ``progress``
    (recording runs) is advanced as iterations finish; ``on_note`` gets the
    lines a person recording should read (batch rounds, journal answers not
    reused). An interrupt (Ctrl-C) of a recording run raises
    :class:`~harness.refresh.interrupt.RunInterrupted` saying what was kept.
    """
    session = EvalSession(config, options, dataset=dataset, clock=clock)
    try:
        return _run_session(session, on_result, progress, on_note or (lambda text: None), on_plan)
    except KeyboardInterrupt:
        if session.options.mode == "offline":
            raise
        raise session.interrupted() from None


def _run_session(session: EvalSession, on_result: Callable[[IterationResult], None] | None,
                 progress: Progress | None, on_note: Callable[[str], None],
                 on_plan: Callable[[CallPlan], None] | None = None) -> RunSummary:
    offline = session.options.mode == "offline"
    plan: list[tuple[Scenario, int]] = [] if offline else session.plan()  # offline: one at a time
    planned = session.planned()
    if session.options.mode != "offline" and (on_plan is not None
                                              or session.options.max_calls is not None):
        call_plan = session.call_plan()
        if on_plan is not None:
            on_plan(call_plan)
        call_plan.check_budget(session.options.max_calls)  # before any call
    session.ledger.planned(planned)
    session.note_journal(on_note)
    if progress is not None:
        progress.start(planned, session.ledger)
    try:
        workers = min(session.options.concurrency, planned)
        if session.options.batch:
            from harness.running.batch import run_batched

            recorder = session.batch_recorder(on_note)
            for result in run_batched(session.execute, plan, recorder, resume=session.options.resume,
                                      advance=progress.advance if progress is not None else None,
                                      workers=session.options.concurrency):
                session.summary.add(result)
                if on_result is not None:
                    on_result(result)
        elif offline and session.options.jobs > 1 and planned > 1 and can_fork():
            run_jobs(session, session.options.jobs, on_result)
        elif offline or workers <= 1:
            for scenario, iteration in session.pairs():
                result = session.run_one(scenario, iteration)
                if progress is not None:
                    progress.advance(result)
                if on_result is not None:
                    on_result(result)
        else:
            for result in _run_parallel(session, plan, workers, progress):
                session.summary.add(result)
                if on_result is not None:
                    on_result(result)
    finally:
        # the final line, once, even when the run raises: no timer outlives its run
        if progress is not None:
            progress.close()
    return session.finish()


def plan_run(config: HarnessConfig, options: RunOptions, *,
             dataset: Dataset | None = None) -> CallPlan:
    """The plan of a recording run without running it (``--dry-run``): no call, no credentials
    read, nothing written."""
    from harness.running.plan import make_plan

    if options.mode == "offline":
        raise ConfigError("--dry-run only applies with --refresh-cache or --record-missing "
                          "(an offline run calls nothing)")
    validate_options(options)
    dataset = dataset or load_dataset(config)
    scenarios = select_scenarios(config, dataset, options)  # the path a run selects through
    if options.shard is not None:
        scenarios = plan_shard(options.shard, scenarios,
                               lambda s: options.iterations or s.iterations).scenarios
    pairs = [(s, i) for s in scenarios for i in range(options.iterations or s.iterations)]
    store = CacheStore(config.cache, ttl_days=config.ttl_days)
    return make_plan(dataset, store, pairs, mode=options.mode, scripted=options.scripted,
                     prices=config.prices)


def _run_parallel(session: EvalSession, plan: list[tuple[Scenario, int]], workers: int,
                  progress: Progress | None) -> list[IterationResult]:
    """Every planned iteration on a thread pool; the results in plan order.

    On an interrupt (Ctrl-C) nothing new is started; calls in flight finish
    and are journaled, so a re-run does not pay for them again.
    """
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="harness-record")
    try:
        futures = [pool.submit(session.execute, scenario, iteration) for scenario, iteration in plan]
        # as_completed waits on every future once; wait(FIRST_COMPLETED) in a loop re-armed a
        # waiter on every pending future per completion: quadratic in the plan, on the
        # thread the workers share the interpreter lock with
        for future in as_completed(futures):
            result = future.result()
            if progress is not None:
                progress.advance(result)
        return [future.result() for future in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
