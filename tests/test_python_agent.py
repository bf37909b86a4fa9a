"""A Python agent (``entrypoint: module:function``) drives the cached chat client itself."""

from __future__ import annotations

import sys

import pytest

from conftest import Project

SKILL = '''
from harness.core.entities import ChatResponse


def run(client, request, scenario):
    """Draft, then ask the model to check its own draft: two cached calls."""
    draft = client.complete(request)
    review = {**request, "messages": [*request["messages"],
                                      {"role": "assistant", "content": draft.content},
                                      {"role": "user", "content": "Check your answer."}]}
    return client.complete(review)
'''


@pytest.fixture(autouse=True)
def _forget_skill_module() -> None:
    sys.modules.pop("skills_code.selfcheck", None)


def test_python_agent_calls_are_recorded_and_replayed_offline(project: Project) -> None:
    project.write("skills_code/__init__.py", "")
    project.write("skills_code/selfcheck.py", SKILL)
    project.agent(entrypoint="skills_code.selfcheck:run")
    project.scenario("helper/acme/greeting", [{"json": {"answer": "draft"}}, {"json": {"answer": "ok"}}],
                     expect=[{"json_path": {"path": "answer", "equals": "ok"}}])
    assert project.record().code == 0
    outcome = project.run("run")
    assert outcome.code == 0, outcome.out
    record = project.records()[-1]
    assert len(record["calls"]) == 2 and all(c["cache_hit"] for c in record["calls"])
    assert len(list(project.cache.rglob("entry.json"))) == 2


def test_an_entrypoint_that_does_not_import_is_a_dataset_error(project: Project) -> None:
    project.agent(entrypoint="skills_code.missing:run")
    project.scenario("helper/acme/greeting", {"answer": "ok"})
    outcome = project.run("run")
    assert outcome.code == 2
    assert "agent.yaml: entrypoint: 'skills_code.missing:run' cannot be loaded" in outcome.err
