"""The graded call: asked through the iteration's cache-backed client, never raised.

The call goes through the same :class:`~harness.clients.caching.BoundClient` as
the agent's own call, so it is recorded with ``--refresh-cache`` and replayed
offline under ``<scenario>/<iteration>/<key16>/``, keyed by the grader's
provider and model, with ``"purpose": "<kind>:<name>"`` in ``entry.json`` (never
in the key). What differs from the agent's call is the failure policy: a grader
that cannot answer (a miss, a provider error) gives a ``not_evaluated`` result
with a warning and leaves the iteration's status alone. Under ``--batch`` a
call is deferred (:class:`~harness.refresh.deferral.CallDeferred`): every call
of the iteration is still asked, so all of them go in one round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from harness.core.entities import AgentOutput, ChatResponse, JsonObject
from harness.core.errors import HarnessError
from harness.graded.answer import read_answer
from harness.graded.honesty import tie_problem
from harness.graded.kind import GradedKind
from harness.refresh.deferral import CallDeferred

__all__ = ["NO_ANSWER", "GraderClient", "grade", "grade_each", "not_evaluated"]

R = TypeVar("R")

#: The reason of a result whose grader gave no answer (the warning says why).
NO_ANSWER = "the judge gave no answer"


class GraderClient(Protocol):
    """What a graded call needs from the iteration's client (``BoundClient`` satisfies it)."""

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        """Answer a request as ``provider``/``model``, cached under the scenario iteration."""
        ...


def grade(kind: GradedKind[Any, R], item: Mapping[str, Any], grading: JsonObject,
          client: GraderClient, output: AgentOutput, ties: dict[str, str | None] | None) -> R:
    """Ask the grader of ``item`` (its resolved ``provider``/``model``) and read its answer.

    ``ties``, when given, receives whether the answer is tied to ``output``
    (:func:`~harness.graded.honesty.tie_problem`), for the caller that learns later
    which answers were scripted. Raises only :class:`CallDeferred`."""
    name = str(item["name"])
    try:
        response = client.complete(grading, provider=str(item["provider"]),
                                   model=str(item["model"]), purpose=kind.purpose(name))
    except HarnessError as exc:
        return kind.missing(item, NO_ANSWER, f"{kind.name} {name}: {exc}")
    verdict, reason = read_answer(kind.reader, response.content)
    if ties is not None:
        ties[name] = tie_problem(response.content, output)
    return kind.result(item, verdict, reason)


def grade_each(asks: Iterable[Callable[[], R]]) -> tuple[R, ...]:
    """Every ask's result, in order; a deferred call does not stop the others
    (``--batch`` queues every call of the iteration in one round), then is raised."""
    results = []
    deferred: CallDeferred | None = None
    for ask in asks:
        try:
            results.append(ask())
        except CallDeferred as exc:
            deferred = exc
    if deferred is not None:
        raise deferred
    return tuple(results)


def not_evaluated(kind: GradedKind[Any, R], items: Iterable[Mapping[str, Any]],
                  reason: str) -> tuple[R, ...]:
    """Results of items no call was made for (the agent produced no output to grade)."""
    return tuple(kind.missing(item, reason, "") for item in items)
