"""The JSON report: everything the other formats show, for tools and dashboards."""

from __future__ import annotations

import json

from harness.mutants.report import has_mutants, mutant_json
from harness.report.grades import (
    judge_cells,
    provenance_counts,
    rubric_rows,
    rubric_trend,
    trend_mean,
)
from harness.report.model import (
    RunView,
    blocking_line,
    is_blocking,
    judge_overall,
    judge_table,
    metric_rows,
    rows,
    tests,
)

#: Bumped when a field changes meaning or disappears (adding fields does not bump it).
REPORT_FORMAT = 1


def report_data(view: RunView) -> dict[str, object]:
    """The report as one JSON-ready mapping."""
    table, total = rows(view.records)
    by_type, _ = rows(view.records, by=("type",))
    names, judges = judge_table(view.records)
    _, cells = judge_cells(view.records)
    names3 = ("agent", "tenant", "type")
    return {
        "report_format": REPORT_FORMAT,
        "run": {k: v for k, v in view.run.items()
                if k not in ("metrics", "judges", "rubric", "blocking")},
        "exit_code": view.run.get("exit_code"),
        "blocking_line": blocking_line(view) or None,
        "blocking": [{"scenario": r["scenario"], "iteration": r["iteration"], "type": r["type"],
                      "message": r.get("message", "")}
                     for r in view.records if is_blocking(r)],
        "coverage": [row.as_dict(names3) for row in table],
        "total": total.as_dict(names3),
        "by_type": [row.as_dict(("type",)) for row in by_type],
        "metrics": metric_rows(view),
        "judges": {"overall": judge_overall(view), "names": names,
                   "by_group": [dict(zip((*names3, *names), row, strict=True)) for row in judges],
                   "cells": [{**dict(zip(names3, key, strict=True)), "judge": name, **cell.to_json()}
                             for key, row in cells.items() for name, cell in row.items()]},
        "rubric": {"by_rule": rubric_rows(view.records, ("agent",)),
                   "by_group": rubric_rows(view.records)},
        "provenance": provenance_counts(view.records),
        "trend": [{"run_id": h.get("run_id"), "started": h.get("started"),
                   "judges": {n: trend_mean(v) for n, v in (h.get("judges") or {}).items()},
                   "rubric": rubric_trend(h)}
                  for h in view.history],
        "tests": tests(view),
        **({"mutants": mutant_json(view.records)} if has_mutants(view.records) else {}),
    }


def render_json(view: RunView) -> str:
    return json.dumps(report_data(view), indent=2, ensure_ascii=False) + "\n"
