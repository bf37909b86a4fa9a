"""The mutant section of every report: mutants per agent, killed, survivors with their operators.

Built from run records (``"mutants"`` in a record when the run was asked for
them), so ``report`` rebuilds it later like every other section. Strength is
``killed / (mutants - equivalent)``, printed beside counterexamples caught.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from harness.assertions.counterexamples import strength
from harness.mutants.judge import mutant_strength

__all__ = ["fail_under_problem", "has_mutants", "mutant_json", "mutant_lines", "mutant_markdown"]


def has_mutants(records: Iterable[Mapping[str, Any]]) -> bool:
    return any(record.get("mutants") for record in records)


def _by_agent(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: defaultdict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[str(record.get("agent") or str(record.get("scenario", "")).split("/")[0])].append(record)
    return dict(sorted(grouped.items()))


def _ratio(killed: int, counted: int) -> str:
    return f"{killed / counted:.1%}" if counted else "-"


def mutant_json(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Per agent: mutants, killed, equivalent, strength, counterexamples caught, survivors."""
    out: dict[str, Any] = {}
    for agent, members in _by_agent(records).items():
        with_mutants = [r for r in members if r.get("mutants")]
        if not with_mutants:
            continue
        killed, counted = mutant_strength(with_mutants)
        caught, declared = strength(members)
        operators: Counter[str] = Counter()
        survivors = []
        for record in with_mutants:
            found = record["mutants"]
            for item in found.get("survivors") or ():
                operators[item["operator"]] += 1
                survivors.append({"scenario": record["scenario"], "iteration": record["iteration"],
                                  **item})
        out[agent] = {
            "mutants": sum(int(r["mutants"]["total"]) for r in with_mutants),
            "killed": killed,
            "equivalent": sum(len(r["mutants"].get("equivalent") or ()) for r in with_mutants),
            "strength": killed / counted if counted else None,
            "counterexamples": {"caught": caught, "total": declared},
            "survivors_by_operator": dict(sorted(operators.items())),
            "survivors": survivors,
        }
    return out


def mutant_lines(records: Iterable[Mapping[str, Any]], *, per_scenario: int = 0) -> list[str]:
    """The terminal section: one line per agent, survivors per scenario counted by operator,
    and with ``per_scenario`` the first that many survivors of each scenario, one per line."""
    records = list(records)
    summary = mutant_json(records)
    if not summary:
        return []
    lines = ["generated mutants (a survivor is a wrong answer no hard assertion rejects; "
             "strength = killed / non-equivalent mutants):"]
    for agent, found in summary.items():
        caught = found["counterexamples"]
        lines.append(f"  {agent}: {found['mutants']} mutants, {found['killed']} killed, "
                     f"{len(found['survivors'])} survived, {found['equivalent']} equivalent; "
                     f"strength {_ratio(found['killed'], found['mutants'] - found['equivalent'])}"
                     f" (counterexamples caught {caught['caught']}/{caught['total']})")
        if found["survivors_by_operator"]:
            lines.append("    survivors by operator: " + ", ".join(
                f"{op} {n}" for op, n in found["survivors_by_operator"].items()))
    grouped: defaultdict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for agent_found in summary.values():
        for item in agent_found["survivors"]:
            grouped[f"{item['scenario']}#{item['iteration']}"].append(item)
    if grouped:
        lines.append("  survivors per scenario:")
        for scenario, items in grouped.items():
            counted = Counter(i["operator"] for i in items)
            lines.append(f"    {scenario}: " + ", ".join(f"{op} {n}" for op, n in counted.items()))
            lines.extend(f"      {i['operator']}: {i['detail']}" for i in items[:per_scenario])
            if len(items) > per_scenario > 0:
                lines.append(f"      ... and {len(items) - per_scenario} more (--json lists all)")
    return lines


def mutant_markdown(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """The Markdown section: the per-agent table, then every survivor grouped by scenario."""
    records = list(records)
    summary = mutant_json(records)
    if not summary:
        return []
    parts = ["### Generated mutants", "",
             "Wrong answers derived from each recorded answer by deterministic operators and "
             "judged by the scenario's hard assertions. A survivor is not a failure; the share "
             "killed is the strength.", "",
             "| agent | mutants | killed | survived | equivalent | strength | counterexamples caught |",
             "|---|---|---|---|---|---|---|"]
    for agent, found in summary.items():
        caught = found["counterexamples"]
        parts.append(f"| {agent} | {found['mutants']} | {found['killed']} | "
                     f"{len(found['survivors'])} | {found['equivalent']} | "
                     f"{_ratio(found['killed'], found['mutants'] - found['equivalent'])} | "
                     f"{caught['caught']}/{caught['total']} |")
    parts.append("")
    for agent, found in summary.items():
        if not found["survivors"]:
            continue
        parts.append(f"<details><summary>{agent}: {len(found['survivors'])} survivor(s)</summary>")
        parts.append("")
        for item in found["survivors"]:
            detail = str(item["detail"]).replace("|", "\\|")
            parts.append(f"- `{item['scenario']}#{item['iteration']}` {item['operator']}: {detail}")
        parts += ["", "</details>", ""]
    return parts


def fail_under_problem(records: Iterable[Mapping[str, Any]], floor: float) -> str:
    """Why the run misses ``--fail-under`` (empty when every agent with mutants meets it)."""
    short = []
    for agent, found in mutant_json(records).items():
        counted = found["mutants"] - found["equivalent"]
        value = found["killed"] / counted if counted else 1.0
        if value < floor:
            short.append(f"{agent} {value:.1%}")
    if not short:
        return ""
    return (f"eval-mutants-below-floor: mutant strength under --fail-under {floor:.1%}: "
            f"{', '.join(short)}; kill the survivors listed above with assertions, or mark the "
            "ones that are right answers as equivalent_mutants with a reason")
