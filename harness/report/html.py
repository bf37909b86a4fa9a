"""The HTML report: one self-contained file (inline CSS, JS and SVG; no CDN, no network).

It shows the verdict and the blocking line, pass rate by test type (bars), the
coverage, metric, judge and rubric tables (inconclusive counts and scripted
labels in every cell), the judge score trend over the last runs (scripted
answers left out), and a per-scenario view with the transcript, verdicts, judge
scores and rubric outcomes. The
data is embedded as JSON with ``<``, ``>`` and ``&`` escaped, and the script
renders it with ``textContent`` only: nothing recorded is ever parsed as HTML.
"""

from __future__ import annotations

import html
import json
from typing import Any

from harness.core.provenance import SCRIPTED, answer_source
from harness.mutants.report import mutant_lines
from harness.report.grades import judge_cell_text, judge_cells, provenance_line, rubric_table_rows
from harness.report.html_assets import CSS, ERROR_HOOK, SCRIPT
from harness.report.json_report import report_data
from harness.report.model import RunView, is_blocking
from harness.rubric.grade import PURPOSE_PREFIX

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Eval report: run @@TITLE@@</title>
<style>@@CSS@@</style>
<script>@@HOOK@@</script>
</head>
<body>
<header>
<h1>Eval report</h1>
<div class="muted">run <code>@@TITLE@@</code>, started @@STARTED@@</div>
<div id="stamp-problem" class="banner" hidden></div>
<div id="verdict" class="banner"></div>
<div id="blocking-line" class="banner" hidden></div>
<div class="cards">
<div class="card"><span class="n" id="count-iterations">-</span>iterations</div>
<div class="card"><span class="n" id="count-scenarios">-</span>scenarios</div>
<div class="card ok"><span class="n" id="count-passed">-</span>passed</div>
<div class="card bad"><span class="n" id="count-failed">-</span>failed</div>
<div class="card bad"><span class="n" id="count-blocking">-</span>blocking (negative/adversarial)</div>
<div class="card"><span class="n" id="pass-rate">-</span>pass rate</div>
</div>
</header>
<main>
<pre id="errors" hidden></pre>
<noscript><p>This report needs JavaScript to render; the same data is in the JSON report.</p></noscript>
<div class="charts">
<section class="panel"><h2>Pass rate by test type</h2><div id="chart-types"></div></section>
<section class="panel"><h2>Judge score trend (last runs, mean 1-5, reported only)</h2>
<div id="chart-trend"></div></section>
</div>
<section><h2>Coverage by agent, tenant and test type</h2><table id="table-coverage"></table></section>
<section><h2>Metrics (deterministic; a gated miss fails the run)</h2>
<table id="table-metrics"></table></section>
@@MUTANTS@@
<section><h2>Judge scores, mean 1-5 (reported only, never gating)</h2>
<table id="table-judges"></table></section>
<section><h2>Rubric, pass rate per rule (reported only, never gating)</h2>
<table id="table-rubric"></table></section>
<section><h2>Rubric pass rate trend (last runs; scripted answers left out)</h2>
<table id="table-rubric-trend"></table></section>
<p id="provenance" class="muted" hidden></p>
<section class="grid">
<div class="panel"><h2>Scenarios</h2>
<div class="filters"><input id="filter-text" type="search" placeholder="filter by scenario, type or test id">
<select id="filter-status"><option value="all">all</option><option value="failing">failing</option>
<option value="passed">passed</option></select></div>
<table id="scenario-table"></table></div>
<div class="panel" id="transcript"></div>
</section>
</main>
<script type="application/json" id="report-data">@@DATA@@</script>
<script>@@SCRIPT@@</script>
</body>
</html>
"""


def html_data(view: RunView) -> dict[str, Any]:
    """What the page's script renders: the JSON report plus the records it lists."""
    report = report_data(view)
    names, cells = judge_cells(view.records)
    rubric_headers, rubric_body = rubric_table_rows(view.records)
    return {
        "run": report["run"],
        "blocking_line": report["blocking_line"],
        "coverage": report["coverage"],
        "total": report["total"],
        "metrics": report["metrics"],
        "judge_groups": {"names": names, "rows": [[*key, *(judge_cell_text(row.get(n)) for n in names)]
                                                  for key, row in cells.items()]},
        "rubric": {"headers": rubric_headers, "rows": rubric_body},
        "provenance": provenance_line(view.records),
        "trend": report["trend"],
        "records": [_record(r) for r in view.records],
    }


def _record(record: dict[str, Any]) -> dict[str, Any]:
    keep = ("scenario", "iteration", "agent", "tenant", "type", "status", "message", "test_id",
            "description", "environment", "expected_decision", "actual_decision", "verdicts",
            "judges", "rubric", "transcript", "transcript_path", "transcript_line")
    kept = {k: record.get(k) for k in keep}
    kept["blocking"] = is_blocking(record)  # the one rule (harness.core.entities), not a copy in JS
    kept["judges"] = [{**j, "scripted": answer_source(record, j, f"judge:{j['name']}") == SCRIPTED}
                      for j in record.get("judges") or []]
    kept["rubric"] = [{**x, "scripted": answer_source(record, x, PURPOSE_PREFIX + str(x["name"]))
                       == SCRIPTED} for x in record.get("rubric") or []]
    return kept


def script_json(value: Any) -> str:
    """JSON that is safe inside ``<script>``: no ``</script>``, no ``<!--``, no line separators."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def render_html(view: RunView) -> str:
    """The report as one HTML document."""
    replacements = {
        "@@CSS@@": CSS,
        "@@HOOK@@": ERROR_HOOK,
        "@@SCRIPT@@": SCRIPT,
        "@@TITLE@@": html.escape(view.run_id),
        "@@STARTED@@": html.escape(str(view.run.get("started", "?"))),
        "@@DATA@@": script_json(html_data(view)),
        "@@MUTANTS@@": _mutant_section(view),
    }
    page = _PAGE
    for marker in ("@@CSS@@", "@@HOOK@@", "@@SCRIPT@@", "@@TITLE@@", "@@STARTED@@", "@@MUTANTS@@"):
        page = page.replace(marker, replacements[marker])
    return page.replace("@@DATA@@", replacements["@@DATA@@"])


def _mutant_section(view: RunView) -> str:
    """The generated-mutant section (``run --mutants``), escaped; empty when there is none."""
    lines = mutant_lines(view.records, per_scenario=1000)
    if not lines:
        return ""
    return ("<section id=\"mutants\"><h2>Generated mutants (strength against wrong answers "
            "nobody wrote down)</h2><pre>" + html.escape("\n".join(lines)) + "</pre></section>")
