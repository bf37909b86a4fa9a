"""Shared by the example tests: run deliberately wrong answers and check who rejects them."""

from __future__ import annotations

from typing import Any

import yaml

from conftest import Project


def assert_wrong_answers_rejected(project: Project, agent: str, cases: dict[str, Any]) -> None:
    """Record each wrong answer through the scripted provider, replay, and check the named rejects.

    ``cases`` maps ``<tenant>/<scenario>`` to ``{answer, rejected: [assertion names]}``; the
    agent's folder must already be copied into ``project``.
    """
    script = {local_id: case["answer"] for local_id, case in cases.items()}
    (project.datasets / agent / "script.yaml").write_text(
        yaml.safe_dump(script, allow_unicode=True), encoding="utf-8")
    for local_id in cases:
        project.record("--scenario", f"{agent}/{local_id}")
    outcome = project.run("run", *[a for i in cases for a in ("--scenario", f"{agent}/{i}")])
    assert outcome.code == 1
    latest = {r["scenario"]: r for r in project.records()}  # later runs overwrite earlier ones
    for local_id, case in cases.items():
        record = latest[f"{agent}/{local_id}"]
        assert record["status"] == "rejected", local_id
        rejected = {v["assertion"] for v in record["verdicts"] if v["outcome"] == "reject"}
        missing = set(case["rejected"]) - rejected
        assert not missing, f"{local_id}: these assertions let a wrong answer through: {missing}"
