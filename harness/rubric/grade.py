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
from typing import Any

from harness.entities import AgentOutput, JsonObject, RubricResult, Scenario
from harness.errors import HarnessError
from harness.judges import JudgeClient, build_judge_request
from harness.judges.honesty import tie_problem
from harness.refresh.deferral import CallDeferred
from harness.rubric.parse import parse_verdict

#: Prefix of the ``purpose`` of a rubric call (``rubric:<name>``), as recorded in entry.json.
PURPOSE_PREFIX = "rubric:"

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
    judge_request = build_judge_request({"prompt": RUBRIC_PROMPT, "options": item["options"]},
                                        scenario, request, output)
    case = judge_request["messages"][1]
    case["content"] = f"{case['content']}\n# Rule\n{item['rule']}\n"
    return judge_request


def grade_rubric(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput | None,
                 client: JudgeClient, *, expected: Any = None, actual: Any = None,
                 ties: dict[str, str | None] | None = None,
                 ) -> tuple[RubricResult, ...]:
    """One result per applicable item; a judge that cannot answer gives ``not_evaluated``.

    ``ties``, when given, receives per item whether its answer is tied to this response
    (see :mod:`harness.judges.honesty`)."""
    results = []
    deferred: CallDeferred | None = None
    for item in scenario.rubric:
        holds = applies(item, scenario, output, expected, actual)
        if holds is False:
            continue
        name, provider, model = str(item["name"]), str(item["provider"]), str(item["model"])
        rule = str(item["rule"])
        if output is None or holds is None:
            results.append(RubricResult(name, rule, "not_evaluated",
                                        "the agent produced no output to grade", provider, model))
            continue
        try:
            response = client.complete(build_rubric_request(item, scenario, request, output),
                                       provider=provider, model=model,
                                       purpose=f"{PURPOSE_PREFIX}{name}")
        except CallDeferred as exc:  # --batch: queue every item of the iteration in one round
            deferred = exc
            continue
        except HarnessError as exc:
            results.append(RubricResult(name, rule, "not_evaluated", "the judge gave no answer",
                                        provider, model, warning=f"rubric {name}: {exc}"))
            continue
        verdict, reason = parse_verdict(response.content)
        if ties is not None:
            ties[name] = tie_problem(response.content, output)
        results.append(RubricResult(name, rule, verdict or "inconclusive", reason, provider, model))
    if deferred is not None:
        raise deferred
    return tuple(results)

