"""The committed example agents: every generated mutant of their recorded answers is killed by a
hard assertion or marked equivalent with a reason (docs/assertions.md, "Mutant strength of the
examples"). A weakened assertion, or a new item whose forbidden terms reach a field nothing
guards, shows up here as a survivor, named with its operator.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO_ROOT, Project

pytestmark = pytest.mark.slow(seconds=80)

AGENTS = ("ask-user-question", "interaction-boundary", "open-question", "operator-approval")
#: The SDK examples: their mutants are judged against the tools agent.py declared on the wire.
SDK_AGENTS = ("sdk-ask-user-question", "sdk-open-question", "sdk-operator-approval")


def _copy_examples(project: Project, agents: tuple[str, ...] = AGENTS) -> None:
    project.cache.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "eval-cache/.eval-cache.json", project.cache / ".eval-cache.json")
    for agent in agents:
        shutil.copytree(REPO_ROOT / "eval-datasets" / agent, project.datasets / agent)
        shutil.copytree(REPO_ROOT / "eval-cache/cache" / agent, project.cache / "cache" / agent)


def test_the_examples_leave_no_survivor_and_write_nothing(project: Project) -> None:
    _copy_examples(project)
    before = project.cache_digest()
    outcome = project.run("mutants", "--json", "--fail-under", "1.0")
    assert outcome.code == 0, outcome.err
    assert project.cache_digest() == before
    found = json.loads(outcome.out)
    assert set(found) == set(AGENTS)
    for agent, report in found.items():
        assert report["survivors"] == [], (agent, report["survivors"][:5])
        assert report["killed"] + report["equivalent"] == report["mutants"] > 1000, agent
        assert report["killed"] > report["equivalent"], agent
        caught = report["counterexamples"]
        assert caught["caught"] == caught["total"] > 0, agent


def test_the_sdk_examples_leave_no_survivor_either(project: Project) -> None:
    """Judged against agent.yaml's empty tool list, the SDK examples' mutants that kept a tool
    call were all "killed" as unknown tools (965 of 965 reported); judged as their recorded
    answers are, every survivor is now killed by a rule or marked equivalent with a reason."""
    _copy_examples(project, SDK_AGENTS)
    outcome = project.run("mutants", "--json", "--fail-under", "1.0")
    assert outcome.code == 0, outcome.err
    found = json.loads(outcome.out)
    assert set(found) == set(SDK_AGENTS)
    for agent, report in found.items():
        assert report["survivors"] == [], (agent, report["survivors"][:5])
        assert report["killed"] + report["equivalent"] == report["mutants"] > 500, agent
        assert report["killed"] > report["equivalent"], agent
        caught = report["counterexamples"]
        assert caught["caught"] == caught["total"] > 0, agent
