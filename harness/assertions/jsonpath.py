"""The small JSON path used by assertions: ``a.b[0].c``, ``items[*].name``.

Why not a full JSONPath library: scenario authors only need to point at a value
(or at every element of a list), and a tiny grammar that we own gives precise
error messages at load time and no extra dependency. Grammar::

    path    := ["$" | "$."] (key | bracket) ("." key | bracket)*
    bracket := "[" index "]" | "[*]" | "[" quoted "]"
    key     := any characters but  . [ ] and whitespace   (dashes/underscores fine)
    index   := -?[0-9]+            (negative counts from the end)
    quoted  := 'text' | "text"     (a key that holds dots or brackets)

``*`` as a key or ``[*]`` is a wildcard: every element of a list, or every value
of a mapping. A step that does not apply (key on a list, index out of range,
missing key) selects nothing; it is not an error, because "the model did not
produce this field" is exactly what assertions check.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any


@dataclass(frozen=True)
class Wildcard:
    """The ``[*]`` / ``*`` step: every element of a list or value of a mapping."""


WILDCARD = Wildcard()

#: One step of a parsed path: a mapping key, a list index, or the wildcard.
Step = str | int | Wildcard

_KEY = re.compile(r"[^.\[\]\s]+")
_INDEX = re.compile(r"-?[0-9]+")


def parse(path: str) -> tuple[Step, ...]:
    """Parse ``path`` into steps; raise ``ValueError`` naming the bad position.

    ``"$"`` (or ``"$."`` followed by nothing) is the whole document; the empty
    string is refused because it is almost always a forgotten value.
    """
    if not isinstance(path, str):
        raise ValueError(f"JSON path must be a string, not {type(path).__name__}")
    return _parse(path)


@lru_cache(maxsize=512)
def _parse(path: str) -> tuple[Step, ...]:
    if path.strip() == "":
        raise ValueError("empty JSON path (use '$' for the whole document)")
    pos = 0
    if path.startswith("$"):
        pos = 1
        if path.startswith("$."):
            pos = 2
            if len(path) == 2:
                return ()
        elif len(path) > 1 and path[1] != "[":
            raise _error(path, 1, "expected '.' or '[' after '$'")
    steps: list[Step] = []
    # A key comes first, unless the path starts with a bracket (``[0]``, ``$[0]``).
    expect_key = path[pos] != "[" if pos == 0 else path[pos - 1] == "."
    while pos < len(path):
        if expect_key:
            match = _KEY.match(path, pos)
            if match is None:
                what = repr(path[pos]) if pos < len(path) else "end of path"
                raise _error(path, pos, f"expected a key, found {what}")
            key = match.group()
            steps.append(WILDCARD if key == "*" else key)
            pos = match.end()
            expect_key = False
            continue
        char = path[pos]
        if char == ".":
            pos += 1
            if pos == len(path):
                raise _error(path, pos, "path ends with '.'")
            expect_key = True
        elif char == "[":
            step, pos = _parse_bracket(path, pos)
            steps.append(step)
        else:
            raise _error(path, pos, f"unexpected {char!r}")
    return tuple(steps)


def _parse_bracket(path: str, start: int) -> tuple[Step, int]:
    """Parse ``[...]`` at ``start``; return the step and the position after ``]``."""
    end = path.find("]", start)
    inner_start = start + 1
    if inner_start < len(path) and path[inner_start] in "'\"":
        quote = path[inner_start]
        close = path.find(quote, inner_start + 1)
        if close == -1 or close + 1 >= len(path) or path[close + 1] != "]":
            raise _error(path, start, f"unclosed quoted key (expected {quote}])")
        return path[inner_start + 1 : close], close + 2
    if end == -1:
        raise _error(path, start, "unclosed '['")
    inner = path[inner_start:end].strip()
    if inner == "*":
        return WILDCARD, end + 1
    if _INDEX.fullmatch(inner):
        return int(inner), end + 1
    raise _error(path, start, f"expected an index, '*' or a quoted key in [], found {inner!r}")


def _error(path: str, pos: int, message: str) -> ValueError:
    return ValueError(f"bad JSON path {path!r} at position {pos}: {message}")


def format_steps(steps: tuple[Step, ...]) -> str:
    """Render concrete steps back to a path, e.g. ``questions[1].options[0]``."""
    out = ""
    for step in steps:
        if isinstance(step, Wildcard):
            out += "[*]"
        elif isinstance(step, int):
            out += f"[{step}]"
        elif _KEY.fullmatch(step) and step != "*":
            out += f".{step}" if out else step
        else:
            out += f"[{step!r}]"
    return out or "$"


def select_with_paths(doc: Any, path: str | tuple[Step, ...]) -> list[tuple[str, Any]]:
    """Every value selected by ``path``, with the concrete path that reached it.

    Concrete paths let a reject reason say *which* element failed
    (``questions[2].options``) rather than only the pattern that was asked for.
    """
    return [(_formatted(prefix), value) for prefix, value in _select(doc, path)]


def _select(doc: Any, path: str | tuple[Step, ...]) -> list[tuple[tuple[Step, ...], Any]]:
    steps = parse(path) if isinstance(path, str) else path
    found: list[tuple[tuple[Step, ...], Any]] = [((), doc)]
    for step in steps:
        found = [item for prefix, value in found for item in _step(prefix, value, step)]
    return found


@lru_cache(maxsize=4096)
def _formatted(steps: tuple[Step, ...]) -> str:
    """:func:`format_steps`, once per concrete path: the same few paths are reached in every
    answer and counterexample."""
    return format_steps(steps)


class Selections:
    """:func:`select_with_paths` over one document, once per path.

    One answer is read by many items through the same few paths (an agent's rules and a
    scenario's own items point at the same fields, and every per-answer ``when`` selects the
    decision again): of the 6,270 selections the examples' counterexamples made, 2,337 were
    distinct. Only for the span of one evaluation of one answer, which reads the document
    and never changes it; the lists it gives are shared, so callers must not change them.
    """

    __slots__ = ("doc", "_found")

    def __init__(self, doc: Any) -> None:
        self.doc = doc
        self._found: dict[str, list[tuple[str, Any]]] = {}

    def with_paths(self, path: str) -> list[tuple[str, Any]]:
        """``select_with_paths(doc, path)``, made once."""
        found = self._found.get(path)
        if found is None:
            found = self._found[path] = select_with_paths(self.doc, path)
        return found

    def values(self, path: str) -> list[Any]:
        """``select(doc, path)``: the selected values alone."""
        return [value for _, value in self.with_paths(path)]


def select(doc: Any, path: str | tuple[Step, ...]) -> list[Any]:
    """Every value selected by ``path`` in ``doc`` (empty when nothing matches); the concrete
    paths are not rendered (nobody reads them here)."""
    return [value for _, value in _select(doc, path)]


def _step(
    prefix: tuple[Step, ...], value: Any, step: Step
) -> list[tuple[tuple[Step, ...], Any]]:
    if isinstance(step, Wildcard):
        if isinstance(value, list):
            return [((*prefix, i), item) for i, item in enumerate(value)]
        if isinstance(value, Mapping):
            return [((*prefix, str(k)), item) for k, item in value.items()]
        return []
    if isinstance(step, int):
        if isinstance(value, list) and -len(value) <= step < len(value):
            index = step % len(value)
            return [((*prefix, index), value[index])]
        return []
    if isinstance(value, Mapping) and step in value:
        return [((*prefix, step), value[step])]
    return []
