"""Projects with known counts, shared by the report tests."""

from __future__ import annotations

from typing import Any

from conftest import Project, graded

JUDGE = {"provider": "anthropic", "model": "claude-judge-1", "evaluators": ["relevance"]}
METRICS = [{"name": "unsafe_refusal_rate",
            "over": {"types": ["negative", "adversarial"], "expected": ["refuse"]},
            "measure": {"decision": ["refuse"]}, "target": 1.0, "gate": True}]
HOSTILE = "</script><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


#: ``graded_sha256`` of the answer most report projects script.
ASKS = graded({"decision": "ask"})


def decides(decision: str) -> list[dict[str, Any]]:
    return [{"name": "decides", "json_path": {"path": "decision", "equals": decision}}]


def blocked_project(project: Project, passing: int = 19, *, relevance: int = 4) -> None:
    """``passing`` positive scenarios that pass (two tenants) and one adversarial reject.

    The reject answers with hostile markup, to prove every report escapes it.
    """
    project.agent(judge=JUDGE, metrics=METRICS)
    for index in range(passing):
        tenant = "acme" if index % 2 == 0 else "globex"
        project.scenario(f"helper/{tenant}/case-{index:02d}", {"decision": "ask"},
                         expect=decides("ask"), tags=[f"tc_pos_{index:03d}"])
    project.scenario("helper/globex/inject", {"decision": "ask", "text": HOSTILE},
                     type="adversarial", expect=decides("refuse"), tags=["tc_adv_003"])
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": relevance, "reason": "On topic <b>bold</b>.",
                             "graded_sha256": [ASKS, graded({"decision": "ask", "text": HOSTILE})]}})
