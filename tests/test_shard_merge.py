"""Shards merged into one run read exactly like one unsharded run; a merge that does not fit refuses.

Every shard is its own ``python -m harness run --shard k/N`` process (started
together, as a CI matrix would), the merge is ``report --merge``; the unsharded
run is the same command without ``--shard`` on an identical copy of the
project. Records, the JSON and Markdown reports and the exit code must match,
up to run ids and per-call timings, on a temp project (passing, then with a
negative scenario rejected in one shard) and on the repository's own examples.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO_ROOT, Project
from harness.report.load import load_records

pytestmark = pytest.mark.slow(seconds=90)

#: Record fields that differ on every run: how long things took.
TIMING = ("duration_ms", "latency_ms")
RUN_ID = re.compile(r"\d{8}T\d{9}Z-[0-9a-f]{6}")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return env  # HARNESS_CLOCK (conftest) is inherited: every process judges expiry alike


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, env=_env(), check=False)


def _runs(root: Path) -> set[str]:
    folder = root / "eval-results" / "results"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def _run_shards(root: Path, count: int, *extra: str) -> list[str]:
    """Every shard as its own process, all started at once; their run ids, in shard order."""
    processes = [subprocess.Popen(
        [sys.executable, "-m", "harness", "--project", str(root), "run", "-q",
         "--shard", f"{index}/{count}", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
        for index in range(1, count + 1)]
    ids = []
    for process in processes:
        out, err = process.communicate()
        assert process.returncode in (0, 1), err
        found = RUN_ID.search(out)  # the summary's "records in .../<run-id>"
        assert found is not None, out
        ids.append(found[0])
    return ids


def _normal(value: Any) -> Any:
    """Run ids replaced, timings and the merge's own provenance dropped."""
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()
                if k not in TIMING and k != "merged_from"}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return RUN_ID.sub("RUN", value)
    return value


def _reports(root: Path, run_id: str) -> tuple[Any, str]:
    as_json = _cli(root, "report", "--run", run_id, "--format", "json")
    as_md = _cli(root, "report", "--run", run_id, "--format", "md")
    assert as_json.returncode == 0 and as_md.returncode == 0, as_json.stderr + as_md.stderr
    return json.loads(as_json.stdout), RUN_ID.sub("RUN", as_md.stdout)


def assert_shards_merge_into_the_unsharded_run(whole: Path, sharded: Path, count: int,
                                               *run_args: str) -> int:
    """Run ``whole`` unsharded, ``sharded`` as ``count`` shard processes plus a merge; compare."""
    single = _cli(whole, "run", "-q", *run_args)
    (single_id,) = _runs(whole)
    shard_ids = _run_shards(sharded, count, *run_args)
    merge = _cli(sharded, "report", "--merge", *shard_ids, "--format", "json")
    assert merge.returncode in (0, 1), merge.stderr
    merged_id = RUN_ID.search(merge.stderr)
    assert merged_id is not None, merge.stderr
    assert merge.returncode == single.returncode, (merge.stdout, single.stdout)

    expected = [_normal(r) for r in load_records(whole / "eval-results/results" / single_id)]
    merged = [_normal(r) for r in load_records(sharded / "eval-results/results" / merged_id[0])]
    assert merged == expected
    per_shard = [load_records(sharded / "eval-results/results" / i) for i in shard_ids]
    assert all(per_shard) and sum(len(r) for r in per_shard) == len(expected)

    json_single, md_single = _reports(whole, single_id)
    json_merged, md_merged = _reports(sharded, merged_id[0])
    assert _normal(json_merged) == _normal(json_single)
    assert json.loads(merge.stdout) == json_merged  # what --merge printed is the merged run's report
    assert md_merged == md_single
    assert json_merged["exit_code"] == single.returncode
    return single.returncode


# -- a temp project ---------------------------------------------------------------------------

GATED = [{"name": "answer_rate", "over": {"types": ["positive", "edge"]},
          "measure": {"verdicts": ["*"]}, "target": 0.75, "gate": True}]


def _demo(project: Project, *, reject: bool) -> None:
    """Two tenants, nine scenarios (some of three iterations), a gated metric; with ``reject``
    one negative scenario's recorded answer fails its assertion."""
    project.agent(metrics=GATED)
    for tenant in ("acme", "globex"):
        for n in range(4):
            project.scenario(f"helper/{tenant}/case-{n}", {"answer": "yes"},
                             type="positive" if n % 2 else "edge", iterations=1 + n % 3)
    project.scenario("helper/acme/leak", {"answer": "no" if reject else "yes"}, type="negative")
    project.record()
    shutil.rmtree(project.results)  # the recording run is nobody's history


def _twin(project: Project, tmp_path: Path) -> Path:
    twin = tmp_path / "sharded"
    shutil.copytree(project.root, twin)
    return twin


def test_four_shard_processes_merge_into_one_green_run(project: Project, tmp_path: Path) -> None:
    _demo(project, reject=False)
    code = assert_shards_merge_into_the_unsharded_run(project.root, _twin(project, tmp_path), 4)
    assert code == 0


def test_a_reject_in_one_shard_fails_the_merged_run_and_blocks(project: Project,
                                                               tmp_path: Path) -> None:
    _demo(project, reject=True)
    twin = _twin(project, tmp_path)
    code = assert_shards_merge_into_the_unsharded_run(project.root, twin, 4)
    assert code == 1
    merged = json.loads(_cli(twin, "report", "--format", "json").stdout)  # latest: the merged run
    assert merged["run"]["merged_from"] and merged["blocking_line"].startswith("BLOCKED: 1 reject")
    assert [b["scenario"] for b in merged["blocking"]] == ["helper/acme/leak"]
    shard_exits = sorted(json.loads((twin / "eval-results/results" / m["run_id"] / "run.json")
                                    .read_text())["exit_code"] for m in merged["run"]["merged_from"])
    assert shard_exits == [0, 0, 0, 1]  # one shard failed; the merged verdict is that one's


def test_a_gated_metric_is_computed_over_the_union_not_averaged(project: Project,
                                                                tmp_path: Path) -> None:
    metric = {**GATED[0], "target": 0.8}
    project.agent(metrics=[metric])
    # by count, "heavy" (3 iterations) fills shard 1; the two others share shard 2
    project.scenario("helper/acme/heavy", {"answer": "yes"}, iterations=3)
    project.scenario("helper/acme/bad", {"answer": "no"})
    project.scenario("helper/acme/good", {"answer": "yes"})
    project.record()
    shutil.rmtree(project.results)
    twin = _twin(project, tmp_path)
    shard_ids = _run_shards(twin, 2)
    values = [json.loads((twin / "eval-results/results" / i / "run.json").read_text())["metrics"][0]
              for i in shard_ids]
    assert sorted((v["numerator"], v["denominator"]) for v in values) == [(1, 2), (3, 3)]
    assert sum(v["value"] for v in values) / 2 == 0.75  # the mean of the shards would miss 0.8
    merge = _cli(twin, "report", "--merge", *shard_ids, "--format", "json")
    merged = json.loads(merge.stdout)["metrics"][0]
    assert (merged["numerator"], merged["denominator"], merged["status"]) == (4, 5, "met")
    assert merge.returncode == 1  # the rejected case itself still fails the run


def test_durations_of_a_merged_run_balance_the_next_shards(project: Project, tmp_path: Path) -> None:
    _demo(project, reject=False)
    twin = _twin(project, tmp_path)
    first = _run_shards(twin, 2)
    merged = _cli(twin, "report", "--merge", *first, "--format", "json")
    merged_dir = twin / "eval-results/results" / json.loads(merged.stdout)["run"]["run_id"]
    again = _run_shards(twin, 2, "--shard-durations", str(merged_dir))
    shards = [json.loads((twin / "eval-results/results" / i / "run.json").read_text())
              ["selection"]["shard"] for i in again]
    assert {s["balance"] for s in shards} == {"durations"}
    second = _cli(twin, "report", "--merge", *again, "--format", "json")
    assert second.returncode == 0, second.stderr
    mixed = _cli(twin, "report", "--merge", first[0], again[1])  # one by count, one by durations
    assert mixed.returncode == 2 and "eval-merge-refused" in mixed.stderr
    assert "give every shard the same --shard-durations" in mixed.stderr


# -- the repository's own examples ------------------------------------------------------------


def _examples(root: Path) -> Path:
    root.mkdir()
    for folder in ("eval-datasets", "eval-cache"):
        shutil.copytree(REPO_ROOT / folder, root / folder)
    text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    section = text[text.index("[tool.harness]"):].split("\n[", 1)[0]
    (root / "pyproject.toml").write_text(f'[project]\nname = "examples"\n\n{section}\n')
    return root


def test_the_examples_in_four_shards_merge_into_the_unsharded_run(tmp_path: Path) -> None:
    code = assert_shards_merge_into_the_unsharded_run(
        _examples(tmp_path / "whole"), _examples(tmp_path / "sharded"), 4)
    assert code == 0


# -- pytest --evals --evals-shard ------------------------------------------------------------


def test_pytest_shards_merge_into_the_unsharded_run(project: Project, tmp_path: Path) -> None:
    _demo(project, reject=True)
    twin = _twin(project, tmp_path)
    single = _cli(project.root, "run", "-q")
    (single_id,) = _runs(project.root)
    ids = []
    for index, extra in ((1, ["-n", "2"]), (2, [])):  # shard 1 under pytest-xdist
        before = _runs(twin)
        outcome = subprocess.run(
            [sys.executable, "-m", "pytest", "--evals", "--evals-shard", f"{index}/2", "-q",
             "-p", "no:cacheprovider", *extra], cwd=twin, capture_output=True, text=True,
            env=_env(), check=False)
        assert outcome.returncode in (0, 1), outcome.stdout + outcome.stderr
        (new,) = _runs(twin) - before
        ids.append(new)
    merge = _cli(twin, "report", "--merge", *ids, "--format", "json")
    assert merge.returncode == single.returncode == 1, merge.stderr
    merged_id = json.loads(merge.stdout)["run"]["run_id"]
    json_single, md_single = _reports(project.root, single_id)
    json_merged, md_merged = _reports(twin, merged_id)
    assert md_merged == md_single
    assert _normal(json_merged) == _normal(json_single)


def test_a_bad_pytest_shard_is_a_usage_error(project: Project) -> None:
    outcome = subprocess.run([sys.executable, "-m", "pytest", "--evals", "--evals-shard", "3/2",
                              "-p", "no:cacheprovider"], cwd=project.root, capture_output=True,
                             text=True, env=_env(), check=False)
    assert outcome.returncode == pytest.ExitCode.USAGE_ERROR
    assert "--evals-shard: '3/2': K must be between 1 and 2" in outcome.stderr


def test_an_empty_pytest_shard_passes_and_writes_its_part(project: Project) -> None:
    project.agent()
    project.scenario("helper/t/one", {"answer": "yes"})
    project.record()
    shutil.rmtree(project.results)
    outcome = subprocess.run([sys.executable, "-m", "pytest", "--evals", "--evals-shard", "2/2",
                              "-q", "-p", "no:cacheprovider"], cwd=project.root,
                             capture_output=True, text=True, env=_env(), check=False)
    assert outcome.returncode == 0, outcome.stdout + outcome.stderr
    (run_id,) = _runs(project.root)
    data = json.loads((project.results / "results" / run_id / "run.json").read_text())
    assert data["iterations"] == 0 and data["selection"]["shard"]["index"] == 2
    assert data["exit_code"] == 0
