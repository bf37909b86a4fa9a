"""Git addressability guard: every cache and dataset file is tracked or addable, none ignored.

An ignored entry is the quietest way to lose a committed cache: the refresh
writes it, ``git add`` skips it, CI misses. Ignore rules come from every
``.gitignore``, ``.git/info/exclude`` and the user's global
``core.excludesFile``, so the guard asks git (``check-ignore --no-index``,
which also catches a tracked file whose next re-record would be ignored)
instead of reading any of them itself. Outside a git repository the guard
cannot observe anything, and it fails rather than pass blind.
"""

from __future__ import annotations

from pathlib import Path

from harness.check.context import CheckContext, cannot_observe
from harness.check.findings import Finding, GuardResult
from harness.check.gitrepo import GitError

GUARD = "git"
_TRACKED = "; it is tracked, but its next re-record would be left out of the commit"


def check(ctx: CheckContext) -> GuardResult:
    """``git ls-files`` for tracked, ``git check-ignore`` for ignored; refuses an empty set."""
    blind = cannot_observe(ctx, GUARD, "addressability")
    if blind is not None:
        return blind
    assert ctx.repo is not None  # cannot_observe returned None: there is a repository
    files = [ctx.rel(p) for p in (*ctx.cache_files, *ctx.dataset_files)]
    try:
        tracked = set(ctx.repo.run_z(["ls-files", "-z", "--", ctx.cache_rel, ctx.datasets_rel]))
        rules = _ignored(ctx, files)
    except GitError as exc:
        return GuardResult(GUARD, "git failed", (Finding(GUARD, "", str(exc),
                                                          "fix the repository, then re-run"),))
    findings = tuple(
        Finding(GUARD, rel, f"ignored by git ({rule})" + (_TRACKED if rel in tracked else ""),
                f"remove or narrow that rule (or add a '!' exception after it) so {rel} can be committed")
        for rel, rule in sorted(rules.items())
    )
    untracked = len([f for f in files if f not in tracked])
    summary = (f"{len(files)} file(s): {len(files) - untracked} tracked, {untracked} untracked "
               f"(addable), {len(rules)} ignored")
    return GuardResult(GUARD, summary, findings)


def _ignored(ctx: CheckContext, files: list[str]) -> dict[str, str]:
    """``{path: "source:line:pattern"}`` for every path an ignore rule (not a ``!`` rule) matches."""
    assert ctx.repo is not None
    fields = ctx.repo.run_z(["check-ignore", "-z", "-v", "--no-index", "--stdin"], stdin=files,
                            ok_codes=(0, 1))
    rules: dict[str, str] = {}
    for index in range(0, len(fields) - 3, 4):
        source, line, pattern, path = fields[index:index + 4]
        if pattern.startswith("!"):
            continue  # a negated pattern matched: the path is explicitly NOT ignored
        rules[path] = f"{_shown(ctx, source)}:{line}: {pattern}"
    return rules


def _shown(ctx: CheckContext, source: str) -> str:
    """The rule's file relative to the project when it is inside it, else as git gave it."""
    assert ctx.repo is not None
    path = Path(source)
    if not path.is_absolute():
        path = ctx.repo.toplevel / path
    return ctx.rel(path.resolve()) if path.resolve().is_relative_to(ctx.config.root) else source
