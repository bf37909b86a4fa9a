"""Counterexamples: known-wrong answers a scenario's hard assertions must reject.

A scenario that no wrong answer can fail is "an eval that is trivially
green", the escape the evals standard names: it shows up in the pass count as
if it had verified something. So a scenario lists answers a faulty model could
give (``counterexamples:``, each with its ``why``), and every run evaluates the
scenario's hard assertions on each of them, with no model call and nothing
keyed or cached. A counterexample that passes every hard assertion, or that
is not rejected by an assertion its ``rejected_by`` names, makes the scenario
fail as ``toothless``, naming it.

A counterexample is the agent's final answer, in the scripted provider's
answer format (``content`` or ``json``, optional ``tool_calls``); a list of
answers stands for the steps of a tool loop, whose tool calls the tool
assertions see together, exactly as for a recorded loop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.assertions import assertion_label
from harness.assertions.answer import answer_verdicts
from harness.assertions.reasons import outcomes_only
from harness.assertions.toolschema import TOOL_SCHEMA
from harness.clients.scripted import response_of
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, JsonObject
from harness.core.errors import Problem
from harness.execute.execution import parse_output

__all__ = ["CounterexampleResult", "check_counterexamples", "counterexample_problems",
           "label_of", "output_of",
           "strength", "toothless_message"]


@dataclass(frozen=True, slots=True)
class CounterexampleResult:
    """What the hard assertions said about one counterexample."""

    label: str
    """Its ``name``, else ``counterexample <n>`` (1-based, in file order)."""
    why: str
    rejected: tuple[str, ...]
    """Assertions that rejected it."""
    let_through: tuple[str, ...] = ()
    """Assertions its ``rejected_by`` names that did not reject it."""

    @property
    def caught(self) -> bool:
        """Rejected, and by every assertion ``rejected_by`` names."""
        return bool(self.rejected) and not self.let_through

    def to_json(self) -> JsonObject:
        return {"name": self.label, "why": self.why, "caught": self.caught,
                "rejected": list(self.rejected), "let_through": list(self.let_through)}


def counterexample_problems(file: Path, data: Mapping[str, Any],
                            inherited: Iterable[str] = ()) -> list[Problem]:
    """Load-time checks of a schema-valid scenario's counterexamples that a schema cannot
    make: unique names, and ``rejected_by`` naming assertions the scenario has (its own, and
    the ``inherited`` labels of the rules its agent and tenant declare once)."""
    items = data.get("counterexamples") or []
    if not items:
        return []
    labels = ({assertion_label(item) for item in data.get("expect", [])} | {TOOL_SCHEMA}
              | set(inherited))
    problems = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        label = label_of(item, index)
        if label in seen:
            problems.append(Problem(file, f"counterexamples[{index}].name",
                                    f"'{label}' names two counterexamples", "give each its own name"))
        seen.add(label)
        for name in item.get("rejected_by") or ():
            if name not in labels:
                problems.append(Problem(
                    file, f"counterexamples[{index}].rejected_by",
                    f"'{name}' is not an assertion of this scenario",
                    f"use an expect item's name (or label) or {TOOL_SCHEMA}; known: "
                    + ", ".join(sorted(labels))))
    return problems


def label_of(item: Mapping[str, Any], index: int) -> str:
    """How reports name a counterexample (``index`` is 0-based)."""
    name = item.get("name")
    return name if isinstance(name, str) and name else f"counterexample {index + 1}"


def output_of(agent: Agent, item: Mapping[str, Any], where: str,
              wire_tools: tuple[JsonObject, ...] | None = None) -> AgentOutput:
    """The agent output a counterexample stands for (its last answer, all steps' tool calls).

    ``wire_tools`` are the tools an SDK agent declared on the wire in the iteration being
    judged: its agent.yaml declares none, so without them ``tool_schema`` would reject every
    counterexample tool call as an unknown tool and prove nothing.
    """
    answers = item["answer"] if isinstance(item["answer"], list) else [item["answer"]]
    steps = [response_of(answer, f"{where}[{n}]", agent.model) for n, answer in enumerate(answers)]
    output = parse_output(agent, steps[-1])
    return AgentOutput(output.response, output.text, output.parsed, output.parse_error,
                       steps=tuple(steps) if len(steps) > 1 else (), wire_tools=wire_tools)


def check_counterexamples(agent: Agent, scenario: Scenario,
                          wire_tools: tuple[JsonObject, ...] | None = None
                          ) -> tuple[CounterexampleResult, ...]:
    """Evaluate the scenario's hard assertions on each of its counterexamples (no model call);
    ``wire_tools``: an SDK agent's tools, as its iteration declared them on the wire."""
    results = []
    for index, item in enumerate(scenario.counterexamples):
        label = label_of(item, index)
        output = output_of(agent, item, f"{scenario.id} counterexample {label!r}", wire_tools)
        with outcomes_only():  # only which assertions reject is kept: no reason is worded
            verdicts = answer_verdicts(agent, scenario, output)
        # a crash is no verdict on the answer: it does not catch the known-wrong answer
        rejected = tuple(v.assertion for v in verdicts if v.outcome == "reject" and not v.crashed)
        let_through = tuple(name for name in item.get("rejected_by") or () if name not in rejected)
        results.append(CounterexampleResult(label, str(item["why"]), rejected, let_through))
    return tuple(results)


def toothless_message(results: Sequence[CounterexampleResult]) -> str:
    """Why a scenario is toothless, or empty when every counterexample is caught."""
    parts = []
    for result in results:
        if not result.rejected:
            parts.append(f"counterexample {result.label!r} ({result.why}) passes every hard "
                         "assertion")
        elif result.let_through:
            parts.append(f"counterexample {result.label!r} ({result.why}) is not rejected by "
                         f"{', '.join(repr(n) for n in result.let_through)}")
    if not parts:
        return ""
    return ("; ".join(parts) + ": a scenario that cannot fail on a known-wrong answer checks "
            "nothing; tighten its expect items")


def strength(records: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(caught, total) counterexamples over the distinct scenarios of ``records``.

    Every iteration of a scenario carries the same counterexample results, so
    each scenario counts once.
    """
    seen: set[str] = set()
    caught = total = 0
    for record in records:
        found = record.get("counterexamples")
        scenario = str(record.get("scenario"))
        if not found or scenario in seen:
            continue
        seen.add(scenario)
        total += len(found)
        caught += sum(1 for c in found if c.get("caught"))
    return caught, total
