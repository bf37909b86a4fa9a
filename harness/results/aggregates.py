"""Aggregates of a run's iterations for ``run.json``: judge means and rubric pass rates.

Computed from values, not from live objects, so that the writer (over the
results of a run) and the shard merge (over the records of N runs) compute them
alike: a merged mean is the mean of the union, never a mean of means.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.rubric.tally import tally


def rubric_summary(outcomes: Iterable[tuple[str, str, str, str, str]]) -> dict[str, dict[str, Any]]:
    """Per ``<agent>/<rule>``, from ``(agent, name, rule, outcome, source)``: outcome counts,
    the pass rate, how many graded answers were scripted, and the trend pass rate (without
    them)."""
    table = tally(((agent,), name, rule, outcome, source)
                  for agent, name, rule, outcome, source in outcomes)
    return {f"{group[0]}/{name}": cell.to_json() for (group, name), cell in table.items()}


def judge_means(scores: Iterable[tuple[str, int | None, str, str]]) -> dict[str, dict[str, Any]]:
    """Per judge, from ``(name, score, interpretation, source)``: the mean over scored
    iterations, how many were inconclusive or not evaluated, how many scores came from
    scripted answers, and ``trend_mean``, the mean without them (``None`` when every score
    was scripted: a constant from a script is not a grade to trend)."""
    table: dict[str, dict[str, Any]] = {}
    for name, score, interpretation, source in scores:
        cell = table.setdefault(name, {"scores": [], "real": [], "inconclusive": 0,
                                       "not_evaluated": 0})
        if score is not None:
            cell["scores"].append(score)
            if source != "scripted":
                cell["real"].append(score)
        elif interpretation == "not_evaluated":
            cell["not_evaluated"] += 1
        else:
            cell["inconclusive"] += 1
    return {name: {"mean": _mean_of(c["scores"]), "scored": len(c["scores"]),
                   "inconclusive": c["inconclusive"], "not_evaluated": c["not_evaluated"],
                   "scripted": len(c["scores"]) - len(c["real"]), "trend_mean": _mean_of(c["real"])}
            for name, c in sorted(table.items())}


def _mean_of(scores: list[int]) -> float | None:
    return round(sum(scores) / len(scores), 3) if scores else None
