"""The run summary: counts, failures and metrics of one run, kept in memory while it runs.

Its iterations are folded into :class:`~harness.results.totals.RunTotals` as they arrive
(the records themselves are on disk); :mod:`harness.results.recordwriter` writes it as
``run.json`` and the reports read it (or that file) back.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.assertions.metrics import MetricValue
from harness.results.record import IterationResult
from harness.results.totals import RunTotals


@dataclass
class RunSummary:
    """Counts and failures of a run; the full records are on disk.

    Iterations are added in plan order (:meth:`add`) and folded into ``totals``: a run of
    50,000 scenarios keeps counts and its failed iterations, not a result per iteration.
    """

    run_id: str
    started: datetime
    results_dir: Path
    finished: datetime | None = None
    stamp_problem: str = ""
    totals: RunTotals = field(default_factory=RunTotals)
    datasets: str = ""
    """The datasets folder relative to the project root (the JUnit classname's first part)."""
    metrics: list[MetricValue] = field(default_factory=list)
    """Declared metric values, computed when the run finishes."""
    accounting: dict[str, int | None] | None = None
    """The ledger's totals of a recording run (paid attempts, retries, journal...); None offline."""
    shard: dict[str, Any] | None = None
    """The split of one shard of a run (``--shard K/N``, see :mod:`harness.running.shards`): running
    nothing is then no failure of its own, since a selection of fewer scenarios than shards
    leaves some empty; the merge judges the whole. """
    notes: list[str] = field(default_factory=list)
    """Warnings printed above the summary: iterations that replay answers a failed refresh left."""

    def add(self, result: IterationResult, shipped: Mapping[str, Any] | None = None) -> None:
        """Count one iteration (the next in plan order); ``shipped``: a record of it the caller
        already holds (its ``summary`` record a forked job sent, or the full record the run
        wrote; see :meth:`RunTotals.add`)."""
        self.totals.add(result, shipped)

    def extend(self, results: Iterable[IterationResult]) -> None:
        """Count several iterations, in plan order."""
        for result in results:
            self.totals.add(result)

    @property
    def iterations(self) -> int:
        """How many iterations the run holds."""
        return self.totals.iterations

    @property
    def counts(self) -> Counter[str]:
        """Iterations per status."""
        return self.totals.counts

    @property
    def failures(self) -> list[IterationResult]:
        """Failed iterations, in run order."""
        return self.totals.failures

    @property
    def blocking(self) -> list[IterationResult]:
        """Rejects in negative or adversarial scenarios, in run order."""
        return [r for r in self.totals.failures if r.blocking]

    @property
    def exit_code(self) -> int:
        """0 when every hard assertion passed, every gated metric met its target and the
        stamp is current, else 1. Judge scores never enter it."""
        failed = self.failures or any(m.blocks for m in self.metrics)
        return 1 if failed or self.stamp_problem or not (self.iterations or self.shard is not None) else 0


def new_run_id(now: datetime) -> str:
    """Sortable and unique: UTC time to the millisecond plus a random suffix."""
    return f"{now.strftime('%Y%m%dT%H%M%S')}{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"
