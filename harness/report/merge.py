"""One run out of the N shard runs of one selection (``python -m harness report --merge RUN...``).

Each shard run (``run --shard K/N``, ``pytest --evals --evals-shard K/N``)
records in its ``run.json`` which shard it was and a fingerprint of the whole
selection it was cut from (:mod:`harness.running.shards`). The merge refuses (exit 2,
every problem at once) shards that do not make exactly one whole: a run that
is no shard, shards of different counts, selections, modes or durations, a
shard given twice or an iteration present in two runs, a missing shard, a shard
that did not record all its iterations. Otherwise it writes a new run under
``eval-results/results/<run-id>/``: the records of every shard in one
``records.jsonl``, and a ``run.json`` whose counts, blocking rejects, metrics
(gated or not), judge means, rubric pass rates and assertion strength are
computed over the union of the records, never averaged from per-shard values:
a gated rate of 3/3 in one shard and 1/2 in another is 4/5, not the mean 0.75.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.assertions.counterexamples import strength
from harness.assertions.metrics import MetricSpec, MetricValue, aggregate_specs
from harness.cache.verify import parse_time
from harness.core.errors import HarnessError
from harness.documents.atomic import write_file
from harness.documents.manual import see
from harness.refresh.ledger import tally_of_records
from harness.report.load import RunInfo, find_run, list_runs, load_records
from harness.report.model import failing, is_blocking
from harness.results.aggregates import judge_means, rubric_summary
from harness.results.recordwriter import RECORDS_FILE, RESULTS_DIR, RUN_FILE
from harness.results.runsummary import new_run_id


class MergeRefused(HarnessError):
    """The given runs are not exactly the N shards of one selection."""

    code = "eval-merge-refused"
    exit_code = 2


@dataclass(frozen=True)
class ShardRun:
    """One run given to the merge, with its records."""

    info: RunInfo
    records: list[dict[str, Any]]

    @property
    def shard(self) -> dict[str, Any] | None:
        found = (self.info.data.get("selection") or {}).get("shard")
        return found if isinstance(found, dict) else None

    @property
    def label(self) -> str:
        shard = self.shard
        where = f"shard {shard.get('index')}/{shard.get('count')}" if shard else "not a shard"
        return f"{self.info.run_id} ({where})"


def resolve_runs(results_root: Path, refs: Sequence[str]) -> list[ShardRun]:
    """Each reference: a run id, a unique prefix, or the path of a run folder (an artifact
    downloaded elsewhere)."""
    runs = list_runs(results_root)
    found = []
    for ref in refs:
        folder = Path(ref)
        if (folder / RUN_FILE).is_file():
            try:
                data = json.loads((folder / RUN_FILE).read_text(encoding="utf-8"))
                started = parse_time(str(data["started"]))
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise MergeRefused(f"{folder / RUN_FILE} is not the run.json of a finished run "
                                   f"({exc}): download that shard's results again") from None
            info = RunInfo(str(data.get("run_id") or folder.name), started, folder, data)
        else:
            info = find_run(runs, ref)
        found.append(ShardRun(info, load_records(info.path)))
    return found


def check_shards(shards: Sequence[ShardRun]) -> list[str]:
    """Every reason the runs are not one whole (empty: they merge)."""
    problems: list[str] = []
    cut = [s for s in shards if s.shard is not None]
    problems += [f"run {s.info.run_id} is not a shard run (it was run without --shard K/N)"
                 for s in shards if s.shard is None]
    if not cut:
        return problems or ["no run to merge"]
    first = cut[0]
    first_shard = first.shard or {}
    for other in cut[1:]:
        problems += _differences(first, other)
    count = int(first_shard.get("count") or 0)
    by_index: dict[int, list[ShardRun]] = {}
    for run in cut:
        by_index.setdefault(int((run.shard or {}).get("index") or 0), []).append(run)
    for index, runs in sorted(by_index.items()):
        if len(runs) > 1:
            problems.append(f"shard {index}/{count} is given twice: "
                            f"{', '.join(r.info.run_id for r in runs)} (they overlap; keep one)")
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        given = ", ".join(f"{i}/{count} {by_index[i][0].info.run_id}" for i in sorted(by_index))
        problems.append(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing (given: "
                        f"{given}): add the run of `--shard {missing[0]}/{count}`")
    problems += _overlaps(cut)
    for run in cut:
        planned = int(run.info.data.get("iterations") or 0)
        if len(run.records) != planned:
            problems.append(f"run {run.label} holds {len(run.records)} iteration record(s) of "
                            f"the {planned} it ran: its records are incomplete; re-run that shard")
    if not problems:
        total = sum(len(r.records) for r in cut)
        planned_total = int(first_shard.get("planned_iterations") or 0)
        if total != planned_total:
            problems.append(f"the shards hold {total} iteration(s) but their selection plans "
                            f"{planned_total}: re-run the shards of one selection")
    return problems


def _differences(first: ShardRun, other: ShardRun) -> list[str]:
    """How ``other`` was cut or run differently from ``first``."""
    problems = []
    a, b = dict(first.info.data.get("selection") or {}), dict(other.info.data.get("selection") or {})
    shard_a, shard_b = a.pop("shard", {}) or {}, b.pop("shard", {}) or {}
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            problems.append(f"run {other.label} was run with {key} {b.get(key)!r}, run "
                            f"{first.label} with {a.get(key)!r}: merge shards of one command")
    if shard_a.get("count") != shard_b.get("count"):
        problems.append(f"run {other.label} is a shard of {shard_b.get('count')}, run "
                        f"{first.label} of {shard_a.get('count')}")
    elif shard_a.get("plan_digest") != shard_b.get("plan_digest"):
        problems.append(
            f"run {other.label} was cut from another selection ({shard_b.get('planned_scenarios')} "
            f"scenarios, {shard_b.get('planned_iterations')} iterations, plan "
            f"{shard_b.get('plan_digest')}) than run {first.label} "
            f"({shard_a.get('planned_scenarios')}, {shard_a.get('planned_iterations')}, plan "
            f"{shard_a.get('plan_digest')}): run every shard on the same commit and options")
    elif (shard_a.get("balance"), shard_a.get("durations_digest")) != (
            shard_b.get("balance"), shard_b.get("durations_digest")):
        problems.append(f"run {other.label} was balanced by {_balance(shard_b)}, run "
                        f"{first.label} by {_balance(shard_a)}: give every shard the same "
                        "--shard-durations (or none), or the split differs")
    return problems


def _balance(shard: Mapping[str, Any]) -> str:
    if shard.get("balance") == "durations":
        return f"durations {shard.get('durations_digest')}"
    return "iteration count"


def _overlaps(runs: Sequence[ShardRun], shown: int = 5) -> list[str]:
    """Scenario iterations present in more than one run."""
    seen: dict[tuple[str, int], ShardRun] = {}
    twice = []
    for run in runs:
        for record in run.records:
            key = (str(record["scenario"]), int(record.get("iteration", 0)))
            if key in seen and seen[key] is not run:
                twice.append(f"{key[0]}#{key[1]} is in run {seen[key].label} and in run {run.label}")
            seen.setdefault(key, run)
    if len(twice) > shown:
        twice = [*twice[:shown], f"... and {len(twice) - shown} more overlapping iteration(s)"]
    return twice


def merge_runs(results_root: Path, refs: Sequence[str], *, now: datetime | None = None) -> str:
    """Check the shard runs ``refs`` and write their merged run; returns its run id.

    Raises :class:`MergeRefused` (exit 2) with every problem when they are not
    exactly the N shards of one selection.
    """
    shards = resolve_runs(results_root, refs)
    problems = check_shards(shards)
    if problems:
        raise MergeRefused(f"cannot merge {len(shards)} run(s) into one:\n"
                           + "\n".join(f"  - {p}" for p in problems)
                           + f"\n{see('ci', 'Sharding')}")
    shards = sorted(shards, key=lambda s: int((s.shard or {})["index"]))
    run_id = new_run_id(now or datetime.now(UTC))
    run_dir = results_root / RESULTS_DIR / run_id
    shown = f"{RESULTS_DIR}/{run_id}/{RECORDS_FILE}"
    records = sorted((r for s in shards for r in s.records),
                     key=lambda r: (str(r["scenario"]), int(r.get("iteration", 0))))
    lines = []
    for line, record in enumerate(records, start=1):
        record = {**record, "transcript_path": shown, "transcript_line": line}
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    run_dir.mkdir(parents=True, exist_ok=True)
    write_file(run_dir / RECORDS_FILE, "".join(lines).encode("utf-8"))
    data = merged_run_data(run_id, [s.info.data for s in shards], records)
    write_file(run_dir / RUN_FILE,
               (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return run_id


def merged_run_data(run_id: str, shards: Sequence[Mapping[str, Any]],
                    records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``run.json`` of the merged run, in the shape :func:`harness.results.recordwriter.run_data` writes,
    every aggregate computed over ``records``."""
    selection = {k: v for k, v in (shards[0].get("selection") or {}).items() if k != "shard"}
    stamp_problem = next((str(s["stamp_problem"]) for s in shards if s.get("stamp_problem")), "")
    metrics = metric_values_of(shards, records)
    failed = any(failing(r) for r in records) or any(m.blocks for m in metrics)
    finished = [str(s["finished"]) for s in shards if s.get("finished")]
    return {
        "run_id": run_id,
        "started": min(str(s["started"]) for s in shards),
        "finished": max(finished) if finished else None,
        "selection": selection,
        "stamp_problem": stamp_problem,
        "datasets": shards[0].get("datasets", ""),
        "iterations": len(records),
        "counts": dict(sorted(Counter(str(r["status"]) for r in records).items())),
        "exit_code": 1 if failed or stamp_problem or not records else 0,
        "metrics": [m.to_json() for m in metrics],
        "blocking": [{"scenario": r["scenario"], "iteration": r.get("iteration", 0),
                      "type": r.get("type", ""),
                      "message": r.get("message", "")} for r in records if is_blocking(r)],
        "judges": judge_means((j["name"], j.get("score"), str(j.get("interpretation", "")),
                               str(j.get("source", "")))
                              for r in records for j in r.get("judges") or []),
        "accounting": (None if selection.get("mode", "offline") == "offline"
                       else tally_of_records(records)),
        "rubric": rubric_summary((str(r.get("agent", "")), x["name"], x.get("rule", ""), x["outcome"],
                                  x.get("source", ""))
                                 for r in records for x in r.get("rubric") or []),
        "strength": _strength_by_agent(records),
        "merged_from": [{"run_id": s.get("run_id"),
                         "shard": f"{s['selection']['shard']['index']}/"
                                  f"{s['selection']['shard']['count']}"} for s in shards],
    }


def metric_values_of(shards: Iterable[Mapping[str, Any]],
                     records: Iterable[Mapping[str, Any]]) -> list[MetricValue]:
    """The declared metrics over the union: the specs every shard's run.json lists (an agent
    that ran in a shard lists all of its metrics there), the samples of every record."""
    specs: dict[str, list[MetricSpec]] = {}
    for shard in shards:
        for item in shard.get("metrics") or []:
            agent = str(item["agent"])
            listed = specs.setdefault(agent, [])
            if not any(s.name == item["name"] for s in listed):
                listed.append(MetricSpec(
                    agent=agent, name=str(item["name"]), description=str(item.get("description", "")),
                    over={}, measure="", values=(), target=float(item["target"]),
                    better=str(item.get("better", "higher")), gate=bool(item.get("gate"))))
    ordered = [spec for agent in sorted(specs) for spec in specs[agent]]  # dataset order: by name
    return aggregate_specs(ordered, ((str(r.get("agent", "")), str(r.get("tenant", "")),
                                      r.get("metrics") or {})
                                     for r in records))


def _strength_by_agent(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    by_agent: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        by_agent.setdefault(str(record.get("agent", "")), []).append(record)
    table = {}
    for agent, members in sorted(by_agent.items()):
        caught, total = strength(members)
        table[agent] = {"caught": caught, "total": total}
    return table
