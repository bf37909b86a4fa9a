"""Judges: LLM-graded scores (1-5, with a reason) that are reported and trended, never gating.

A judge is one kind of graded call (:mod:`harness.graded`, which holds the
prompt layout, the grader model, the answer reading, the honesty check and the
cached call): what is its own is the verdict parser (a score,
:mod:`harness.judges.parse`) and the aggregate (a mean, in the reports). Its
entry lives under ``<scenario>/<iteration>/<key16>/`` with
``"purpose": "judge:<name>"`` in ``entry.json``; a judge that cannot answer
gives a ``not_evaluated`` score with a warning and leaves the status alone.

Evaluators come from a :class:`~harness.judges.registry.JudgeRegistry` the
loader is given (the built-in ``relevance``, ``completeness`` and ``coherence``,
plus those of ``offline_evals.judges`` entry points), or from a project's own
prompt file named in the scenario (``{name, prompt: judges/tone.md}``).

Stage ``score``: may import every stage up to ``assert``, and :mod:`harness.graded`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from harness.core.declared import Scenario
from harness.core.entities import AgentOutput, JsonObject, JudgeScore
from harness.core.errors import Problem
from harness.documents.validation import read_text
from harness.graded.call import GraderClient, grade, grade_each
from harness.graded.call import not_evaluated as _not_evaluated
from harness.graded.grader import resolve_grader
from harness.graded.kind import GradedKind
from harness.graded.prompt import DEFAULT_OPTIONS, PLACEHOLDER, PLACEHOLDERS, build_request
from harness.judges.parse import INCONCLUSIVE, NOT_EVALUATED, SCORE, interpret
from harness.judges.registry import Evaluator, JudgeRegistry

__all__ = ["DEFAULT_OPTIONS", "JUDGE", "PLACEHOLDERS", "Evaluator", "JudgeRegistry",
           "build_judge_request", "evaluate_judges", "not_evaluated", "resolve_judges"]

#: Judges as a kind of graded call: a 1-5 score, inconclusive when none can be read.
JUDGE: GradedKind[int, JudgeScore] = GradedKind(
    name="judge", noun="judge", reader=SCORE,
    result=lambda item, score, reason: JudgeScore(
        str(item["name"]), score, interpret(score), reason, str(item["provider"]),
        str(item["model"])),
    missing=lambda item, reason, warning: JudgeScore(
        str(item["name"]), None, NOT_EVALUATED, reason, str(item["provider"]), str(item["model"]),
        warning=warning),
    graded=lambda score: score.score is not None,
    inconclusive=lambda score, reason: replace(score, score=None, interpretation=INCONCLUSIVE,
                                               reason=reason),
)


# -- load time: resolve a scenario's judge items ----------------------------------------------


def resolve_judges(
    items: list[Any] | None,
    agent_judge: Mapping[str, Any],
    agent_dir: Path,
    file: Path,
    inside: Callable[[Path, str, Path], Path | None],
    registry: JudgeRegistry,
) -> tuple[tuple[JsonObject, ...], list[Problem]]:
    """Normalise a scenario's ``judge`` list (``None``: the agent's default ``evaluators``).

    Each resolved item is ``{name, prompt, provider, model, options, source}``
    with the prompt text loaded, so a run needs nothing else; every problem
    (unknown name, missing prompt file, no judge model) is returned at once.
    """
    field = "judge"
    if items is None:
        items, field = list(agent_judge.get("evaluators") or []), "judge.evaluators (agent.yaml)"
    resolved: list[JsonObject] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, raw in enumerate(items):
        where = f"{field}[{index}]"
        item: Mapping[str, Any] = {"name": raw} if isinstance(raw, str) else raw
        name = str(item.get("name", ""))
        if name in seen:
            problems.append(Problem(file, where, f"judge '{name}' is listed twice", "keep one"))
            continue
        seen.add(name)
        prompt, source = _prompt_of(item, agent_dir, file, where, inside, problems, registry)
        if prompt is None:
            continue
        grader = resolve_grader(JUDGE.noun, name, item, agent_judge, file, where)
        if isinstance(grader, Problem):
            problems.append(grader)
            continue
        resolved.append({"name": name, "prompt": prompt, **grader, "source": source})
    return tuple(resolved), problems


def _prompt_of(
    item: Mapping[str, Any], agent_dir: Path, file: Path, where: str,
    inside: Callable[[Path, str, Path], Path | None], problems: list[Problem],
    registry: JudgeRegistry,
) -> tuple[str | None, str]:
    name = str(item.get("name", ""))
    if "prompt" not in item:
        evaluator = registry.get(name)
        if evaluator is None:
            problems.append(Problem(
                file, where, f"unknown judge '{name}'",
                f"use one of {', '.join(registry.names())}, or give a prompt file: "
                f"{{name: {name}, prompt: judges/{name}.md}}"))
            return None, ""
        return evaluator.prompt, registry.source(name)
    path = inside(file, f"{where}.prompt", agent_dir / str(item["prompt"]))
    if path is None:
        return None, ""
    if not path.is_file():
        problems.append(Problem(file, f"{where}.prompt", f"file {item['prompt']} not found",
                                "give a path relative to the agent folder"))
        return None, ""
    try:
        text = read_text(path)
    except UnicodeDecodeError:
        problems.append(Problem(path, "", "is not UTF-8", "save it as UTF-8"))
        return None, ""
    unknown = sorted({m.group(1) for m in PLACEHOLDER.finditer(text)} - PLACEHOLDERS)
    if unknown:
        problems.append(Problem(path, "", f"unknown placeholder(s) {', '.join(unknown)}",
                                f"a judge prompt may use {', '.join(sorted(PLACEHOLDERS))}"))
        return None, ""
    return text, str(item["prompt"])


# -- run time: ask each judge -----------------------------------------------------------------


def build_judge_request(item: Mapping[str, Any], scenario: Scenario, request: Mapping[str, Any],
                        output: AgentOutput) -> JsonObject:
    """The judge's canonical request: its prompt as system message, the case as user message."""
    return build_request(str(item["prompt"]), item.get("options"), scenario, request, output)


def evaluate_judges(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput,
                    client: GraderClient, *, ties: dict[str, str | None] | None = None,
                    ) -> tuple[JudgeScore, ...]:
    """One score per judge of the scenario; a failing judge is not_evaluated, never raised.

    ``ties``, when given, receives per judge whether its answer is tied to this response
    (:func:`harness.graded.honesty.tie_problem`), for the caller that knows which answers
    were scripted."""
    return grade_each(
        partial(grade, JUDGE, item, build_judge_request(item, scenario, request, output), client,
                output, ties)
        for item in scenario.judge)


def not_evaluated(scenario: Scenario, reason: str) -> tuple[JudgeScore, ...]:
    """Scores of an iteration whose agent produced no output (its own failure already counts)."""
    return _not_evaluated(JUDGE, scenario.judge, reason)
