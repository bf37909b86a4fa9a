"""A failed re-record never replays green silently (issue 19, item 10).

A loopback provider refuses one scenario's call during ``--refresh-cache``; the
older answer stays in the cache. Then ``run`` and ``check`` list the iteration
(``eval-cache/rerecord-failed.json``), ``require_provenance: provider`` makes it
fail both, and a refresh that obtains every answer clears it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from provider_server import TEST_KEY, ProviderServer, Received, Reply, default_answer, point_agent

import harness.providers
from conftest import Project
from harness.providers.retries import RetryPolicy

FAILED = "eval-cache/rerecord-failed.json"


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setattr(harness.providers, "DEFAULT_POLICY",
                        RetryPolicy(max_attempts=1, base_delay_s=0.01, max_delay_s=0.02))


def refuse(marker: str) -> Any:
    """An answer function that fails (HTTP 400, as a context overflow does) every request whose
    body mentions ``marker`` and answers the others."""
    def answer(received: Received) -> Reply:
        if marker in json.dumps(received.body):
            return Reply(status=400, body={"error": {"message": "context length exceeded",
                                                     "type": "invalid_request_error"}})
        return default_answer(received)
    return answer


def recorded(project: Project, server: ProviderServer, **agent: Any) -> None:
    """Two scenarios recorded from the provider, then a refresh in which greeting's call fails."""
    point_agent(project, server, **agent)
    project.scenario("helper/acme/greeting")
    project.scenario("helper/acme/farewell")
    assert project.run("run", "--refresh-cache").code == 0
    server.answer = refuse("Question for greeting?")
    failed = project.run("run", "--refresh-cache")
    assert failed.code == 1
    assert "warning: 1 iteration(s) keep older answers: this --refresh-cache did not obtain " \
           f"every answer (listed in {FAILED})" in failed.out
    server.answer = default_answer


def check_line(project: Project, guard: str = "rerecord") -> str:
    outcome = project.run("check")
    return next(line for line in outcome.out.splitlines() if line.startswith(guard))


def test_a_failed_refresh_is_listed_and_the_offline_run_says_so(
        project: Project, server: ProviderServer) -> None:
    recorded(project, server)
    listed = json.loads((project.root / FAILED).read_text(encoding="utf-8"))
    assert [(i["scenario"], i["iteration"], i["failed"]) for i in listed["iterations"]] == [
        ("helper/acme/greeting", 0, [""])]
    assert "context length exceeded" in listed["iterations"][0]["reason"]
    before = project.cache_digest()
    offline = project.run("run")
    assert offline.code == 0, offline.out  # not gated: the older answer still passes...
    assert "warning: 1 iteration(s) replay older answers: their last --refresh-cache did not " \
           "obtain every answer" in offline.out  # ...but never silently
    assert "helper/acme/greeting[0]: the agent's call not obtained by the refresh of" in offline.out
    assert "farewell" not in offline.out.split("warning:")[1].split("\n\n")[0]
    assert project.cache_digest() == before  # the offline run wrote nothing
    line = check_line(project)
    assert "ok" in line and "1 iteration(s) replay older answers" in line
    assert "helper/acme/greeting[0]" in line


def test_require_provenance_provider_fails_run_and_check(
        project: Project, server: ProviderServer) -> None:
    recorded(project, server, require_provenance="provider")
    offline = project.run("run")
    assert offline.code == 1
    assert "[error] helper/acme/greeting iteration 0" in offline.out
    assert "eval-provenance-required: agent helper requires answers from its provider" in offline.out
    assert "1 passed, 1 failed of 2" in offline.out  # farewell was obtained: it passes
    outcome = project.run("check")
    assert outcome.code == 1
    assert "[rerecord] eval-cache/rerecord-failed.json: iterations[0]: helper/acme/greeting[0]" \
        in outcome.out


def test_a_refresh_that_obtains_every_answer_clears_the_list(
        project: Project, server: ProviderServer) -> None:
    recorded(project, server, require_provenance="provider")
    assert project.run("run", "--refresh-cache", "--scenario", "farewell").code == 0
    assert (project.root / FAILED).is_file()  # a refresh of another scenario keeps the line
    missing = project.run("run", "--record-missing")  # nothing missing: it asks nothing again,
    assert missing.code == 1 and "eval-provenance-required" in missing.out  # so still gated
    assert (project.root / FAILED).is_file()
    assert project.run("run", "--refresh-cache", "--scenario", "greeting").code == 0
    assert not (project.root / FAILED).exists()
    recorded(project, server, require_provenance="provider")  # listed again, then deleted:
    (project.datasets / "helper/acme/greeting.yaml").unlink()
    assert project.run("run", "--refresh-cache").code == 0
    assert not (project.root / FAILED).exists()  # a refresh drops a deleted scenario's line
    offline = project.run("run")
    assert offline.code == 0 and "warning:" not in offline.out
    assert "no iteration replays answers a failed refresh left" in check_line(project)


def test_a_failed_judge_call_is_listed_too(project: Project, server: ProviderServer) -> None:
    point_agent(project, server, judge={"provider": "openai", "model": "judge-1",
                                        "evaluators": ["relevance"]})
    project.scenario("helper/acme/greeting")
    assert project.run("run", "--refresh-cache").code == 0
    server.answer = refuse("Expected behaviour")  # only the judge's request holds the case
    assert project.run("run", "--refresh-cache").code == 0  # judges never gate
    listed = json.loads((project.root / FAILED).read_text(encoding="utf-8"))
    assert listed["iterations"][0]["failed"] == ["judge:relevance"]
    assert "judge:relevance not obtained by the refresh" in project.run("run").out


def test_scripted_answers_fail_an_agent_that_requires_provider_answers(project: Project) -> None:
    (project.root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[tool.harness]\nrequire_provenance = "provider"\n')
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    offline = project.run("run")
    assert offline.code == 1
    assert "answer(s) not recorded from the provider (scripted or of unknown origin): the " \
           "agent's call" in offline.out
    outcome = project.run("check")
    assert "[rerecord] eval-cache/cache/helper/acme/greeting/0/" in outcome.out
    assert "entry.json: provenance.source: helper/acme/greeting[0] replays an answer not " \
           "recorded from the provider" in outcome.out
    project.agent(require_provenance="any")  # an agent may opt out of the project default
    assert project.run("run").code == 0


def test_a_bad_require_provenance_value_is_refused(project: Project) -> None:
    project.agent(require_provenance="paid")
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    outcome = project.run("run")
    assert outcome.code == 2 and "require_provenance" in outcome.err
    (project.root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[tool.harness]\nrequire_provenance = "yes"\n')
    outcome = project.run("run")
    assert outcome.code == 2
    assert "'require_provenance' must be one of any, provider, got 'yes'" in outcome.err


def test_an_unreadable_list_stops_the_run_and_fails_check(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.record()
    (project.root / FAILED).write_text('{"format_version": true, "iterations": []}')
    outcome = project.run("run")
    assert outcome.code == 2
    assert "eval-rerecord-file-invalid" in outcome.err and "rerecord-failed.json" in outcome.err
    assert "[rerecord] eval-cache/rerecord-failed.json: eval-rerecord-file-invalid" in \
        project.run("check").out


def test_pytest_evals_lists_and_gates_the_same_way(project: Project, server: ProviderServer) -> None:
    """Through a real ``pytest --evals`` subprocess: a refresh there records the failure too."""
    point_agent(project, server, require_provenance="provider")
    project.scenario("helper/acme/greeting")
    project.scenario("helper/acme/farewell")
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "GITHUB_STEP_SUMMARY": ""}
    command = [sys.executable, "-m", "pytest", "--evals", "-p", "no:cacheprovider", "-q"]
    first = subprocess.run([*command, "--evals-refresh-cache"], cwd=project.root, env=env,
                           capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stdout + first.stderr
    server.answer = refuse("Question for greeting?")
    refresh = subprocess.run([*command, "--evals-refresh-cache", "-n", "2"], cwd=project.root,
                             env=env, capture_output=True, text=True, timeout=120)  # xdist
    assert refresh.returncode == 1
    assert "keep older answers" in refresh.stdout
    assert (project.root / FAILED).is_file()
    offline = subprocess.run(command, cwd=project.root, env=env, capture_output=True, text=True,
                             timeout=120)
    assert offline.returncode == 1, offline.stdout
    assert "eval-provenance-required" in offline.stdout
    assert "warning: 1 iteration(s) replay older answers" in offline.stdout


def test_a_failed_first_recording_lists_nothing(project: Project, server: ProviderServer) -> None:
    """No older answer stays under the key: offline it is a miss, which explains itself."""
    point_agent(project, server)
    project.scenario("helper/acme/greeting")
    server.answer = refuse("Question for greeting?")
    assert project.run("run", "--refresh-cache").code == 1
    assert not (project.root / FAILED).exists()
    offline = project.run("run")
    assert offline.code == 1 and "[missed]" in offline.out and "warning:" not in offline.out
