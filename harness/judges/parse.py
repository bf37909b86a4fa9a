"""A judge's verdict: a 1-5 score with a reason, and what the score means.

Judges are asked for ``{"score": <1-5>, "reason": "..."}``; the shared reading
(:mod:`harness.graded.answer`: fences, JSON inside prose) applies, and a
``Score: 4`` line (with an optional ``Reason: ...``) is this kind's prose. An
answer with no score is *inconclusive*, never a guess.
"""

from __future__ import annotations

import re
from typing import Any

from harness.graded.answer import AnswerReader

#: Score -> interpretation. Unparseable output is ``inconclusive``; no answer is ``not_evaluated``.
BANDS: dict[int, str] = {1: "poor", 2: "poor", 3: "average", 4: "good", 5: "exceptional"}
INCONCLUSIVE = "inconclusive"
NOT_EVALUATED = "not_evaluated"

_SCORE_LINE = re.compile(r"\bscore\b\s*[:=]?\s*\**\s*([0-9]+(?:\.[0-9]+)?)", re.IGNORECASE)
_REASON_LINE = re.compile(r"\breason\b\s*[:=]\s*(.+)", re.IGNORECASE)


def interpret(score: int | None) -> str:
    """The band of a score; ``None`` (unparseable) is inconclusive."""
    return BANDS.get(score, INCONCLUSIVE) if score is not None else INCONCLUSIVE


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


def _prose(body: str) -> tuple[int, str] | None:
    match = _SCORE_LINE.search(body)
    score = _as_score(match.group(1)) if match else None
    if score is None:
        return None
    reason = _REASON_LINE.search(body)
    return score, (reason.group(1).strip() if reason else "")


#: The judges' verdict parser.
SCORE = AnswerReader[int](
    field="score", value=_as_score, prose=_prose,
    bad_value="the judge gave a score outside 1-5",
    unreadable="the judge output could not be parsed as a 1-5 score")


#: ``(score, reason)`` from a judge's answer; ``(None, why)`` when it cannot be read.
parse_score = SCORE.read
