"""The graded call shared by judges and rubric items (harness.graded), asked of both kinds.

Each behaviour is one test parametrised over the two kinds, so a kind that
drifts from the shared piece fails here by name. The end-to-end tests build a
project, record scripted answers through the scripted provider and replay them
offline through the CLI, as a team would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import YES, Project, graded
from harness.core.declared import Scenario
from harness.core.entities import AgentOutput, ChatCall, ChatResponse, JsonObject, ToolCall
from harness.core.errors import CacheMiss
from harness.graded.answer import NO_TEXT, read_answer
from harness.graded.call import NO_ANSWER, grade, grade_each
from harness.graded.grader import NO_MODEL_FIX
from harness.graded.honesty import INCONCLUSIVE
from harness.graded.prompt import build_request
from harness.judges import JUDGE
from harness.judges.parse import SCORE
from harness.refresh.deferral import CallDeferred
from harness.requests.key import compute_key
from harness.rubric import RUBRIC
from harness.rubric.parse import PASS_FAIL

JUDGE_MODEL = {"provider": "openai", "model": "gpt-judge-1"}

#: Per kind: how a project declares one item named ``tone``, the script key of its answer,
#: a verdict answer, how a record holds its outcome, and the reason of an unreadable answer.
KINDS: dict[str, dict[str, Any]] = {
    "judge": {
        "agent": {"judge": {**JUDGE_MODEL, "evaluators": []}},
        "scenario": {"judge": [{"name": "tone", "prompt": "judges/tone.md"}]},
        "script": "*#judge:tone",
        "verdict": {"score": 5, "reason": "Short and kind."},
        "outcome": lambda record: record["judges"][0]["interpretation"],
        "reason": lambda record: record["judges"][0]["reason"],
        "unreadable": "the judge output could not be parsed as a 1-5 score: ",
    },
    "rubric": {
        "agent": {"judge": {**JUDGE_MODEL, "evaluators": []}},
        "scenario": {"rubric": [{"name": "tone", "rule": "The answer is kind."}]},
        "script": "*#rubric:tone",
        "verdict": {"verdict": "pass", "reason": "Kind."},
        "outcome": lambda record: record["rubric"][0]["outcome"],
        "reason": lambda record: record["rubric"][0]["reason"],
        "unreadable": "the judge's answer is neither pass nor fail: ",
    },
}


def graded_project(project: Project, kind: str, answer: Any) -> dict[str, Any]:
    """One scenario graded by one item of ``kind`` whose scripted answer is ``answer``; recorded
    through the scripted provider, then replayed offline. Returns the offline run's record."""
    spec = KINDS[kind]
    project.agent(**spec["agent"])
    project.write("eval-datasets/helper/judges/tone.md", "Rate the tone of the reply.\n")
    project.scenario("helper/acme/greeting", {"answer": "yes"}, **spec["scenario"])
    project.script("helper", spec["script"], answer)
    project.record()
    digest = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 0, outcome.err  # graded calls never gate
    assert project.cache_digest() == digest
    record: dict[str, Any] = project.records()[-1]
    return record


@pytest.mark.parametrize("kind", KINDS)
def test_a_tied_scripted_answer_grades(project: Project, kind: str) -> None:
    record = graded_project(project, kind, {"json": {**KINDS[kind]["verdict"], "graded_sha256": YES}})
    assert KINDS[kind]["outcome"](record) in ("exceptional", "pass")


@pytest.mark.parametrize("kind", KINDS)
def test_a_malformed_answer_is_inconclusive_with_the_reason(project: Project, kind: str) -> None:
    record = graded_project(project, kind, {"content": "I would rather not say {oops"})
    assert KINDS[kind]["outcome"](record) == "inconclusive"
    assert KINDS[kind]["reason"](record) == KINDS[kind]["unreadable"] + "I would rather not say {oops"


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("tie", [{}, {"graded_sha256": graded({"answer": "no"})},
                                 {"graded_answer": "something else"}])
def test_a_scripted_answer_not_tied_to_the_graded_answer_is_never_a_verdict(
        project: Project, kind: str, tie: dict[str, str]) -> None:
    record = graded_project(project, kind, {"json": {**KINDS[kind]["verdict"], **tie}})
    assert KINDS[kind]["outcome"](record) == "inconclusive"
    reason = KINDS[kind]["reason"](record)
    assert reason.startswith(INCONCLUSIVE) and YES in reason  # names this response's sha256


@pytest.mark.parametrize("kind", KINDS)
def test_an_item_with_no_grader_model_names_file_field_and_fix(project: Project, kind: str) -> None:
    spec = KINDS[kind]
    project.agent(judge={"evaluators": []})
    project.write("eval-datasets/helper/judges/tone.md", "Rate the tone of the reply.\n")
    path = project.scenario("helper/acme/greeting", {"answer": "yes"}, **spec["scenario"])
    outcome = project.run("run")
    assert outcome.code == 2
    noun = {"judge": "judge", "rubric": "rubric item"}[kind]
    field = {"judge": "judge[0]", "rubric": "rubric[0]"}[kind]
    line = next(line for line in outcome.err.splitlines() if "has no judge model" in line)
    assert path.name in line
    assert f": {field}: {noun} 'tone' has no judge model to grade it. Fix: {NO_MODEL_FIX}" in line


# -- the pieces, without a project ------------------------------------------------------------


@pytest.mark.parametrize(("reader", "text", "expected"), [
    (SCORE, '```json\n{"score": 4, "reason": "Good."}\n```', (4, "Good.")),
    (PASS_FAIL, '```json\n{"verdict": "FAIL", "reason": "Rude."}\n```', ("fail", "Rude.")),
    (SCORE, 'Here it is: {"score": "2", "reason": "Off topic."} Thanks.', (2, "Off topic.")),
    (PASS_FAIL, 'Here it is: {"verdict": "passed", "reason": "Fine."} Thanks.', ("pass", "Fine.")),
    (SCORE, '{"score": 6, "reason": "x"}', (None, "the judge gave a score outside 1-5: 6")),
    (PASS_FAIL, '{"verdict": "maybe", "reason": "x"}',
     (None, "the judge gave a verdict that is neither pass nor fail: maybe")),
    (SCORE, "  \n", (None, NO_TEXT)),
    (PASS_FAIL, None, (None, NO_TEXT)),
])
def test_both_readers_share_fences_json_in_prose_and_the_reasons(
        reader: Any, text: str | None, expected: tuple[Any, str]) -> None:
    assert read_answer(reader, text) == expected


def _case() -> tuple[Scenario, JsonObject, AgentOutput]:
    scenario = Scenario(agent="ops", tenant="acme", name="draft", file=Path("draft.yaml"),
                        type="positive", description="Asks one neutral question.",
                        messages=({"role": "user", "content": "Plan my week."},), context=None,
                        params={}, iterations=1, expect=(), judge=())
    request: JsonObject = {"messages": [
        {"role": "system", "content": "You plan weeks."},
        {"role": "user", "content": "Plan my week."},
        {"role": "assistant", "content": "", "tool_calls": [{"name": "cal", "arguments": {"d": 1}}]},
        {"role": "tool", "content": "busy"}]}
    response = ChatResponse("Monday: rest.", tool_calls=(ToolCall("note", {"t": "é"}),))
    return scenario, request, AgentOutput(response, "Monday: rest.", None)


def test_a_judge_calls_key_is_pinned_so_a_prompt_change_is_deliberate() -> None:
    """Golden, computed before judges and rubric items shared one request builder: the
    placeholders, the conversation with its tool calls, and the rendered response enter the key."""
    scenario, request, output = _case()
    prompt = "Rate {{input}} for {{agent}}/{{tenant}} ({{type}}).\n"
    judge_request = build_request(prompt, {"temperature": 0, "max_tokens": 300}, scenario,
                                  request, output)
    assert judge_request["messages"][0]["content"] == "Rate Plan my week. for ops/acme (positive).\n"
    call = ChatCall("ops/acme/draft", 0, "openai", "gpt-judge-1", judge_request,
                    purpose="judge:tone")
    assert compute_key(call) == "a99eba27479be8d17578c14431d39599db7c259f64f95473beeb94528688db2b"


class Grader:
    """A grader client of the test's own (the :class:`GraderClient` protocol): answers by
    purpose, defers the purposes it is told to, and keeps what it was asked."""

    def __init__(self, answers: dict[str, str], deferred: frozenset[str] = frozenset()) -> None:
        self.answers, self.deferred = answers, deferred
        self.asked: list[tuple[str, str | None, str | None]] = []

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        self.asked.append((purpose, provider, model))
        if purpose in self.deferred:
            raise CallDeferred(purpose)
        if purpose not in self.answers:
            raise CacheMiss(f"no entry for {purpose}")
        return ChatResponse(self.answers[purpose])


ITEMS = {"judge": {"name": "tone", "prompt": "Rate.", "provider": "openai", "model": "m-1",
                   "options": {}},
         "rubric": {"name": "tone", "rule": "Kind.", "provider": "openai", "model": "m-1",
                    "options": {}}}


@pytest.mark.parametrize("kind", [JUDGE, RUBRIC], ids=["judge", "rubric"])
def test_a_grader_that_cannot_answer_is_not_evaluated_with_a_warning(kind: Any) -> None:
    output = _case()[2]
    client = Grader({})
    result = grade(kind, ITEMS[kind.name], {"messages": []}, client, output, None)
    assert client.asked == [(f"{kind.name}:tone", "openai", "m-1")]
    assert not kind.graded(result)
    assert (result.reason, result.warning) == (NO_ANSWER, f"{kind.name} tone: eval-cache-miss: "
                                                          f"no entry for {kind.name}:tone")


@pytest.mark.parametrize("kind", [JUDGE, RUBRIC], ids=["judge", "rubric"])
def test_a_deferred_call_lets_the_others_be_asked_then_is_raised(kind: Any) -> None:
    """--batch: every call of the iteration is queued in one round."""
    output = _case()[2]
    answer = json.dumps({"score": 4, "verdict": "pass", "reason": "ok"})
    client = Grader({f"{kind.name}:b": answer}, deferred=frozenset({f"{kind.name}:a"}))
    items = [{**ITEMS[kind.name], "name": name} for name in ("a", "b")]
    ties: dict[str, str | None] = {}
    with pytest.raises(CallDeferred):
        grade_each(lambda item=item: grade(kind, item, {"messages": []}, client, output, ties)
                   for item in items)
    assert [purpose for purpose, _, _ in client.asked] == [f"{kind.name}:a", f"{kind.name}:b"]
    assert set(ties) == {"b"}  # the answered one was checked for its tie
