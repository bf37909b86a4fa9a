"""``python -m harness check``: the guards that keep a committed cache honest.

Every guard runs, whatever the others found, and every finding is reported
together with its file and its fix, so one CI run gives the whole list. Each
guard is a small module with one job and a ``check(ctx) -> GuardResult``:

========== =====================================================================
datasets   every dataset file loads and validates (the loader's own problems)
stamp      the stamp is present and current, and TTLs are at least 365 days
budget     the worst relative path fits ``path_budget``; refuses an empty tree
git        every cache and dataset file is tracked or addable, none ignored
attributes ``-text`` on cache files, ``eol=lf`` on datasets and prompts
integrity  every entry parses, matches its folder, and has both files intact
unused     entries nothing references, and scenarios with no entry
secrets    API keys, private keys and personal data in datasets and cache
watch      with ``--since``: a watched path changed without a re-record
rerecord   iterations a failed refresh left on older answers; provenance an agent requires
========== =====================================================================

Guards that cannot observe what they guard (no git repository, an empty
tree, no watch globs with ``--since``) fail: a blind guard must not pass.

Stage ``check``: also ``prune`` (removing what no offline replay reads). May import
every stage up to ``run`` (a guard replays the selection to know what it reads).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from harness.check import attributes, budget, git, integrity, rerecord, secrets, stamp, unused, watch
from harness.check.context import CheckContext, build_context
from harness.check.findings import CheckReport, Finding, GuardResult
from harness.documents.manual import see
from harness.loading.config import HarnessConfig
from harness.loading.selecting import Selection

__all__ = ["GUARDS", "CheckReport", "Finding", "GuardResult", "run_checks"]

#: Every guard in report order; each is ``check(ctx) -> GuardResult``.
GUARDS: tuple[Callable[[CheckContext], GuardResult], ...] = (
    stamp.check, budget.check, git.check, attributes.check, integrity.check,
    unused.check, secrets.check, watch.check, rerecord.check,
)


def run_checks(config: HarnessConfig, selection: Selection | None = None, since: str | None = None,
               *, now: datetime | None = None) -> CheckReport:
    """Run every guard over one snapshot of the project and return all their findings.

    ``selection`` narrows the unused-entry guard to the scenarios it selects
    (the tree guards always cover the whole committed tree); ``since`` turns
    on the watch guard. A configuration error is raised before any guard runs.
    """
    ctx = build_context(config, selection or Selection(), since, now)
    return CheckReport((_datasets(ctx), *(guard(ctx) for guard in GUARDS)))


def _datasets(ctx: CheckContext) -> GuardResult:
    """The datasets' own validation problems, so a broken dataset is one more finding, not a crash."""
    if ctx.dataset is not None:
        selected = len(ctx.selection.apply(ctx.dataset.scenarios))
        return GuardResult("datasets", f"{len(ctx.dataset.scenarios)} scenario(s), {selected} selected")
    findings = tuple(
        Finding("datasets", ctx.rel(p.file) if not isinstance(p.file, str) else p.file, p.message,
                p.fix or see("formats"), field=p.field)
        for p in ctx.dataset_problems)
    return GuardResult("datasets", f"{len(findings)} problem(s): the unused guard is skipped", findings)
