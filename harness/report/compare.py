"""Two runs side by side: flipped verdicts, moved judge scores, changed rubric pass rates.

``python -m harness compare RUN_A RUN_B`` reads both from ``eval-results/``.
Verdicts are compared per scenario iteration (pass or fail, with the statuses);
judge scores per scenario and judge, as the mean over its iterations, and a
move is listed when it exceeds the threshold (default 0.5: any whole point on
the 1-5 scale). Rubric rules are compared per agent and rule (pass rate before
and after, scripted ones marked), and each scenario iteration whose outcome of a
rule flipped between pass and fail is listed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from tabulate import tabulate

from harness.report.grades import rule_tallies
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
    rules: list[dict[str, Any]] = field(default_factory=list)
    """Rubric rules whose pass rate changed (or that appear on one side only)."""
    rule_flips: list[dict[str, Any]] = field(default_factory=list)
    """Rubric outcomes of one scenario iteration that flipped between pass and fail."""


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
    _compare_rules(result, a, b, before, after)
    return result


def _compare_rules(result: Comparison, a: RunView, b: RunView,
                   before: dict[tuple[str, int], dict[str, Any]],
                   after: dict[tuple[str, int], dict[str, Any]]) -> None:
    """Per rule: the pass rate before and after; per scenario iteration: pass <-> fail flips."""
    rules_a, rules_b = rule_tallies(a.records), rule_tallies(b.records)
    for rule_key in sorted(rules_a.keys() | rules_b.keys()):
        old, new = rules_a.get(rule_key), rules_b.get(rule_key)
        rate_a = old.pass_rate if old else None
        rate_b = new.pass_rate if new else None
        if rate_a == rate_b and old is not None and new is not None:
            continue
        delta = round(rate_b - rate_a, 4) if rate_a is not None and rate_b is not None else None
        result.rules.append({
            "agent": rule_key[0], "rule": rule_key[1], "before": rate_a, "after": rate_b, "delta": delta,
            "scripted": any(t is not None and t.scripted for t in (old, new)),
            "inconclusive": [t.counts["inconclusive"] if t else None for t in (old, new)]})
    for key in sorted(before.keys() & after.keys()):
        outcomes_a = {str(x["name"]): x.get("outcome") for x in before[key].get("rubric") or []}
        for item in after[key].get("rubric") or []:
            old_outcome, new_outcome = outcomes_a.get(str(item["name"])), item.get("outcome")
            if {old_outcome, new_outcome} == {"pass", "fail"}:
                result.rule_flips.append({"scenario": key[0], "iteration": key[1],
                                          "rule": item["name"], "before": old_outcome,
                                          "after": new_outcome, "reason": item.get("reason", "")})


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


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
    if c.rules:
        parts.append(f"\n{len(c.rules)} rubric rule(s) changed pass rate (reported only, never "
                     "gating):")
        parts.append(tabulate([[r["agent"], r["rule"], _rate(r["before"]), _rate(r["after"]),
                                f"{r['delta']:+.0%}" if r["delta"] is not None else "-",
                                "yes" if r["scripted"] else ""] for r in c.rules],
                              headers=["agent", "rule", "before", "after", "delta", "scripted"],
                              disable_numparse=True))
        for flip in c.rule_flips:
            parts.append(f"  {flip['scenario']}#{flip['iteration']} {flip['rule']}: "
                         f"{flip['before']} -> {flip['after']}: {str(flip['reason'])[:100]}")
    else:
        parts.append("\nno rubric pass rate changed")
    if c.only_a:
        parts.append(f"\nonly in {c.run_a}: {', '.join(c.only_a)}")
    if c.only_b:
        parts.append(f"\nonly in {c.run_b}: {', '.join(c.only_b)}")
    return "\n".join(parts)
