"""Shared by the example tests: the examples' counterexamples, checked two ways.

Every example scenario lists known-wrong answers (``counterexamples:``) that a
run judges with the scenario's hard assertions, no model call made. Here every
one is also recorded as a real answer through the scripted provider and
replayed, so the verdicts of the counterexample path and of a recorded answer
are proven to be the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from conftest import REPO_ROOT, Project
from harness.assertions.counterexamples import check_counterexamples
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset


def scenario_files(agent: str) -> dict[str, Path]:
    """Every scenario file of an example agent, keyed ``tenant/name``."""
    folder = REPO_ROOT / "eval-datasets" / agent
    return {f"{p.parent.name}/{p.stem}": p for p in sorted(folder.glob("*/*.yaml"))
            if p.name != "tenant.yaml"}


def counterexamples(agent: str) -> dict[str, list[dict[str, Any]]]:
    """The counterexamples of every scenario of an example agent, keyed ``tenant/name``."""
    return {local_id: yaml.safe_load(path.read_text(encoding="utf-8")).get("counterexamples") or []
            for local_id, path in scenario_files(agent).items()}


def assert_every_scenario_has_caught_counterexamples(records: list[dict[str, Any]]) -> None:
    """Each record of a green run: at least one counterexample, every one caught by at least
    one assertion and by every assertion its ``rejected_by`` names."""
    for record in records:
        found = record.get("counterexamples") or []
        assert found, f"{record['scenario']}: no counterexample"
        for item in found:
            assert item["caught"] and item["rejected"] and not item["let_through"], (
                record["scenario"], item)


def assert_counterexamples_reject_like_recorded_answers(project: Project, agent: str) -> None:
    """Record every counterexample as a real answer, replay it, and check the run rejects it
    with exactly the assertions the counterexample path named.

    Each counterexample ``i`` of scenario ``name`` becomes a copy ``name-x<i>`` of the scenario
    (without counterexamples) whose scripted answer is the counterexample. The agent's folder
    must already be copied into ``project``.
    """
    config = load_config(project.root)
    dataset = load_dataset(config)
    expected: dict[str, tuple[str, ...]] = {}
    script: dict[str, Any] = {}
    for scenario in (s for s in dataset.scenarios if s.agent == agent):
        judged = check_counterexamples(dataset.agents[agent], scenario)
        data = yaml.safe_load(scenario.file.read_text(encoding="utf-8"))
        data.pop("counterexamples", None)
        for index, (item, result) in enumerate(zip(scenario.counterexamples, judged, strict=True)):
            copy = f"{scenario.name}-x{index}"
            (scenario.file.parent / f"{copy}.yaml").write_text(
                yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
            script[f"{scenario.tenant}/{copy}"] = item["answer"]
            expected[f"{agent}/{scenario.tenant}/{copy}"] = result.rejected
            assert result.caught, (scenario.id, result)
    (project.datasets / agent / "script.yaml").write_text(
        yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    project.record("--agent", agent, "--scenario", "*-x*")
    outcome = project.run("run", "--agent", agent, "--scenario", "*-x*")
    assert outcome.code == 1
    latest = {r["scenario"]: r for r in project.records()}  # the replay overwrites the recording
    assert set(expected) <= set(latest)
    for scenario_id, rejected in expected.items():
        record = latest[scenario_id]
        assert record["status"] == "rejected", (scenario_id, record["message"])
        found = tuple(v["assertion"] for v in record["verdicts"] if v["outcome"] == "reject")
        assert found == rejected, scenario_id
