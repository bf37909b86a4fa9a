"""What the reports show of model-graded results: judge means, rubric pass rates, provenance.

Three things every format must make impossible to misread:

- an *inconclusive* judge (it answered, but no score could be read) is counted
  and shown next to the mean, never hidden behind a dash;
- a mean or pass rate computed from *scripted* answers (the scripted fake
  provider's fixed judge answers) is labelled ``scripted`` and left out of
  trends: it is a constant, not a grade;
- rubric outcomes are counted per rule (pass, fail, inconclusive, not
  evaluated), and none of them ever changes the exit code.

Everything here reads plain records (a run's JSON lines, or the summary records
of a run that just finished), so the formats agree with each other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.provenance import SCRIPTED, answer_source, sources_by_purpose
from harness.rubric.grade import PURPOSE_PREFIX
from harness.rubric.tally import OUTCOMES, RuleTally, tally

GROUP = ("agent", "tenant", "type")
#: Rubric failures listed in full (terminal, Markdown) before the rest is counted.
FAILURES_SHOWN = 10


# -- judges -----------------------------------------------------------------------------------


@dataclass
class JudgeCell:
    """One judge over a group of iterations."""

    scores: list[int]
    inconclusive: int = 0
    not_evaluated: int = 0
    scripted: int = 0
    """Scores whose judge answer was scripted."""

    @property
    def mean(self) -> float | None:
        return round(sum(self.scores) / len(self.scores), 2) if self.scores else None

    def to_json(self) -> dict[str, Any]:
        return {"mean": self.mean, "scored": len(self.scores), "inconclusive": self.inconclusive,
                "not_evaluated": self.not_evaluated, "scripted": self.scripted}


def judge_cells(records: Iterable[Mapping[str, Any]],
                ) -> tuple[list[str], dict[tuple[str, ...], dict[str, JudgeCell]]]:
    """Judge names, and per agent x tenant x type the cell of every judge that ran there."""
    cells: dict[tuple[str, ...], dict[str, JudgeCell]] = {}
    names: set[str] = set()
    for record in records:
        key = tuple(str(record.get(k, "")) for k in GROUP)
        for judge in record.get("judges") or []:
            name = str(judge["name"])
            names.add(name)
            cell = cells.setdefault(key, {}).setdefault(name, JudgeCell([]))
            if judge.get("score") is not None:
                cell.scores.append(int(judge["score"]))
                cell.scripted += answer_source(record, judge, f"judge:{name}") == SCRIPTED
            elif judge.get("interpretation") == "not_evaluated":
                cell.not_evaluated += 1
            else:
                cell.inconclusive += 1
    return sorted(names), dict(sorted(cells.items()))


def judge_cell_text(cell: JudgeCell | None) -> str:
    """``4.67``, ``4.67 scripted``, ``4.50 (2/4 scripted), 1 inconclusive``, ``-, 2 inconclusive``."""
    if cell is None:
        return ""
    text = f"{cell.mean:.2f}" if cell.mean is not None else "-"
    if cell.scripted and cell.scripted == len(cell.scores):
        text += " scripted"
    elif cell.scripted:
        text += f" ({cell.scripted}/{len(cell.scores)} scripted)"
    if cell.inconclusive:
        text += f", {cell.inconclusive} inconclusive"
    if cell.not_evaluated:
        text += f", {cell.not_evaluated} not evaluated"
    return text


def trend_mean(summary: Mapping[str, Any] | None) -> float | None:
    """The mean a trend may plot: without scripted answers (``trend_mean``); runs recorded
    before it existed give their plain ``mean``."""
    summary = summary or {}
    return summary["trend_mean"] if "trend_mean" in summary else summary.get("mean")


# -- rubric -----------------------------------------------------------------------------------


def rubric_samples(records: Iterable[Mapping[str, Any]], by: tuple[str, ...] = GROUP,
                   ) -> Iterable[tuple[tuple[str, ...], str, str, str, str]]:
    """``(group, name, rule, outcome, source)`` of every rubric outcome in the records."""
    for record in records:
        group = tuple(str(record.get(k, "")) for k in by)
        for item in record.get("rubric") or []:
            name = str(item["name"])
            yield (group, name, str(item.get("rule", "")), str(item.get("outcome")),
                   answer_source(record, item, f"{PURPOSE_PREFIX}{name}"))


def rubric_rows(records: Iterable[Mapping[str, Any]], by: tuple[str, ...] = GROUP,
                ) -> list[dict[str, Any]]:
    """Per group and rule: outcome counts, pass rate, scripted count, trend pass rate."""
    table = tally(rubric_samples(records, by))
    return [{**dict(zip(by, group, strict=True)), "name": name, **cell.to_json()}
            for (group, name), cell in table.items()]


def rate_text(row: Mapping[str, Any]) -> str:
    """``80%``, ``100% scripted``, ``75% (2/4 scripted)`` or ``-`` (nothing graded)."""
    rate = row.get("pass_rate")
    if rate is None:
        return "-"
    graded = int(row.get("pass", 0)) + int(row.get("fail", 0))
    scripted = int(row.get("scripted", 0))
    text = f"{rate:.0%}"
    if scripted and scripted == graded:
        return text + " scripted"
    return text + (f" ({scripted}/{graded} scripted)" if scripted else "")


def rubric_table_rows(records: Iterable[Mapping[str, Any]], by: tuple[str, ...] = GROUP,
                      ) -> tuple[list[str], list[list[Any]]]:
    """Headers and rows for a text table of rubric outcomes (empty when no rubric ran)."""
    rows = rubric_rows(records, by)
    headers = [*by, "rule", "pass", "fail", "inconclusive", "not evaluated", "pass rate"]
    return headers, [[*(r[k] for k in by), r["name"], *(r[o] or "" for o in OUTCOMES),
                      rate_text(r)] for r in rows]


def rubric_failures(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """``scenario#iteration rule: reason`` of every failed or inconclusive rubric outcome."""
    lines = []
    for record in records:
        for item in record.get("rubric") or []:
            if item.get("outcome") in ("fail", "inconclusive"):
                reason = " ".join(str(item.get("reason") or "").split())
                lines.append(f"{record['scenario']}#{record['iteration']} {item['name']} "
                             f"[{item['outcome']}]: {reason}")
    return lines


def rubric_trend(summary: Mapping[str, Any] | None) -> dict[str, float | None]:
    """``<agent>/<rule> -> pass rate without scripted answers`` of one run's ``run.json``."""
    return {key: (cell or {}).get("trend_pass_rate")
            for key, cell in ((summary or {}).get("rubric") or {}).items()}


def rule_tallies(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], RuleTally]:
    """``(agent, rule) -> RuleTally`` over the records (what ``compare`` puts side by side)."""
    return {(group[0], name): cell
            for (group, name), cell in tally(rubric_samples(records, ("agent",))).items()}


# -- provenance -------------------------------------------------------------------------------


def provenance_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """How many agent answers and judge answers (judges and rubric items) were scripted,
    came from a provider, or have no provenance (recorded before it existed)."""
    counts = {kind: {"scripted": 0, "provider": 0, "unknown": 0} for kind in ("agent", "judge")}
    for record in records:
        calls = record.get("calls")
        agent = (sources_by_purpose(calls).get("", "") if calls is not None
                 else str(record.get("answer_source") or ""))
        counts["agent"][agent or "unknown"] += 1
        for judge in record.get("judges") or []:
            if judge.get("interpretation") != "not_evaluated":
                source = answer_source(record, judge, f"judge:{judge['name']}")
                counts["judge"][source or "unknown"] += 1
        for item in record.get("rubric") or []:
            if item.get("outcome") != "not_evaluated":
                source = answer_source(record, item, f"{PURPOSE_PREFIX}{item['name']}")
                counts["judge"][source or "unknown"] += 1
    return counts


def provenance_line(records: Iterable[Mapping[str, Any]],
                    agents: Mapping[str, int] | None = None) -> str:
    """One sentence on where the answers came from; empty when no provenance is known.
    ``agents``: the agent answers per source when ``records`` are not every record (the
    totals of a run that just finished)."""
    counts = provenance_counts(records)
    if agents is not None:
        counts["agent"] = {s: int(agents.get(s, 0)) for s in ("scripted", "provider", "unknown")}
    if not any(counts[k]["scripted"] or counts[k]["provider"] for k in counts):
        return ""
    parts = []
    for kind, label in (("agent", "agent answers"), ("judge", "judge answers")):
        cell = counts[kind]
        found = [f"{cell[s]} {s}" for s in ("scripted", "provider", "unknown") if cell[s]]
        if found:
            parts.append(f"{label}: {', '.join(found)}")
    line = "provenance: " + "; ".join(parts)
    if counts["judge"]["scripted"]:
        line += (" (a judge mean or pass rate marked scripted is a constant from a script, not "
                 "a grade; trends leave it out)")
    return line
