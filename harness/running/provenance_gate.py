"""``require_provenance: provider``: an agent whose answers must come from its real provider.

The example caches are seeded from scripts, and a failed ``--refresh-cache``
leaves the older answer in place (:mod:`harness.cache.rerecords`). Both replay
like any answer. A project that wants its gate to mean "this is what the model
answered" sets ``require_provenance: provider`` in ``agent.yaml`` (or as the
project default in ``[tool.harness]``); then an iteration that would pass fails
(status ``error``, code ``eval-provenance-required``) when any answer it read
(agent, tool-loop follow-up, judge or rubric call) was not recorded from a
provider (scripted, or recorded by a version that kept no provenance), or when
its last refresh did not obtain every answer. ``check`` applies the same rule
to the committed tree. The default, ``any``, gates nothing: the failed
re-records are still listed by ``run`` and ``check``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from harness.cache.rerecords import FailedRerecord
from harness.core.declared import Agent
from harness.core.provenance import PROVIDER, call_source
from harness.core.rerecord import rerecord_command
from harness.results.record import IterationResult

CODE = "eval-provenance-required"


def requirement(agent: Agent, project_default: str) -> str:
    """The agent's own ``require_provenance``, else the project's, else ``any``."""
    return agent.require_provenance or project_default or "any"


def not_from_provider(calls: Iterable[object]) -> list[str]:
    """Purposes (``""``: the agent's call) of the calls whose answer no provider recorded."""
    found: list[str] = []
    for call in calls:
        if call_source(call) != PROVIDER:
            purpose = str(getattr(call, "purpose", "") if not isinstance(call, dict)
                          else call.get("purpose") or "")
            if purpose not in found:
                found.append(purpose)
    return found


def gate(result: IterationResult, required: str, mark: FailedRerecord | None) -> IterationResult:
    """``result`` failed with the reason when ``required`` is ``provider`` and an answer it read
    was not obtained from the provider; a failing iteration keeps its own status."""
    if required != "provider" or result.status != "passed":
        return result
    reasons = []
    sourced = not_from_provider(result.calls)
    if sourced:
        reasons.append("answer(s) not recorded from the provider (scripted or of unknown origin): "
                       + ", ".join(p or "the agent's call" for p in sourced))
    if mark is not None:
        reasons.append(f"its last refresh failed, so it replays older answers ({mark.describe()})")
    if not reasons:
        return result
    scenario = result.scenario
    message = (f"{CODE}: agent {scenario.agent} requires answers from its provider "
               f"(require_provenance: provider); {'; '.join(reasons)}. Fix: re-record against the "
               f"provider: {rerecord_command(scenario.id)}")
    return replace(result, status="error", message=message)
