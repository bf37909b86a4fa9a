"""``python -m harness init``: adopt the harness without clobbering anything."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import Project


def test_init_adopts_a_repository_and_the_node_is_green(project: Project) -> None:
    (project.root / ".gitignore").write_text("*.pyc")  # no final newline on purpose
    outcome = project.run("init")
    assert outcome.code == 0, outcome.out + outcome.err
    for line in ("appended   pyproject.toml", "wrote      .gitattributes",
                 "appended   .gitignore", "wrote      .github/workflows/evals.yml",
                 "wrote      eval-datasets/example-agent/agent.yaml"):
        assert line in outcome.out
    assert (project.root / ".gitignore").read_text().splitlines() == [
        "*.pyc", "eval-results/", ".env.evals"]
    assert "eval-cache/** -text" in (project.root / ".gitattributes").read_text()
    assert "[tool.harness]" in (project.root / "pyproject.toml").read_text()
    workflow = yaml.safe_load((project.root / ".github/workflows/evals.yml").read_text())
    steps = [s.get("run") for s in workflow["jobs"]["evals"]["steps"]]
    assert "python -m harness run" in steps
    replay = project.run("run")
    assert replay.code == 0 and "1 passed" in replay.out


def test_init_twice_keeps_everything_and_duplicates_nothing(project: Project) -> None:
    project.run("init")
    prompt = project.datasets / "example-agent/system.md"
    prompt.write_text("My own prompt for {{tenant}}.\n")
    before = {p: p.read_bytes() for p in project.root.rglob("*") if p.is_file()
              and "eval-results" not in p.parts}
    outcome = project.run("init")
    assert "overwrote" not in outcome.out and "wrote " not in outcome.out
    assert outcome.out.count("kept") == 8
    after = {p: p.read_bytes() for p in before}
    assert after == before


def test_init_force_overwrites_files_but_never_duplicates_lines(project: Project) -> None:
    project.run("init")
    prompt = project.datasets / "example-agent/system.md"
    prompt.write_text("Mine.\n")
    outcome = project.run("init", "--force")
    assert "overwrote  eval-datasets/example-agent/system.md" in outcome.out
    assert prompt.read_text() != "Mine.\n"
    assert (project.root / ".gitignore").read_text().count("eval-results/") == 1


def test_existing_harness_section_is_kept(project: Project) -> None:
    (project.root / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.harness]\nttl_days = 400\n')
    outcome = project.run("init")
    assert "kept       pyproject.toml" in outcome.out
    assert (project.root / "pyproject.toml").read_text().count("[tool.harness]") == 1


def test_init_shards_writes_a_matrix_and_a_merge_job_that_run(project: Project) -> None:
    """The workflow's own commands, run as its jobs would: every shard in a fresh results
    folder uploaded as an artifact, then the merge job over the downloaded artifacts."""
    outcome = project.run("init", "--shards", "3")
    assert outcome.code == 0, outcome.err
    workflow = yaml.safe_load((project.root / ".github/workflows/evals.yml").read_text())
    shard_job, merge_job = workflow["jobs"]["evals"], workflow["jobs"]["merge"]
    assert shard_job["strategy"] == {"fail-fast": False, "matrix": {"shard": [1, 2, 3]}}
    assert merge_job["needs"] == "evals" and merge_job["if"] == "always()"
    run_step = next(s["run"] for s in shard_job["steps"] if "harness run" in str(s.get("run")))
    assert run_step == "python -m harness run --shard ${{ matrix.shard }}/3"
    uploads = [s["with"]["name"] for s in shard_job["steps"] if "upload-artifact" in str(s.get("uses"))]
    assert uploads == ["eval-results-shard-${{ matrix.shard }}"]
    download = next(s["with"] for s in merge_job["steps"] if "download-artifact" in str(s.get("uses")))
    assert download == {"pattern": "eval-results-shard-*", "path": "eval-results",
                        "merge-multiple": True}
    merge_step = next(s["run"] for s in merge_job["steps"] if "--merge" in str(s.get("run")))

    shutil.rmtree(project.results)  # init's seeding run is not a CI job's
    artifacts = project.root.parent / "artifacts"
    for shard in (1, 2, 3):
        command = run_step.replace("${{ matrix.shard }}", str(shard))
        job = _job(project.root, command)
        assert job.returncode == 0, job.stdout + job.stderr  # two of three shards are empty
        shutil.move(project.results, artifacts / f"shard-{shard}")
    for artifact in sorted(artifacts.iterdir()):
        shutil.copytree(artifact, project.results, dirs_exist_ok=True)
    merged = _job(project.root, merge_step)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert "PASSED: 1 passed, 0 failed of 1 iteration(s)" in merged.stdout


def test_init_shards_must_be_a_positive_count(project: Project,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        project.run("init", "--shards", "0")
    assert exited.value.code == 2
    assert "'0': give the number of shard jobs, 1 or more" in capsys.readouterr().err


def _job(root: Path, command: str) -> subprocess.CompletedProcess[str]:
    """One workflow ``run:`` line through a shell (the merge step's glob), with this Python."""
    command = command.replace("python -m", f"{shlex.quote(sys.executable)} -m", 1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True,
                          env=env, check=False)


def test_the_workflow_offers_pytest_n_2_only_with_pytest_xdist_installed(project: Project) -> None:
    import yaml

    from harness.adoption.install_source import InstallSource
    from harness.adoption.workflow import workflow_text

    source = InstallSource("index", "offline-evals==0.1.0", "from an index", "0.1.0")
    text = workflow_text(source, install_project=False, python_version="3.11")
    lines = text.splitlines()
    offer = next(i for i, line in enumerate(lines) if "python -m pytest --evals -n 2" in line)
    install = next(i for i, line in enumerate(lines) if "pip install pytest pytest-xdist" in line)
    assert install < offer and lines[offer].startswith("      #")
    # uncommented, the offered step is a valid step of the same job that installs what it runs
    uncommented = [line.replace("      # ", "      ", 1) if line.startswith("      # -")
                   or line.startswith("      #   ") else line for line in lines]
    steps = yaml.safe_load("\n".join(uncommented))["jobs"]["evals"]["steps"]
    pytest_step = next(s for s in steps if s.get("name") == "Offline eval under pytest")
    assert pytest_step["run"].split("\n")[:2] == ["pip install pytest pytest-xdist",
                                                   "python -m pytest --evals -n 2"]
