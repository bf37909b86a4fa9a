"""Reading a grader's answer: the verdict and its reason, or why there is none.

Graders are asked for one JSON object (``{"score": 4, "reason": ...}``,
``{"verdict": "pass", "reason": ...}``). Models wrap JSON in fences or in prose,
or answer in prose alone, so the reading is, for every kind: no text; a
fenced body unwrapped; the JSON object between the first ``{`` and the last
``}`` that has the kind's field; else the kind's own prose line. An answer none
of these reads gives ``None`` and the reason, shown as ``inconclusive``: never
a guessed verdict. What a kind brings is an :class:`AnswerReader`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

__all__ = ["NO_TEXT", "AnswerReader", "excerpt", "json_answer", "read_answer"]

V = TypeVar("V")

#: The reason of an empty answer, for every kind.
NO_TEXT = "the judge returned no text"
_FENCE = re.compile(r"^```[a-zA-Z]*\n?(.*?)\n?```$", re.DOTALL)


@dataclass(frozen=True)
class AnswerReader(Generic[V]):
    """What one kind of graded call reads from an answer: its verdict parser."""

    field: str
    """The JSON field that holds the verdict (``score``, ``verdict``)."""
    value: Callable[[Any], V | None]
    """The verdict that field's value means; ``None``: it means none (``6``, ``"maybe"``)."""
    prose: Callable[[str], tuple[V, str] | None]
    """``(verdict, reason)`` from an answer in prose (``Score: 4``, ``FAIL: ...``)."""
    bad_value: str
    """The reason when the JSON field holds no verdict (the value's excerpt follows)."""
    unreadable: str
    """The reason when nothing in the answer reads (the answer's excerpt follows)."""

    def read(self, text: str | None) -> tuple[V | None, str]:
        """``(verdict, reason)`` of an answer: :func:`read_answer` with this reader."""
        return read_answer(self, text)


def read_answer(reader: AnswerReader[V], text: str | None) -> tuple[V | None, str]:
    """``(verdict, reason)``; ``(None, why)`` when the answer holds no verdict."""
    if not text or not text.strip():
        return None, NO_TEXT
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    found = json_answer(body, reader.field)
    if found is not None:
        raw, reason = found
        value = reader.value(raw)
        if value is None:
            return None, f"{reader.bad_value}: {excerpt(str(raw))}"
        return value, reason
    prose = reader.prose(body)
    if prose is not None:
        return prose
    return None, f"{reader.unreadable}: {excerpt(stripped)}"


def json_answer(body: str, field: str) -> tuple[Any, str] | None:
    """The ``field`` value and the reason text of the JSON object a grader answered with
    (between its first ``{`` and last ``}``: models wrap JSON in prose); ``None`` when there is
    no such object."""
    start, end = body.find("{"), body.rfind("}")
    if start == -1 or end <= start:
        return None
    try:
        data = json.loads(body[start:end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or field not in data:
        return None
    reason = data.get("reason", "")
    return data[field], reason if isinstance(reason, str) else json.dumps(reason, ensure_ascii=False)


def excerpt(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut at ``limit`` characters, for a message about an answer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."
