"""Reading a judge's answer: a 1-5 score with a reason, and what the score means.

Judges are asked for ``{"score": <1-5>, "reason": "..."}``. Models wrap JSON
in fences or answer in prose, so the parser accepts a fenced object and a
``Score: 4`` line too; anything else is *inconclusive*, never a guess.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Score -> interpretation. Unparseable output is ``inconclusive``; no answer is ``not_evaluated``.
BANDS: dict[int, str] = {1: "poor", 2: "poor", 3: "average", 4: "good", 5: "exceptional"}
INCONCLUSIVE = "inconclusive"
NOT_EVALUATED = "not_evaluated"
#: Every interpretation a report may show, best first.
INTERPRETATIONS = ("exceptional", "good", "average", "poor", INCONCLUSIVE, NOT_EVALUATED)

_SCORE_LINE = re.compile(r"\bscore\b\s*[:=]?\s*\**\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_REASON_LINE = re.compile(r"\breason\b\s*[:=]\s*(.+)", re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z]*\n?(.*?)\n?```$", re.DOTALL)


def interpret(score: int | None) -> str:
    """The band of a score; ``None`` (unparseable) is inconclusive."""
    return BANDS.get(score, INCONCLUSIVE) if score is not None else INCONCLUSIVE


def parse_score(text: str | None) -> tuple[int | None, str]:
    """``(score, reason)`` from a judge's answer; ``(None, why)`` when it cannot be read."""
    if not text or not text.strip():
        return None, "the judge returned no text"
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    from_json = _from_json(body)
    if from_json is not None:
        return from_json
    match = _SCORE_LINE.search(body)
    if match:
        score = _as_score(match.group(1))
        if score is not None:
            reason = _REASON_LINE.search(body)
            return score, (reason.group(1).strip() if reason else "")
    return None, f"the judge output could not be parsed as a 1-5 score: {excerpt(stripped)}"


def json_answer(body: str, field: str) -> tuple[Any, str] | None:
    """The ``field`` value and the reason text of the JSON object a judge answered with
    (between its first ``{`` and last ``}``: models wrap JSON in prose); ``None`` when there is
    no such object. Shared by the score judges and the rubric judges."""
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
    """``text`` on one line, cut at ``limit`` characters, for a message about a judge's answer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "..."


def _from_json(body: str) -> tuple[int | None, str] | None:
    found = json_answer(body, "score")
    if found is None:
        return None
    value, reason = found
    score = _as_score(value)
    if score is None:
        return None, f"the judge gave a score outside 1-5: {excerpt(str(value))}"
    return score, reason


def _as_score(value: Any) -> int | None:
    """An integer 1-5 (``4``, ``"4"``, ``4.0``); anything else is ``None``."""
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not number.is_integer() or not 1 <= number <= 5:
        return None
    return int(number)
