"""Judges: LLM-graded scores (1-5, with a reason) that are reported and trended, never gating.

A judge call goes through the iteration's cache-backed client, so its answer is
recorded with ``--refresh-cache`` and replayed offline like the agent's own
call: its entry lives under ``<scenario>/<iteration>/<key16>/`` and is keyed by
the judge's provider and model, with ``"purpose": "judge:<name>"`` in
``entry.json``. What differs from the agent's call is the failure policy: a
judge that cannot answer (a miss, a provider error) gives a ``not_evaluated``
score with a warning and leaves the iteration's status alone.

Evaluators come from the registry (the built-in ``relevance``, ``completeness``
and ``coherence``, plus any :func:`register_judge` adds) or from a project's own
prompt file named in the scenario (``{name, prompt: judges/tone.md}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness.entities import AgentOutput, ChatResponse, JsonObject, JudgeScore, Scenario
from harness.errors import HarnessError, Problem
from harness.judges.builtin import BUILTIN
from harness.judges.honesty import rendered, tie_problem
from harness.judges.parse import NOT_EVALUATED, interpret, parse_score
from harness.refresh.deferral import CallDeferred
from harness.validation import read_text

__all__ = ["DEFAULT_OPTIONS", "PLACEHOLDERS", "Evaluator", "JudgeClient", "build_judge_request",
           "evaluate_judges", "not_evaluated", "register_judge", "registered", "resolve_judges"]

#: Options of a judge call unless agent.yaml ``judge.options`` (or the item) says otherwise.
DEFAULT_OPTIONS: JsonObject = {"temperature": 0, "max_tokens": 300}
#: Placeholders a judge prompt may use; anything else in ``{{...}}`` is a dataset error.
PLACEHOLDERS = frozenset({"description", "conversation", "input", "output", "agent", "tenant",
                          "scenario", "type"})
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass(frozen=True)
class Evaluator:
    """A named judge prompt."""

    name: str
    prompt: str
    description: str = ""


_REGISTRY: dict[str, Evaluator] = {
    name: Evaluator(name, prompt, description) for name, (prompt, description) in BUILTIN.items()
}


def register_judge(name: str, prompt: str, description: str = "") -> None:
    """Add (or replace) an evaluator scenarios can name, e.g. from a project's conftest."""
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise ValueError(f"judge name {name!r} must match [a-z][a-z0-9_-]*")
    _REGISTRY[name] = Evaluator(name, prompt, description)


def registered() -> dict[str, Evaluator]:
    """The evaluators scenarios may name, by name."""
    return dict(_REGISTRY)


class JudgeClient(Protocol):
    """What a judge needs from the iteration's client (``BoundClient`` satisfies it)."""

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        """Answer a request as ``provider``/``model``, cached under the scenario iteration."""
        ...


# -- load time: resolve a scenario's judge items ----------------------------------------------


def resolve_judges(
    items: list[Any] | None,
    agent_judge: Mapping[str, Any],
    agent_dir: Path,
    file: Path,
    inside: Callable[[Path, str, Path], Path | None],
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
        prompt, source = _prompt_of(item, agent_dir, file, where, inside, problems)
        if prompt is None:
            continue
        provider = item.get("provider") or agent_judge.get("provider")
        model = item.get("model") or agent_judge.get("model")
        if not provider or not model:
            problems.append(Problem(
                file, where, f"judge '{name}' has no judge model",
                "add judge: {provider: ..., model: ...} to agent.yaml, or provider and model to "
                "this item"))
            continue
        options = {**DEFAULT_OPTIONS, **dict(agent_judge.get("options") or {}),
                   **dict(item.get("options") or {})}
        resolved.append({"name": name, "prompt": prompt, "provider": provider, "model": model,
                         "options": options, "source": source})
    return tuple(resolved), problems


def _prompt_of(
    item: Mapping[str, Any], agent_dir: Path, file: Path, where: str,
    inside: Callable[[Path, str, Path], Path | None], problems: list[Problem],
) -> tuple[str | None, str]:
    name = str(item.get("name", ""))
    if "prompt" not in item:
        evaluator = _REGISTRY.get(name)
        if evaluator is None:
            problems.append(Problem(
                file, where, f"unknown judge '{name}'",
                f"use one of {', '.join(sorted(_REGISTRY))}, or give a prompt file: "
                f"{{name: {name}, prompt: judges/{name}.md}}"))
            return None, ""
        return evaluator.prompt, "builtin" if name in BUILTIN else "registered"
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
    unknown = sorted({m.group(1) for m in _PLACEHOLDER.finditer(text)} - PLACEHOLDERS)
    if unknown:
        problems.append(Problem(path, "", f"unknown placeholder(s) {', '.join(unknown)}",
                                f"a judge prompt may use {', '.join(sorted(PLACEHOLDERS))}"))
        return None, ""
    return text, str(item["prompt"])


# -- run time: ask each judge -----------------------------------------------------------------


def build_judge_request(item: Mapping[str, Any], scenario: Scenario, request: Mapping[str, Any],
                        output: AgentOutput) -> JsonObject:
    """The judge's canonical request: its prompt as system message, the case as user message."""
    values = _values(scenario, request, output)
    prompt = _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), str(item["prompt"]))
    case = (f"# Expected behaviour\n{values['description']}\n\n"
            f"# Conversation\n{values['conversation']}\n\n"
            f"# Response to evaluate\n{values['output']}\n")
    return {"messages": [{"role": "system", "content": prompt}, {"role": "user", "content": case}],
            "options": dict(item.get("options") or DEFAULT_OPTIONS)}


def evaluate_judges(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput,
                    client: JudgeClient, *, ties: dict[str, str | None] | None = None,
                    ) -> tuple[JudgeScore, ...]:
    """One score per judge of the scenario; a failing judge is not_evaluated, never raised.

    ``ties``, when given, receives per judge whether its answer is tied to this response
    (:func:`harness.judges.honesty.tie_problem`), for the caller that knows which answers
    were scripted."""
    scores = []
    deferred: BaseException | None = None
    for item in scenario.judge:
        name, provider, model = str(item["name"]), str(item["provider"]), str(item["model"])
        judge_request = build_judge_request(item, scenario, request, output)
        try:
            response = client.complete(judge_request, provider=provider, model=model,
                                       purpose=f"judge:{name}")
        except CallDeferred as exc:  # --batch: queue every judge of the iteration in one round
            deferred = exc
            continue
        except HarnessError as exc:
            scores.append(JudgeScore(name, None, NOT_EVALUATED, "the judge gave no answer",
                                     provider, model, warning=f"judge {name}: {exc}"))
            continue
        score, reason = parse_score(response.content)
        if ties is not None:
            ties[name] = tie_problem(response.content, output)
        scores.append(JudgeScore(name, score, interpret(score), reason, provider, model))
    if deferred is not None:
        raise deferred
    return tuple(scores)


def not_evaluated(scenario: Scenario, reason: str) -> tuple[JudgeScore, ...]:
    """Scores of an iteration whose agent produced no output (its own failure already counts)."""
    return tuple(JudgeScore(str(item["name"]), None, NOT_EVALUATED, reason, str(item["provider"]),
                            str(item["model"])) for item in scenario.judge)


def _values(scenario: Scenario, request: Mapping[str, Any], output: AgentOutput) -> dict[str, str]:
    messages = list(request.get("messages") or [])
    turns = messages[1:] if messages and messages[0].get("role") == "system" else messages
    users = [m for m in turns if m.get("role") == "user"]
    return {
        "description": scenario.description,
        "conversation": "\n\n".join(_render_turn(m) for m in turns) or "(none)",
        "input": str(users[-1].get("content") or "") if users else "",
        "output": _render_output(output),
        "agent": scenario.agent,
        "tenant": scenario.tenant,
        "scenario": scenario.id,
        "type": scenario.type,
    }


def _render_turn(message: Mapping[str, Any]) -> str:
    text = f"[{message.get('role')}] {message.get('content') or ''}".rstrip()
    for call in message.get("tool_calls") or []:
        text += f"\n  -> tool call {call.get('name')}({json.dumps(call.get('arguments'))})"
    return text


def _render_output(output: AgentOutput) -> str:
    return rendered(output)  # one rendering: the one a scripted answer's graded_sha256 names
