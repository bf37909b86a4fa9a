"""Every assertion kind an example uses is proven to reject by a wrong answer in the fixtures.

The per-agent tests (tests/test_example_*.py) run each wrong answer and check
that the assertions it names reject it; this test checks that, for every
example agent, those names cover every assertion kind the example relies on,
so no kind of check in a committed example goes unproven.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from conftest import REPO_ROOT

EXAMPLES = ["ask-user-question", "interaction-boundary", "operator-approval", "open-question"]


def _kind(item: dict[str, object]) -> str:
    return next(k for k in item if k != "name")


@pytest.mark.parametrize("agent", EXAMPLES)
def test_wrong_answers_cover_every_assertion_kind_used(agent: str) -> None:
    kinds_by_name: dict[str, dict[str, str]] = {}
    used: set[str] = set()
    for path in sorted(Path(REPO_ROOT, "eval-datasets", agent).glob("*/*.yaml")):
        if path.name == "tenant.yaml":
            continue
        for item in yaml.safe_load(path.read_text(encoding="utf-8")).get("expect", []):
            used.add(_kind(item))
            if "name" in item:
                kinds_by_name.setdefault(f"{path.parent.name}/{path.stem}", {})[item["name"]] = _kind(item)
    fixtures = yaml.safe_load((REPO_ROOT / f"tests/fixtures/{agent}-wrong-answers.yaml").read_text(
        encoding="utf-8"))
    proven = {kinds_by_name.get(scenario, {}).get(name) or name.split()[0]
              for scenario, case in fixtures.items() for name in case["rejected"]}
    assert used - proven == set(), f"{agent}: no wrong answer proves these kinds reject"
