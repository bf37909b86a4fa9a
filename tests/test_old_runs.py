"""Run folders written by an older harness still load: ``report`` and ``compare`` read them.

The fixture (tests/fixtures/runs-b7e88ca, see its README) was written by ``python -m harness
run`` at commit b7e88ca, before records were written and read by one ``to_json``/``from_json``
pair; its records lack fields added since (``answer_source``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import Project
from harness.report.load import load_run
from harness.results.record import IterationResult

FIXTURE = Path(__file__).parent / "fixtures" / "runs-b7e88ca"
RUN_A, RUN_B = "20261201T225345398Z-8aa3cf", "20261201T225346081Z-144fc5"


@pytest.fixture
def old(project: Project) -> Project:
    """A project whose eval-results/ holds the two old runs."""
    shutil.copytree(FIXTURE / "results", project.results / "results")
    return project


def test_report_reads_an_old_run_folder(old: Project) -> None:
    outcome = old.run("report", "--run", RUN_A, "--format", "json")
    assert outcome.code == 0, outcome.err
    report = json.loads(outcome.out)
    assert report["run"]["run_id"] == RUN_A
    statuses = {t["scenario"]: t["status"] for t in report["tests"]}
    assert statuses == {"helper/acme/first": "passed", "helper/acme/wrong": "rejected",
                        "helper/globex/inject": "rejected", "helper/globex/unrecorded": "missed"}
    terminal = old.run("report", "--run", RUN_B)
    assert "2 passed, 2 failed of 4 iteration(s)" in terminal.out
    assert "BLOCKING [rejected] helper/globex/inject iteration 0 (adversarial)" in terminal.out


def test_compare_reads_two_old_run_folders(old: Project) -> None:
    outcome = old.run("compare", RUN_A, RUN_B)
    assert f"compare {RUN_A} -> {RUN_B}" in outcome.out
    fixed = next(line for line in outcome.out.splitlines() if "helper/acme/wrong#0" in line)
    assert fixed.split()[:5] == ["fixed", "helper/acme/wrong#0", "positive", "rejected", "passed"]


def test_every_old_record_reads_through_from_json() -> None:
    """Each record of the old folders becomes a result, and writing that result again gives
    the stored record back (fields the old version did not write take their defaults)."""
    view = load_run(FIXTURE, RUN_A)
    assert len(view.records) == 4
    lines = [json.loads(line) for line in
             (FIXTURE / "results" / RUN_A / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    for stored in lines:
        result = IterationResult.from_json(stored)
        assert result.scenario.id == stored["scenario"]
        written = result.to_json()
        kept = {k: v for k, v in stored.items() if k not in ("transcript_path", "transcript_line")}
        assert {k: written[k] for k in kept} == kept
        assert written["answer_source"] == ""  # not written by b7e88ca: the default


def test_a_line_that_is_no_record_is_named_with_its_file_and_line(old: Project) -> None:
    records = old.results / "results" / RUN_B / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines()
    edited = json.loads(lines[1])
    del edited["judges"][0]["name"]  # a hand edit, or another tool's line
    lines[1] = json.dumps(edited)
    records.write_text("\n".join(lines) + "\n", encoding="utf-8")
    outcome = old.run("report", "--run", RUN_B)
    assert outcome.code == 2
    assert "eval-report-record-unreadable" in outcome.err
    assert (f"{records} line 2: not an iteration record this harness can read (KeyError: 'name')"
            in outcome.err)
    assert old.run("report", "--run", RUN_A).code == 0  # the other run still reads
