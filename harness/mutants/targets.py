"""Where an operator aims: the limits a scenario declares and the places of an answer to break.

The operators (:mod:`harness.mutants.operators`) derive wrong answers; this module finds
what they aim at, from the scenario and the recorded answer alone: the bounds its
``expect`` items and the agent's schemas declare (:func:`limits`), the places of a parsed
answer (its enum fields, strings and lists, named by JSON path; :func:`wild` names them as
the items do), reading and writing a value at such a path, and the spellings a rewording
gives a forbidden term (:func:`variants`). It generates nothing itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.assertions.fold import fold
from harness.assertions.jsonpath import select
from harness.core.declared import Scenario
from harness.core.entities import JsonObject


@dataclass(frozen=True)
class Limits:
    """What the scenario bounds, read from its items and the agent's schemas."""

    caps: dict[str, int]
    """JSON path (or ``text``, or ``tool.<name>.<arg>``) -> the smallest max_chars/maxLength."""
    words: dict[str, int]
    items: dict[str, tuple[int | None, int | None]]
    terms: list[tuple[str, list[str]]]
    """(path or ``text`` or ``tool:<name>``, forbidden terms) per not_contains item."""


def limits(scenario: Scenario, tools: Sequence[JsonObject]) -> Limits:
    """The bounds ``scenario``'s ``expect`` items and the tools' parameters declare: what the
    operators aim past. ``tools``: the ones the answer is judged against (``tools_of``)."""
    caps: dict[str, int] = {}
    words: dict[str, int] = {}
    items: dict[str, tuple[int | None, int | None]] = {}
    terms: list[tuple[str, list[str]]] = []
    for item in scenario.expect:
        for kind, spec in item.items():
            if not isinstance(spec, Mapping):
                continue
            where = (f"tool:{spec['tool']}" if "tool" in spec else str(spec.get("path") or "text"))
            if kind == "max_chars" and isinstance(spec.get("value"), int):
                caps[where] = min(caps.get(where, spec["value"]), spec["value"])
            elif kind == "words" and isinstance(spec.get("max"), int):
                words[where] = min(words.get(where, spec["max"]), spec["max"])
            elif kind == "json_path" and ("max_items" in spec or "min_items" in spec):
                items[str(spec["path"])] = (spec.get("min_items"), spec.get("max_items"))
            elif kind == "not_contains":
                values = [spec[m] for m in ("value", "any", "all") if m in spec]
                flat = [v for value in values for v in ([value] if isinstance(value, str) else value)]
                terms.append((where, flat))
    for tool in tools:
        for name, prop in ((tool.get("parameters") or {}).get("properties") or {}).items():
            if isinstance(prop, Mapping) and isinstance(prop.get("maxLength"), int):
                caps[f"tool:{tool.get('name')}.{name}"] = prop["maxLength"]
    return Limits(caps, words, items, terms)


def enum_paths(schema: Any, prefix: str = "") -> Iterator[tuple[str, list[Any]]]:
    """(path, enum) of every enum property of an output schema (objects and array items)."""
    if not isinstance(schema, Mapping):
        return
    if isinstance(schema.get("enum"), list) and prefix:
        yield prefix, list(schema["enum"])
    for name, prop in (schema.get("properties") or {}).items():
        yield from enum_paths(prop, f"{prefix}.{name}" if prefix else str(name))
    if isinstance(schema.get("items"), Mapping):
        yield from enum_paths(schema["items"], f"{prefix}[0]")


def get_at(doc: Any, path: str) -> Any:
    found = select(doc, path)
    return found[0] if found else None


def set_at(doc: Any, path: str, value: Any) -> bool:
    """Set the first value ``path`` selects (wildcards read as index 0); False when absent."""
    steps = re.findall(r"[^.\[\]]+|\[\d+\]|\[\*\]", path)
    node = doc
    for index, step in enumerate(steps):
        last = index == len(steps) - 1
        if step.startswith("["):
            position = 0 if step == "[*]" else int(step[1:-1])
            if not isinstance(node, list) or position >= len(node):
                return False
            if last:
                node[position] = value
                return True
            node = node[position]
        else:
            if not isinstance(node, dict) or step not in node:
                return False
            if last:
                node[step] = value
                return True
            node = node[step]
    return False


def strings(doc: Any, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, str]]:
    """(path, value) of the strings of a document: every key, the first element of each list."""
    if depth > 4:
        return
    if isinstance(doc, str):
        yield prefix, doc
    elif isinstance(doc, Mapping):
        for key, value in doc.items():
            yield from strings(value, f"{prefix}.{key}" if prefix else str(key), depth + 1)
    elif isinstance(doc, list) and doc:
        yield from strings(doc[0], f"{prefix}[0]", depth + 1)


def lists(doc: Any, prefix: str = "", depth: int = 0) -> Iterator[tuple[str, list[Any]]]:
    if depth > 4:
        return
    if isinstance(doc, list):
        yield prefix, doc
        if doc:
            yield from lists(doc[0], f"{prefix}[0]", depth + 1)
    elif isinstance(doc, Mapping):
        for key, value in doc.items():
            yield from lists(value, f"{prefix}.{key}" if prefix else str(key), depth + 1)


def wild(path: str) -> str:
    """``questions[0].options`` -> ``questions[*].options``: how items name the path."""
    return re.sub(r"\[\d+\]", "[*]", path)


def variants(term: str) -> list[str]:
    """A forbidden term as written and in the spellings a rewording produces."""
    words = fold(term).split(" ") if any(ch.isalnum() for ch in term) else [term]
    found = [term, term.upper()]
    if len(words) > 1:
        found += [" ".join(words), "-".join(words), "".join(w.capitalize() for w in words)]
    elif "_" not in term and "." not in term:
        found.append(term.capitalize())
    out: list[str] = []
    for variant in found:
        if variant not in out:
            out.append(variant)
    return out
