"""Counting assertions: ``words``, ``sentences``, ``questions`` (bounds on a measure).

Each takes ``min`` and/or ``max`` (an integer alone is ``max``) and, like the
text kinds, ``path`` (every string it selects in a JSON output) or ``tool``
(the string arguments of every call of that tool, or what ``path`` selects in
them). Every selected string must be within the bounds, so
``words: {path: "questions[*].options[*]", max: 5}`` bounds each option label.
The measures are in :mod:`harness.assertions.measures`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from harness.assertions import measures
from harness.assertions.kind import Checker, Kind, prepared_kind
from harness.assertions.reasons import show
from harness.assertions.text import at_label, texts_checker


def _spec(raw: Any) -> dict[str, Any]:
    return dict(raw) if isinstance(raw, Mapping) else {"max": raw}


def _bounds(spec: dict[str, Any]) -> str:
    low, high = spec.get("min"), spec.get("max")
    if low is not None and high is not None:
        return f"{low}..{high}" if low != high else f"= {low}"
    return f"<= {high}" if high is not None else f">= {low}"


def _lint(raw: Any) -> list[str]:
    spec = _spec(raw)
    low, high = spec.get("min"), spec.get("max")
    if low is None and high is None:
        return ["give min, max or both"]
    if low is not None and high is not None and low > high:
        return [f"min {low} is greater than max {high}"]
    return []


def _within(spec: dict[str, Any], count: int) -> bool:
    low, high = spec.get("min"), spec.get("max")
    return (low is None or count >= low) and (high is None or count <= high)


def _kind(noun: str, measure: Callable[[str], tuple[int, str]]) -> Kind:
    """A kind that bounds ``measure`` (count and a detail for the reason) of every text."""

    def label(raw: Any) -> str:
        spec = _spec(raw)
        return f"{noun} {_bounds(spec)}{at_label(spec)}"

    def prepare(raw: Any) -> Checker:
        spec = _spec(raw)
        bounds = _bounds(spec)

        def test(text: str) -> tuple[bool, str]:
            count, detail = measure(text)
            said = f"{count} {noun}" + (f" ({detail})" if detail else "")
            if _within(spec, count):
                return True, f"{said}, {bounds}"
            return False, f"expected {noun} {bounds}, found {said} in {show(text)}"

        return texts_checker(spec, noun, test)

    return prepared_kind(prepare, label, lambda raw: _lint(raw) + _path_problems(raw))


def _path_problems(raw: Any) -> list[str]:
    from harness.assertions.text import path_lint

    return path_lint(raw)


def _words(text: str) -> tuple[int, str]:
    return measures.words(text), ""


def _sentences(text: str) -> tuple[int, str]:
    return len(measures.sentences(text)), ""


def _questions(text: str) -> tuple[int, str]:
    found = measures.questions(text)
    detail = "; ".join(f"{show(q.sentence, 80)} by {q.form}" for q in found[:3])
    return len(found), detail


KINDS: dict[str, Kind] = {
    "words": _kind("words", _words),
    "sentences": _kind("sentences", _sentences),
    "questions": _kind("questions", _questions),
}
