"""Secrets guard: no API key, private key or personal data in the datasets or the committed cache.

The cache stores whole messages and is committed forever: a customer's email
pasted into a scenario, or a key echoed by a model, is in the git history of
every clone. Findings name the file, line and kind and never print the value
whole (a CI log is the second place a leaked value must not land).
Deliberate fake values go in an allowlist file: ``.harness-allowlist`` at the
project root, or the file named by ``[tool.harness] allowlist``. One value
per line, or ``regex:<pattern>`` (the whole value must match), ``#`` comments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from harness.check.context import CheckContext
from harness.check.credential_values import configured_secrets, find_values
from harness.check.detectors import detect_lines, mask
from harness.check.findings import Finding, GuardResult
from harness.loading.config import HarnessConfig

GUARD = "secrets"
DEFAULT_ALLOWLIST = ".harness-allowlist"
#: JSON and YAML escapes (``\n``, ``\"``, ``\u00e9``) glue words together; blank them, keep columns.
_ESCAPES = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[nrtbf\"\\/])")
_NUMERIC = re.compile(r"[\d\s().+/-]+")


@dataclass(frozen=True)
class Allowlist:
    """Deliberate fake values: literals, and compiled ``regex:`` patterns."""

    literals: frozenset[str]
    patterns: tuple[re.Pattern[str], ...]

    def allows(self, value: str) -> bool:
        if value in self.literals or any(p.fullmatch(value) for p in self.patterns):
            return True
        if _NUMERIC.fullmatch(value):  # "4111 1111 1111 1111" allows "4111-1111-1111-1111"
            digits = "".join(c for c in value if c.isdigit())
            return any(_NUMERIC.fullmatch(lit) and "".join(c for c in lit if c.isdigit()) == digits
                       for lit in self.literals)
        return False


def allowlist_path(config: HarnessConfig) -> tuple[Path, bool]:
    """The allowlist file and whether it was configured explicitly (then it must exist)."""
    if config.allowlist is not None:  # parsed (and checked) once, by load_config
        return config.allowlist, True
    return config.root / DEFAULT_ALLOWLIST, False


def load_allowlist(ctx: CheckContext, findings: list[Finding]) -> Allowlist:
    """Read the allowlist; a bad pattern or a configured-but-missing file is a finding."""
    path, explicit = allowlist_path(ctx.config)
    where = ctx.rel(path)
    if not path.is_file():
        if explicit:
            findings.append(Finding(GUARD, where, "the allowlist named by [tool.harness] allowlist does not "
                                    "exist", "create it, or remove the allowlist key"))
        return Allowlist(frozenset(), ())
    literals: set[str] = set()
    patterns: list[re.Pattern[str]] = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "is not UTF-8"
        findings.append(Finding(GUARD, where, f"the allowlist cannot be read ({reason})",
                                "save it as UTF-8 text, one value per line"))
        return Allowlist(frozenset(), ())
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("regex:"):
            try:
                patterns.append(re.compile(line[len("regex:"):].strip()))
            except re.error as exc:
                findings.append(Finding(GUARD, where, f"invalid regex ({exc})", "fix the pattern",
                                        line=number))
        else:
            literals.add(line)
    return Allowlist(frozenset(literals), tuple(patterns))


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def check(ctx: CheckContext) -> GuardResult:
    """Scan every dataset and cache file (each line of it); every finding fails."""
    findings: list[Finding] = []
    allowlist = load_allowlist(ctx, findings)
    files = (*ctx.dataset_files, *ctx.cache_files)
    fix = ("remove it (re-record the cache if the entry holds it); if it is a deliberate fake value, add "
           f"it to {ctx.rel(allowlist_path(ctx.config)[0])}")
    configured, problem = configured_secrets(ctx)
    if problem:
        findings.append(Finding(GUARD, ctx.rel(ctx.config.credentials_file or ctx.config.root),
                                f"the credentials file cannot be read, so the values of its keys cannot "
                                f"be looked for ({problem})", "fix the file (KEY=VALUE lines, UTF-8)"))
    key_fix = ("remove it and re-record what held it; then rotate the key: it may already be in "
               "the git history of every clone")
    allowed = 0
    for path in files:
        try:
            text = path.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            findings.append(Finding(GUARD, ctx.rel(path), f"cannot be read ({exc.strerror})",
                                    "fix its permissions: an unreadable file cannot be scanned"))
            continue
        spans: dict[int, list[tuple[int, int]]] = {}
        for number, start, end, secret in find_values(text, configured):
            spans.setdefault(number, []).append((start, end))
            findings.append(Finding(GUARD, ctx.rel(path), f"the value of {secret.variable} (from "
                                    f"{secret.source}) at column {start + 1}", key_fix, line=number,
                                    field=secret.variable))
        for number, hit in detect_lines(_ESCAPES.sub(_blank, text)):
            end = hit.start + len(hit.value)
            if any(s < end and hit.start < e for s, e in spans.get(number, ())):
                continue  # already reported as the configured key it is
            if allowlist.allows(hit.value):
                allowed += 1
                continue
            findings.append(Finding(GUARD, ctx.rel(path), f"{hit.kind} {mask(hit.value)} at column "
                                    f"{hit.start + 1}", fix, line=number, field=hit.kind))
    summary = f"{len(files)} file(s) scanned, {allowed} allowlisted value(s)"
    return GuardResult(GUARD, summary, tuple(findings))
