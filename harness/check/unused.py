"""Unused-entry guard: "used" is what an offline replay READS, nothing else.

A prompt change or a deleted scenario leaves entries nobody will ever read;
they bloat every clone and hide the one entry that matters. Deciding which
ones from a second derivation of keys went wrong three ways (a Python agent's
second call, a tool loop's follow-up after an expired first entry, the judges
of a corrupt agent entry were all called unused, and prune deleted paid
answers). So the guard replays every selected scenario iteration offline,
exactly as ``run`` does (agent calls, tool-loop follow-ups, Python agents'
calls, judges), through the same caching client, and an entry is referenced
when that replay read it.

An iteration that does not replay completely (a miss, an expired or corrupt
entry, an error, a judge miss) cannot tell what it would read after the failing
call, so none of its entries is ever classified unused: it is listed as a
failure to fix first, and prune refuses to run while there is one (unless
``--force``, and even then it keeps every entry of such an iteration).

Scope: a filtered check only looks at the entries of scenarios the filters
select (a deleted scenario is in scope when its id passes the agent, tenant
and scenario filters and no ``--type`` filter is given, since its type is gone
with it). Corrupt entries are left to the integrity guard, and entries with a
``purpose`` this version does not know are left alone: what cannot be read or
understood is never classified, so prune never deletes it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.cache.layout import entry_dir, iteration_dir
from harness.check.context import CheckContext
from harness.check.entries import CacheTree, EntryRecord
from harness.check.findings import Finding, GuardResult
from harness.core.declared import Scenario
from harness.core.rerecord import Fix, Rerecord
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset
from harness.loading.selecting import Selection
from harness.running.replay import IterationReplay, replay_reads

GUARD = "unused"
JUDGE_PREFIX = ("judge:", "rubric:")  # graders of an answer: built-in judges and rubric items


@dataclass(frozen=True)
class Orphan:
    """An entry folder no selected scenario iteration reads, and why."""

    folder: Path
    scenario_id: str
    reason: str


@dataclass(frozen=True)
class Failure:
    """A selected scenario iteration that does not replay: its entries stay unclassified."""

    scenario_id: str
    iteration: int
    status: str
    """``missed``, ``expired``, ``corrupt`` or ``error``."""
    message: str
    folder: Path
    """The iteration folder (or, for a miss, the entry folder the replay expected)."""
    hint: str
    """The command that fixes it (:mod:`harness.core.rerecord`)."""


@dataclass(frozen=True)
class Usage:
    """The classification of the in-scope part of the tree."""

    orphans: tuple[Orphan, ...]
    failures: tuple[Failure, ...]
    referenced: int
    kept: int = 0
    """Readable in-scope entries left alone because their iteration does not replay."""
    crashes: tuple[tuple[str, int, str], ...] = ()
    """``(scenario id, iteration, label: reason)`` of every assertion whose check raised."""

    @property
    def missing(self) -> tuple[Failure, ...]:
        """The failures that are plain misses (a run would miss)."""
        return tuple(f for f in self.failures if f.status == "missed")


def in_scope(scenario_id: str, scenarios: dict[str, Scenario], selection: Selection) -> bool:
    """Whether the filters select this scenario id (which may no longer exist)."""
    scenario = scenarios.get(scenario_id)
    if scenario is not None:
        return selection.matches(scenario)
    if selection.types:
        return False  # its type went with its file: a type filter cannot select it
    agent, tenant, name = scenario_id.split("/")
    if (selection.agents and agent not in selection.agents) or (
            selection.tenants and tenant not in selection.tenants):
        return False
    return not selection.scenarios or any(
        fnmatch.fnmatchcase(scenario_id, g) or fnmatch.fnmatchcase(name, g) for g in selection.scenarios)


def classify(config: HarnessConfig, dataset: Dataset, selection: Selection, tree: CacheTree,
             now: datetime) -> Usage:
    """Replay the selection offline, then split the in-scope entries into read, orphans and kept."""
    replays = replay_reads(config, dataset, selection, now)
    scenarios = {s.id: s for s in dataset.scenarios}
    failures = tuple(_failure(config, dataset, r) for r in replays if r.failure)
    failed = {(f.scenario_id, f.iteration) for f in failures}
    read = {(r.scenario_id, r.iteration, key) for r in replays for key in r.keys}
    readable = [e for e in tree.entries if not e.problems and e.iteration is not None
                and (not e.purpose or e.purpose.startswith(JUDGE_PREFIX))
                and in_scope(e.scenario_id, scenarios, selection)]
    orphans: list[Orphan] = []
    referenced = kept = 0
    for entry in readable:
        if (entry.scenario_id, entry.iteration, entry.key) in read:
            referenced += 1
            continue
        reason = _orphan_reason(entry, scenarios, failed)
        if reason:
            orphans.append(Orphan(entry.folder, entry.scenario_id, reason))
        else:
            kept += 1
    crashes = tuple((r.scenario_id, r.iteration, crash) for r in replays for crash in r.crashes)
    return Usage(tuple(orphans), failures, referenced, kept, crashes)


def _failure(config: HarnessConfig, dataset: Dataset, replay: IterationReplay) -> Failure:
    agent = dataset.agents.get(replay.scenario_id.split("/", 1)[0])
    fix: Fix = "missing" if replay.failure == "missed" else "replace"
    folder = (entry_dir(config.cache, replay.scenario_id, replay.iteration, replay.missed_key)
              if replay.missed_key else iteration_dir(config.cache, replay.scenario_id, replay.iteration))
    return Failure(replay.scenario_id, replay.iteration, replay.failure, replay.message, folder,
                   Rerecord.of(agent).command(replay.scenario_id, fix=fix))


def _orphan_reason(entry: EntryRecord, scenarios: dict[str, Scenario],
                   failed: set[tuple[str, int]]) -> str:
    """Why the replay did not read ``entry``, or ``""`` when it must be kept anyway."""
    scenario = scenarios.get(entry.scenario_id)
    if scenario is None:
        return f"scenario {entry.scenario_id} no longer exists (deleted or renamed)"
    assert entry.iteration is not None
    if entry.iteration >= scenario.iterations:
        return (f"iteration {entry.iteration} is beyond the scenario's "
                f"{scenario.iterations} iteration(s)")
    if (entry.scenario_id, entry.iteration) in failed:
        return ""  # the replay stopped early: what it would read next is unknown
    if entry.purpose.startswith(JUDGE_PREFIX):
        return (f"{entry.purpose} entry that no replay of the iteration reads (it judged an answer "
                "the scenario no longer produces, or the judge changed)")
    return ("recorded for a request the scenario no longer produces (its prompt, model, options, "
            "messages or an earlier answer changed since); the offline replay does not read it")


def check(ctx: CheckContext) -> GuardResult:
    """Orphans and iterations that do not replay, all listed."""
    if ctx.dataset is None:
        return GuardResult(GUARD, "the datasets do not load (see the datasets findings)", skipped=True)
    usage = classify(ctx.config, ctx.dataset, ctx.selection, ctx.tree, ctx.now)
    findings = [
        Finding(GUARD, ctx.rel(o.folder), f"unused entry: {o.reason}",
                "python -m harness prune --dry-run to review, then python -m harness prune")
        for o in usage.orphans
    ]
    for failure in usage.failures:
        if failure.status == "missed":
            message = (f"{failure.scenario_id} iteration {failure.iteration} has no entry: a run "
                       "would miss")
        else:
            message = (f"{failure.scenario_id} iteration {failure.iteration} does not replay "
                       f"({failure.status}): its entries are kept unclassified until it does")
        findings.append(Finding(GUARD, ctx.rel(failure.folder), message, f"record it: {failure.hint}"))
    scenarios = {s.id: s for s in ctx.dataset.scenarios}
    for scenario_id, iteration, crash in usage.crashes:
        found = scenarios.get(scenario_id)
        findings.append(Finding(
            GUARD, ctx.rel(found.file) if found is not None else scenario_id,
            f"{scenario_id} iteration {iteration}: the check of assertion {crash[:300]} "
            "(eval-assertion-crashed): a crash is not a verdict on the answer",
            "fix the assertion (or the code its kind runs); python -m harness run shows the same "
            "verdict"))
    summary = (f"{usage.referenced} referenced, {len(usage.orphans)} unused, "
               f"{len(usage.missing)} missing")
    if len(usage.failures) > len(usage.missing):
        summary += f", {len(usage.failures) - len(usage.missing)} not replaying"
    return GuardResult(GUARD, summary, tuple(findings))
