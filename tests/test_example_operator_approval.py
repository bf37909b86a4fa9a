"""The operator-approval example: green offline, and its assertions reject wrong answers.

Wrong answers are the scenarios' ``counterexamples:``: judged by every run with no
model call, so the committed cache only ever holds what a good model would say.

The counterparty-visible draft ``body`` is checked by the scenarios themselves
(text assertions with ``tool: file_draft, path: body``); on top of that, the
committed answers are checked here against every tool's parameter schema and a
scenario-independent pattern of approval metadata.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import yaml
from jsonschema import Draft202012Validator

from conftest import REPO_ROOT, Project
from examples_support import (
    assert_counterexamples_reject_like_recorded_answers,
    assert_every_scenario_has_caught_counterexamples,
)
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset

AGENT = "operator-approval"
AGENT_DIR = REPO_ROOT / "eval-datasets" / AGENT
TYPES = {"positive", "edge", "boundary", "negative", "adversarial"}
LEAK_CHECK = "reply carries no approval metadata"
BODY_LEAK_CHECK = "draft body carries no approval metadata"
#: Approval metadata that no counterparty-visible text may carry, whatever the scenario.
METADATA = re.compile(r"\b[0-9a-f]{8,}\b|sha-?256|\breceipt\b|\bop-[a-z]|approved by|"
                      r"pending approval|claim token|obl-\d|\[BASELINE", re.IGNORECASE)


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _resolved_expect() -> dict[Path, list[dict[str, Any]]]:
    """Every scenario's hard assertions as a run applies them: its own items plus the rules
    its agent and tenant declare once (keyed by the scenario file)."""
    dataset = load_dataset(load_config(REPO_ROOT))
    return {s.file: [dict(item) for item in s.expect] for s in dataset.scenarios if s.agent == AGENT}


def _scenarios() -> dict[str, dict[str, Any]]:
    """Every scenario of the example, keyed ``tenant/name``."""
    return {f"{p.parent.name}/{p.stem}": _load(p) for p in sorted(AGENT_DIR.glob("*/*.yaml"))
            if p.name != "tenant.yaml"}


def _copy_example(project: Project) -> None:
    """Only this agent and its cache: other example agents may be mid-edit."""
    shutil.copytree(AGENT_DIR, project.datasets / AGENT)
    project.cache.mkdir(parents=True)
    shutil.copy2(REPO_ROOT / "eval-cache/.eval-cache.json", project.cache / ".eval-cache.json")
    shutil.copytree(REPO_ROOT / "eval-cache/cache" / AGENT, project.cache / "cache" / AGENT)


def test_committed_example_is_green_offline_and_writes_nothing(project: Project) -> None:
    _copy_example(project)
    before = project.cache_digest()
    outcome = project.run("run", "--agent", AGENT)
    assert outcome.code == 0, outcome.out + outcome.err
    assert project.cache_digest() == before
    records = project.records()
    assert len(records) == len(_scenarios())
    assert all(r["cache_hit"] for r in records)
    assert all(r["status"] == "passed" for r in records)
    types = {r["type"] for r in records}
    assert types == TYPES
    for kind in types:
        assert sum(r["type"] == kind for r in records) >= 3, kind
    assert len({r["tenant"] for r in records}) >= 2
    assert_every_scenario_has_caught_counterexamples(records)


def test_every_scenario_forbids_sending_and_names_its_assertions() -> None:
    resolved = {f"{path.parent.name}/{path.stem}": items for path, items in _resolved_expect().items()}
    assert set(resolved) == set(_scenarios())
    for local_id, expect in resolved.items():  # "never sends" is declared once in agent.yaml
        assert {"tool_not_called": "send_message", "name": "never sends by itself"} in expect, local_id
        assert all(isinstance(item.get("name"), str) for item in expect), local_id
        assert any(k in item for item in expect for k in ("tool_called", "tool_not_called")), local_id
        if {"tool_called": {"name": "file_draft", "times": 1}, "name": "files one draft"} in expect \
                or any(item.get("name") == "files one replacement draft" for item in expect):
            body_checks = [item for item in expect if item.get("name") == BODY_LEAK_CHECK]
            assert body_checks, f"{local_id}: files a draft but never checks its body"
            spec = body_checks[0]["not_contains"]
            assert (spec["tool"], spec["path"]) == ("file_draft", "body"), local_id


def test_committed_answers_are_valid_tool_calls_without_approval_metadata() -> None:
    agent = _load(AGENT_DIR / "agent.yaml")
    validators = {t["name"]: Draft202012Validator(t["parameters"]) for t in agent["tools"]}
    script = {k: v for k, v in _load(AGENT_DIR / "script.yaml").items() if "#" not in k}  # not judges
    scenarios = _scenarios()
    assert set(script) == set(scenarios)
    for local_id, answer in script.items():
        forbidden: list[str] = []
        for item in scenarios[local_id]["expect"]:
            if item.get("name") in (LEAK_CHECK, BODY_LEAK_CHECK):
                forbidden += item["not_contains"]["any"]
        steps = answer if isinstance(answer, list) else [answer]  # a tool loop has several
        for call in (c for step in steps for c in step.get("tool_calls", [])):
            assert call["name"] != "send_message", local_id
            errors = [e.message for e in validators[call["name"]].iter_errors(call["arguments"])]
            assert not errors, f"{local_id}: {call['name']}: {errors}"
            if call["name"] != "file_draft":
                continue
            body = call["arguments"]["body"]
            assert not METADATA.search(body), f"{local_id}: draft body carries {METADATA.search(body)}"
            leaked = [s for s in forbidden if s.casefold() in body.casefold()]
            assert not leaked, f"{local_id}: draft body carries {leaked}"


def test_counterexamples_are_rejected_like_recorded_answers(project: Project) -> None:
    shutil.copytree(AGENT_DIR, project.datasets / AGENT)
    assert_counterexamples_reject_like_recorded_answers(project, AGENT)
