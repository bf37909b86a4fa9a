"""Watch guard (``--since REF``): a watched prompt or model path changed, and the cache was not re-recorded.

``[tool.harness] watch`` lists the paths that count as prompt or model changes
(prompt files kept outside the datasets, a model registry, provider config).
A change to one of them since REF (``git diff`` against the working tree,
plus untracked files) without any change under the cache folder in the same
change means the committed answers were recorded against the old prompt.
The cache and dataset folders never count as watched: re-recording must not
trigger its own rule, and a dataset change already shows up as a miss.

What it cannot see, by construction: a prompt published straight to a
database, a model swapped by an environment variable on the deploy side, and
a trivially green eval (one scenario, one empty assertion).
"""

from __future__ import annotations

import re
from functools import cache

from harness.check.context import CheckContext
from harness.check.findings import Finding, GuardResult
from harness.check.gitrepo import NOT_A_REPO, NOT_A_REPO_FIX, GitError
from harness.core.rerecord import rerecord_command

GUARD = "watch"


@cache
def glob_regex(glob: str) -> re.Pattern[str]:
    """A project-relative glob as a regex: ``**`` spans folders, ``*`` and ``?`` stay in one.

    A glob also covers everything below what it matches, so ``prompts`` and
    ``prompts/**`` both watch every file under ``prompts/``.
    """
    glob = glob.strip().removeprefix("./").rstrip("/") if glob.strip() not in ("", ".") else "**"
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2:]:
            end = glob.index("]", i + 2)
            body = glob[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"(?:/.*)?\Z")


def watched(path: str, globs: tuple[str, ...], excluded: tuple[str, ...]) -> str | None:
    """The first glob that watches ``path``, or ``None`` (paths under ``excluded`` never count)."""
    if any(path == e or path.startswith(f"{e}/") for e in excluded):
        return None
    return next((g for g in globs if glob_regex(g).match(path)), None)


def changed_paths(ctx: CheckContext, ref: str) -> list[str]:
    """Project-relative paths changed since ``ref``: committed, staged, unstaged and untracked."""
    assert ctx.repo is not None
    try:
        ctx.repo.run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"])
    except GitError:
        raise GitError(f"{ref!r} is not a commit in this repository") from None
    diff = ctx.repo.run_z(["diff", "--name-only", "--no-renames", "--relative", "-z", ref, "--"])
    untracked = ctx.repo.run_z(["ls-files", "--others", "--exclude-standard", "-z"])
    return sorted(set(diff) | set(untracked))


def check(ctx: CheckContext) -> GuardResult:
    """Only with ``--since``: fail when a watched path changed and nothing under the cache did."""
    if ctx.since is None:
        return GuardResult(GUARD, "not asked (use --since REF)", skipped=True)
    if not ctx.config.watch:
        return GuardResult(GUARD, "blind: no watch globs", (Finding(
            GUARD, "pyproject.toml", f"--since {ctx.since} was asked, but no watch glob is declared, so "
            "no prompt or model change can be seen",
            'declare [tool.harness] watch = ["prompts/**", "config/models.json"]', field="watch"),))
    if ctx.repo is None:
        return GuardResult(GUARD, "blind: no git repository",
                           (Finding(GUARD, "", NOT_A_REPO, NOT_A_REPO_FIX),))
    try:
        changed = changed_paths(ctx, ctx.since)
    except GitError as exc:
        return GuardResult(GUARD, f"cannot diff against {ctx.since}", (Finding(
            GUARD, "", f"cannot list the changes since {ctx.since}: {exc}",
            "pass a ref that exists here (fetch it first in a shallow CI clone)"),))
    excluded = (ctx.cache_rel, ctx.datasets_rel)
    hits = [(path, glob) for path in changed if (glob := watched(path, ctx.config.watch, excluded))]
    recorded = [p for p in changed if p.startswith(f"{ctx.cache_rel}/")]
    summary = (f"{len(changed)} path(s) changed since {ctx.since}, {len(hits)} watched, "
               f"{len(recorded)} under {ctx.cache_rel}/")
    if not hits or recorded:
        return GuardResult(GUARD, summary)
    findings = tuple(
        Finding(GUARD, path, f"changed since {ctx.since} and matches watch glob '{glob}', but nothing "
                f"under {ctx.cache_rel}/ was re-recorded in the same change: the committed answers "
                "were recorded against the old prompt or model",
                f"re-record the affected scenarios ({rerecord_command()} --scenario <id>) "
                f"and commit {ctx.cache_rel}/ with this change")
        for path, glob in hits)
    return GuardResult(GUARD, summary, findings)
