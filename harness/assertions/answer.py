"""Every hard verdict of one answer, and the status they give it.

One function for the agent's real answer and for a scenario's counterexamples,
so a counterexample is judged by exactly the code that judges a recorded
answer: the scenario's ``expect`` items, then the implicit ``tool_schema``
check of every tool call the answer made.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.assertions import evaluate
from harness.assertions.toolschema import tool_schema_verdict
from harness.entities import Agent, AgentOutput, Scenario, Status, Verdict

__all__ = ["answer_status", "answer_verdicts"]


def answer_verdicts(agent: Agent, scenario: Scenario, output: AgentOutput) -> list[Verdict]:
    """The scenario's ``expect`` verdicts in order, then ``tool_schema`` when tools were called."""
    verdicts = evaluate(scenario.expect, output, output_kind=agent.output,
                        output_schema=agent.output_schema)
    tools = output.wire_tools if output.wire_tools is not None else agent.tools  # an SDK agent's own
    schema = tool_schema_verdict(tools, agent.tool_schema, output)
    if schema is not None:
        verdicts.append(schema)
    return verdicts


def answer_status(scenario: Scenario, verdicts: Sequence[Verdict]) -> tuple[Status, str]:
    """``rejected`` (with every reject), ``unchecked`` or ``passed``, and the message.

    ``unchecked`` looks at the scenario's own assertions only: the implicit
    ``tool_schema`` check can reject, but it does not make a scenario that
    asserts nothing count as checked.
    """
    rejected = [v for v in verdicts if v.outcome == "reject"]
    if rejected:
        return "rejected", "; ".join(f"{v.assertion}: {v.reason}" for v in rejected)
    own = verdicts[:len(scenario.expect)]
    if not own:
        return "unchecked", ("the scenario has no hard assertion (expect is empty): "
                             "a scenario that checks nothing cannot pass")
    if all(v.outcome == "not_evaluated" for v in own):
        return "unchecked", ("no assertion could be evaluated (all not_evaluated): "
                             "the scenario checked nothing")
    return "passed", ""
