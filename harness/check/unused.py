"""Unused-entry guard: entries no current scenario references, and scenarios with no entry.

A prompt change or a deleted scenario leaves entries nobody will ever read;
they bloat every clone and hide the one entry that matters when someone reads
the tree. The referenced set is computed exactly as a run computes it (the
key of every selected scenario iteration), so an entry is either what a run
would read, or an orphan that ``python -m harness prune`` may remove.

Scope: a filtered check only looks at the entries of scenarios the filters
select (a deleted scenario is in scope when its id passes the agent, tenant
and scenario filters and no ``--type`` filter is given, since its type is
gone with it). Corrupt entries are left to the integrity guard, and entries
with a ``purpose`` this version does not know are left alone: what cannot be
read or understood is never classified, so prune never deletes it.
"""

from __future__ import annotations

import contextlib
import fnmatch
from dataclasses import dataclass
from pathlib import Path

from harness.cache.layout import entry_dir
from harness.cache.store import CacheStore
from harness.check.context import CheckContext
from harness.check.entries import CacheTree, EntryRecord
from harness.check.findings import Finding, GuardResult
from harness.clients.caching import CachingClient
from harness.clients.offline import OfflineClient
from harness.config import MIN_TTL_DAYS
from harness.datasets import Dataset, Selection
from harness.entities import ChatCall, Scenario
from harness.errors import HarnessError, rerecord_command
from harness.execution import run_agent
from harness.key import compute_key

GUARD = "unused"
JUDGE_PREFIX = ("judge:", "rubric:")  # graders of an answer: built-in judges and rubric items


@dataclass(frozen=True)
class Orphan:
    """An entry folder no selected scenario iteration references, and why."""

    folder: Path
    scenario_id: str
    reason: str


@dataclass(frozen=True)
class Missing:
    """A selected scenario iteration whose entry is not in the tree."""

    scenario_id: str
    iteration: int
    folder: Path


@dataclass(frozen=True)
class Usage:
    """The classification of the in-scope part of the tree."""

    orphans: tuple[Orphan, ...]
    missing: tuple[Missing, ...]
    referenced: int


def referenced_keys(dataset: Dataset, selection: Selection) -> dict[tuple[str, int], str]:
    """``{(scenario id, iteration): key}`` for every selected scenario iteration, as a run keys them."""
    keys: dict[tuple[str, int], str] = {}
    for scenario in selection.apply(dataset.scenarios):
        agent = dataset.agents[scenario.agent]
        request = dataset.request_for(scenario)
        for iteration in range(scenario.iterations):
            call = ChatCall(scenario.id, iteration, agent.provider, agent.model, request)
            keys[(scenario.id, iteration)] = compute_key(call)
    return keys


def loop_keys(cache_root: Path, dataset: Dataset, selection: Selection) -> set[str]:
    """Keys of the follow-up calls of tool loops, found by replaying them offline.

    The key of a call after a scripted tool result depends on the recorded answer
    before it, so it cannot be computed from the scenario alone: an offline
    replay (reads only, stops at the first miss) lists exactly what a run reads.
    """
    store = CacheStore(cache_root, ttl_days=MIN_TTL_DAYS)
    keys: set[str] = set()
    for scenario in selection.apply(dataset.scenarios):
        if not scenario.tool_results:
            continue
        agent = dataset.agents[scenario.agent]
        offline = OfflineClient(agent.provider, agent.model, store=store,
                                project_root=cache_root, credentials_file=None)
        request = dataset.request_for(scenario)
        for iteration in range(scenario.iterations):
            client = CachingClient(offline, store).bind(scenario.id, iteration)
            with contextlib.suppress(HarnessError):
                run_agent(agent, request, client, scenario)
            keys.update(call.key for call in client.calls)
    return keys


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


def classify(cache_root: Path, dataset: Dataset, selection: Selection, tree: CacheTree) -> Usage:
    """Split the in-scope entries into referenced and orphans; list referenced keys with no entry."""
    refs = referenced_keys(dataset, selection)
    followers = loop_keys(cache_root, dataset, selection)
    scenarios = {s.id: s for s in dataset.scenarios}
    by_folder = {e.folder: e for e in tree.entries}
    readable = [e for e in tree.entries if not e.problems and e.iteration is not None
                and (not e.purpose or e.purpose.startswith(JUDGE_PREFIX))
                and in_scope(e.scenario_id, scenarios, selection)]
    current = {(e.scenario_id, e.iteration) for e in readable
               if not e.purpose and refs.get((e.scenario_id, e.iteration or 0)) == e.key}
    orphans: list[Orphan] = []
    for entry in readable:
        reason = "" if entry.key in followers else _orphan_reason(entry, scenarios, refs, current)
        if reason:
            orphans.append(Orphan(entry.folder, entry.scenario_id, reason))
    missing = []
    for (scenario_id, iteration), key in refs.items():
        folder = entry_dir(cache_root, scenario_id, iteration, key)
        found = by_folder.get(folder)
        if found is None or (not found.problems and found.key != key):
            missing.append(Missing(scenario_id, iteration, folder))
    return Usage(tuple(orphans), tuple(missing), len(readable) - len(orphans))


def _orphan_reason(entry: EntryRecord, scenarios: dict[str, Scenario], refs: dict[tuple[str, int], str],
                   current: set[tuple[str, int | None]]) -> str:
    """Why nothing references ``entry``, or ``""`` when something does."""
    scenario = scenarios.get(entry.scenario_id)
    if scenario is None:
        return f"scenario {entry.scenario_id} no longer exists (deleted or renamed)"
    assert entry.iteration is not None
    if entry.iteration >= scenario.iterations:
        return (f"iteration {entry.iteration} is beyond the scenario's "
                f"{scenario.iterations} iteration(s)")
    if entry.purpose.startswith(JUDGE_PREFIX):
        if (entry.scenario_id, entry.iteration) in current:
            return ""
        return (f"{entry.purpose} entry of an iteration whose current agent entry is not recorded "
                "(it judged an answer the scenario no longer produces)")
    if entry.key == refs[(entry.scenario_id, entry.iteration)]:
        return ""
    return ("recorded for a request the scenario no longer produces (its prompt, model, options or "
            "messages changed since)")


def check(ctx: CheckContext) -> GuardResult:
    """Orphans and missing entries of the selected scenarios, all listed."""
    if ctx.dataset is None:
        return GuardResult(GUARD, "the datasets do not load (see the datasets findings)", skipped=True)
    usage = classify(ctx.config.cache, ctx.dataset, ctx.selection, ctx.tree)
    findings = [
        Finding(GUARD, ctx.rel(o.folder), f"unused entry: {o.reason}",
                "python -m harness prune --dry-run to review, then python -m harness prune")
        for o in usage.orphans
    ]
    findings += [
        Finding(GUARD, ctx.rel(m.folder), f"{m.scenario_id} iteration {m.iteration} has no entry: a run "
                "would miss", f"record it: {rerecord_command(m.scenario_id)}")
        for m in usage.missing
    ]
    summary = (f"{usage.referenced} referenced, {len(usage.orphans)} unused, "
               f"{len(usage.missing)} missing")
    return GuardResult(GUARD, summary, tuple(findings))
