"""Crash-aware verdict helpers: every negative assertion test goes through :func:`rejected`.

``evaluate()`` turns a check that raises into a ``reject`` (a crash must not pass), so a test
that looked only at the outcome passed when the code under test crashed: mutants in
``normalize`` and ``json_equal`` survived that way. :func:`rejected` fails on a crash, and
:func:`outcomes` does the same for a list; :func:`crashed` is for the tests of the crash itself.
"""

from __future__ import annotations

from collections.abc import Iterable

from harness.assertions import CRASH_PREFIX
from harness.core.entities import Verdict


def _crash(verdict: Verdict) -> bool:
    return verdict.crashed or verdict.reason.startswith(CRASH_PREFIX)


def rejected(verdict: Verdict | None) -> str:
    """The reason of a real reject; fails when the check raised (or did not reject)."""
    assert verdict is not None, "no verdict"
    assert not _crash(verdict), f"the check crashed instead of judging: {verdict}"
    assert verdict.outcome == "reject", verdict
    return verdict.reason


def crashed(verdict: Verdict) -> str:
    """The reason of a crashed check (marked as one, and still a reject)."""
    assert verdict.crashed and verdict.reason.startswith(CRASH_PREFIX), verdict
    assert verdict.outcome == "reject", verdict
    return verdict.reason


def outcomes(verdicts: Iterable[Verdict]) -> list[str]:
    """The outcomes in order; fails when any check raised."""
    found = list(verdicts)
    crashes = [v for v in found if _crash(v)]
    assert not crashes, f"checks crashed instead of judging: {crashes}"
    return [v.outcome for v in found]
