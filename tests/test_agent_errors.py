"""An agent that raises is an ``error`` verdict, never a crash, and every output agrees on it.

The reproduction: a Python agent that runs ``json.loads`` on a bad answer. It
used to abort ``harness run`` with a traceback (no run.json), and under
``pytest --evals`` the failing iteration was simply missing from records,
run.json (``exit_code: 0``), the reports and the step summary. Now the
terminal, records.jsonl, run.json, the Markdown and JUnit reports, the step
summary and pytest's own outcome say the same thing, serial and under xdist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import Project
from harness.report.load import load_records

AGENT = '''
import json


def answer(scenario):
    """Production-style code: parse what it got, and let a bad answer raise."""
    if scenario.name == "broken":
        return json.loads("this is not json")
    return {"answer": scenario.params.get("reply", "ok")}
'''


@pytest.fixture
def failing(project: Project) -> Project:
    project.write("eval-datasets/helper/agent.py", AGENT)
    project.write("eval-datasets/helper/agent.yaml", {"entrypoint": "agent.py:answer", "output": "json"})
    for name in ("greeting", "broken", "farewell"):
        project.write(f"eval-datasets/helper/acme/{name}.yaml", {
            "type": "positive", "description": f"{name} answers ok.", "input": f"Say {name}.",
            "expect": [{"json_path": {"path": "answer", "equals": "ok"}}]})
    return project


def _last_run(project: Project) -> tuple[Path, dict[str, object]]:
    run = sorted((project.results / "results").iterdir())[-1]
    return run, json.loads((run / "run.json").read_text(encoding="utf-8"))


def _statuses(run: Path) -> list[str]:
    return sorted(f"{r['scenario']} {r['status']}" for r in load_records(run))


EXPECTED = ["helper/acme/broken error", "helper/acme/farewell passed", "helper/acme/greeting passed"]


def test_the_cli_reports_the_error_with_its_type_message_and_traceback_and_goes_on(failing: Project) -> None:
    outcome = failing.run("run", "--report", f"md:{failing.root / 'report.md'}",
                          "--report", f"junit:{failing.root / 'junit.xml'}")
    assert outcome.code == 1
    assert "[error] helper/acme/broken iteration 0" in outcome.out
    assert "agent helper raised JSONDecodeError: Expecting value" in outcome.out
    assert "agent.py" in outcome.out and "json.loads" in outcome.out  # the short traceback
    assert "2 passed, 1 failed of 3" in outcome.out
    run, summary = _last_run(failing)
    assert _statuses(run) == EXPECTED
    assert summary["exit_code"] == 1 and summary["iterations"] == 3
    record = next(r for r in load_records(run) if r["status"] == "error")
    assert "JSONDecodeError" in record["message"]
    markdown = (failing.root / "report.md").read_text(encoding="utf-8")
    assert "helper/acme/broken" in markdown and "2 passed, 1 failed" in markdown.replace("**", "")
    junit = ET.parse(failing.root / "junit.xml").getroot()
    suite = junit if junit.tag == "testsuite" else junit[0]
    assert (suite.get("tests"), suite.get("errors") or "0", suite.get("failures") or "0") in (
        ("3", "1", "0"), ("3", "0", "1"))


@pytest.mark.parametrize("workers", [None, "2"])
def test_pytest_evals_agrees_with_the_records_run_json_junit_and_step_summary(
        failing: Project, workers: str | None) -> None:
    summary_file = failing.root / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary_file)}
    command = [sys.executable, "-m", "pytest", "--evals", "-p", "no:cacheprovider", "-p", "no:benchmark",
               f"--junitxml={failing.root / 'junit.xml'}", "-q"]
    if workers:
        command += ["-n", workers]
    done = subprocess.run(command, cwd=failing.root, capture_output=True, text=True, env=env,
                          timeout=180, check=False)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout
    assert "JSONDecodeError" in done.stdout
    run, summary = _last_run(failing)
    assert _statuses(run) == EXPECTED
    assert summary["exit_code"] == 1 and summary["iterations"] == 3
    assert summary["counts"] == {"passed": 2, "error": 1}
    junit = ET.parse(failing.root / "junit.xml").getroot()
    cases = junit.iter("testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None or c.find("error") is not None]
    assert failed == ["broken[0]"]
    step = summary_file.read_text(encoding="utf-8")
    assert "helper/acme/broken" in step and "PASSED 3 of 3" not in step
