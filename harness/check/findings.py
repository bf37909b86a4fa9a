"""The records a check produces: one :class:`Finding` per problem, one :class:`GuardResult` per guard.

They live apart from :mod:`harness.check` so every guard module can import
them without importing the package that imports the guards.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core.errors import printable


@dataclass(frozen=True)
class Finding:
    """One problem a guard found: where it is, what is wrong, and what to do about it."""

    guard: str
    file: str
    """Path relative to the project root (``/`` separators), or ``""`` for the project as a whole."""
    message: str
    fix: str = ""
    line: int | None = None
    field: str = ""

    def render(self) -> str:
        """``[guard] file:line: field: message`` and, on the next line, the fix."""
        where = self.file or "."
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": {self.field}"
        text = f"[{self.guard}] {where}: {self.message}"
        return printable(f"{text}\n    fix: {self.fix}" if self.fix else text)


@dataclass(frozen=True)
class GuardResult:
    """What one guard observed (``summary``) and every problem it found."""

    guard: str
    summary: str
    findings: tuple[Finding, ...] = ()
    skipped: bool = False
    """Nothing to do by design (``watch`` without ``--since``); a blind guard fails instead."""

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def status(self) -> str:
        return "FAIL" if self.findings else "skip" if self.skipped else "ok"


@dataclass(frozen=True)
class CheckReport:
    """Every guard's result; the check passes only when no guard found anything."""

    results: tuple[GuardResult, ...]

    @property
    def findings(self) -> tuple[Finding, ...]:
        return tuple(f for r in self.results for f in r.findings)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def exit_code(self) -> int:
        """0 when every guard passed, 1 otherwise (a CI gate has no third answer)."""
        return 0 if self.ok else 1

    def of(self, guard: str) -> GuardResult:
        """The result of one guard (``KeyError`` when it did not run)."""
        for result in self.results:
            if result.guard == guard:
                return result
        raise KeyError(guard)

    def render(self) -> str:
        """The terminal report: one status line per guard, then every finding with its fix."""
        width = max((len(r.guard) for r in self.results), default=0)
        lines = [f"{r.guard:<{width}}  {r.status:<4}  {r.summary}" for r in self.results]
        findings = self.findings
        if findings:
            lines.append("")
            lines.extend(f.render() for f in findings)
            failed = sum(not r.ok for r in self.results)
            lines.append("")
            lines.append(f"FAILED: {len(findings)} finding(s) from {failed} of "
                         f"{len(self.results)} guard(s)")
        else:
            lines.append("")
            lines.append(f"PASSED: {len(self.results)} guard(s), no finding")
        return "\n".join(lines)
