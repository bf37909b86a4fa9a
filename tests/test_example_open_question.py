"""The open-question example: green offline, and its assertions reject wrong answers.

Wrong answers are the scenarios' ``counterexamples:``: judged by every run with no
model call, so the committed cache only ever holds what a good model would say. Only this agent's
dataset and cache entries are copied into the throwaway project, so the test does
not depend on other agents being complete.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from conftest import REPO_ROOT, Project
from examples_support import (
    assert_counterexamples_reject_like_recorded_answers,
    assert_every_scenario_has_caught_counterexamples,
)
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

AGENT = "open-question"
TOOL = "declare_open_question"
DATASET = REPO_ROOT / "eval-datasets" / AGENT
TOOL_KINDS = {"tool_called", "tool_not_called", "tool_args"}


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _resolved_expect() -> dict[Path, list[dict[str, Any]]]:
    """Every scenario's hard assertions as a run applies them: its own items plus the rules
    its agent and tenant declare once (keyed by the scenario file)."""
    dataset = load_dataset(load_config(REPO_ROOT))
    return {s.file: [dict(item) for item in s.expect] for s in dataset.scenarios if s.agent == AGENT}


def _scenarios() -> list[Path]:
    return sorted(p for p in DATASET.glob("*/*.yaml") if p.name != "tenant.yaml")


def test_committed_example_is_green_offline_and_writes_nothing(project: Project) -> None:
    shutil.copytree(DATASET, project.datasets / AGENT)
    shutil.copytree(REPO_ROOT / "eval-cache" / "cache" / AGENT, project.cache / "cache" / AGENT)
    shutil.copy2(REPO_ROOT / "eval-cache" / ".eval-cache.json", project.cache / ".eval-cache.json")
    before = project.cache_digest()
    outcome = project.run("run", "--agent", AGENT)
    assert outcome.code == 0, outcome.out + outcome.err
    assert project.cache_digest() == before
    records = project.records()
    assert len(records) == len(_scenarios())
    assert all(r["cache_hit"] and r["status"] == "passed" for r in records), records
    types = {r["type"] for r in records}
    assert {"positive", "edge", "boundary", "negative", "adversarial"} <= types
    for kind in types:
        assert sum(r["type"] == kind for r in records) >= 2, kind
    assert len({r["tenant"] for r in records}) >= 2
    assert_every_scenario_has_caught_counterexamples(records)


def test_every_example_scenario_checks_role_contract_and_the_tool() -> None:
    resolved = _resolved_expect()  # the contract is declared once in agent.yaml
    for path in _scenarios():
        expect = resolved[path]
        kinds = [next(k for k in item if k != "name") for item in expect]
        assert all("name" in item for item in expect), path.name
        assert any(k == "json_path" and item["json_path"].get("path") == "role"
                   for k, item in zip(kinds, expect, strict=True)), path.name
        assert "json_schema" in kinds, path.name
        tool_items = [item[k] for k, item in zip(kinds, expect, strict=True) if k in TOOL_KINDS]
        assert any((s if isinstance(s, str) else s["name"]) == TOOL for s in tool_items), path.name


def test_scripted_answers_keep_the_contract_and_the_tool_limits() -> None:
    """The committed answers respect the declared tool parameters (question <= 500,
    suggestion <= 300, affects), which no scenario assertion can read yet."""
    agent = _load(DATASET / "agent.yaml")
    (tool,) = [t for t in agent["tools"] if t["name"] == TOOL]
    assert tool["parameters"]["properties"]["question"]["maxLength"] == 500
    assert tool["parameters"]["properties"]["suggestion"]["maxLength"] == 300
    assert set(tool["parameters"]["required"]) == {"question", "affects"}
    arguments = Draft202012Validator(tool["parameters"])
    output = Draft202012Validator(json.loads((DATASET / "output.schema.json").read_text("utf-8")))
    script = {k: v for k, v in _load(DATASET / "script.yaml").items() if "#" not in k}  # not judges
    assert set(script) == {f"{p.parent.name}/{p.stem}" for p in _scenarios()}
    for local_id, answer in script.items():
        assert not list(output.iter_errors(answer["json"])), local_id
        calls = answer.get("tool_calls") or []
        assert answer["json"]["open_questions_declared"] == len(calls), local_id
        for call in calls:
            assert call["name"] == TOOL, local_id
            problems = [e.message for e in arguments.iter_errors(call["arguments"])]
            assert not problems, f"{local_id}: {problems}"


def test_counterexamples_are_rejected_like_recorded_answers(project: Project) -> None:
    shutil.copytree(DATASET, project.datasets / AGENT)
    assert_counterexamples_reject_like_recorded_answers(project, AGENT)
