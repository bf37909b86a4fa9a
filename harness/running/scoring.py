"""After the hard assertions: judge scores, rubric outcomes, decisions and metric samples.

Nothing here changes an iteration's status: judges and rubric items are reported
only (a judge that cannot answer is ``not_evaluated`` with a warning), the expected and actual
decisions feed the per-test records, and metric samples are aggregated when the
run finishes (:mod:`harness.assertions.metrics`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from harness.assertions.metrics import MetricValue, actual_decision, aggregate, expected_decision, samples_of
from harness.clients.caching import BoundClient
from harness.core.declared import Agent
from harness.core.entities import AgentOutput, JsonObject, JudgeScore, RubricResult
from harness.core.provenance import sources_by_purpose
from harness.graded.honesty import honest
from harness.judges import JUDGE, evaluate_judges, not_evaluated
from harness.refresh.deferral import CallDeferred
from harness.results.record import IterationResult
from harness.results.totals import RunTotals
from harness.rubric import RUBRIC, grade_rubric


def score_iteration(agent: Agent, request: JsonObject, result: IterationResult,
                    output: AgentOutput | None, client: BoundClient) -> IterationResult:
    """The result with judges, decisions, metric samples, environment and transcript added."""
    scenario = result.scenario
    deferred: CallDeferred | None = None  # --batch: judges and rubric items go in one round
    judges: tuple[JudgeScore, ...] = ()
    judge_ties: dict[str, str | None] = {}
    rubric_ties: dict[str, str | None] = {}
    graded = bool(scenario.judge or scenario.rubric)  # most scenarios of a big dataset: neither
    if output is None:
        judges = not_evaluated(scenario, "the agent produced no output to judge")
    elif graded:
        try:
            judges = evaluate_judges(scenario, request, output, client, ties=judge_ties)
        except CallDeferred as exc:
            deferred = exc
    expected = expected_decision(scenario, agent.decision_path)
    actual = actual_decision(output, agent.decision_path) if agent.output == "json" else None
    rubric: tuple[RubricResult, ...] = ()
    if graded:
        try:
            rubric = grade_rubric(scenario, request, output, client, expected=expected,
                                  actual=actual, ties=rubric_ties)
        except CallDeferred as exc:
            deferred = exc
    if deferred is not None:
        raise deferred
    sources = sources_by_purpose(client.calls)
    if graded and any(sources.values()):  # provenance known: say where every judge answer came from
        judges = tuple(replace(j, source=sources.get(JUDGE.purpose(j.name), "")) for j in judges)
        rubric = tuple(replace(r, source=sources.get(RUBRIC.purpose(r.name), "")) for r in rubric)
        # scripted answers grade only the response they name (harness.graded.honesty)
        judges = honest(JUDGE, judges, judge_ties)
        rubric = honest(RUBRIC, rubric, rubric_ties)
    samples = samples_of(agent, scenario, output, result.verdicts, expected, actual)
    return IterationResult(  # every field spelled out: dataclasses.replace() costs more
        scenario, result.iteration, result.status, result.verdicts, result.message,
        calls=tuple(client.calls),
        response=result.response,
        request_digest=result.request_digest,
        judges=judges,
        rubric=rubric,
        answer_source=sources.get("", ""),
        expected_decision=expected,
        actual_decision=actual,
        metric_samples=tuple(samples.items()),
        environment={"provider": agent.provider, "model": agent.model},
        transcript=_transcript(request, output),
    )


def _transcript(request: JsonObject, output: AgentOutput | None) -> tuple[JsonObject, ...]:
    messages: list[Any] = list(request.get("messages") or [])
    if messages and messages[0].get("role") == "system":
        messages = messages[1:]  # the agent's system prompt: the same for every scenario
    turns = [dict(m) for m in messages]
    if output is not None:
        turns.extend(dict(m) for m in output.loop_messages)
        reply: JsonObject = {"role": "assistant", "content": output.response.content}
        if output.response.tool_calls:
            reply["tool_calls"] = [{"name": c.name, "arguments": c.arguments}
                                   for c in output.response.tool_calls]
        turns.append(reply)
    return tuple(turns)


def metric_values(agents: Iterable[Agent], totals: RunTotals) -> list[MetricValue]:
    """The declared metrics of the agents that ran, over every iteration of the run."""
    return aggregate(agents, totals.samples())
