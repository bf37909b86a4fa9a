"""The terminal summary of a run: the blocking line, one table by agent, tenant and test type,
metrics against their targets, judge means (reported only), then failures, blocking ones first."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from harness.mutants.report import mutant_lines
from harness.report.grades import (
    FAILURES_SHOWN,
    GROUP,
    judge_cell_text,
    judge_cells,
    provenance_line,
    rubric_failures,
    rubric_table_rows,
)
from harness.report.model import (
    COLUMNS,
    Row,
    RunView,
    blocking_line,
    is_blocking,
    judge_warnings,
    metric_rows,
    rows,
    view_counts,
    view_of_summary,
    view_rows,
)
from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary

#: Judge warnings listed in full before the rest is counted.
_WARNINGS_SHOWN = 10


def coverage_table(records: list[dict[str, Any]], tablefmt: str = "simple", *,
                   counted: tuple[list[Row], Row] | None = None) -> str:
    """Scenarios, iterations and outcomes per agent x tenant x test type, with a total row;
    ``strength`` is counterexamples caught / declared (how much a wrong answer would fail).
    ``counted``: the rows already counted (:func:`~harness.report.model.view_rows`)."""
    table, total = counted if counted is not None else rows(records)
    body = [[*row.key, *_cells(row)] for row in [*table, total]]
    headers = ["agent", "tenant", "type", "scenarios", "iterations", *COLUMNS, "pass rate",
               "strength"]
    return tabulate(body, headers=headers, tablefmt=tablefmt)


def _cells(row: Row) -> list[object]:
    rate = f"{row.pass_rate:.0%}" if row.pass_rate is not None else "-"
    return [row.scenarios, row.iterations, *(row.counts[c] or "" for c in COLUMNS), rate,
            row.strength]


def metrics_table(view: RunView, tablefmt: str = "simple") -> str:
    """Declared metrics against their targets (empty when the agents declare none)."""
    metrics = metric_rows(view)
    if not metrics:
        return ""
    body = [[m["agent"], m["name"], m.get("value"),
             f"{m['numerator']}/{m['denominator']}", target_text(m),
             "yes" if m.get("gate") else "no", status_text(m)] for m in metrics]
    headers = ["agent", "metric", "value", "n", "target", "gate", "status"]
    return tabulate(body, headers=headers, tablefmt=tablefmt, floatfmt=".2f", missingval="n/a")


def judges_table(view: RunView, tablefmt: str = "simple") -> str:
    """Mean judge score per agent x tenant x type, each cell with its inconclusive and not
    evaluated counts and a ``scripted`` label (empty when no scenario has judges)."""
    names, cells = judge_cells(view.records)
    if not names:
        return ""
    body = [[*key, *(judge_cell_text(row.get(n)) for n in names)] for key, row in cells.items()]
    return tabulate(body, headers=["agent", "tenant", "type", *names], tablefmt=tablefmt,
                    disable_numparse=True)


def rubric_table(view: RunView, tablefmt: str = "simple", by: tuple[str, ...] = GROUP) -> str:
    """Rubric outcomes per group and rule (empty when no rubric item was graded)."""
    headers, body = rubric_table_rows(view.records, by)
    return tabulate(body, headers=headers, tablefmt=tablefmt, disable_numparse=True) if body else ""


def format_value(value: Any) -> str:
    return "n/a" if value is None else f"{float(value):.2f}"


def target_text(metric: dict[str, Any]) -> str:
    sign = "<=" if metric.get("better") == "lower" else ">="
    return f"{sign} {float(metric['target']):.2f}"


def status_text(metric: dict[str, Any]) -> str:
    status = str(metric.get("status"))
    if status == "missed" and metric.get("gate"):
        return "MISSED (fails the run)"
    if status == "missed":
        return "missed (not gated)"
    return status


def failure_text(result: IterationResult) -> str:
    """How one failed iteration reads, in the CLI and in a pytest failure alike."""
    header = (f"[{result.status}] {result.scenario.id} iteration {result.iteration}"
              f" ({result.scenario.type})")
    return header + "\n  " + result.message.replace("\n", "\n  ")


def render_summary(summary: RunSummary, *, quiet: bool = False, failures: bool = True) -> str:
    """The whole terminal report of a run that just finished."""
    view = view_of_summary(summary, {"shard": summary.shard} if summary.shard else None)
    by_id = {(r.scenario.id, r.iteration): r for r in summary.failures}
    text = render_view(view, quiet=quiet, failures=failures, by_id=by_id)
    notes = "".join(f"{note}\n" for note in summary.notes)  # failed re-records: never silent
    return f"{notes}{text}; records in {summary.results_dir}"


def render_view(view: RunView, *, quiet: bool = False, failures: bool = True,
                by_id: dict[tuple[str, int], IterationResult] | None = None) -> str:
    """Stamp problem, blocking line, tables, judge warnings, failures, verdict line."""
    parts: list[str] = []
    if view.run.get("stamp_problem"):
        parts.append(str(view.run["stamp_problem"]))
    blocked = blocking_line(view)
    if blocked:
        parts.append(blocked)
    records = view.records
    iterations, _ = view_counts(view)
    shard = (view.run.get("selection") or {}).get("shard")
    if not iterations and shard:
        parts.append(f"shard {shard['index']}/{shard['count']} holds none of the "
                     f"{shard['planned_scenarios']} selected scenario(s): nothing to evaluate "
                     "here (the merge of the shards judges the whole)")
    elif not iterations:
        parts.append("no scenario selected: nothing was evaluated (check the filters)")
    elif not quiet:
        parts.append(coverage_table(records, counted=view_rows(view)))
        for title, table in (("metrics (deterministic; a gated miss fails the run)",
                              metrics_table(view)),
                             ("judge scores, mean 1-5 (reported only, never gating)",
                              judges_table(view)),
                             ("rubric, pass rate per rule (reported only, never gating; by "
                              "tenant and type in the md, json and html reports)",
                              rubric_table(view, by=("agent",)))):
            if table:
                parts.append(f"\n{title}:\n{table}")
        graded = rubric_failures(records)
        if graded:
            parts.append(f"\n{len(graded)} rubric outcome(s) failed or inconclusive "
                         "(reported only; the exit code is unaffected):")
            parts.extend("  " + line[:200] for line in graded[:FAILURES_SHOWN])
            if len(graded) > FAILURES_SHOWN:
                parts.append(f"  ... and {len(graded) - FAILURES_SHOWN} more in the records")
        provenance = provenance_line(
            records, agents=view.totals.agent_sources if view.totals is not None else None)
        if provenance:
            parts.append("\n" + provenance)
        mutants = mutant_lines(records)
        if mutants:
            parts.append("\n" + "\n".join(mutants))
    missed = [m for m in metric_rows(view) if m.get("gate") and m.get("status") == "missed"]
    for metric in missed:
        parts.append(f"\ngated metric {metric['agent']}/{metric['name']} = "
                     f"{format_value(metric.get('value'))} missed its target "
                     f"{target_text(metric)}: the run fails")
    warnings = judge_warnings(records)
    if warnings:
        parts.append(f"\n{len(warnings)} judge score(s) not evaluated (the gate is unaffected)"
                     + (":" if not quiet else "; see the records"))
        shown = [] if quiet else warnings[:_WARNINGS_SHOWN]
        parts.extend("  " + w.splitlines()[0] for w in shown)
        if len(warnings) > len(shown) and shown:
            parts.append(f"  ... and {len(warnings) - len(shown)} more in the records")
    bad = [r for r in records if r.get("status") != "passed"]
    if bad and failures:
        ordered = [r for r in bad if is_blocking(r)] + [r for r in bad if not is_blocking(r)]
        parts.append(f"\n{len(bad)} failing iteration(s):")
        for record in ordered:
            result = (by_id or {}).get((record["scenario"], record["iteration"]))
            text = failure_text(result) if result is not None else _record_failure(record)
            parts.append("\n" + ("BLOCKING " if is_blocking(record) else "") + text)
    parts.append("\n" + verdict_text(view))
    return "\n".join(parts)


def verdict_text(view: RunView) -> str:
    """``PASSED``/``FAILED`` with the totals."""
    iterations, failed = view_counts(view)
    word = "PASSED" if view.run.get("exit_code", 1) == 0 else "FAILED"
    return f"{word}: {iterations - failed} passed, {failed} failed of {iterations} iteration(s)"


def _record_failure(record: dict[str, Any]) -> str:
    header = f"[{record['status']}] {record['scenario']} iteration {record['iteration']} ({record['type']})"
    return header + "\n  " + str(record.get("message", "")).replace("\n", "\n  ")
