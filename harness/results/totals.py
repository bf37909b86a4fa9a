"""Running totals of a run: what ``run.json``, the terminal summary, the GitHub annotations and
the pytest controller read of a run that just finished, folded as each iteration arrives.

A run used to keep every (slimmed) result in memory until it ended, only for its
readers to count them: about 200 bytes per iteration, 10 MB at 50,000, and as much
again when the terminal view rebuilt a dict per iteration. Each record is already on
disk (``records.jsonl``), so the run keeps counts instead, plus the few iterations a
report quotes one by one: the failed ones (whole), and the summary records of those
with judges, rubric outcomes, warnings, mutants or counterexamples.

The fold reads the ``summary`` projection of a result (:meth:`IterationResult.to_json`),
the same values the readers took from the kept results, so every report reads the same
bytes; tests/test_run_totals.py folds ``records.jsonl`` of a run and compares.

Iterations arrive in plan order, where the iterations of a scenario follow one another
(every producer of a :class:`~harness.results.runsummary.RunSummary` adds them so): a
scenario is counted once, and its counterexamples once, when its first iteration arrives.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.core.provenance import sources_by_purpose
from harness.results.record import IterationResult

#: The keys of a record that the tables, blocking line and failures of a just-finished run use.
VIEW_KEYS = ("scenario", "agent", "tenant", "name", "type", "iteration", "status", "message",
             "counterexamples", "mutants")


def summary_record(result: IterationResult, shipped: Mapping[str, Any] | None = None,
                   ) -> dict[str, Any]:
    """The fields of an iteration record that the tables, blocking line and failures use: a
    projection of its ``summary`` record (``shipped``, computed when not given)."""
    shipped = shipped if shipped is not None else result.to_json("summary")
    record = {key: shipped[key] for key in VIEW_KEYS if key in shipped}
    if result.judges or result.rubric:
        for key in ("judges", "warnings", "rubric"):
            record[key] = shipped[key]
    if result.answer_source:
        record["answer_source"] = result.answer_source
    return record


@dataclass
class GroupTotals:
    """One agent x tenant x type: distinct scenarios, iterations, statuses, counterexamples."""

    scenarios: int = 0
    iterations: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    caught: int = 0
    counterexamples: int = 0


@dataclass
class RunTotals:
    """Counts of a run's iterations, and the iterations reports quote one by one."""

    iterations: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    """Iterations per status."""
    groups: dict[tuple[str, str, str], GroupTotals] = field(default_factory=dict)
    """Per (agent, tenant, type), in arrival order (readers sort)."""
    strength: dict[str, list[int]] = field(default_factory=dict)
    """Per agent that ran: [counterexamples caught, declared], each scenario once."""
    failures: list[IterationResult] = field(default_factory=list)
    """Failed iterations, whole (reports quote their message), in plan order."""
    quoted: list[dict[str, Any]] = field(default_factory=list)
    """:func:`summary_record` of every failed iteration and of every one with judges, rubric
    outcomes, mutants or counterexamples, in plan order: what the terminal lists or tallies."""
    judge_scores: list[tuple[str, int | None, str, str]] = field(default_factory=list)
    """(name, score, interpretation, source) of every judge score (run.json's judge means)."""
    rubric_outcomes: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    """(agent, name, rule, outcome, source) of every rubric outcome (run.json's rubric)."""
    metric_samples: list[tuple[str, str, dict[str, bool | None]]] = field(default_factory=list)
    """(agent, tenant, samples) of every iteration with metric samples."""
    agent_sources: Counter[str] = field(default_factory=Counter)
    """Agent answers per provenance (``scripted``, ``provider``, ``unknown``)."""
    _last: str = ""
    _last_counted: str = ""

    def add(self, result: IterationResult, shipped: Mapping[str, Any] | None = None) -> None:
        """Fold one iteration in (plan order). ``shipped`` is a record of it the caller has
        already: its ``summary`` projection (the record a forked job sent, which ``result`` was
        read from) or the full record the run just wrote, which holds every key of that
        projection with the same values (only keys of the projection, and ``calls``, which
        says where the answer came from as ``answer_source`` does, are read); otherwise the
        projection is made here."""
        if shipped is None:
            shipped = result.to_json("summary")
        scenario_id = shipped["scenario"]
        first = scenario_id != self._last
        self._last = scenario_id
        status = result.status
        self.iterations += 1
        self.counts[status] += 1
        key = (str(shipped["agent"]), str(shipped["tenant"]), str(shipped["type"]))
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = GroupTotals()
        group.iterations += 1
        group.statuses[status] += 1
        group.scenarios += first
        agent = self.strength.setdefault(key[0], [0, 0])
        found = shipped.get("counterexamples")
        if found and scenario_id != self._last_counted:  # strength: each scenario once
            self._last_counted = scenario_id
            caught = sum(1 for c in found if c.get("caught"))
            agent[0] += caught
            agent[1] += len(found)
            group.caught += caught
            group.counterexamples += len(found)
        calls = shipped.get("calls")
        source = (sources_by_purpose(calls).get("", "") if calls is not None
                  else str(shipped.get("answer_source") or ""))
        self.agent_sources[source or "unknown"] += 1
        for judge in shipped.get("judges") or ():
            self.judge_scores.append((judge["name"], judge["score"], judge["interpretation"],
                                      judge.get("source", "")))
        for item in shipped.get("rubric") or ():
            self.rubric_outcomes.append((key[0], item["name"], item["rule"], item["outcome"],
                                         item.get("source", "")))
        if shipped.get("metrics"):
            self.metric_samples.append((key[0], key[1], dict(shipped["metrics"])))
        if result.failed:
            self.failures.append(result)
        if (result.failed or result.judges or result.rubric or found
                or result.mutants is not None or shipped.get("warnings")):
            self.quoted.append(summary_record(result, shipped))

    def samples(self) -> Iterator[tuple[str, str, Mapping[str, bool | None]]]:
        """What :func:`harness.assertions.metrics.aggregate` reads: every agent that ran (an
        empty sample names it), then the samples in plan order."""
        for agent in self.strength:
            yield agent, "", {}
        yield from self.metric_samples

    def strength_by_agent(self) -> dict[str, dict[str, int]]:
        """Counterexamples caught / total per agent (each scenario once), for run.json."""
        return {agent: {"caught": caught, "total": total}
                for agent, (caught, total) in sorted(self.strength.items())}

