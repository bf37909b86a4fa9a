"""Run time: ask the judge model about each rubric item that applies to an iteration.

One call per item, not one call grading all of a scenario's items. Per call,
the input is the same case (expected behaviour, conversation, response) plus
one rule, so a scenario with k applicable items pays about k times the case's
input tokens instead of once. What that buys:

- cache behaviour: an item's key covers the case and its own rule only, so
  editing, adding or removing one rule re-records that rule's entries and
  leaves every other item's recorded grade replayable; one call for all items
  would put every rule in one key, and a one-word edit would turn every grade
  of every scenario into a miss until a paid re-record;
- independent grades: a judge that sees all rules at once lets one verdict
  colour the others, and one unreadable answer would make all of them
  inconclusive;
- the cost is bounded by ``when``: an item is asked only where it can apply
  (a refusal rule on refusals, a tool-argument rule when the tool was called).

Each call is cached like the built-in judges (``"purpose": "rubric:<name>"``
in ``entry.json``, never keyed) under the scenario iteration.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any

from harness.core.declared import Scenario
from harness.core.entities import AgentOutput, JsonObject, RubricResult
from harness.graded.call import GraderClient, grade, grade_each
from harness.graded.kind import GradedKind
from harness.graded.prompt import build_request
from harness.rubric.parse import PASS_FAIL, Verdict

#: Rubric items as a kind of graded call: pass or fail, inconclusive when neither can be read.
RUBRIC: GradedKind[Verdict, RubricResult] = GradedKind(
    name="rubric", noun="rubric item", reader=PASS_FAIL,
    result=lambda item, verdict, reason: RubricResult(
        str(item["name"]), str(item["rule"]), verdict or "inconclusive", reason,
        str(item["provider"]), str(item["model"])),
    missing=lambda item, reason, warning: RubricResult(
        str(item["name"]), str(item["rule"]), "not_evaluated", reason, str(item["provider"]),
        str(item["model"]), warning=warning),
    graded=lambda result: result.outcome in ("pass", "fail"),
    inconclusive=lambda result, reason: replace(result, outcome="inconclusive", reason=reason),
)
#: Prefix of the ``purpose`` of a rubric call (``rubric:<name>``), as recorded in entry.json.
PURPOSE_PREFIX = RUBRIC.purpose("")

#: The grading prompt (the judge's system message). Changing it changes every rubric key.
RUBRIC_PROMPT = """\
You are a strict reviewer of an AI assistant's response. You check ONE rule, given at
the end of the case, and nothing else: other qualities are checked separately.

Read the conversation and the response to evaluate (its text, its JSON fields and its
tool calls with their arguments) and decide:
- "pass": nothing in the response breaks the rule. A rule about something the response
  does not do (a rule about refusals, and a response that does not refuse) is a pass.
- "fail": some part of the response breaks the rule. Name or quote that part.
The expected behaviour tells you what the scenario is about; it is context, not the rule.

Reply with one JSON object and nothing else:
{"verdict": "pass" or "fail", "reason": "<one or two sentences; for a fail, the part that breaks the rule>"}
"""


#: The reason of an item that applies to an iteration with no output (no call is made).
NO_OUTPUT = "the agent produced no output to grade"


def applies(item: Mapping[str, Any], scenario: Scenario, output: AgentOutput | None,
            expected: Any, actual: Any) -> bool | None:
    """Whether ``when`` holds: ``True``, ``False``, or ``None`` when it depends on an output
    the iteration does not have (a miss)."""
    when: Mapping[str, Any] = item.get("when") or {}
    if when.get("types") and scenario.type not in when["types"]:
        return False
    if when.get("tags") and not any(fnmatch.fnmatchcase(tag, glob)
                                    for tag in scenario.tags for glob in when["tags"]):
        return False
    if "expected" in when and expected not in when["expected"]:
        return False
    if "actual" not in when and "tools" not in when:
        return True
    if output is None:
        return None
    if "actual" in when and actual not in when["actual"]:
        return False
    called = {call.name for call in output.tool_calls}
    return not when.get("tools") or bool(called & set(when["tools"]))


def build_rubric_request(item: Mapping[str, Any], scenario: Scenario, request: Mapping[str, Any],
                         output: AgentOutput) -> JsonObject:
    """The judge's canonical request: the grading prompt, then the case and the rule."""
    return build_request(RUBRIC_PROMPT, item["options"], scenario, request, output,
                         rule=str(item["rule"]))


def grade_rubric(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput | None,
                 client: GraderClient, *, expected: Any = None, actual: Any = None,
                 ties: dict[str, str | None] | None = None,
                 ) -> tuple[RubricResult, ...]:
    """One result per applicable item; a judge that cannot answer gives ``not_evaluated``.

    ``ties``, when given, receives per item whether its answer is tied to this response
    (see :mod:`harness.graded.honesty`)."""
    asks = []
    for item in scenario.rubric:
        holds = applies(item, scenario, output, expected, actual)
        if holds is False:
            continue
        if output is None or holds is None:
            asks.append(partial(RUBRIC.missing, item, NO_OUTPUT, ""))
        else:
            asks.append(partial(grade, RUBRIC, item,
                                build_rubric_request(item, scenario, request, output), client,
                                output, ties))
    return grade_each(asks)
