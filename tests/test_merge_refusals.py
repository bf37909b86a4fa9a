"""``report --merge`` refuses (exit 2, every reason at once) runs that are not exactly N shards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import Project

RUN_ID = re.compile(r"\d{8}T\d{9}Z-[0-9a-f]{6}")


@pytest.fixture
def demo(project: Project) -> Project:
    project.agent()
    for tenant in ("acme", "globex"):
        for n in range(3):
            project.scenario(f"helper/{tenant}/case-{n}", {"answer": "yes"},
                             type="positive" if n else "edge")
    project.record()
    return project


def _shard(project: Project, label: str, *args: str) -> str:
    outcome = project.run("run", "-q", "--shard", label, *args)
    assert outcome.code == 0, outcome.err
    found = RUN_ID.search(outcome.out)
    assert found is not None
    return found[0]


def _refused(project: Project, *runs: str) -> str:
    outcome = project.run("report", "--merge", *runs)
    assert outcome.code == 2, outcome.out + outcome.err
    assert outcome.err.startswith("eval-merge-refused: cannot merge"), outcome.err
    return outcome.err


def test_a_missing_shard_is_named(demo: Project) -> None:
    ids = [_shard(demo, f"{k}/4") for k in (1, 2, 4)]
    err = _refused(demo, *ids)
    assert "shard(s) 3/4 missing" in err and "add the run of `--shard 3/4`" in err
    assert f"1/4 {ids[0]}, 2/4 {ids[1]}, 4/4 {ids[2]}" in err


def test_a_shard_given_twice_overlaps(demo: Project) -> None:
    first = _shard(demo, "1/2")
    again = _shard(demo, "1/2")
    err = _refused(demo, first, again, _shard(demo, "2/2"))
    assert "shard 1/2 is given twice" in err
    assert re.search(r"helper/\w+/case-\d#0 is in run \S+ \(shard 1/2\) and in run", err)


def test_shards_of_other_selections_modes_or_counts_are_refused(demo: Project) -> None:
    narrow = _shard(demo, "1/2", "--tenant", "acme")
    recorded = demo.run("run", "-q", "--shard", "2/2", "--record-missing", "--scripted")
    assert recorded.code == 0, recorded.err
    recorded_id = RUN_ID.search(recorded.out)
    assert recorded_id is not None
    err = _refused(demo, narrow, recorded_id[0])
    assert "was run with mode 'record-missing'" in err and "with 'offline'" in err
    assert "was run with tenants [], run" in err and "with ['acme']" in err
    err = _refused(demo, _shard(demo, "1/2"), _shard(demo, "2/3"), _shard(demo, "3/3"))
    assert "is a shard of 3" in err


def test_a_run_that_is_no_shard_and_a_missing_one_are_reported_together(demo: Project) -> None:
    whole = demo.run("run", "-q")
    whole_id = RUN_ID.search(whole.out)
    assert whole_id is not None
    err = _refused(demo, whole_id[0], _shard(demo, "1/3"))
    assert f"run {whole_id[0]} is not a shard run" in err
    assert "shard(s) 2/3, 3/3 missing" in err


def test_a_shard_with_incomplete_records_is_refused(demo: Project) -> None:
    first, second = _shard(demo, "1/2"), _shard(demo, "2/2")
    records = demo.results / "results" / second / "records.jsonl"
    lines = records.read_text(encoding="utf-8").splitlines(keepends=True)
    records.write_text("".join(lines[:-1]), encoding="utf-8")  # a killed upload, say
    err = _refused(demo, first, second)
    assert f"holds {len(lines) - 1} iteration record(s) of the {len(lines)} it ran" in err


def test_merge_names_unknown_runs_and_excludes_run(demo: Project) -> None:
    outcome = demo.run("report", "--merge", "nosuchrun")
    assert outcome.code == 2 and "eval-report-run-unknown" in outcome.err
    outcome = demo.run("report", "--run", "x", "--merge", _shard(demo, "1/1"))
    assert outcome.code == 2 and "--run and --merge exclude each other" in outcome.err


def test_merge_accepts_run_folders_and_the_merged_run_is_the_latest(demo: Project) -> None:
    ids = [_shard(demo, f"{k}/2") for k in (1, 2)]
    folders = [str(demo.results / "results" / i) for i in ids]
    outcome = demo.run("report", "--merge", *folders, "--format", "md")
    assert outcome.code == 0, outcome.err
    merged = RUN_ID.search(outcome.err)
    assert merged is not None and merged[0] not in ids
    assert f"run `{merged[0]}`" in outcome.out
    latest = demo.run("report", "--format", "md")
    assert f"run `{merged[0]}`" in latest.out  # not the last shard: it is part of the merged run


def test_the_merge_appends_its_report_to_the_job_summary(demo: Project, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [_shard(demo, f"{k}/2") for k in (1, 2)]
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    outcome = demo.run("report", "--merge", *ids, "--format", "json")
    assert outcome.code == 0, outcome.err
    merged = json.loads(outcome.out)["run"]["run_id"]
    assert summary.read_text(encoding="utf-8").startswith(f"## Eval report: run `{merged}`")


def test_a_damaged_run_folder_is_named(demo: Project, tmp_path: Path) -> None:
    first = _shard(demo, "1/2")
    damaged = tmp_path / "artifact"
    damaged.mkdir()
    (damaged / "run.json").write_text("{not json", encoding="utf-8")
    outcome = demo.run("report", "--merge", first, str(damaged))
    assert outcome.code == 2
    assert f"eval-merge-refused: {damaged / 'run.json'} is not the run.json of a finished run" \
        in outcome.err
