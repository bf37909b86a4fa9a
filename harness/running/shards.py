"""Which scenarios one shard of a run evaluates (``run --shard K/N``, ``pytest --evals-shard K/N``).

An eval that no longer fits one CI job is split into N jobs, each running one
shard, and merged afterwards into one run (:mod:`harness.report.merge`). The split has
to be computed by N processes that never talk to each other, so it is a pure
function of what they all see: the selected scenarios (ids and iteration
counts) and, optionally, the records of an earlier run giving each scenario's
duration. A scenario's iterations always stay in one shard (they share a cache
folder and a counterexample check).

Balance: without durations every iteration weighs the same, so shards differ
by at most one scenario's iterations; with durations each scenario weighs the
mean time of its recorded iterations times its iteration count (a scenario
the earlier run did not have weighs the mean of those it had). Scenarios are
dealt heaviest first to the least loaded shard (longest-processing-time
first); equal weights are ordered by a sha256 of the scenario id, so the order
of files on disk never matters. Every shard gets a scenario while there are at
least N; with fewer, the shards left over run nothing and pass (their run.json
still records the split), and the merge judges the whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.declared import Scenario
from harness.core.errors import ConfigError

#: What ``K/N`` looks like, for messages.
_FORM = "K/N (shard K of N, 1 <= K <= N), e.g. 1/4"


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` (1-based) of ``count``, and the run whose durations balance the split."""

    index: int
    count: int
    durations: Path | None = None
    """A run folder (``eval-results/results/<run-id>``) or its ``run.json``; None: count balance."""
    flags: tuple[str, str] = ("--shard", "--shard-durations")
    """How the front end spells the two options (``pytest`` prefixes them ``--evals-``)."""

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` -> ``(K, N)``; :class:`ValueError` with the fix otherwise (front ends turn it
    into their own usage error)."""
    index_text, slash, count_text = (part.strip() for part in text.partition("/"))
    if not slash or not index_text.isdigit() or not count_text.isdigit():
        raise ValueError(f"{text!r} is not {_FORM}")
    index, count = int(index_text), int(count_text)
    if count < 1:
        raise ValueError(f"{text!r}: N must be at least 1 (the number of shards)")
    if not 1 <= index <= count:
        raise ValueError(f"{text!r}: K must be between 1 and {count}; the shards of {count} are "
                         f"1/{count} .. {count}/{count}")
    return index, count


# -- durations --------------------------------------------------------------------------------


def load_durations(path: Path, flag: str = "--shard-durations") -> dict[str, tuple[float, int]]:
    """Scenario id -> (total ``duration_ms``, iterations) from an earlier run's records.

    ``path`` is a run folder or its ``run.json``; a merged run is the best source
    (it holds every scenario). Raises :class:`ConfigError` naming the path and the
    fix when it holds no records.
    """
    from harness.report.load import load_records

    folder = path.parent if path.name == "run.json" else path
    if not folder.is_dir():
        raise ConfigError(f"{flag} {path}: no such run folder; give "
                          "eval-results/results/<run-id> (or its run.json) of a finished run")
    records = load_records(folder)
    if not records:
        raise ConfigError(f"{flag} {path}: holds no iteration records "
                          "(records*.jsonl); give the folder of a finished run, e.g. the last "
                          "merged run of the main branch")
    table: dict[str, tuple[float, int]] = {}
    for record in records:
        total, count = table.get(str(record["scenario"]), (0.0, 0))
        duration = record.get("duration_ms")
        table[str(record["scenario"])] = (
            total + (float(duration) if isinstance(duration, (int, float)) else 0.0), count + 1)
    return table


def durations_digest(durations: Mapping[str, tuple[float, int]] | None) -> str | None:
    """A fingerprint of the durations table: shards balanced by different tables do not fit."""
    if durations is None:
        return None
    text = json.dumps(sorted((k, round(v[0], 3), v[1]) for k, v in durations.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# -- assignment -------------------------------------------------------------------------------


def split(items: Sequence[tuple[str, int]], count: int,
          durations: Mapping[str, tuple[float, int]] | None = None) -> list[int]:
    """The shard (0-based) of every ``(scenario id, iterations)`` item, in input order."""
    weights = _weights(items, durations)
    order = sorted(range(len(items)),
                   key=lambda n: (-weights[n], _tiebreak(items[n][0]), items[n][0]))
    loads = [0.0] * count
    sizes = [0] * count
    shard_of = [0] * len(items)
    for n in order:
        target = min(range(count), key=lambda s: (loads[s], sizes[s], s))
        shard_of[n] = target
        loads[target] += weights[n]
        sizes[target] += 1
    return shard_of


def _weights(items: Sequence[tuple[str, int]],
             durations: Mapping[str, tuple[float, int]] | None) -> list[float]:
    if not durations:
        return [float(iterations) for _, iterations in items]
    per_iteration = {sid: total / n for sid, (total, n) in durations.items() if n}
    known = [per_iteration[sid] for sid, _ in items if sid in per_iteration]
    fallback = sum(known) / len(known) if known else 1.0
    floor = 1e-6  # a scenario recorded at 0 ms still counts as something to run
    return [max(per_iteration.get(sid, fallback), floor) * iterations for sid, iterations in items]


def _tiebreak(scenario_id: str) -> str:
    return hashlib.sha256(scenario_id.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ShardPlan:
    """One shard's scenarios and what its ``run.json`` records about the split."""

    scenarios: list[Scenario]
    record: dict[str, Any]


def plan_shard(spec: ShardSpec, scenarios: Sequence[Scenario],
               iterations_of: Callable[[Scenario], int]) -> ShardPlan:
    """The scenarios of shard ``spec`` out of the whole selection ``scenarios`` (in dataset
    order), and the record that lets a merge check the shards fit together: the digest of
    the whole selection's plan, its iteration count and the durations used."""
    items = [(s.id, iterations_of(s)) for s in scenarios]
    durations = load_durations(spec.durations, spec.flags[1]) if spec.durations is not None else None
    shard_of = split(items, spec.count, durations)
    mine = [s for s, shard in zip(scenarios, shard_of, strict=True) if shard == spec.index - 1]
    record = {
        "index": spec.index,
        "count": spec.count,
        "balance": "durations" if durations is not None else "count",
        "durations_digest": durations_digest(durations),
        "plan_digest": plan_digest(items),
        "planned_scenarios": len(items),
        "planned_iterations": sum(n for _, n in items),
        "scenarios": len(mine),
        "iterations": sum(iterations_of(s) for s in mine),
    }
    return ShardPlan(mine, record)


def plan_digest(items: Sequence[tuple[str, int]]) -> str:
    """A fingerprint of the whole selection: every scenario id and its iteration count."""
    text = json.dumps(sorted(items), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
