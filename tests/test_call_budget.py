"""``--max-calls N`` holds while the run goes (harness/refresh/budget.py), not only in the plan.

The plan counts a Python agent at its first call; what the agent does after that (a tool loop
that goes round again, or forever) was sent and paid for whatever ``--max-calls`` said. Now
each new paid call takes a share of the budget before it is sent: past N, the call is
refused, the iteration is an error naming the budget, every answer paid for is kept, and a
later run records the rest. Both paths are tested against a real loopback server: an
unchanged SDK agent (wire) and a Python agent on the harness's client (the caching client),
through ``harness run`` and ``pytest --evals``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from provider_server import TEST_KEY, ProviderServer, point_agent
from sdk_support import SdkProject
from wire_fakes import WireFake

from conftest import Project

pytestmark = pytest.mark.slow(seconds=10)

SELF_CHECK = '''
def run(client, request, scenario):
    """Draft, then ask the model to check the draft: two calls, the plan sees the first."""
    draft = client.complete(request)
    review = {**request, "messages": [*request["messages"],
                                      {"role": "assistant", "content": draft.content},
                                      {"role": "user", "content": "Check your answer."}]}
    return client.complete(review)
'''


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


def test_an_sdk_agents_calls_past_max_calls_are_refused_and_the_rest_recorded_later(
        tmp_path: Path, fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools")  # a tool loop: two calls per iteration
    capped = project.harness("run", "--record-missing", "--max-calls", "3", env=fake.env())
    assert capped.code == 1, capped.out + capped.err
    assert "Traceback" not in capped.err
    assert len(fake.requests) == 3  # the plan saw 2 (first calls); the budget held at 3
    assert len(project.entries()) == 3  # every answer paid for is kept
    records = project.records()
    assert sorted(r["status"] for r in records) == ["error", "passed"]
    refused = next(r for r in records if r["status"] == "error")
    assert "--max-calls 3 reached" in refused["message"]
    assert "eval-max-calls-reached" in refused["message"]
    rest = project.harness("run", "--record-missing", "--max-calls", "10", env=fake.env())
    assert rest.code == 0, rest.out + rest.err
    assert len(fake.requests) == 4  # only the call that was refused
    fake.stop()
    assert project.harness("run").code == 0


def _self_check(project: Project, server: ProviderServer) -> None:
    project.write("skills_cap/__init__.py", "")
    project.write("skills_cap/selfcheck.py", SELF_CHECK)
    point_agent(project, server, entrypoint="skills_cap.selfcheck:run")
    for name in ("greeting", "farewell"):
        project.scenario(f"helper/acme/{name}", {"answer": "yes"},
                         expect=[{"json_path": {"path": "answer", "equals": "yes"}}])


def test_a_python_agent_on_the_harness_client_is_held_to_max_calls_too(
        project: Project, server: ProviderServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.syspath_prepend(str(project.root))
    _self_check(project, server)
    outcome = project.run("run", "--refresh-cache", "--max-calls", "3", "--concurrency", "1")
    assert outcome.code == 1, outcome.out + outcome.err
    assert len(server.requests) == 3
    assert [r["status"] for r in project.records()] == ["passed", "error"]
    assert "--max-calls 3 reached" in project.records()[-1]["message"]
    sys.modules.pop("skills_cap.selfcheck", None)


def test_under_pytest_xdist_the_budget_is_one_for_the_whole_run(
        project: Project, server: ProviderServer) -> None:
    _self_check(project, server)
    for name in ("thanks", "welcome"):
        project.scenario(f"helper/acme/{name}", {"answer": "yes"},
                         expect=[{"json_path": {"path": "answer", "equals": "yes"}}])
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--evals", "--evals-refresh-cache", "--evals-max-calls", "5",
         "-n", "2", "-p", "no:cacheprovider", "-q"],
        cwd=project.root, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "OPENAI_API_KEY": TEST_KEY, "PYTHONPATH": str(project.root)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(server.requests) == 5  # two workers, one budget: not 5 each
    assert "--max-calls 5 reached" in done.stdout
