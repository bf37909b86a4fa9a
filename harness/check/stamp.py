"""Stamp guard: the stamp is present and current, and nothing in the tree lives less than a year.

A missing stamp ("record the cache") and a stale pin ("re-record because the
harness changed") ask for different actions, so they stay distinct findings
with the codes of :mod:`harness.cache.stamp`. The TTL half exists because a
short TTL is a time bomb: the tree goes red months later on a day nobody
changed anything.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from harness.cache.stamp import check_stamp, stamp_path
from harness.cache.store import format_time
from harness.check.context import CheckContext
from harness.check.findings import Finding, GuardResult
from harness.core.rerecord import for_scenario, rerecord_command
from harness.loading.config import MIN_TTL_DAYS

GUARD = "stamp"
_REFRESH = rerecord_command()
_RECORD = rerecord_command(fix="missing")


def check(ctx: CheckContext) -> GuardResult:
    """Stamp present, current and with ``ttl_days`` >= 365; every entry's TTL >= 365 and unexpired."""
    findings: list[Finding] = []
    path = stamp_path(ctx.config.cache)
    where = ctx.rel(path)
    status = check_stamp(ctx.config.cache)
    if not status.ok:
        fix = {"eval-cache-missing-stamp":
               f"write it (records only what is missing, free with --scripted): {_RECORD}",
               "eval-cache-stale-pin": f"re-record every scenario (the key changed): {_REFRESH}"}
        findings.append(Finding(GUARD, where, str(status),
                                fix.get(status.code, f"re-record: {_REFRESH}")))
    else:
        ttl = _stamp_ttl(path)
        if not isinstance(ttl, int) or isinstance(ttl, bool) or ttl < MIN_TTL_DAYS:
            findings.append(Finding(
                GUARD, where, f"the stamp records ttl_days = {ttl!r}; it must be at least {MIN_TTL_DAYS}",
                f"set [tool.harness] ttl_days (default 730) and re-record: {_REFRESH}", field="ttl_days"))
    findings.extend(_entry_ttls(ctx))
    summary = "stamp current" if status.ok else status.code
    return GuardResult(GUARD, f"{summary}; {len(ctx.tree.entries)} entry TTL(s) checked", tuple(findings))


def _stamp_ttl(path: Path) -> object:
    """The stamp's ``ttl_days`` (``None`` when absent); check_stamp already proved it parses."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data.get("ttl_days") if isinstance(data, dict) else None


def _entry_ttls(ctx: CheckContext) -> list[Finding]:
    findings = []
    agents = ctx.dataset.agents if ctx.dataset is not None else None

    def hint(scenario_id: str) -> str:
        return for_scenario(agents, scenario_id).command(scenario_id)

    for entry in ctx.tree.entries:
        if entry.created is None or entry.expires is None:
            continue  # unreadable timestamps are the integrity guard's finding
        where = ctx.rel(entry.folder)
        if entry.expires - entry.created < timedelta(days=MIN_TTL_DAYS):
            days = (entry.expires - entry.created).days
            findings.append(Finding(
                GUARD, where, f"recorded with a TTL of {days} day(s), under {MIN_TTL_DAYS}",
                f"re-record with ttl_days >= {MIN_TTL_DAYS}: {hint(entry.scenario_id)}",
                field="expires"))
        elif entry.expires <= ctx.now:
            findings.append(Finding(
                GUARD, where, f"expired on {format_time(entry.expires)} (recorded "
                f"{format_time(entry.created)})",
                f"re-record: {hint(entry.scenario_id)}", field="expires"))
    return findings
