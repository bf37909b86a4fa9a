"""Integrity guard: every entry of the whole tree can be trusted, and every corrupt one is listed.

An offline run only reads the entries its scenarios ask for, so a torn or
hand-edited entry elsewhere in the tree waits silently for the day someone
selects it. The guard reads them all: entry.json parses, its full key starts
with the folder name, it sits under the scenario and iteration it names, both
files exist and the payload matches its sha256. Leftover temporary folders of
killed writes and files outside the layout are listed too.
"""

from __future__ import annotations

from harness.check.context import CheckContext
from harness.check.findings import Finding, GuardResult
from harness.core.rerecord import for_scenario

GUARD = "integrity"


def check(ctx: CheckContext) -> GuardResult:
    """One finding per reason per corrupt entry, plus temporary leftovers and stray files."""
    findings: list[Finding] = []
    corrupt = 0
    agents = ctx.dataset.agents if ctx.dataset is not None else None

    def hint(scenario_id: str) -> str:
        return for_scenario(agents, scenario_id).command(scenario_id)

    for entry in ctx.tree.entries:
        if entry.problems:
            corrupt += 1
        findings.extend(
            Finding(GUARD, ctx.rel(entry.folder), f"corrupt entry: {reason}",
                    f"re-record it ({hint(entry.scenario_id)}), or delete the folder")
            for reason in entry.problems)
    findings.extend(
        Finding(GUARD, ctx.rel(temp), "leftover temporary write of a killed or crashed refresh",
                "python -m harness prune (removes it; never run it during a refresh)")
        for temp in ctx.tree.temps)
    findings.extend(
        Finding(GUARD, ctx.rel(path), reason, "move or delete it") for path, reason in ctx.tree.strays)
    total = len(ctx.tree.entries)
    summary = f"{total - corrupt} of {total} entr{'y' if total == 1 else 'ies'} intact"
    if ctx.tree.temps:
        summary += f", {len(ctx.tree.temps)} temporary leftover(s)"
    return GuardResult(GUARD, summary, tuple(findings))
