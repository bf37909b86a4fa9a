"""What every report shows, computed once from a run's records and its ``run.json``.

Reports never look at live objects: a :class:`RunView` is the plain JSON a run
left under ``eval-results/`` (or the same JSON built in memory at the end of a
run), so ``python -m harness report`` rebuilds any format without re-running.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.assertions.counterexamples import strength
from harness.core.entities import BLOCKING_TYPES, FAILING_STATUSES
from harness.core.provenance import answer_source
from harness.results.aggregates import judge_means
from harness.results.recordwriter import run_data
from harness.results.runsummary import RunSummary
from harness.results.totals import GroupTotals, RunTotals
from harness.results.totals import summary_record as summary_record  # re-exported

#: Table columns after agent, tenant, type: scenarios and iterations, then these counts.
COLUMNS = ("passed", "rejected", "not evaluated", "missed", "error")
#: Statuses folded into each column ("not evaluated": the scenario checked nothing, or nothing
#: a known-wrong answer could fail: ``toothless``).
_FOLD = {"passed": "passed", "rejected": "rejected", "unchecked": "not evaluated",
         "toothless": "not evaluated",
         "missed": "missed", "expired": "missed", "corrupt": "missed", "error": "error"}


@dataclass
class RunView:
    """One run as reports see it: ``run.json`` plus every iteration record."""

    run: dict[str, Any]
    records: list[dict[str, Any]]
    history: list[dict[str, Any]] = field(default_factory=list)
    """``run.json`` of the last runs up to this one, oldest first (for trends)."""
    totals: RunTotals | None = None
    """A run that just finished: the counts of every iteration, ``records`` then holding only
    those it quotes (:func:`view_of_summary`); None when ``records`` holds every record."""

    @property
    def run_id(self) -> str:
        return str(self.run.get("run_id", ""))


@dataclass(frozen=True)
class Row:
    """Counts of one group (agent x tenant x type, or a total)."""

    key: tuple[str, ...]
    scenarios: int
    iterations: int
    counts: dict[str, int]
    caught: int = 0
    """Counterexamples of the group's scenarios that their hard assertions rejected..."""
    counterexamples: int = 0
    """...out of this many: the assertion strength of the group."""

    @property
    def strength(self) -> str:
        """``caught/total`` counterexamples, or ``-`` when the group's scenarios declare none."""
        return f"{self.caught}/{self.counterexamples}" if self.counterexamples else "-"

    @property
    def pass_rate(self) -> float | None:
        return self.counts["passed"] / self.iterations if self.iterations else None

    def as_dict(self, names: tuple[str, ...]) -> dict[str, Any]:
        return {**dict(zip(names, self.key, strict=True)), "scenarios": self.scenarios,
                "iterations": self.iterations, **{c.replace(" ", "_"): self.counts[c] for c in COLUMNS},
                "pass_rate": self.pass_rate,
                "strength": {"caught": self.caught, "total": self.counterexamples}}


def view_of_summary(summary: RunSummary, selection: dict[str, Any] | None = None) -> RunView:
    """The view of a run that just finished, without reading it back from disk.

    Its records are the ones the terminal summary quotes (failures, judges, rubric
    outcomes, mutants, counterexamples; see :class:`~harness.results.totals.RunTotals`),
    its ``totals`` the counts of every iteration: the whole records are on disk, and a
    run of tens of thousands of scenarios must not rebuild them all in memory to print a table.
    """
    return RunView(run_data(summary, selection or {}), summary.totals.quoted, totals=summary.totals)


def is_blocking(record: dict[str, Any]) -> bool:
    """A reject in a negative or adversarial scenario."""
    return record.get("status") == "rejected" and record.get("type") in BLOCKING_TYPES


def failing(record: dict[str, Any]) -> bool:
    """The status fails the run (:data:`~harness.core.entities.FAILING_STATUSES`, the one definition)."""
    return record.get("status") in FAILING_STATUSES


def view_rows(view: RunView) -> tuple[list[Row], Row]:
    """:func:`rows` of a view by agent, tenant and type: from its totals when it has them."""
    if view.totals is None:
        return rows(view.records)
    table = [_row_of(key, group) for key, group in sorted(view.totals.groups.items())]
    total = GroupTotals()
    for group in view.totals.groups.values():
        total.scenarios += group.scenarios  # a scenario is in one group: its type is its own
        total.iterations += group.iterations
        total.statuses.update(group.statuses)
        total.caught += group.caught
        total.counterexamples += group.counterexamples
    return table, _row_of(("total", "", ""), total)


def view_counts(view: RunView) -> tuple[int, int]:
    """(iterations, failed ones) of a view, from its totals when it has them."""
    if view.totals is not None:
        totals = view.totals
        return totals.iterations, sum(n for s, n in totals.counts.items() if s != "passed")
    return len(view.records), sum(r.get("status") != "passed" for r in view.records)


def _row_of(key: tuple[str, ...], group: GroupTotals) -> Row:
    counts: Counter[str] = Counter({c: 0 for c in COLUMNS})
    for status, n in group.statuses.items():
        counts[_FOLD.get(str(status), "error")] += n
    return Row(key, group.scenarios, group.iterations, dict(counts), group.caught,
               group.counterexamples)


def rows(records: Iterable[dict[str, Any]], by: tuple[str, ...] = ("agent", "tenant", "type"),
         ) -> tuple[list[Row], Row]:
    """Counts per group, sorted, and the total row."""
    groups: defaultdict[tuple[str, ...], list[dict[str, Any]]] = defaultdict(list)
    everything = []
    for record in records:
        groups[tuple(str(record.get(k, "")) for k in by)].append(record)
        everything.append(record)
    table = [_row(key, members) for key, members in sorted(groups.items())]
    return table, _row(("total",) + ("",) * (len(by) - 1), everything)


def _row(key: tuple[str, ...], records: list[dict[str, Any]]) -> Row:
    counts: Counter[str] = Counter({c: 0 for c in COLUMNS})
    for record in records:
        counts[_FOLD.get(str(record.get("status")), "error")] += 1
    caught, total = strength(records)
    return Row(key, len({r.get("scenario") for r in records}), len(records), dict(counts),
               caught, total)


def ordered_failures(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Failing records, blocking ones first, then in run order."""
    bad = [r for r in records if failing(r)]
    return [r for r in bad if is_blocking(r)] + [r for r in bad if not is_blocking(r)]


def blocking_line(view: RunView) -> str:
    """The one line that says the run is blocked, or empty."""
    blocking = [r for r in view.records if is_blocking(r)]
    if not blocking:
        return ""
    _, total = view_rows(view)
    rate = f"{total.pass_rate:.0%}" if total.pass_rate is not None else "-"
    names = ", ".join(f"{r['scenario']}#{r['iteration']}" for r in blocking[:3])
    more = f" and {len(blocking) - 3} more" if len(blocking) > 3 else ""
    return (f"BLOCKED: {len(blocking)} reject(s) in negative/adversarial scenarios fail the run "
            f"whatever the aggregate pass rate ({rate}) says: {names}{more}")


def metric_rows(view: RunView) -> list[dict[str, Any]]:
    """Declared metric values of the run (from run.json), one per agent and metric."""
    return list(view.run.get("metrics") or [])


def judge_table(records: Iterable[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Mean judge score per agent x tenant x type (columns: one per judge)."""
    cells: defaultdict[tuple[str, str, str], defaultdict[str, list[int]]] = defaultdict(
        lambda: defaultdict(list))
    judges: set[str] = set()
    for record in records:
        key = (str(record["agent"]), str(record["tenant"]), str(record["type"]))
        for judge in record.get("judges") or []:
            judges.add(judge["name"])
            if judge.get("score") is not None:
                cells[key][judge["name"]].append(int(judge["score"]))
            else:
                cells[key].setdefault(judge["name"], [])
    names = sorted(judges)
    table = [[*key, *(_mean(cells[key].get(n)) for n in names)] for key in sorted(cells)]
    return names, table


def judge_overall(view: RunView) -> dict[str, dict[str, Any]]:
    """Per judge: mean, scored, inconclusive, not_evaluated (run.json, else the records)."""
    stored = view.run.get("judges")
    if isinstance(stored, dict):
        return stored
    return judge_means((j["name"], j.get("score"), str(j.get("interpretation", "")),
                        answer_source(r, j, f"judge:{j['name']}"))
                       for r in view.records for j in r.get("judges") or [])


def judge_warnings(records: Iterable[dict[str, Any]]) -> list[str]:
    """Every judge warning, prefixed by its scenario iteration."""
    return [f"{r['scenario']}#{r['iteration']}: {w}" for r in records for w in r.get("warnings") or []]


def tests(view: RunView) -> list[dict[str, Any]]:
    """Per-test records in the shape of the skill spec's empirical validation."""
    return [{
        "test_id": r.get("test_id", r["scenario"]),
        "scenario": r["scenario"],
        "iteration": r["iteration"],
        "agent": r["agent"],
        "tenant": r["tenant"],
        "type": r["type"],
        "environment": r.get("environment") or {},
        "input": r.get("input"),
        "expected_decision": r.get("expected_decision"),
        "actual_decision": r.get("actual_decision"),
        "actual_behavior": r.get("actual_behavior"),
        "verdicts": r.get("verdicts") or [],
        "pass_fail": r.get("pass_fail", "fail" if failing(r) else "pass"),
        "status": r["status"],
        "blocking": is_blocking(r),
        "judges": r.get("judges") or [],
        "rubric": r.get("rubric") or [],
        "transcript_path": r.get("transcript_path"),
        "transcript_line": r.get("transcript_line"),
        "reviewer": r.get("reviewer"),
        "reviewed_at": r.get("reviewed_at"),
    } for r in view.records]


def _mean(scores: list[int] | None) -> float | None:
    return round(sum(scores) / len(scores), 2) if scores else None


