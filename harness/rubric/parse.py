"""A rubric item's verdict: pass or fail, with a reason.

The judge is asked for ``{"verdict": "pass" | "fail", "reason": "..."}``; the
shared reading (:mod:`harness.graded.answer`: fences, JSON inside prose)
applies, and a leading ``PASS``/``FAIL`` (or ``verdict: fail``) line is this
kind's prose. Anything else is ``None``: inconclusive, never a guessed pass.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from harness.graded.answer import AnswerReader

Verdict = Literal["pass", "fail"]

_LINE = re.compile(r"^\s*(?:\**\s*verdict\s*\**\s*[:=]\s*)?\**\s*(pass|passed|fail|failed)\b\**"
                   r"\s*[:.\-]?\s*(.*)$", re.IGNORECASE | re.DOTALL)
_WORDS: dict[str, Verdict] = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail"}


def _word(value: Any) -> Verdict | None:
    return _WORDS.get(value.strip().lower()) if isinstance(value, str) else None


def _prose(body: str) -> tuple[Verdict, str] | None:
    match = _LINE.match(body)
    if match is None:
        return None
    return _WORDS[match.group(1).lower()], " ".join(match.group(2).split())


#: The rubric items' verdict parser.
PASS_FAIL = AnswerReader[Verdict](
    field="verdict", value=_word, prose=_prose,
    bad_value="the judge gave a verdict that is neither pass nor fail",
    unreadable="the judge's answer is neither pass nor fail")


#: ``(verdict, reason)``; ``(None, why)`` when the answer is neither a pass nor a fail.
parse_verdict = PASS_FAIL.read
