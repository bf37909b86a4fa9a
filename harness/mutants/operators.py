"""Deterministic operators that derive wrong answers from a recorded answer (no model call).

Each operator breaks one thing a scenario's contract or rules forbid, the way a
faulty model would, and says what it did (``detail``), so a survivor reads as
"``flip_enum``: decision: ask -> refuse" in a report. The limits an operator
aims past are read from the scenario itself: its ``expect`` items (their own
and the rules its agent and tenant declare), the agent's output schema and its
tool parameter schemas (:mod:`harness.mutants.targets` reads them, and finds the places
of an answer to break). Order and content are a pure function of the inputs.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.assertions.answer import tools_of
from harness.assertions.jsonpath import select
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, JsonObject, ToolCall
from harness.mutants import targets

__all__ = ["OPERATORS", "QUESTION_FORMS", "Mutant", "mutants_of"]

#: Question sentences in each form the ``questions`` measure finds (and one a list misses).
QUESTION_FORMS = (
    "Which one works best for you?",
    "Please also confirm the date that suits you.",
    "Your call: the first one or the second one.",
    "Let me know which one you prefer.",
    "Qual delas você prefere?",
    "Por favor, confirme a data que funciona.",
    "Você decide: a primeira ou a segunda.",
)
_FILLER = ("This part adds more detail about the same point so that the text keeps going on "
           "well past the length it was meant to fit. ")
_JOINERS = ("-", "—", "/")


@dataclass(frozen=True)
class Mutant:
    """One wrong answer: what made it, and the answer itself."""

    operator: str
    detail: str
    text: str
    parsed: Any
    tool_calls: tuple[ToolCall, ...]


# --- the operators -----------------------------------------------------------------------

Made = tuple[str, str, Any, str, tuple[ToolCall, ...]]
"""(operator, detail, parsed, text, tool calls) of one mutant before it is finalised."""


def _flip_enum(agent: Agent, doc: Any, limits: targets.Limits) -> Iterator[tuple[str, Any]]:
    for path, values in targets.enum_paths(agent.output_schema or {}):
        current = targets.get_at(doc, path)
        if current is None:
            continue
        for value in values:
            if value != current:
                changed = copy.deepcopy(doc)
                if targets.set_at(changed, path, value):
                    yield f"{targets.wild(path)}: {current!r} -> {value!r}", changed


def _grow_shrink(doc: Any, limits: targets.Limits) -> Iterator[tuple[str, str, Any]]:
    for path, found in list(targets.lists(doc)):
        if not found:
            continue
        low, high = limits.items.get(targets.wild(path), (None, None))
        grow_to = (high if isinstance(high, int) else len(found)) + 1
        changed = copy.deepcopy(doc)
        target = select(changed, path)[0] if path else changed
        while len(target) < grow_to:
            target.append(copy.deepcopy(target[-1]))
        yield "grow_list", f"{targets.wild(path)}: {len(found)} -> {grow_to} items", changed
        for size in sorted({max((low if isinstance(low, int) else 1) - 1, 0), 0}):
            if size < len(found):
                changed = copy.deepcopy(doc)
                target = select(changed, path)[0] if path else changed
                del target[size:]
                yield "shrink_list", f"{targets.wild(path)}: {len(found)} -> {size} items", changed


def _drop_empty(doc: Any) -> Iterator[tuple[str, str, Any]]:
    if not isinstance(doc, dict):
        return
    for key in doc:
        changed = copy.deepcopy(doc)
        del changed[key]
        yield "drop_field", key, changed
    for path, value in list(targets.strings(doc)):
        if value:
            changed = copy.deepcopy(doc)
            targets.set_at(changed, path, "")
            yield "empty_field", targets.wild(path), changed


def _lengthen(doc: Any, limits: targets.Limits) -> Iterator[tuple[str, str, Any]]:
    for path, value in list(targets.strings(doc)):
        cap = limits.caps.get(targets.wild(path)) or limits.caps.get(path)
        if cap is not None and len(value) <= cap:
            longer = value + " " + _FILLER * (cap // len(_FILLER) + 1)
            changed = copy.deepcopy(doc)
            targets.set_at(changed, path, longer)
            yield "lengthen", f"{targets.wild(path)}: {len(value)} -> {len(longer)} characters", changed
        words = limits.words.get(targets.wild(path))
        if words is not None:
            for joiner in _JOINERS:
                label = joiner.join(["extra"] * (words + 1))
                changed = copy.deepcopy(doc)
                targets.set_at(changed, path, label)
                yield "lengthen", f"{targets.wild(path)}: {words + 1} words joined by {joiner!r}", changed


def _inject(doc: Any, text: str, limits: targets.Limits) -> Iterator[tuple[str, str, Any, str]]:
    """Forbidden terms in their variant spellings, where the item looks and elsewhere."""
    strings = [(p, v) for p, v in targets.strings(doc)]
    for where, terms in limits.terms:
        if where.startswith("tool:"):
            continue
        for term in terms:
            for variant in targets.variants(term):
                if where == "text":
                    yield "inject_term", f"{variant!r} into the text", doc, f"{text} {variant}"
                    continue
                target = next(((p, v) for p, v in strings if targets.wild(p) == targets.wild(where)), None)
                if target is None:
                    continue
                changed = copy.deepcopy(doc)
                targets.set_at(changed, target[0], f"{target[1]} {variant}")
                yield "inject_term", f"{variant!r} into {targets.wild(where)}", changed, text
        # the first term into every other string field: a rule enforced in one field only
        for path, value in strings:
            if terms and targets.wild(path) != targets.wild(where):
                changed = copy.deepcopy(doc)
                targets.set_at(changed, path, f"{value} {terms[0]}")
                yield "inject_term", f"{terms[0]!r} into {targets.wild(path)}", changed, text


def _append_question(doc: Any, text: str) -> Iterator[tuple[str, str, Any, str]]:
    strings = [(p, v) for p, v in targets.strings(doc)] if isinstance(doc, dict) else []
    for form in QUESTION_FORMS:
        if not strings:
            yield "append_question", f"{form!r} after the text", doc, f"{text} {form}".strip()
        for path, value in strings:
            changed = copy.deepcopy(doc)
            targets.set_at(changed, path, f"{value} {form}".strip())
            yield "append_question", f"{form!r} after {targets.wild(path)}", changed, text


def _prose_move(doc: Any, text: str, calls: tuple[ToolCall, ...]
                ) -> Iterator[tuple[str, str, Any, str, tuple[ToolCall, ...]]]:
    if isinstance(doc, dict):
        prose = sorted(((p, v) for p, v in doc.items() if isinstance(v, str)),
                       key=lambda kv: -len(kv[1]))
        for key, value in doc.items():
            if isinstance(value, list | dict) and value and prose:
                into, body = prose[0]
                changed = copy.deepcopy(doc)
                del changed[key]
                changed[into] = f"{body} {_render(value)}"
                yield "prose_move", f"{key} written into {into}", changed, text, calls
    for index, call in enumerate(calls):
        rest = calls[:index] + calls[index + 1:]
        written = f"{text} {_render(call.arguments)}".strip()
        yield "prose_move", f"{call.name} arguments written into the text", doc, written, rest


def _swap_tools(tools: Sequence[JsonObject], calls: tuple[ToolCall, ...]
                ) -> Iterator[tuple[str, tuple[ToolCall, ...]]]:
    names = [str(tool.get("name")) for tool in tools]
    enums = {(str(t.get("name")), arg): list(prop["enum"])
             for t in tools
             for arg, prop in ((t.get("parameters") or {}).get("properties") or {}).items()
             if isinstance(prop, Mapping) and isinstance(prop.get("enum"), list)}
    for index, call in enumerate(calls):
        def with_call(new: ToolCall | None, i: int = index) -> tuple[ToolCall, ...]:
            return calls[:i] + ((new,) if new is not None else ()) + calls[i + 1:]

        for other in names:
            if other != call.name:
                yield f"{call.name} -> {other}", with_call(ToolCall(other, dict(call.arguments)))
        yield f"{call.name} dropped", with_call(None)
        yield f"{call.name} called twice", calls[:index + 1] + (call,) + calls[index + 1:]
        for arg, value in call.arguments.items():
            args = {k: v for k, v in call.arguments.items() if k != arg}
            yield f"{call.name}.{arg} dropped", with_call(ToolCall(call.name, args))
            if isinstance(value, str) and value:
                emptied = ToolCall(call.name, {**call.arguments, arg: ""})
                yield f"{call.name}.{arg} emptied", with_call(emptied)
            for option in enums.get((call.name, arg), []):
                if option != value:
                    yield (f"{call.name}.{arg}: {value!r} -> {option!r}",
                           with_call(ToolCall(call.name, {**call.arguments, arg: option})))


def _tool_strings(limits: targets.Limits, calls: tuple[ToolCall, ...]
                  ) -> Iterator[tuple[str, str, tuple[ToolCall, ...]]]:
    """Questions, forbidden terms and lengths in the string arguments of the tool calls."""
    for index, call in enumerate(calls):
        for arg, value in call.arguments.items():
            if not isinstance(value, str):
                continue

            def put(new: str, i: int = index, c: ToolCall = call, a: str = arg) -> tuple[ToolCall, ...]:
                return calls[:i] + (ToolCall(c.name, {**c.arguments, a: new}),) + calls[i + 1:]

            for form in QUESTION_FORMS[:3] + QUESTION_FORMS[4:6]:
                yield "append_question", f"{form!r} after {call.name}.{arg}", put(f"{value} {form}")
            cap = limits.caps.get(f"tool:{call.name}.{arg}")
            if cap is not None and len(value) <= cap:
                longer = value + " " + _FILLER * (cap // len(_FILLER) + 1)
                yield "lengthen", f"{call.name}.{arg}: {len(value)} -> {len(longer)} characters", put(longer)
            for where, terms in limits.terms:
                if where == f"tool:{call.name}":
                    for term in terms:
                        for variant in targets.variants(term)[:3]:
                            yield "inject_term", f"{variant!r} into {call.name}.{arg}", put(
                                f"{value} {variant}")


def _render(value: Any) -> str:
    """Structured content as a model would write it in prose."""
    if isinstance(value, list):
        return " ".join(f"{n}. {_render(item)}" for n, item in enumerate(value, start=1))
    if isinstance(value, dict):
        return "; ".join(f"{key}: {_render(item)}" for key, item in value.items())
    return str(value)


#: Every operator, in the order mutants are generated (and reported).
OPERATORS = ("flip_enum", "grow_list", "shrink_list", "drop_field", "empty_field", "lengthen",
             "inject_term", "append_question", "prose_move", "swap_tool")


def mutants_of(agent: Agent, scenario: Scenario, output: AgentOutput) -> list[Mutant]:
    """Every distinct mutant of ``output`` (none equal to the original), in operator order."""
    tools = tools_of(agent, output)  # an SDK agent's: the ones its iteration declared on the wire
    limits = targets.limits(scenario, tools)
    doc = output.parsed if agent.output == "json" and output.parse_error is None else None
    text, calls = output.text, output.tool_calls
    made: list[Made] = []
    if doc is not None:
        made += [("flip_enum", d, p, "", calls) for d, p in _flip_enum(agent, doc, limits)]
        made += [(op, d, p, "", calls) for op, d, p in _grow_shrink(doc, limits)]
        made += [(op, d, p, "", calls) for op, d, p in _drop_empty(doc)]
        made += [(op, d, p, "", calls) for op, d, p in _lengthen(doc, limits)]
    made += [(op, d, p, t, calls) for op, d, p, t in _inject(doc, text, limits)]
    made += [(op, d, p, t, calls) for op, d, p, t in _append_question(doc, text)]
    made += [(op, d, p, t, c) for op, d, p, t, c in _prose_move(doc, text, calls)]
    made += [("swap_tool", d, doc, "", c) for d, c in _swap_tools(tools, calls)]
    made += [(op, d, doc, "", c) for op, d, c in _tool_strings(limits, calls)]
    original = _identity(doc, text, calls)
    seen = {original}
    found = []
    for operator, detail, parsed, new_text, new_calls in made:
        if parsed is not None:
            new_text = json.dumps(parsed, ensure_ascii=False, indent=2)
        elif not new_text:
            new_text = text
        identity = _identity(parsed, new_text, new_calls)
        if identity in seen:
            continue
        seen.add(identity)
        found.append(Mutant(operator, detail, new_text, parsed, new_calls))
    return found


def _identity(parsed: Any, text: str, calls: tuple[ToolCall, ...]) -> str:
    payload: JsonObject = {"parsed": parsed, "text": text if parsed is None else "",
                           "calls": [[c.name, c.arguments] for c in calls]}
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)
