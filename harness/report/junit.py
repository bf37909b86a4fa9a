"""The JUnit XML report: one testcase per scenario x iteration, for CI test panels.

It validates against the Jenkins xunit ``junit-10.xsd`` (vendored in
``tests/``), and names every testcase exactly as ``pytest --evals --junitxml``
does, so a CI's test history is one history whichever front end ran:

- ``classname`` = the datasets folder, agent and tenant joined by dots
  (``eval-datasets.ask-user-question.fitness-app``): what pytest derives from
  the node id ``eval-datasets/<agent>/<tenant>::<name>[<i>]``; Jenkins shows
  it as package ``eval-datasets.<agent>`` and class ``<tenant>``.
- ``name`` = ``<scenario>[<iteration>]``.
- ``time`` = the iteration's wall time in seconds.

The schema refuses ``<properties>`` inside a testcase, so agent and tenant
live in the classname, and the rest (type, test id, decisions, judge scores
and rubric outcomes) goes into the testcase's ``<system-out>`` as ``key: value``
lines, which Jenkins and GitLab show beside the test. Suite-level
``<properties>`` carry the run id, the agent, and the judge means and rubric
pass rates with their inconclusive counts (properties only: neither ever
fails a testcase). A reject or a scenario that checks nothing is a
``<failure>``; a miss, an expired or corrupt entry or an error is an
``<error>`` (the model was never asked). Declared metrics form one more suite,
where only a gated metric that missed its target fails.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any

from harness.assertions.counterexamples import strength
from harness.core.entities import ANSWER_FAILURES
from harness.core.provenance import SCRIPTED, answer_source
from harness.mutants.judge import mutant_strength
from harness.report.grades import judge_cells, rubric_rows
from harness.report.model import RunView, is_blocking
from harness.rubric.grade import PURPOSE_PREFIX

#: Characters XML 1.0 cannot carry at all, even escaped (model output may hold them).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(value: object) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


#: The datasets folder of runs recorded before run.json named it (the default layout).
_DEFAULT_DATASETS = "eval-datasets"


def junit_classname(datasets: str, agent: str, tenant: str) -> str:
    """``<datasets>.<agent>.<tenant>``: what pytest's JUnit writer derives from the plugin's node
    id ``<datasets>/<agent>/<tenant>::<name>[<i>]`` (path separators become dots)."""
    parts = [p for p in datasets.split("/") if p and p != "."]
    return ".".join([*parts, agent, tenant])


def render_junit(view: RunView) -> str:
    """The report as a JUnit XML document."""
    datasets = str(view.run.get("datasets") or _DEFAULT_DATASETS)
    root = ET.Element("testsuites", name="harness evals")
    by_agent: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in view.records:
        by_agent[str(record["agent"])].append(record)
    for agent, records in sorted(by_agent.items()):
        caught, total = strength(records)  # assertion strength: counterexamples caught / total
        properties: dict[str, Any] = {"agent": agent,
                                      "strength": f"{caught}/{total}" if total else "-",
                                      "counterexamples_caught": caught, "counterexamples": total}
        killed, counted = mutant_strength(records)
        if counted:  # run --mutants: generated wrong answers killed / non-equivalent ones
            properties.update(mutants=counted, mutants_killed=killed,
                              mutant_strength=f"{killed / counted:.3f}")
        suite = _suite(root, agent, view, properties)
        _grade_properties(suite, records)
        for record in records:
            _testcase(suite, record, datasets)
        _count(suite)
    metrics = view.run.get("metrics") or []
    if metrics:
        suite = _suite(root, "metrics", view, {})
        for metric in metrics:
            case = ET.SubElement(suite, "testcase",
                                 classname=_clean(junit_classname(datasets, str(metric["agent"]),
                                                                  "metrics")),
                                 name=_clean(metric["name"]), time="0.000")
            if metric.get("gate") and metric.get("status") == "missed":
                ET.SubElement(case, "failure", type="metric-missed", message=_clean(
                    f"{metric['name']} = {metric.get('value')} missed its target "
                    f"{'<=' if metric.get('better') == 'lower' else '>='} {metric.get('target')}"))
            _system_out(case, {"value": metric.get("value"), "target": metric.get("target"),
                               "better": metric.get("better"), "gate": metric.get("gate"),
                               "status": metric.get("status")})
        _count(suite)
    _count(root, suite_level=False)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(root: ET.Element, name: str, view: RunView,
           extra: dict[str, Any] | None = None) -> ET.Element:
    suite = ET.SubElement(root, "testsuite", name=name,
                          timestamp=str(view.run.get("started", "")).removesuffix("Z"))
    _properties(suite, {"run_id": view.run_id, **(extra or {})})
    return suite


def _testcase(suite: ET.Element, record: dict[str, Any], datasets: str) -> None:
    seconds = float(record.get("duration_ms") or record.get("latency_ms") or 0) / 1000
    case = ET.SubElement(suite, "testcase",
                         classname=_clean(junit_classname(datasets, str(record["agent"]),
                                                          str(record["tenant"]))),
                         name=_clean(f"{record['name']}[{record['iteration']}]"),
                         time=f"{seconds:.3f}")
    status = str(record["status"])
    if status != "passed":
        kind = "failure" if status in ANSWER_FAILURES else "error"
        prefix = "BLOCKING (negative/adversarial reject): " if is_blocking(record) else ""
        message = str(record.get("message", "")).splitlines()[0] if record.get("message") else status
        element = ET.SubElement(case, kind, type=status, message=_clean(prefix + message))
        lines = [f"[{v['outcome']}] {v['assertion']}: {v['reason']}"
                 for v in record.get("verdicts") or []]
        element.text = _clean("\n".join(lines) if lines else record.get("message", ""))
    details: dict[str, Any] = {
        "scenario": record.get("scenario"), "agent": record["agent"], "tenant": record["tenant"],
        "type": record["type"], "iteration": record["iteration"], "test_id": record.get("test_id"),
        "expected_decision": record.get("expected_decision"),
        "actual_decision": record.get("actual_decision"),
    }
    found = record.get("counterexamples") or []
    if found:  # this scenario's assertion strength: counterexamples caught / declared
        details["strength"] = f"{sum(1 for c in found if c.get('caught'))}/{len(found)}"
    for judge in record.get("judges") or []:
        score = judge.get("score")
        text = (f"{score} ({judge['interpretation']})" if score is not None
                else str(judge["interpretation"]))
        scripted = answer_source(record, judge, f"judge:{judge['name']}") == SCRIPTED
        details[f"judge.{judge['name']}"] = text + (" scripted" if scripted else "")
    for item in record.get("rubric") or []:
        scripted = answer_source(record, item, f"{PURPOSE_PREFIX}{item['name']}") == SCRIPTED
        details[f"rubric.{item['name']}"] = (
            f"{item['outcome']}{' scripted' if scripted else ''}: {item.get('reason', '')}")
    _system_out(case, details)


def _grade_properties(suite: ET.Element, records: list[dict[str, Any]]) -> None:
    """Judge and rubric totals of an agent's suite, inconclusive counts included: properties
    only, never a failure (neither may gate)."""
    values: dict[str, Any] = {}
    _, cells = judge_cells({**r, "tenant": "", "type": ""} for r in records)
    for row in cells.values():
        for name, cell in row.items():
            for field, value in cell.to_json().items():
                values[f"judge.{name}.{field}"] = value
    for row in rubric_rows(records, ("agent",)):
        for field in ("pass", "fail", "inconclusive", "not_evaluated", "scripted", "pass_rate"):
            values[f"rubric.{row['name']}.{field}"] = row[field]
    if values:
        container = suite.find("properties")
        for name, value in values.items():
            if value is not None and container is not None:
                ET.SubElement(container, "property", name=name, value=_clean(value))


def _system_out(case: ET.Element, values: dict[str, Any]) -> None:
    """Per-testcase details as ``key: value`` lines (the schema has no testcase properties)."""
    lines = [f"{name}: {' '.join(str(value).split())}" for name, value in values.items()
             if value is not None]
    if lines:
        ET.SubElement(case, "system-out").text = _clean("\n".join(lines))


def _properties(parent: ET.Element, values: dict[str, Any]) -> None:
    container = ET.SubElement(parent, "properties")
    for name, value in values.items():
        if value is not None:
            ET.SubElement(container, "property", name=name, value=_clean(value))


def _count(element: ET.Element, *, suite_level: bool = True) -> None:
    """Totals; ``skipped`` only on a testsuite (the schema refuses it on testsuites)."""
    cases = list(element.iter("testcase"))
    element.set("tests", str(len(cases)))
    element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    element.set("errors", str(sum(c.find("error") is not None for c in cases)))
    if suite_level:
        element.set("skipped", "0")
    element.set("time", f"{sum(float(c.get('time') or 0) for c in cases):.3f}")
