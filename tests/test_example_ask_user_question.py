"""The ask-user-question example: green offline, and its assertions reject wrong answers.

Wrong answers are the scenarios' ``counterexamples:``: judged by every run with no
model call, so the committed cache only ever holds what a good model would say.
"""

from __future__ import annotations

import shutil

from conftest import REPO_ROOT, Project
from examples_support import (
    assert_counterexamples_reject_like_recorded_answers,
    assert_every_scenario_has_caught_counterexamples,
)
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

AGENT = "ask-user-question"


def test_committed_example_is_green_offline_and_writes_nothing(project: Project) -> None:
    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    shutil.copytree(REPO_ROOT / "eval-cache", project.cache)
    before = project.cache_digest()
    outcome = project.run("run", "--agent", AGENT)
    assert outcome.code == 0, outcome.out
    assert project.cache_digest() == before
    records = project.records()
    assert records and all(r["cache_hit"] for r in records)
    types = {r["type"] for r in records}
    assert {"positive", "edge", "format", "boundary", "negative", "adversarial"} <= types
    for kind in types:
        assert sum(r["type"] == kind for r in records) >= 4, kind
    assert len({r["tenant"] for r in records}) >= 2
    assert_every_scenario_has_caught_counterexamples(records)


def test_every_example_scenario_checks_decision_and_contract() -> None:
    """Its own decision item, and the contract (declared once in agent.yaml) for every scenario."""
    dataset = load_dataset(load_config(REPO_ROOT))
    for scenario in (s for s in dataset.scenarios if s.agent == AGENT):
        own = [item for item in scenario.expect if item.origin == "scenario"]
        assert any(item.get("json_path", {}).get("path") == "decision" for item in own), scenario.id
        assert any(item.get("json_schema") is True and item.origin == "agent"
                   for item in scenario.expect), scenario.id


def test_counterexamples_are_rejected_like_recorded_answers(project: Project) -> None:
    shutil.copytree(REPO_ROOT / "eval-datasets" / AGENT, project.datasets / AGENT)
    assert_counterexamples_reject_like_recorded_answers(project, AGENT)
