"""The Markdown report (a pull request comment, a GitHub job summary).

When ``$GITHUB_STEP_SUMMARY`` is set (GitHub Actions), :mod:`harness.report.github`
appends it to that file, so the job page shows the tables without anyone opening a log.
"""

from __future__ import annotations

import html
from typing import Any

from harness.mutants.report import mutant_markdown
from harness.report.grades import provenance_line, rubric_failures
from harness.report.model import (
    RunView,
    blocking_line,
    is_blocking,
    judge_warnings,
    ordered_failures,
)
from harness.report.terminal import (
    coverage_table,
    format_value,
    judges_table,
    metrics_table,
    rubric_table,
    verdict_text,
)


def render_markdown(view: RunView) -> str:
    """The whole report as GitHub-flavoured Markdown."""
    run = view.run
    parts = [f"## Eval report: run `{view.run_id}`", ""]
    if run.get("stamp_problem"):
        parts += [f"> **{_inline(str(run['stamp_problem']))}**", ""]
    blocked = blocking_line(view)
    if blocked:
        parts += [f"> **{_inline(blocked)}**", ""]
    parts += [f"**{verdict_text(view)}** (started {run.get('started', '?')})", ""]
    if view.records:
        parts += ["### Coverage by agent, tenant and test type", "",
                  coverage_table(view.records, "github"), ""]
    metrics = metrics_table(view, "github")
    if metrics:
        parts += ["### Metrics", "", "Deterministic (computed from verdicts and outputs): a gated "
                  "metric that misses its target fails the run.", "", metrics, ""]
    judges = judges_table(view, "github")
    if judges:
        parts += ["### Judge scores (mean 1-5)", "", "Reported only: judge scores never change "
                  "the exit code. Each cell counts the judges that answered without a readable "
                  "score (inconclusive) and those that gave no answer (not evaluated); a mean "
                  "marked scripted comes from fixed answers of a script, not from a model.", "",
                  judges, ""]
    rubric = rubric_table(view, "github")
    if rubric:
        parts += ["### Rubric (pass rate per rule)", "", "Reported only: rubric outcomes never "
                  "change the exit code. Pass rate = pass / (pass + fail); inconclusive answers "
                  "are counted apart, never as a pass.", "",
                  rubric_table(view, "github", by=("agent",)), "",
                  "<details><summary>By agent, tenant and test type</summary>", "", rubric, "",
                  "</details>", ""]
    graded = rubric_failures(view.records)
    if graded:
        parts += [f"<details><summary>{len(graded)} rubric outcome(s) failed or inconclusive"
                  "</summary>", "", *(f"- {_inline(line)}" for line in graded), "", "</details>", ""]
    provenance = provenance_line(view.records)
    if provenance:
        parts += [f"_{_inline(provenance)}_", ""]
    parts += mutant_markdown(view.records)
    warnings = judge_warnings(view.records)
    if warnings:
        parts += [f"<details><summary>{len(warnings)} judge score(s) not evaluated</summary>", "",
                  *(f"- {_inline(w.splitlines()[0])}" for w in warnings), "", "</details>", ""]
    failures = ordered_failures(view.records)
    if failures:
        parts += [f"### Failures ({len(failures)}, blocking first)", ""]
        parts += [_failure(record) for record in failures]
    return "\n".join(parts).rstrip() + "\n"


def _failure(record: dict[str, Any]) -> str:
    blocking = "BLOCKING " if is_blocking(record) else ""
    title = (f"{blocking}[{record['status']}] {record['scenario']} iteration "
             f"{record['iteration']} ({record['type']})")
    decision = ""
    if record.get("expected_decision") is not None or record.get("actual_decision") is not None:
        decision = (f"expected decision {format_decision(record.get('expected_decision'))}, "
                    f"actual {format_decision(record.get('actual_decision'))}\n")
    return (f"<details><summary>{html.escape(title)}</summary>\n\n<pre>"
            f"{html.escape(decision + str(record.get('message', '')))}</pre>\n</details>\n")


def format_decision(value: Any) -> str:
    return "-" if value is None else str(value)


def _inline(text: str) -> str:
    """Text safe inside a Markdown line: no HTML, no table or emphasis surprises."""
    return html.escape(" ".join(text.split())).replace("|", "\\|").replace("*", "\\*")


__all__ = ["format_decision", "format_value", "render_markdown"]
