"""Scripted judges are honest: a scripted judge answer grades only the response it names.

A wrong answer re-recorded with ``--scripted`` used to collect every rubric pass
and judge score the script's patterns handed out. Now an answer that is not
tied to the graded response (``graded_sha256`` or ``graded_answer``) is
``inconclusive (scripted: no real judge)``, never a pass or a score, and a real
judge's answer is never checked.
"""

from __future__ import annotations

import json
from typing import Any

from conftest import YES, Project, graded
from harness.core.entities import AgentOutput, ChatResponse, ToolCall
from harness.graded.honesty import INCONCLUSIVE, fingerprint, tie_problem

JUDGE = {"provider": "openai", "model": "gpt-judge-1", "evaluators": ["relevance"]}
RUBRIC = [{"name": "polite", "rule": "The answer is polite."}]


def _project(project: Project, tie: Any) -> None:
    project.agent(judge=JUDGE, rubric=RUBRIC)
    project.scenario("helper/acme/first", {"answer": "yes"})
    project.script("helper", "*#judge:relevance",
                   {"json": {"score": 5, "reason": "On topic.", **tie}})
    project.script("helper", "*#rubric:polite",
                   {"json": {"verdict": "pass", "reason": "Courteous.", **tie}})


def _graded(project: Project) -> tuple[dict[str, Any], dict[str, Any]]:
    record = project.records()[-1]
    return record["judges"][0], record["rubric"][0]


def test_a_tied_scripted_answer_grades_its_response(project: Project) -> None:
    _project(project, {"graded_sha256": YES[:16]})
    project.record()
    assert project.run("run").code == 0
    judge, rubric = _graded(project)
    assert (judge["score"], judge["interpretation"], judge["source"]) == (5, "exceptional", "scripted")
    assert (rubric["outcome"], rubric["source"]) == ("pass", "scripted")


def test_a_wrong_answer_rerecorded_with_scripted_collects_no_pass(project: Project) -> None:
    _project(project, {"graded_sha256": YES})
    project.record()
    project.script("helper", "acme/first", {"answer": "no, and stop asking"})  # a wrong answer
    project.record()
    outcome = project.run("run")
    judge, rubric = _graded(project)
    assert judge["score"] is None and judge["interpretation"] == "inconclusive"
    assert rubric["outcome"] == "inconclusive"
    wrong = graded({"answer": "no, and stop asking"})
    assert judge["reason"] == (f"{INCONCLUSIVE}: the script's answer grades another response; "
                               f"this one is sha256 {wrong}")
    assert outcome.code == 1  # the hard assertion still decides: answer != yes


def test_an_untied_pattern_is_inconclusive_and_says_how_to_tie_it(project: Project) -> None:
    _project(project, {})
    project.record()
    assert project.run("run").code == 0  # never gating
    judge, rubric = _graded(project)
    assert judge["interpretation"] == rubric["outcome"] == "inconclusive"
    assert f"add graded_sha256: {YES} after reviewing this response" in rubric["reason"]
    markdown = project.run("report", "--format", "md").out
    assert "scripted" in markdown


def test_ties_by_exact_text_by_prose_line_and_short_prefixes() -> None:
    output = AgentOutput(ChatResponse("Filed.", (ToolCall("file_draft", {"body": "Hi"}),)),
                         "Filed.", None)
    seen = 'Filed.\n-> tool call file_draft({"body": "Hi"})'
    sha = fingerprint(output)
    assert tie_problem(json.dumps({"verdict": "pass", "graded_answer": seen}), output) is None
    assert tie_problem(f"PASS: fine\ngraded_sha256: {sha[:16]}", output) is None
    assert tie_problem(json.dumps({"verdict": "pass", "graded_sha256": [sha[:15]]}), output)
    assert tie_problem(json.dumps({"verdict": "pass", "graded_answer": "Filed."}), output)
    assert tie_problem('{"verdict": "pass"}', output)


def test_a_real_judges_answer_is_never_checked_for_a_tie(project: Project) -> None:
    from harness.core.entities import JudgeScore, RubricResult
    from harness.graded.honesty import honest
    from harness.judges import JUDGE
    from harness.rubric import RUBRIC

    problem = {"relevance": "untied", "polite": "untied"}
    real = JudgeScore("relevance", 4, "good", "ok", "openai", "m", source="provider")
    assert honest(JUDGE, [real], problem) == (real,)
    rubric = RubricResult("polite", "r", "pass", "ok", "openai", "m", source="provider")
    assert honest(RUBRIC, [rubric], problem) == (rubric,)


def test_the_remembered_fingerprint_is_the_asked_outputs_own() -> None:
    """fingerprint() keeps the last output's: two outputs asked in turn, equal or not, each get
    the sha256 of their own rendering, and a thread's answer is never another output's."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    def output(text: str) -> AgentOutput:
        return AgentOutput(response=ChatResponse(content=text), text=text, parsed=None)

    def own(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    first, second, twin = output("yes"), output("no"), output("yes")
    for item, text in [(first, "yes"), (first, "yes"), (second, "no"), (first, "yes"), (twin, "yes")]:
        assert fingerprint(item) == own(text)
    outputs = [output(f"answer {n}") for n in range(64)]
    with ThreadPoolExecutor(8) as pool:
        found = list(pool.map(fingerprint, outputs * 20))
    assert found == [own(f"answer {n}") for n in range(64)] * 20
