"""Every hard verdict of one answer, and the status they give it.

One function for the agent's real answer, for a scenario's counterexamples and
for its generated mutants, so a wrong answer is judged by exactly the code
that judges a recorded answer: the scenario's ``expect`` items (its own and
the ones its agent and tenant declare once, see :mod:`harness.assertions.rules`),
then the implicit ``tool_schema`` check of every tool call the answer made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.assertions import CheckedItem, assertion_label, evaluate
from harness.assertions.jsonpath import Selections
from harness.assertions.rules import runtime_problem
from harness.assertions.toolschema import tool_schema_verdict
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, JsonObject, Status, Verdict

__all__ = ["answer_status", "answer_verdicts", "first_reject", "tools_of", "verdict_line"]


def answer_verdicts(agent: Agent, scenario: Scenario, output: AgentOutput) -> list[Verdict]:
    """The scenario's ``expect`` verdicts in order, then ``tool_schema`` when tools were called.

    An inherited item whose per-answer ``when`` does not fit this answer gives
    ``not_evaluated`` with the reason; every verdict carries its item's level, given as it
    is made (:func:`evaluate` with ``origins``), so no verdict is built twice.
    """
    selections = Selections(output.parsed)  # the answer's paths, selected once for all items
    expect = scenario.expect
    skipped = _skipped(agent, expect, output, selections)
    if skipped:
        runnable = [item for index, item in enumerate(expect) if index not in skipped]
    else:
        runnable = list(expect)
    verdicts = evaluate(runnable, output, output_kind=agent.output,
                        output_schema=agent.output_schema, selections=selections, origins=True)
    for index in sorted(skipped):  # ascending: each lands at its own index of the full list
        verdicts.insert(index, skipped[index])
    schema = tool_schema_verdict(tools_of(agent, output), agent.tool_schema, output)
    if schema is not None:
        verdicts.append(schema)
    return verdicts


def _skipped(agent: Agent, expect: Sequence[Any], output: AgentOutput,
             selections: Selections) -> dict[int, Verdict]:
    """index -> ``not_evaluated`` verdict of each inherited item whose ``when`` does not fit."""
    skipped: dict[int, Verdict] = {}
    for index, item in enumerate(expect):
        if type(item) is not CheckedItem or not item.when:
            continue
        problem = runtime_problem(item.when, output, agent.decision_path, selections)
        if problem is not None:
            label = item.kind_label or assertion_label(item)
            skipped[index] = Verdict(label, "not_evaluated", problem, item.origin)
    return skipped


def first_reject(agent: Agent, scenario: Scenario, output: AgentOutput,
                 ignore: str = "assertion crashed") -> Verdict | None:
    """The first verdict of :func:`answer_verdicts` that rejects (a reason starting with
    ``ignore`` does not count), evaluating no item after it: for judging many wrong answers,
    where only "rejected or not" matters. Same items, same order, same code."""
    selections = Selections(output.parsed)
    for item in scenario.expect:
        when = item.when if type(item) is CheckedItem else {}
        if when and runtime_problem(when, output, agent.decision_path, selections) is not None:
            continue
        (verdict,) = evaluate([item], output, output_kind=agent.output,
                              output_schema=agent.output_schema, selections=selections)
        if verdict.outcome == "reject" and not verdict.reason.startswith(ignore):
            return verdict
    schema = tool_schema_verdict(tools_of(agent, output), agent.tool_schema, output)
    if schema is not None and schema.outcome == "reject" and not schema.reason.startswith(ignore):
        return schema
    return None


def tools_of(agent: Agent, output: AgentOutput) -> Sequence[JsonObject]:
    """The tools an answer's calls are judged against: the ones an SDK agent declared on the
    wire in the iteration that answered (its agent.yaml declares none), else agent.yaml's.

    Every judge of an answer (the recorded one, a counterexample, a mutant) asks here: judged
    against agent.yaml's empty list, every tool call of an SDK agent is an "unknown tool", and a
    wrong answer would count as caught by a reason that is not its fault.
    """
    return output.wire_tools if output.wire_tools is not None else agent.tools


def verdict_line(verdict: Verdict) -> str:
    """``label: reason``, with the level for an item its agent or tenant declared once."""
    level = f" ({verdict.origin} rule)" if verdict.origin in ("agent", "tenant") else ""
    return f"{verdict.assertion}{level}: {verdict.reason}"


def answer_status(scenario: Scenario, verdicts: Sequence[Verdict]) -> tuple[Status, str]:
    """``rejected`` (with every reject), ``unchecked`` or ``passed``, and the message.

    ``unchecked`` looks at the scenario's own assertions only: the implicit
    ``tool_schema`` check can reject, but it does not make a scenario that
    asserts nothing count as checked.
    """
    rejected = [v for v in verdicts if v.outcome == "reject"]
    if rejected:
        return "rejected", "; ".join(verdict_line(v) for v in rejected)
    own = verdicts[:len(scenario.expect)]
    if not own:
        return "unchecked", ("the scenario has no hard assertion (expect is empty): "
                             "a scenario that checks nothing cannot pass")
    if all(v.outcome == "not_evaluated" for v in own):
        return "unchecked", ("no assertion could be evaluated (all not_evaluated): "
                             "the scenario checked nothing")
    return "passed", ""
