"""Reports are rebuilt from eval-results/ without re-running; runs are ordered by the time
they recorded, never by folder times."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import Project
from harness.report.load import RunNotFound, find_run, list_runs
from reports_support import blocked_project


def _runs(project: Project, count: int) -> list[Path]:
    blocked_project(project, passing=2)
    project.record()
    for _ in range(count - 1):
        project.run("run")
    return sorted((project.results / "results").iterdir())


def _restart(run_dir: Path, started: str) -> None:
    path = run_dir / "run.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "started": started}))


def test_runs_are_ordered_by_recorded_start_not_by_folder_time(project: Project) -> None:
    runs = _runs(project, 3)
    # Recorded order: runs[1] oldest, runs[2], then runs[0] newest (against name order) ...
    for run_dir, started in zip(runs, ("2031-01-03T00:00:00Z", "2031-01-01T00:00:00Z",
                                       "2031-01-02T00:00:00Z"), strict=True):
        _restart(run_dir, started)
    # ... and folder times say the opposite: what a clone or an artifact download does to them.
    for age, run_dir in enumerate([runs[0], runs[2], runs[1]]):
        stamp = 1_000_000_000 + 1000 * (3 - age)
        os.utime(run_dir, (stamp, stamp))
    assert [r.path for r in list_runs(project.results)] == [runs[1], runs[2], runs[0]]
    latest = project.run("report", "--format", "json")
    assert json.loads(latest.out)["run"]["run_id"] == runs[0].name
    trend = json.loads(latest.out)["trend"]
    assert [t["run_id"] for t in trend] == [runs[1].name, runs[2].name, runs[0].name]


def test_report_is_rebuilt_from_results_without_datasets_or_cache(project: Project) -> None:
    runs = _runs(project, 2)
    shutil.rmtree(project.datasets)
    shutil.rmtree(project.cache)
    for fmt in ("terminal", "md", "json", "junit", "html"):
        outcome = project.run("report", "--format", fmt, "--run", runs[0].name)
        assert outcome.code == 0, (fmt, outcome.err)
        assert runs[0].name in outcome.out or fmt in ("terminal", "junit"), fmt
    terminal = project.run("report")
    assert terminal.out.splitlines()[0].startswith("BLOCKED: 1 reject(s)")
    assert "FAILED: 2 passed, 1 failed of 3 iteration(s)" in terminal.out
    target = project.root / "out" / "report.html"
    written = project.run("report", "--format", "html", "--output", str(target))
    assert written.code == 0 and target.is_file()
    assert f"html report of run {runs[-1].name}: {target}" in written.out


def test_run_writes_the_requested_reports(project: Project, tmp_path: Path) -> None:
    blocked_project(project, passing=2)
    project.record()
    target = tmp_path / "reports" / "r.json"
    outcome = project.run("run", "--report", "md", "--report", f"json:{target}",
                          "--report", "html")
    assert outcome.code == 1
    run_dir = sorted((project.results / "results").iterdir())[-1]
    assert (run_dir / "report.md").is_file() and (run_dir / "report.html").is_file()
    assert json.loads(target.read_text())["run"]["run_id"] == run_dir.name
    assert f"json report: {target}" in outcome.out


def test_unknown_run_and_format_exit_2(project: Project) -> None:
    assert project.run("report").code == 2  # nothing recorded yet
    _runs(project, 1)
    missing = project.run("report", "--run", "nope")
    assert missing.code == 2 and "eval-report-run-unknown" in missing.err
    bad = project.run("run", "--report", "pdf")
    assert bad.code == 2 and "unknown format 'pdf'" in bad.err


def test_find_run_by_prefix(project: Project) -> None:
    runs = _runs(project, 2)
    infos = list_runs(project.results)
    assert find_run(infos, runs[1].name[:22]).path == runs[1]
    assert find_run(infos, None).path == infos[-1].path
    with pytest.raises(RunNotFound, match="matches several runs"):
        find_run(infos, "2")


def test_a_run_without_run_json_is_left_out(project: Project) -> None:
    runs = _runs(project, 2)
    (runs[1] / "run.json").unlink()
    assert [r.path for r in list_runs(project.results)] == [runs[0]]
