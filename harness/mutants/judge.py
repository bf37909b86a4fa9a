"""Judge every mutant of a recorded answer with the scenario's hard assertions.

The verdicts come from :func:`harness.assertions.answer.first_reject`: the items
and code of ``answer_verdicts``, which judges recorded answers and
counterexamples, stopping at the first reject, so a mutant is killed exactly
when that wrong answer, recorded, would be rejected. A reject
whose reason is an assertion crash never counts as a kill: a bug in a check is
not strength.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.assertions.answer import first_reject
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, ChatResponse, JsonObject
from harness.mutants.operators import OPERATORS, Mutant, mutants_of

__all__ = ["MutantReport", "check_mutants", "mutant_strength"]

_CRASH = "assertion crashed"


@dataclass(frozen=True)
class MutantReport:
    """What the hard assertions said about the mutants of one scenario iteration."""

    total: int
    killed: int
    survivors: tuple[tuple[str, str], ...] = ()
    """(operator, detail) of each mutant no hard assertion rejected."""
    equivalent: tuple[tuple[str, str, str], ...] = ()
    """(operator, detail, reason) of survivors the scenario marks as still-right answers."""
    by_operator: dict[str, tuple[int, int]] = field(default_factory=dict)
    """operator -> (killed, total)."""

    def to_json(self) -> JsonObject:
        return {"total": self.total, "killed": self.killed,
                "survivors": [{"operator": o, "detail": d} for o, d in self.survivors],
                "equivalent": [{"operator": o, "detail": d, "reason": r}
                               for o, d, r in self.equivalent],
                "by_operator": {k: list(v) for k, v in self.by_operator.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MutantReport:
        return cls(int(data.get("total", 0)), int(data.get("killed", 0)),
                   tuple((s["operator"], s["detail"]) for s in data.get("survivors") or ()),
                   tuple((s["operator"], s["detail"], s.get("reason", ""))
                         for s in data.get("equivalent") or ()),
                   {k: (int(v[0]), int(v[1])) for k, v in (data.get("by_operator") or {}).items()})


def _output(mutant: Mutant, wire_tools: tuple[JsonObject, ...] | None) -> AgentOutput:
    """A mutant as an answer; ``wire_tools``: the tools the recorded iteration declared on the
    wire (an SDK agent's), against which its tool calls are judged, as the recorded answer's are."""
    response = ChatResponse(mutant.text, mutant.tool_calls,
                            "tool_calls" if mutant.tool_calls else "stop")
    return AgentOutput(response, mutant.text, mutant.parsed, wire_tools=wire_tools)


def _equivalent(scenario: Scenario, mutant: Mutant) -> str | None:
    """The reason the scenario gives for this survivor being a right answer, if any."""
    for item in scenario.equivalent_mutants:
        if fnmatch.fnmatchcase(f"{mutant.operator}: {mutant.detail}", str(item["match"])):
            return str(item["reason"])
    return None


def check_mutants(agent: Agent, scenario: Scenario, output: AgentOutput) -> MutantReport:
    """Generate the mutants of ``output`` and judge each one (no model call, nothing cached)."""
    killed = 0
    survivors: list[tuple[str, str]] = []
    equivalent: list[tuple[str, str, str]] = []
    tally = {name: [0, 0] for name in OPERATORS}
    found = mutants_of(agent, scenario, output)
    for mutant in found:
        answer = _output(mutant, output.wire_tools)
        rejected = first_reject(agent, scenario, answer, ignore=_CRASH) is not None
        tally[mutant.operator][1] += 1
        if rejected:
            killed += 1
            tally[mutant.operator][0] += 1
            continue
        reason = _equivalent(scenario, mutant)
        if reason is not None:
            equivalent.append((mutant.operator, mutant.detail, reason))
        else:
            survivors.append((mutant.operator, mutant.detail))
    return MutantReport(len(found), killed, tuple(survivors), tuple(equivalent),
                        {k: (v[0], v[1]) for k, v in tally.items() if v[1]})


def mutant_strength(records: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(killed, counted) over the distinct scenario iterations of ``records``; equivalent
    survivors are left out of ``counted`` (they are right answers)."""
    killed = counted = 0
    for record in records:
        found = record.get("mutants")
        if not found:
            continue
        killed += int(found.get("killed", 0))
        counted += int(found.get("total", 0)) - len(found.get("equivalent") or ())
    return killed, counted
