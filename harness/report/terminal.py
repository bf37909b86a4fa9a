"""The terminal summary of a run: one table by agent, tenant and test type, then failures."""

from __future__ import annotations

from collections import Counter, defaultdict

from tabulate import tabulate

from harness.results import IterationResult, RunSummary

_COLUMNS = ("passed", "rejected", "missed", "expired", "corrupt", "unchecked", "error")


def summary_table(results: list[IterationResult]) -> str:
    """Counts per agent x tenant x test type, with a total row."""
    groups: defaultdict[tuple[str, str, str], Counter[str]] = defaultdict(Counter)
    for result in results:
        s = result.scenario
        groups[(s.agent, s.tenant, s.type)][result.status] += 1
    rows = []
    total: Counter[str] = Counter()
    for (agent, tenant, kind), counts in sorted(groups.items()):
        total.update(counts)
        rows.append([agent, tenant, kind, *_cells(counts)])
    rows.append(["total", "", "", *_cells(total)])
    headers = ["agent", "tenant", "type", "iterations", *_COLUMNS, "pass rate"]
    return tabulate(rows, headers=headers, tablefmt="simple")


def _cells(counts: Counter[str]) -> list[object]:
    iterations = sum(counts.values())
    rate = f"{counts['passed'] / iterations:.0%}" if iterations else "-"
    return [iterations, *(counts[c] or "" for c in _COLUMNS), rate]


def render_summary(summary: RunSummary, *, quiet: bool = False) -> str:
    """The whole terminal report: stamp problem, table, failures, verdict line."""
    parts: list[str] = []
    if summary.stamp_problem:
        parts.append(summary.stamp_problem)
    if not summary.results:
        parts.append("no scenario selected: nothing was evaluated (check the filters)")
    elif not quiet:
        parts.append(summary_table(summary.results))
    failures = summary.failures
    if failures:
        parts.append(f"\n{len(failures)} failing iteration(s):")
        for result in failures:
            parts.append(f"\n[{result.status}] {result.scenario.id} iteration {result.iteration}"
                         f" ({result.scenario.type})")
            parts.append("  " + result.message.replace("\n", "\n  "))
    counts = summary.counts
    verdict = "PASSED" if summary.exit_code == 0 else "FAILED"
    parts.append(
        f"\n{verdict}: {counts['passed']} passed, {len(failures)} failed of "
        f"{len(summary.results)} iteration(s); records in {summary.results_dir}")
    return "\n".join(parts)
