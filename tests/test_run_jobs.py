"""``harness run --jobs N``: an offline run forked after one load reads exactly like the serial run.

Each comparison runs the serial command on one copy of a project and the same
command with ``--jobs`` on an identical copy, each as its own process, and
compares the records, the JSON and Markdown reports, the terminal output and
the exit code, up to run ids and timings. The runs hold a blocking reject, so
an exit code of 1 and the blocking line are compared too. A job that dies is a
failed run (exit 2) that names it, never a summary that lacks its iterations;
the offline guarantees (no socket, no byte under ``eval-cache/``) hold in every
job.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO_ROOT, Project
from harness.cache.stamp import write_stamp
from harness.report.load import load_records

pytestmark = pytest.mark.slow(seconds=60)

TIMING = ("duration_ms", "latency_ms")
#: Where a record says it is: its own records file and line (checked apart: they differ by design).
PLACE = ("transcript_path", "transcript_line")
RUN_ID = re.compile(r"\d{8}T\d{9}Z-[0-9a-f]{6}")


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(root), *args],
                          capture_output=True, text=True, env=env, check=False)


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items() if k not in TIMING and k not in PLACE}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        return RUN_ID.sub("RUN", value)
    return value


def _only_run(root: Path) -> Path:
    (run,) = (root / "eval-results" / "results").iterdir()
    return run


def _reports(root: Path, run_id: str) -> tuple[Any, str]:
    as_json = _cli(root, "report", "--run", run_id, "--format", "json")
    as_md = _cli(root, "report", "--run", run_id, "--format", "md")
    assert as_json.returncode == 0 and as_md.returncode == 0, as_json.stderr + as_md.stderr
    return json.loads(as_json.stdout), RUN_ID.sub("RUN", as_md.stdout)


def assert_jobs_read_like_the_serial_run(serial: Path, forked: Path, jobs: int, *args: str) -> int:
    """Run ``serial`` without and ``forked`` with ``--jobs``; every output must agree."""
    one = _cli(serial, "run", *args)
    many = _cli(forked, "run", "--jobs", str(jobs), *args)
    assert one.returncode in (0, 1), one.stderr
    assert many.returncode == one.returncode, many.stdout + many.stderr
    assert (RUN_ID.sub("RUN", many.stdout.replace(str(forked), "ROOT"))
            == RUN_ID.sub("RUN", one.stdout.replace(str(serial), "ROOT")))
    assert many.stderr.replace(str(forked), "ROOT") == one.stderr.replace(str(serial), "ROOT")
    serial_run, forked_run = _only_run(serial), _only_run(forked)
    written = sorted(p.name for p in forked_run.glob("records*.jsonl"))
    assert written == [f"records-job{k}.jsonl" for k in range(1, len(written) + 1)]
    assert len(written) > 1, "the run did not fork"
    for name in written:  # each record names its own file and line, as the report links them
        lines = (forked_run / name).read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, start=1):
            record = json.loads(line)
            assert record["transcript_path"] == f"results/{forked_run.name}/{name}"
            assert record["transcript_line"] == number
    assert ([_normal(r) for r in load_records(forked_run)]
            == [_normal(r) for r in load_records(serial_run)])
    run_json = {name: json.loads((run / "run.json").read_text(encoding="utf-8"))
                for name, run in (("serial", serial_run), ("forked", forked_run))}
    for data in run_json.values():
        for key in ("run_id", "started", "finished"):
            data.pop(key)
    assert run_json["forked"] == run_json["serial"]
    json_one, md_one = _reports(serial, serial_run.name)
    json_many, md_many = _reports(forked, forked_run.name)
    assert _normal(json_many) == _normal(json_one)
    assert md_many == md_one
    return one.returncode


def _demo(project: Project) -> None:
    """Two tenants, ten scenarios of one to three iterations; two negative ones rejected, so the
    blocking rejects listed (terminal, run.json) have an order to keep."""
    for tenant in ("acme", "globex"):
        for n in range(4):
            project.scenario(f"helper/{tenant}/case-{n}", {"answer": "yes"},
                             type="positive" if n % 2 else "edge", iterations=1 + n % 3)
    project.scenario("helper/acme/leak", {"answer": "no"}, type="negative")
    project.scenario("helper/globex/wrong", {"answer": "no"}, type="negative", iterations=2)
    project.agent()
    project.record()
    shutil.rmtree(project.results)


def _twin(project: Project, tmp_path: Path) -> Path:
    twin = tmp_path / "forked"
    shutil.copytree(project.root, twin)
    return twin


def test_three_jobs_read_like_the_serial_run_with_a_blocking_reject(project: Project,
                                                                   tmp_path: Path) -> None:
    _demo(project)
    code = assert_jobs_read_like_the_serial_run(project.root, _twin(project, tmp_path), 3)
    assert code == 1  # the negative scenario's reject blocks, in both


def test_more_jobs_than_scenarios_and_a_selection(project: Project, tmp_path: Path) -> None:
    """One scenario per job: the jobs finish in deal order (heaviest first), not plan order."""
    _demo(project)
    code = assert_jobs_read_like_the_serial_run(project.root, _twin(project, tmp_path), 16,
                                                "--type", "negative", "--type", "positive")
    assert code == 1


def test_jobs_inside_one_shard_read_like_that_shard_run_serially(project: Project,
                                                                 tmp_path: Path) -> None:
    _demo(project)
    code = assert_jobs_read_like_the_serial_run(project.root, _twin(project, tmp_path), 2,
                                                "--shard", "2/2")
    assert code in (0, 1)
    data = json.loads((_only_run(project.root) / "run.json").read_text(encoding="utf-8"))
    assert data["selection"]["shard"]["index"] == 2  # a shard run, mergeable as before


def test_the_examples_with_two_jobs_read_like_the_serial_run(tmp_path: Path) -> None:
    roots = []
    for name in ("serial", "forked"):
        root = tmp_path / name
        root.mkdir()
        for folder in ("eval-datasets", "eval-cache"):
            shutil.copytree(REPO_ROOT / folder, root / folder)
        text = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
        section = text[text.index("[tool.harness]"):].split("\n[", 1)[0]
        (root / "pyproject.toml").write_text(f'[project]\nname = "examples"\n\n{section}\n')
        roots.append(root)
    assert assert_jobs_read_like_the_serial_run(*roots, 2, "-q") == 0


KILLER = '''
import os
import signal


def answer(scenario):
    """An agent whose process dies under it (the OOM killer, a segfault in an extension)."""
    if scenario.name == "doomed":
        os.kill(os.getpid(), signal.SIGKILL)
    return {"answer": "yes"}
'''


def test_a_job_that_dies_fails_the_run_and_names_it(project: Project) -> None:
    project.write("eval-datasets/helper/agent.py", KILLER)
    project.write("eval-datasets/helper/agent.yaml", {"entrypoint": "agent.py:answer",
                                                       "output": "json"})
    for name in ("first", "doomed", "last", "other"):
        project.scenario(f"helper/acme/{name}")
    write_stamp(project.cache, ttl_days=730)  # a current cache (this agent calls no model)
    serial = _cli(project.root, "run", "--scenario", "first", "--scenario", "last")
    assert serial.returncode == 0, serial.stdout + serial.stderr
    result = _cli(project.root, "run", "--jobs", "2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "was killed by SIGKILL" in result.stderr and "eval-job-failed" in result.stderr
    assert "PASSED" not in result.stdout and "FAILED" not in result.stdout  # no partial verdict
    runs = sorted((project.results / "results").iterdir())
    assert not (runs[-1] / "run.json").exists()  # no run.json that lacks the dead job's iterations


AUDITED = textwrap.dedent("""
    import os, sys
    log = sys.argv[2]
    def audit(event, args):
        if event.startswith("socket."):
            with open(log, "a") as handle:
                handle.write(f"{os.getpid()} {event}\\n")
    sys.addaudithook(audit)
    from harness.frontends.cli import main
    sys.exit(main(["--project", sys.argv[1], "run", "--jobs", "2"]))
""")


def test_every_job_stays_offline_and_writes_nothing_under_the_cache(project: Project,
                                                                    tmp_path: Path) -> None:
    _demo(project)
    project.scenario("helper/globex/unrecorded", {"answer": "yes"})  # a miss in one job
    before = project.cache_digest()
    log = tmp_path / "sockets.log"
    result = subprocess.run([sys.executable, "-c", AUDITED, str(project.root), str(log)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "missed" in result.stdout and "helper/globex/unrecorded" in result.stdout
    assert not log.exists() or log.read_text() == ""
    assert project.cache_digest() == before
    assert len(list(_only_run(project.root).glob("records-job*.jsonl"))) == 2


def test_jobs_apply_only_offline_and_take_a_count_or_auto(project: Project) -> None:
    _demo(project)
    refused = project.run("run", "--jobs", "2", "--refresh-cache", "--scripted")
    assert refused.code == 2
    assert "--jobs applies only to an offline run" in refused.err
    assert "--concurrency" in refused.err
    for bad in ("0", "two", "-1"):
        with pytest.raises(SystemExit) as usage:
            project.run("run", "--jobs", bad)
        assert usage.value.code == 2
        assert "give the number of processes" in project.capsys.readouterr().err
    auto = _cli(project.root, "run", "--jobs", "auto")
    assert auto.returncode == 1, auto.stderr  # the blocking reject, whatever the core count
