"""Guard ``rerecord``: answers a failed refresh left in place, and provenance an agent requires.

Every iteration listed in ``rerecord-failed.json`` (:mod:`harness.cache.rerecords`)
is named in the guard's line, gated or not, so a green ``check`` still says
which answers are older than their last refresh. For an agent with
``require_provenance: provider`` (agent.yaml, or the ``[tool.harness]``
default) each such iteration is a finding, and so is each iteration whose
committed entries were not recorded from a provider (scripted, or with no
provenance): the rule ``run`` applies to the same agent
(:mod:`harness.running.provenance_gate`). A file that cannot be read is a finding.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.cache.rerecords import FailedRerecord, RerecordFileInvalid, failed_path, read_failed
from harness.check.context import CheckContext
from harness.check.findings import Finding, GuardResult
from harness.core.provenance import PROVIDER, call_source
from harness.core.rerecord import rerecord_command

GUARD = "rerecord"
#: Iterations named in the guard's one line.
_SHOWN = 5


def check(ctx: CheckContext) -> GuardResult:
    file = ctx.rel(failed_path(ctx.config.cache))
    try:
        marks = read_failed(ctx.config.cache)
    except RerecordFileInvalid as exc:
        return GuardResult(GUARD, f"{file} cannot be read", (Finding(
            GUARD, file, str(exc), "restore it from git, or re-record the scenarios it named and "
            "delete it"),))
    required = _requiring_provider(ctx)
    findings: list[Finding] = []
    for index, (_key, mark) in enumerate(sorted(marks.items())):
        if mark.scenario.split("/", 1)[0] in required:
            findings.append(Finding(
                GUARD, file, f"{mark.describe()}; agent {mark.scenario.split('/', 1)[0]} requires "
                "answers from its provider (require_provenance: provider)",
                f"re-record it: {rerecord_command(mark.scenario)}", field=f"iterations[{index}]"))
    seen: set[tuple[str, int | None]] = set()
    for entry in ctx.tree.entries:
        agent = entry.scenario_id.split("/", 1)[0]
        where = (entry.scenario_id, entry.iteration)
        if agent not in required or entry.meta is None or where in seen:
            continue
        if call_source(entry.meta) != PROVIDER:
            seen.add(where)
            findings.append(Finding(
                GUARD, ctx.rel(entry.folder / "entry.json"),
                f"{entry.scenario_id}[{entry.iteration}] replays an answer not recorded from the "
                f"provider (scripted or of unknown origin); agent {agent} requires answers from "
                "its provider (require_provenance: provider)",
                f"re-record it against the provider: {rerecord_command(entry.scenario_id)}",
                field="provenance.source"))
    return GuardResult(GUARD, _summary(marks, file, required), tuple(findings))


def _requiring_provider(ctx: CheckContext) -> set[str]:
    """Agents whose answers must come from their provider."""
    default = ctx.config.require_provenance
    if ctx.dataset is None:  # the datasets guard reports why; the project default still holds
        return set() if default != "provider" else {e.scenario_id.split("/", 1)[0]
                                                    for e in ctx.tree.entries}
    return {name for name, agent in ctx.dataset.agents.items()
            if (agent.require_provenance or default) == "provider"}


def _summary(marks: Mapping[tuple[str, int], FailedRerecord], file: str, required: set[str]) -> str:
    if not marks:
        gate = f"; {len(required)} agent(s) require provider answers" if required else ""
        return f"no iteration replays answers a failed refresh left{gate}"
    labels = [f"{scenario}[{iteration}]" for scenario, iteration in sorted(marks)]
    more = f", ... ({len(labels)} in all)" if len(labels) > _SHOWN else ""
    return (f"{len(labels)} iteration(s) replay older answers, their last refresh failed "
            f"({file}): {', '.join(labels[:_SHOWN])}{more}")
