"""A crash is its own outcome (issue 19, item 12): a check that raises still rejects (it must not
pass), but it is marked as a crash in the verdict and the record, it never counts as catching a
counterexample, and ``check`` reports it."""

from __future__ import annotations

from typing import Any

import pytest

from conftest import Project
from harness.assertions import terms


def _boom(value: str, form: Any, fold: bool) -> str:
    """In place of ``terms.normalised``: the text kinds' normaliser, which ``contains`` calls."""
    raise RuntimeError("normaliser exploded")


def _setup(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"},
                     expect=[{"contains": "yes"}, {"json_path": {"path": "answer", "equals": "yes"}}],
                     counterexamples=[{"why": "says no", "answer": {"json": {"answer": "no"}},
                                       "rejected_by": ["contains 'yes'"]}])
    project.record()


def test_a_crashing_check_is_marked_in_the_record_and_catches_no_counterexample(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(project)
    assert project.run("run").code == 0
    monkeypatch.setattr(terms, "normalised", _boom)
    outcome = project.run("run")
    assert outcome.code == 1
    record = project.records()[-1]
    crashed = [v for v in record["verdicts"] if v.get("crashed")]
    assert [v["assertion"] for v in crashed] == ["contains 'yes'"]
    assert crashed[0]["reason"] == "assertion crashed: RuntimeError: normaliser exploded"
    assert "crashed" not in record["verdicts"][1]  # a real verdict carries no marker
    (counterexample,) = record["counterexamples"]
    assert counterexample["caught"] is False and counterexample["let_through"] == ["contains 'yes'"]


def test_check_reports_a_crashing_check(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup(project)
    monkeypatch.setattr(terms, "normalised", _boom)
    outcome = project.run("check")
    assert outcome.code == 1
    assert ("[unused] eval-datasets/helper/acme/greeting.yaml: helper/acme/greeting iteration 0: "
            "the check of assertion contains 'yes': assertion crashed: RuntimeError: normaliser "
            "exploded (eval-assertion-crashed)") in outcome.out
