"""Shared by the example tests: the examples' counterexamples, checked two ways.

Every example scenario lists known-wrong answers (``counterexamples:``) that a
run judges with the scenario's hard assertions, no model call made. Here each
one is also recorded as the scenario's real answer through the scripted
provider and replayed, so the verdicts of the counterexample path and of a
recorded answer are proven to be the same.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from conftest import REPO_ROOT, Project


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
    """Record the first counterexample of every scenario as its real answer, replay it, and
    check the run rejects it with exactly the assertions the counterexample path named.

    The agent's folder must already be copied into ``project``.
    """
    cases = {local_id: items[0] for local_id, items in counterexamples(agent).items() if items}
    script = {local_id: case["answer"] for local_id, case in cases.items()}
    (project.datasets / agent / "script.yaml").write_text(
        yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    project.record("--agent", agent)
    outcome = project.run("run", "--agent", agent)
    assert outcome.code == 1
    latest = {r["scenario"]: r for r in project.records()}  # the replay overwrites the recording
    for local_id, case in cases.items():
        record = latest[f"{agent}/{local_id}"]
        assert record["status"] == "rejected", (local_id, record["message"])
        rejected = [v["assertion"] for v in record["verdicts"] if v["outcome"] == "reject"]
        assert rejected == record["counterexamples"][0]["rejected"], local_id
        missing = set(case.get("rejected_by") or ()) - set(rejected)
        assert not missing, f"{local_id}: these assertions let a wrong answer through: {missing}"
