"""Two runs side by side: scenarios whose verdict flipped, judge scores that moved.

``python -m harness compare RUN_A RUN_B`` reads both from ``eval-results/``.
Verdicts are compared per scenario iteration (pass or fail, with the statuses);
judge scores per scenario and judge, as the mean over its iterations, and a
move is listed when it exceeds the threshold (default 0.5: any whole point on
the 1-5 scale).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from harness.report.model import RunView

DEFAULT_THRESHOLD = 0.5


@dataclass
class Comparison:
    """What changed from run A to run B."""

    run_a: str
    run_b: str
    threshold: float
    flipped: list[dict[str, Any]] = field(default_factory=list)
    moved: list[dict[str, Any]] = field(default_factory=list)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)


def compare_runs(a: RunView, b: RunView, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
    """Flipped verdicts (pass <-> fail) and judge means that moved by more than ``threshold``."""
    result = Comparison(a.run_id, b.run_id, threshold)
    before = {(r["scenario"], r["iteration"]): r for r in a.records}
    after = {(r["scenario"], r["iteration"]): r for r in b.records}
    for key in sorted(before.keys() & after.keys()):
        old, new = before[key], after[key]
        if _passed(old) != _passed(new):
            result.flipped.append({
                "scenario": key[0], "iteration": key[1], "type": new.get("type"),
                "before": old["status"], "after": new["status"],
                "direction": "fixed" if _passed(new) else "broke",
                "message": str(new.get("message") or "").splitlines()[0] if new.get("message") else "",
            })
    result.only_a = sorted({k[0] for k in before.keys() - after.keys()})
    result.only_b = sorted({k[0] for k in after.keys() - before.keys()})
    means_a, means_b = _judge_means(a.records), _judge_means(b.records)
    for key in sorted(means_a.keys() & means_b.keys()):
        delta = means_b[key] - means_a[key]
        if abs(delta) > threshold:
            result.moved.append({"scenario": key[0], "judge": key[1], "before": means_a[key],
                                 "after": means_b[key], "delta": round(delta, 3)})
    return result


def _passed(record: dict[str, Any]) -> bool:
    return record.get("status") == "passed"


def _judge_means(records: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    scores: defaultdict[tuple[str, str], list[int]] = defaultdict(list)
    for record in records:
        for judge in record.get("judges") or []:
            if judge.get("score") is not None:
                scores[(record["scenario"], judge["name"])].append(int(judge["score"]))
    return {k: round(sum(v) / len(v), 3) for k, v in scores.items()}


def render_comparison(c: Comparison) -> str:
    """The comparison as terminal text."""
    parts = [f"compare {c.run_a} -> {c.run_b}"]
    if c.flipped:
        broke = sum(f["direction"] == "broke" for f in c.flipped)
        parts.append(f"\n{len(c.flipped)} verdict(s) flipped ({broke} broke, "
                     f"{len(c.flipped) - broke} fixed):")
        parts.append(tabulate([[f["direction"], f"{f['scenario']}#{f['iteration']}", f["type"],
                                f["before"], f["after"], f["message"][:80]] for f in c.flipped],
                              headers=["", "scenario", "type", "before", "after", "why"],
                              disable_numparse=True))
    else:
        parts.append("\nno verdict flipped")
    if c.moved:
        parts.append(f"\n{len(c.moved)} judge score(s) moved by more than {c.threshold:g}:")
        parts.append(tabulate([[m["scenario"], m["judge"], f"{m['before']:.2f}", f"{m['after']:.2f}",
                                f"{m['delta']:+.2f}"] for m in c.moved],
                              headers=["scenario", "judge", "before", "after", "delta"],
                              disable_numparse=True))
    else:
        parts.append(f"\nno judge score moved by more than {c.threshold:g}")
    if c.only_a:
        parts.append(f"\nonly in {c.run_a}: {', '.join(c.only_a)}")
    if c.only_b:
        parts.append(f"\nonly in {c.run_b}: {', '.join(c.only_b)}")
    return "\n".join(parts)
