"""Every assertion kind an example uses is proven to reject by one of its counterexamples.

Each example scenario lists known-wrong answers (``counterexamples:``) and, in
``rejected_by``, the assertions that must reject them; every run enforces that
(a counterexample let through makes the scenario ``toothless``). This test
checks that, for every example agent, those names cover every assertion kind
the example relies on (and the implicit ``tool_schema`` check of an agent with
tools), so no kind of check in a committed example goes unproven.
"""

from __future__ import annotations

from functools import cache

import pytest
import yaml

from conftest import REPO_ROOT
from examples_support import scenario_files
from harness.assertions import assertion_label
from harness.loading.config import load_config
from harness.loading.datasets import Dataset, load_dataset

EXAMPLES = ["ask-user-question", "interaction-boundary", "operator-approval", "open-question",
            "sdk-operator-approval", "sdk-open-question", "sdk-ask-user-question"]


def _kind(item: dict[str, object]) -> str:
    return next(k for k in item if k != "name")


@pytest.mark.parametrize("agent", EXAMPLES)
def test_counterexamples_cover_every_assertion_kind_used(agent: str) -> None:
    """The scenario's own items and the rules its agent and tenant declare once alike."""
    used: set[str] = set()
    proven: set[str] = set()
    dataset = _dataset()
    for path in scenario_files(agent).values():
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        scenario = next(s for s in dataset.scenarios if s.file == path)
        kind_of = {assertion_label(item): _kind(item) for item in scenario.expect}
        kind_of["tool_schema"] = "tool_schema"
        used |= set(kind_of.values()) - {"tool_schema"}
        assert data.get("counterexamples"), f"{path}: no counterexample"
        for item in data["counterexamples"]:
            assert item.get("rejected_by"), f"{path}: {item['why']!r} names no assertion"
            proven |= {kind_of[name] for name in item["rejected_by"]}
    agent_file = yaml.safe_load((REPO_ROOT / "eval-datasets" / agent / "agent.yaml").read_text(
        encoding="utf-8"))
    if agent_file.get("tools"):
        used.add("tool_schema")
    assert used - proven == set(), f"{agent}: no counterexample proves these kinds reject"


@cache
def _dataset() -> Dataset:
    return load_dataset(load_config(REPO_ROOT))
