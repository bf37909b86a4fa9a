"""Both JUnit files, ``pytest --evals --junitxml`` and ``harness report --format junit``, validate
against the Jenkins xunit schema and name every testcase the same way.

The schema is the published ``junit-10.xsd``, vendored in tests/schemas/ (origin
and licence in its header); lxml (libxml2's XSD validator, a test-only
dependency) validates. Real subprocesses, as a CI job runs them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from lxml import etree

from conftest import REPO_ROOT, Project
from reports_support import blocked_project

SCHEMA = etree.XMLSchema(etree.parse(str(REPO_ROOT / "tests/schemas/junit-10.xsd")))


def _valid(path: Path) -> etree._ElementTree:
    document = etree.parse(str(path))
    assert SCHEMA.validate(document), f"{path.name}: {SCHEMA.error_log}"
    return document


def _cases(document: etree._ElementTree) -> dict[tuple[str, str], etree._Element]:
    return {(c.get("classname"), c.get("name")): c for c in document.iter("testcase")}


def _run(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=project.root, capture_output=True, text=True,
                          timeout=300, check=False)


def _project(project: Project) -> None:
    """Passes in two tenants, a blocking reject, two iterations, a miss and a missed gated metric."""
    blocked_project(project, passing=3)
    project.scenario("helper/acme/twice", {"decision": "ask"},
                     expect=[{"json_path": {"path": "decision", "equals": "ask"}}], iterations=2)
    project.record()
    project.scenario("helper/acme/unrecorded", {"decision": "ask"})


def test_pytest_and_report_junit_validate_and_name_testcases_alike(project: Project) -> None:
    _project(project)
    pytest_run = _run(project, "-m", "pytest", "--evals", "-p", "no:cacheprovider",
                      "--junitxml=pytest-junit.xml")
    assert pytest_run.returncode == 1, pytest_run.stdout + pytest_run.stderr
    report = _run(project, "-m", "harness", "report", "--format", "junit", "--output", "harness.xml")
    assert report.returncode == 0, report.stdout + report.stderr
    cli_run = _run(project, "-m", "harness", "run", "--report", "junit:cli-junit.xml")
    assert cli_run.returncode == 1, cli_run.stdout + cli_run.stderr

    from_pytest = _cases(_valid(project.root / "pytest-junit.xml"))
    from_report = _cases(_valid(project.root / "harness.xml"))
    from_cli = _cases(_valid(project.root / "cli-junit.xml"))
    evals = {k: v for k, v in from_report.items() if not k[0].endswith(".metrics")}
    assert set(from_pytest) == set(evals) == {k for k in from_cli if not k[0].endswith(".metrics")}
    assert ("eval-datasets.helper.globex", "inject[0]") in from_pytest
    assert ("eval-datasets.helper.acme", "twice[1]") in from_pytest
    assert all(classname.startswith("eval-datasets.helper.") for classname, _ in from_pytest)
    def failed(case: etree._Element) -> bool:  # pytest reports a miss as a failure, the report
        return case.find("failure") is not None or case.find("error") is not None  # as an error

    assert {k for k, c in from_pytest.items() if failed(c)} == {k for k, c in evals.items() if failed(c)} \
        == {("eval-datasets.helper.globex", "inject[0]"), ("eval-datasets.helper.acme", "unrecorded[0]")}


def test_report_times_are_the_measured_iteration_times(project: Project) -> None:
    _project(project)
    assert _run(project, "-m", "harness", "run").returncode == 1
    assert _run(project, "-m", "harness", "report", "--format", "junit",
                "--output", "harness.xml").returncode == 0
    document = _valid(project.root / "harness.xml")
    run_dir = max((project.results / "results").iterdir())  # run ids sort by start time
    records = [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]
    assert all(r["duration_ms"] > 0 for r in records)
    expected = {(f"eval-datasets.{r['agent']}.{r['tenant']}", f"{r['name']}[{r['iteration']}]"):
                f"{r['duration_ms'] / 1000:.3f}" for r in records}
    assert {k: c.get("time") for k, c in _cases(document).items() if k in expected} == expected
    suite = next(s for s in document.iter("testsuite") if s.get("name") == "helper")
    total = sum(float(c.get("time")) for c in suite.iter("testcase"))
    assert suite.get("time") == f"{total:.3f}"
    assert document.getroot().get("skipped") is None  # refused on <testsuites> by the schema


def test_the_schema_refuses_what_the_old_report_wrote(tmp_path: Path) -> None:
    """The vendored schema really checks: testcase properties and testsuites/@skipped fail it."""
    bad = tmp_path / "old.xml"
    bad.write_text(
        '<testsuites name="x" tests="1" failures="0" errors="0" skipped="0">'
        '<testsuite name="a" tests="1" failures="0" errors="0"><testcase classname="a.b" name="c[0]">'
        '<properties><property name="type" value="edge"/></properties></testcase></testsuite>'
        '</testsuites>', encoding="utf-8")
    assert not SCHEMA.validate(etree.parse(str(bad)))
    messages = " ".join(e.message for e in SCHEMA.error_log)
    assert "skipped" in messages and "properties" in messages


def test_the_committed_examples_report_validates(project: Project) -> None:
    """Judges, rubric items, metrics and four agents: the richest report there is."""
    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    shutil.copytree(REPO_ROOT / "eval-cache", project.cache)
    assert project.run("run", "-q", "--report", f"junit:{project.root / 'examples.xml'}").code == 0
    document = _valid(project.root / "examples.xml")
    assert len(_cases(document)) > 80
