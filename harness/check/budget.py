"""Path budget guard: the worst relative path of the committed trees fits the budget.

Past Windows' MAX_PATH, git does not fail loudly: it warns "Filename too long",
commits part of the tree and exits 0, and every later canary over the tree
reports clean because git never saw the missing files. So the guard measures
the real files (cache and datasets), always prints the worst path and its
length, and refuses to pass over an empty entry tree: a canary over zero
files is blind.
"""

from __future__ import annotations

from harness.cache.layout import ENTRIES_DIR
from harness.check.context import CheckContext
from harness.check.findings import Finding, GuardResult
from harness.core.rerecord import rerecord_command

GUARD = "budget"


def check(ctx: CheckContext) -> GuardResult:
    """Every cache and dataset file's project-relative path is within ``path_budget``."""
    budget = ctx.config.path_budget
    entries_dir = ctx.config.cache / ENTRIES_DIR
    entry_files = [p for p in ctx.cache_files if p.is_relative_to(entries_dir)]
    if not entry_files:
        return GuardResult(GUARD, "no entry file to measure", (Finding(
            GUARD, ctx.rel(entries_dir),
            "holds no file: the path budget cannot be checked over an empty tree (a canary over "
            "zero files is blind)",
            "record the cache (" + rerecord_command(fix="missing") + "), or fix [tool.harness] cache"),))
    paths = sorted((ctx.rel(p) for p in (*ctx.cache_files, *ctx.dataset_files)),
                   key=lambda rel: (-len(rel), rel))
    worst = paths[0]
    findings = tuple(
        Finding(GUARD, rel,
                f"{len(rel)} characters, over the path budget of {budget} (Windows MAX_PATH 260 "
                "minus room for the checkout root): git may silently leave it out of a clone",
                f"shorten the agent, tenant or scenario name by {len(rel) - budget} characters")
        for rel in paths if len(rel) > budget
    )
    summary = f"worst path {len(worst)}/{budget} chars over {len(paths)} file(s): {worst}"
    return GuardResult(GUARD, summary, findings)
