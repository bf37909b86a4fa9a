"""Counting rubric outcomes: pass rate per rule, with the inconclusive and scripted ones apart.

Used for ``run.json`` (at the end of a run, from live results) and by every
report (from records), so both count the same way. The pass rate is passes over
graded outcomes (pass + fail); inconclusive and not evaluated outcomes are
counted, shown, and never folded into either side. The *trend* pass rate leaves
out scripted answers: a scripted judge says what its script says, and a line of
constants over runs would read as a stable grade.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

#: Outcome columns, in the order every report shows them.
OUTCOMES = ("pass", "fail", "inconclusive", "not_evaluated")


@dataclass
class RuleTally:
    """Outcomes of one rule over a group of iterations."""

    rule: str = ""
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    scripted: int = 0
    """Graded outcomes (pass or fail) whose judge answer was scripted."""
    unscripted: list[int] = field(default_factory=lambda: [0, 0])
    """[passes, graded] among answers not known to be scripted (for trends)."""

    def add(self, outcome: str, source: str, rule: str = "") -> None:
        self.rule = self.rule or rule
        self.counts[outcome if outcome in self.counts else "inconclusive"] += 1
        if outcome in ("pass", "fail"):
            if source == "scripted":
                self.scripted += 1
            else:
                self.unscripted[0] += outcome == "pass"
                self.unscripted[1] += 1

    @property
    def graded(self) -> int:
        return self.counts["pass"] + self.counts["fail"]

    @property
    def pass_rate(self) -> float | None:
        return round(self.counts["pass"] / self.graded, 4) if self.graded else None

    @property
    def trend_pass_rate(self) -> float | None:
        """The pass rate over answers not known to be scripted; ``None`` when there are none."""
        passes, graded = self.unscripted
        return round(passes / graded, 4) if graded else None

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, **self.counts, "scripted": self.scripted,
                "pass_rate": self.pass_rate, "trend_pass_rate": self.trend_pass_rate}


#: One outcome as counted: (group key, rule name, rule text, outcome, source).
Sample = tuple[tuple[str, ...], str, str, str, str]


def tally(samples: Iterable[Sample]) -> dict[tuple[tuple[str, ...], str], RuleTally]:
    """``(group, rule name) -> RuleTally``, sorted by group then rule name (every report and
    every run lists the rules in the same order, whatever order the scenarios ran in)."""
    table: dict[tuple[tuple[str, ...], str], RuleTally] = {}
    for group, name, rule, outcome, source in samples:
        table.setdefault((group, name), RuleTally()).add(outcome, source, rule)
    return dict(sorted(table.items()))
