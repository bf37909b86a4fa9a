"""How a reason quotes a value, and the switch that lets a check word no reason at all.

A reason says what was expected and what was found, read in a terminal table, so a found
value is quoted cut to :data:`FOUND_LIMIT` (a label quotes at most :data:`LABEL_LIMIT`:
labels name an assertion, they don't show data). Judging known-wrong answers keeps only
which assertions reject, so inside :func:`outcomes_only` :func:`show` quotes nothing and a
check may skip the work that only words its reason (:func:`reasons_wanted`); a label never
depends on it (:func:`label_quote`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

#: How much of a found value a reason quotes; a reason is read in a terminal table.
FOUND_LIMIT = 120
#: How much of a value a label quotes; labels name an assertion, they don't show data.
LABEL_LIMIT = 40

#: False inside :func:`outcomes_only`: reasons are not worded (``show`` quotes nothing).
_REASONS: ContextVar[bool] = ContextVar("harness_assertion_reasons", default=True)
#: What :func:`show` gives inside :func:`outcomes_only`.
UNSHOWN = "…"


@contextmanager
def outcomes_only() -> Iterator[None]:
    """Within: every check decides its outcome as always, but quotes no value in its reason.

    For judging known-wrong answers (counterexamples), where only which assertions reject
    is kept: quoting the found value (rendering a parsed answer, wording a schema error)
    was a fifth of their cost. Labels never depend on it (:func:`label_quote`).
    """
    token = _REASONS.set(False)
    try:
        yield
    finally:
        _REASONS.reset(token)


def reasons_wanted() -> bool:
    """False inside :func:`outcomes_only`: a check may skip work that only words its reason."""
    return _REASONS.get()


def show(value: Any, limit: int = FOUND_LIMIT) -> str:
    """Quote a found or expected value for a reason, cut to ``limit`` characters.

    Strings are ``repr``-quoted so whitespace and empty strings stay visible;
    other JSON values read as in YAML/JSON (``true``, ``null``, ``[1, 'a']``),
    the way scenario authors wrote them. Inside :func:`outcomes_only`: :data:`UNSHOWN`.
    """
    if not _REASONS.get():
        return UNSHOWN
    return label_quote(value, limit)


def label_quote(value: Any, limit: int = LABEL_LIMIT) -> str:
    """:func:`show`, whatever the context: labels name an assertion and must never change."""
    if isinstance(value, str):
        if len(value) + 2 > limit:  # its repr cannot fit: never quote a whole long answer
            return repr(value[:limit] + "…")
        text = repr(value)
        return text if len(text) <= limit else repr(value[:limit] + "…")
    text = _render_prefix(value, limit)  # a whole parsed answer is rendered only as far as shown
    if len(text) <= limit:
        return text
    return text[:limit] + "…"


def _render_prefix(value: Any, limit: int) -> str:
    """``_render(value)``, or a prefix of it longer than ``limit`` (all that ``show`` needs)."""
    parts: list[str] = []
    _emit(value, parts, [limit + 1])
    return "".join(parts)


def _emit(value: Any, parts: list[str], budget: list[int]) -> bool:
    """Append the rendering of ``value`` to ``parts`` until ``budget[0]`` characters are spent;
    false once they are (the caller stops: the rest would be cut anyway)."""
    if isinstance(value, Mapping):
        parts.append("{")
        budget[0] -= 1
        for n, (k, v) in enumerate(value.items()):
            if n:
                parts.append(", ")
                budget[0] -= 2
            if budget[0] <= 0 or not _emit(k, parts, budget):
                return False
            parts.append(": ")
            budget[0] -= 2
            if budget[0] <= 0 or not _emit(v, parts, budget):
                return False
        parts.append("}")
        budget[0] -= 1
    elif isinstance(value, list | tuple):
        parts.append("[")
        budget[0] -= 1
        for n, item in enumerate(value):
            if n:
                parts.append(", ")
                budget[0] -= 2
            if budget[0] <= 0 or not _emit(item, parts, budget):
                return False
        parts.append("]")
        budget[0] -= 1
    else:
        text = _render(value)
        parts.append(text)
        budget[0] -= len(text)
    return budget[0] > 0


def _render(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_render(k)}: {_render(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    return repr(value)
