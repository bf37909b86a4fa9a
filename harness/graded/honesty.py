"""Scripted judge answers are tied to the answer they grade; any other answer gets no grade.

The example caches are seeded by the scripted provider, judges included. A
scripted judge answer used to be a pattern (``"*#rubric:x": {verdict: pass}``)
that graded *any* response ``pass``, so a wrong answer re-recorded with
``--scripted`` collected rubric passes it never earned (issue 18). Now a
scripted judge or rubric answer must say which response it grades, inside its
JSON (so the tie is recorded in the cache entry and checked on every replay):

* ``graded_sha256``: the sha256 (or a prefix of at least 16 hex digits) of the
  response as the judge sees it (:func:`fingerprint`), or a list of them, for
  one answer that grades several scenarios;
* ``graded_answer``: the exact response text (for short answers);
* in an answer that is prose, not JSON: a line ``graded_sha256: <hex>``.

A scripted answer with no tie, or tied to another response, gives
``inconclusive (scripted: no real judge)``, never a pass or a score, and the
reason names this response's sha256 so the author can tie it after reviewing
it. A real judge's answer is never checked: the tie is a property of scripts.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, Protocol, TypeVar

from harness.core.entities import AgentOutput
from harness.core.provenance import SCRIPTED
from harness.graded.kind import GradedKind

__all__ = ["INCONCLUSIVE", "MIN_PREFIX", "fingerprint", "honest", "rendered", "tie_problem"]



class Graded(Protocol):
    """What the check reads of a result: its item's name and where its answer came from."""

    @property
    def name(self) -> str: ...

    @property
    def source(self) -> str: ...


R = TypeVar("R", bound=Graded)

#: What an untied scripted answer reads as, in every report.
INCONCLUSIVE = "inconclusive (scripted: no real judge)"
#: The shortest sha256 prefix a script may give (64 bits: no accidental match).
MIN_PREFIX = 16
_PROSE_TIE = re.compile(r"^\s*graded_sha256:\s*([0-9a-fA-F]{16,64})\s*$", re.MULTILINE)


def rendered(output: AgentOutput) -> str:
    """The response as every judge prompt shows it: the text, then one line per tool call."""
    text = output.text or "(no text)"
    for call in output.tool_calls:
        text += f"\n-> tool call {call.name}({json.dumps(call.arguments, ensure_ascii=False)})"
    return text


def fingerprint(output: AgentOutput) -> str:
    """The sha256 (hex) of :func:`rendered`: what ``graded_sha256`` names.

    Every judge and rubric item of an iteration asks for the same output's: the last one is
    kept (an output is immutable, and the kept reference keeps its identity from being reused).
    """
    global _LAST_FINGERPRINT  # noqa: PLW0603 - a one-entry memo; a tuple swapped whole (threads)
    kept, found = _LAST_FINGERPRINT
    if kept is output:
        return found
    found = hashlib.sha256(rendered(output).encode("utf-8")).hexdigest()
    _LAST_FINGERPRINT = (output, found)
    return found


#: (output, fingerprint) of the last :func:`fingerprint` call, read and replaced as one tuple,
#: so a thread never pairs one output with another's fingerprint.
_LAST_FINGERPRINT: tuple[Any, str] = (None, "")


def _tie(content: str | None) -> tuple[list[str], str | None] | None:
    """(sha256 prefixes, exact answer) a judge answer declares; ``None`` when it declares none."""
    try:
        data: Any = json.loads(content or "")
    except ValueError:
        lines = _PROSE_TIE.findall(content or "")
        return ([s.lower() for s in lines], None) if lines else None
    if not isinstance(data, dict) or not ({"graded_sha256", "graded_answer"} & data.keys()):
        return None
    shas = data.get("graded_sha256") or []
    shas = [shas] if isinstance(shas, str) else [str(s) for s in shas if isinstance(s, str)]
    answer = data.get("graded_answer")
    return [s.lower() for s in shas], answer if isinstance(answer, str) else None


def tie_problem(content: str | None, output: AgentOutput) -> str | None:
    """Why a scripted judge answer does not grade ``output`` (``None``: it is tied to it)."""
    tie = _tie(content)
    mine = fingerprint(output)
    if tie is not None:
        shas, answer = tie
        if any(len(s) >= MIN_PREFIX and mine.startswith(s) for s in shas):
            return None
        if answer is not None and answer == rendered(output):
            return None
        return (f"{INCONCLUSIVE}: the script's answer grades another response; this one is "
                f"sha256 {mine}")
    return (f"{INCONCLUSIVE}: the script's answer names no response it grades (add "
            f"graded_sha256: {mine} after reviewing this response)")


def honest(kind: GradedKind[Any, R], results: Iterable[R], ties: dict[str, str | None],
           ) -> tuple[R, ...]:
    """Scripted results whose answer is not tied to the graded response become inconclusive.

    ``ties`` maps an item name to :func:`tie_problem` of its answer (absent: not checked);
    a real grader's answer (``source`` not ``scripted``) is never changed, and neither is a
    result with no verdict to take away."""
    found = []
    for result in results:
        problem = ties.get(result.name)
        if result.source == SCRIPTED and problem is not None and kind.graded(result):
            result = kind.inconclusive(result, problem)
        found.append(result)
    return tuple(found)
