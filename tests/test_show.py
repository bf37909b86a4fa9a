"""``show`` quotes a value exactly as rendering it whole and cutting would, without rendering
all of a large parsed answer."""

from __future__ import annotations

import random
from typing import Any

from harness.assertions.reasons import _render, show


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice([None, True, False, 0, 1, 2.5, 10**20, "", "a'b\n", "x" * rng.randrange(300)])
    if roll < 0.65:
        return {f"k{i}": _value(rng, depth + 1) for i in range(rng.randrange(5))}
    return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def _expected(value: Any, limit: int) -> str:
    if isinstance(value, str):
        text = repr(value)
        return text if len(text) <= limit else repr(value[:limit] + "…")
    text = _render(value)
    return text if len(text) <= limit else text[:limit] + "…"


def test_show_equals_the_whole_rendering_cut_to_its_limit() -> None:
    rng = random.Random(23)
    for _ in range(2000):
        value = _value(rng)
        for limit in (0, 1, 5, 40, 120, 1000):
            assert show(value, limit) == _expected(value, limit), (value, limit)


def test_a_large_answer_is_cut_with_an_ellipsis() -> None:
    answer = {"decision": "answer", "details": ["step " * 50] * 40}
    shown = show(answer)
    assert shown.startswith("{'decision': 'answer', 'details': ['step step") and shown.endswith("…")
    assert len(shown) == 121
