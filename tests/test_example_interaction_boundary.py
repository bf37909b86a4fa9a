"""The interaction-boundary example: green offline, complete, and its assertions reject wrong answers.

The example holds a business assistant to four levels (status, recommendation,
draft, execute) plus clarify. Every golden case 01-12 and every failure
counterexample Fail-01..08 of its spec is a scenario (by tag). Wrong answers
are the scenarios' ``counterexamples:``, judged by every run with no model call,
so the committed cache only ever holds what a good model would say.

Only this agent's datasets and cache entries are copied into the throwaway
project, so the tests do not depend on other agents' datasets.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]

from conftest import REPO_ROOT, Project
from examples_support import (
    assert_counterexamples_reject_like_recorded_answers,
    assert_every_scenario_has_caught_counterexamples,
    counterexamples,
)
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

AGENT = "interaction-boundary"
EXAMPLE = REPO_ROOT / "eval-datasets" / AGENT
GOLDEN = {f"golden-{n:02d}" for n in range(1, 13)}
FAILURES = {f"fail-{n:02d}" for n in range(1, 9)}
INTERNAL_TERMS = {"analysis_packet", "missing_mapping", "focus_objects", "分析包"}


def _scenarios() -> dict[str, dict[str, Any]]:
    """Every scenario of the example, keyed by ``tenant/name``."""
    return {
        f"{path.parent.name}/{path.stem}": yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(EXAMPLE.glob("*/*.yaml"))
        if path.name != "tenant.yaml"
    }


def _resolved_expect() -> dict[str, list[dict[str, Any]]]:
    """Every scenario's hard assertions as a run applies them: its own items plus the agent's
    and tenant's rules declared once (keyed by ``tenant/name``)."""
    dataset = load_dataset(load_config(REPO_ROOT))
    return {f"{s.tenant}/{s.name}": [dict(item) for item in s.expect]
            for s in dataset.scenarios if s.agent == AGENT}


def _kind(item: dict[str, Any]) -> str:
    return next(k for k in item if k != "name")


def _output_validator() -> Draft202012Validator:
    schema = json.loads((EXAMPLE / "output.schema.json").read_text(encoding="utf-8"))
    return Draft202012Validator(schema)


def _copy_example(project: Project) -> None:
    shutil.copytree(EXAMPLE, project.datasets / AGENT)
    project.cache.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "eval-cache/.eval-cache.json", project.cache / ".eval-cache.json")
    shutil.copytree(REPO_ROOT / "eval-cache/cache" / AGENT, project.cache / "cache" / AGENT)


def test_committed_example_is_green_offline_and_writes_nothing(project: Project) -> None:
    _copy_example(project)
    before = project.cache_digest()
    outcome = project.run("run", "--agent", AGENT)
    assert outcome.code == 0, outcome.out
    assert project.cache_digest() == before
    records = project.records()
    assert len(records) == len(_scenarios())
    assert all(r["cache_hit"] for r in records)
    assert {r["type"] for r in records} == {"positive", "edge", "boundary", "negative", "adversarial"}
    assert len({r["tenant"] for r in records}) >= 2
    assert_every_scenario_has_caught_counterexamples(records)


def test_every_golden_case_and_counterexample_has_a_scenario() -> None:
    scenarios = _scenarios()
    tags = {tag for data in scenarios.values() for tag in data.get("tags", [])}
    assert not (GOLDEN | FAILURES) - tags, f"no scenario for {sorted((GOLDEN | FAILURES) - tags)}"
    for local_id, data in scenarios.items():
        if FAILURES & set(data.get("tags", [])):
            assert data["type"] in ("negative", "adversarial"), local_id
    # The upgrade to draft and the scope resets are conversations, not single turns.
    for case in ("golden-08", "golden-10", "fail-06"):
        holders = [d for d in scenarios.values() if case in d.get("tags", [])]
        assert holders and all("messages" in d for d in holders), case
    tenants_of = {case: {i.split("/")[0] for i, d in scenarios.items() if case in d.get("tags", [])}
                  for case in GOLDEN | FAILURES}
    assert len(set().union(*tenants_of.values())) >= 2


def test_every_scenario_checks_level_boundary_leaks_and_contract() -> None:
    # what a run applies: the contract and the reply's leak list are declared once in agent.yaml
    resolved = _resolved_expect()
    assert set(resolved) == set(_scenarios())
    for local_id, expect in resolved.items():
        assert all("name" in item for item in expect), f"{local_id}: every assertion has a name"
        kinds = [_kind(item) for item in expect]
        assert any(k == "json_path" and item["json_path"]["path"] == "effective_level"
                   and "equals" in item["json_path"] for k, item in zip(kinds, expect, strict=True)), local_id
        assert any("forbidden_levels" in json.dumps(item[k]) for k, item in zip(kinds, expect, strict=True)
                   if k in ("json_path", "json_schema")), f"{local_id}: forbidden_levels unchecked"
        pairs = zip(kinds, expect, strict=True)
        assert any(k == "json_schema" and item[k] is True for k, item in pairs), local_id
        leak_checks = [item["not_contains"] for k, item in zip(kinds, expect, strict=True)
                       if k == "not_contains" and item["not_contains"].get("path") == "reply"]
        assert any(set(c.get("any", [])) >= INTERNAL_TERMS for c in leak_checks), local_id


def test_conversation_turns_and_scripted_answers_follow_the_contract() -> None:
    validator = _output_validator()
    script = yaml.safe_load((EXAMPLE / "script.yaml").read_text(encoding="utf-8"))
    script = {k: v for k, v in script.items() if "#" not in k}  # the agent's answers, not judges'
    scenarios = _scenarios()
    assert set(script) == set(scenarios)
    for local_id, data in scenarios.items():
        answers = [json.loads(m["content"]) for m in data.get("messages", []) if m["role"] == "assistant"]
        answers.append(script[local_id]["json"])
        for answer in answers:
            errors = [e.message for e in validator.iter_errors(answer)]
            assert not errors, f"{local_id}: {errors}"


def test_execute_only_after_a_confirmation_asked_in_an_earlier_turn() -> None:
    script = yaml.safe_load((EXAMPLE / "script.yaml").read_text(encoding="utf-8"))
    executed = 0
    for local_id, data in _scenarios().items():
        answer = script[local_id]["json"]
        if answer["effective_level"] != "execute":
            continue
        executed += 1
        earlier = [json.loads(m["content"]) for m in data.get("messages", []) if m["role"] == "assistant"]
        assert any(turn.get("needs_confirmation") for turn in earlier), local_id
    assert executed >= 1


def test_every_failure_case_of_the_spec_has_a_counterexample() -> None:
    scenarios = _scenarios()
    covered = {tag for local_id, items in counterexamples(AGENT).items() if items
               for tag in scenarios[local_id].get("tags", [])}
    assert covered >= FAILURES, f"no wrong answer for {sorted(FAILURES - covered)}"


def test_counterexamples_are_rejected_like_recorded_answers(project: Project) -> None:
    shutil.copytree(EXAMPLE, project.datasets / AGENT)
    assert_counterexamples_reject_like_recorded_answers(project, AGENT)
