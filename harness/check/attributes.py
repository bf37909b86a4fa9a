"""``.gitattributes`` guard: payload bytes survive a clone, and prompts hash the same on every OS.

Without ``<cache>/** -text`` a repository's ``text=auto`` normalises the
payloads and the sha256 in entry.json stops matching after a clone; without
``eol=lf`` on datasets and prompt files a Windows checkout hashes CRLF text into
different keys. The guard asks ``git check-attr`` what is in effect for every
file, so a macro, a later line or a nested ``.gitattributes`` is accounted for.
"""

from __future__ import annotations

from pathlib import Path

from harness.check.context import CheckContext, cannot_observe
from harness.check.findings import Finding, GuardResult
from harness.check.gitrepo import GitError

GUARD = "attributes"


def check(ctx: CheckContext) -> GuardResult:
    """``text`` unset for every cache file; ``eol=lf`` for every dataset file and prompt file."""
    blind = cannot_observe(ctx, GUARD, "attributes")
    if blind is not None:
        return blind
    payloads = [ctx.rel(p) for p in ctx.cache_files]
    texts = sorted({ctx.rel(p) for p in (*ctx.dataset_files, *_prompt_files(ctx))})
    try:
        attrs = _check_attr(ctx, [*payloads, *texts])
    except GitError as exc:
        return GuardResult(GUARD, "git failed", (Finding(GUARD, "", str(exc),
                                                          "fix the repository, then re-run"),))
    findings = [
        Finding(GUARD, rel, f"git check-attr reports text: {attrs[rel]['text']}; cache payloads must "
                "have text unset, or git may convert line endings and break the recorded sha256",
                f"add '{ctx.cache_rel}/** -text' to .gitattributes", field="text")
        for rel in payloads if attrs.get(rel, {}).get("text") != "unset"
    ]
    findings += [
        Finding(GUARD, rel, f"git check-attr reports eol: {attrs[rel]['eol']}; datasets and prompt "
                "files must be eol=lf so every checkout hashes the same bytes into the key",
                f"add '{_pattern_for(ctx, rel)} text eol=lf' to .gitattributes", field="eol")
        for rel in texts if attrs.get(rel, {}).get("eol") != "lf"
    ]
    summary = f"{len(payloads)} cache file(s) -text, {len(texts)} dataset/prompt file(s) eol=lf"
    return GuardResult(GUARD, summary, tuple(findings))


def _prompt_files(ctx: CheckContext) -> list[Path]:
    """System prompt files, which may live outside the datasets folder."""
    if ctx.dataset is None:
        return []
    return [a.system_prompt_file for a in ctx.dataset.agents.values()
            if a.system_prompt_file is not None and a.system_prompt_file.is_file()]


def _check_attr(ctx: CheckContext, paths: list[str]) -> dict[str, dict[str, str]]:
    assert ctx.repo is not None
    fields = ctx.repo.run_z(["check-attr", "-z", "--stdin", "text", "eol"], stdin=paths)
    attrs: dict[str, dict[str, str]] = {}
    for index in range(0, len(fields) - 2, 3):
        path, name, value = fields[index:index + 3]
        attrs.setdefault(path, {})[name] = value
    return attrs


def _pattern_for(ctx: CheckContext, rel: str) -> str:
    datasets = ctx.datasets_rel
    return f"{datasets}/**" if rel.startswith(f"{datasets}/") else rel
