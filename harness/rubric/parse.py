"""Reading the judge's answer to a rubric item: pass or fail, with a reason.

The judge is asked for ``{"verdict": "pass" | "fail", "reason": "..."}``. Models
wrap JSON in fences or answer in prose, so a fenced object and a leading
``PASS``/``FAIL`` (or ``verdict: fail``) line are read too. Anything else is
``None``: inconclusive, never a guessed pass.
"""

from __future__ import annotations

import re
from typing import Literal

from harness.judges.parse import excerpt, json_answer

Verdict = Literal["pass", "fail"]

_FENCE = re.compile(r"^```[a-zA-Z]*\n?(.*?)\n?```$", re.DOTALL)
_LINE = re.compile(r"^\s*(?:\**\s*verdict\s*\**\s*[:=]\s*)?\**\s*(pass|passed|fail|failed)\b\**"
                   r"\s*[:.\-]?\s*(.*)$", re.IGNORECASE | re.DOTALL)
_WORDS = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail"}


def parse_verdict(text: str | None) -> tuple[Verdict | None, str]:
    """``(verdict, reason)``; ``(None, why)`` when the answer is neither a pass nor a fail."""
    if not text or not text.strip():
        return None, "the judge returned no text"
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    found = _from_json(body)
    if found is not None:
        return found
    match = _LINE.match(body)
    if match:
        return _WORDS[match.group(1).lower()], " ".join(match.group(2).split())  # type: ignore[return-value]
    return None, f"the judge's answer is neither pass nor fail: {excerpt(stripped)}"


def _from_json(body: str) -> tuple[Verdict | None, str] | None:
    found = json_answer(body, "verdict")
    if found is None:
        return None
    word, reason = found
    verdict = _WORDS.get(word.strip().lower()) if isinstance(word, str) else None
    if verdict is None:
        return None, f"the judge gave a verdict that is neither pass nor fail: {excerpt(str(word))}"
    return verdict, reason  # type: ignore[return-value]
