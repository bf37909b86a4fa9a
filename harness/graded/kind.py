"""What differs between kinds of graded call: the verdict parser and the result record.

Everything else (prompt, grader model, answer reading, the honesty check, the
cached call and its failure policy) is shared in :mod:`harness.graded`. The
aggregate differs too (a judge's mean, a rubric item's pass rate), but it reads
records, not calls: it lives with the reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from harness.graded.answer import AnswerReader

__all__ = ["GradedKind"]

V = TypeVar("V")
R = TypeVar("R")


@dataclass(frozen=True)
class GradedKind(Generic[V, R]):
    """One kind of graded call (judges, rubric items), with verdicts ``V`` and results ``R``."""

    name: str
    """``judge`` or ``rubric``: the prefix of the call's ``purpose`` (``judge:relevance``) as
    recorded in ``entry.json``, and of its warnings."""
    noun: str
    """How load-time messages name one item: ``judge``, ``rubric item``."""
    reader: AnswerReader[V]
    """The verdict parser."""
    result: Callable[[Mapping[str, Any], V | None, str], R]
    """``(item, verdict, reason)`` -> the result; a ``None`` verdict is inconclusive."""
    missing: Callable[[Mapping[str, Any], str, str], R]
    """``(item, reason, warning)`` -> the ``not_evaluated`` result (no answer to read)."""
    graded: Callable[[R], bool]
    """Whether a result holds a verdict (a score; a pass or a fail)."""
    inconclusive: Callable[[R, str], R]
    """The result made inconclusive, for the reason given (an untied scripted answer)."""

    def purpose(self, name: str) -> str:
        """The ``purpose`` of the call grading item ``name``: never keyed, recorded."""
        return f"{self.name}:{name}"
