"""The ``actual_behavior`` of a per-test record: what the answer did, in one line.

The skill spec's empirical validation asks every test record for the actual
behaviour beside the expected one (seed 000, ``required_records_per_test``).
It is derived from what the run already decided, never from a model: the
iteration's status, the decision in the output, the tools it called and the
hard assertions that rejected it, so a reviewer reading the record knows what
happened without opening the transcript.
"""

from __future__ import annotations

from typing import Any

from harness.core.entities import ChatResponse, Verdict

__all__ = ["actual_behavior"]

_SHOWN = 3


def actual_behavior(status: str, decision: Any, response: ChatResponse | None,
                    verdicts: tuple[Verdict, ...], message: str) -> str | None:
    """One line: decision, tool calls and rejects; ``None`` when there was no answer to describe."""
    if response is None:
        return f"no answer ({status}): {message}" if message else None
    parts = []
    if decision is not None:
        parts.append(f"decided {decision}")
    if response.tool_calls:
        parts.append("called " + ", ".join(call.name for call in response.tool_calls))
    rejected = [v.assertion for v in verdicts if v.outcome == "reject"]
    if rejected:
        more = f" (+{len(rejected) - _SHOWN} more)" if len(rejected) > _SHOWN else ""
        parts.append("rejected by " + "; ".join(rejected[:_SHOWN]) + more)
    else:
        checked = sum(1 for v in verdicts if v.outcome == "pass")
        parts.append(f"{status}: {checked} of {len(verdicts)} hard assertion(s) passed")
    return ", ".join(parts)
