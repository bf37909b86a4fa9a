"""The ask-user-question example: green offline, and its assertions reject wrong answers.

Wrong answers are the scenarios' ``counterexamples:``: judged by every run with no
model call, so the committed cache only ever holds what a good model would say.
"""

from __future__ import annotations

import shutil

import yaml

from conftest import REPO_ROOT, Project
from examples_support import (
    assert_counterexamples_reject_like_recorded_answers,
    assert_every_scenario_has_caught_counterexamples,
)

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
    for path in sorted((REPO_ROOT / "eval-datasets" / AGENT).glob("*/*.yaml")):
        if path.name == "tenant.yaml":
            continue
        expect = yaml.safe_load(path.read_text(encoding="utf-8"))["expect"]
        kinds = [next(k for k in item if k != "name") for item in expect]
        assert any(k == "json_path" and item["json_path"].get("path") == "decision"
                   for k, item in zip(kinds, expect, strict=True)), path.name
        assert "json_schema" in kinds, path.name


def test_counterexamples_are_rejected_like_recorded_answers(project: Project) -> None:
    shutil.copytree(REPO_ROOT / "eval-datasets" / AGENT, project.datasets / AGENT)
    assert_counterexamples_reject_like_recorded_answers(project, AGENT)
