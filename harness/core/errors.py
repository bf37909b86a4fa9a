"""Exception classes with stable codes.

A code (``eval-cache-miss``, ``eval-dataset-invalid``...) is what scripts, CI
logs and docs refer to; the message text may improve, the code does not.
Exit codes: configuration and dataset errors are 2, evaluation failures 1.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from harness.core.rerecord import rerecord_command

__all__ = ["CacheCorrupt", "CacheError", "CacheExpired", "CacheMiss", "ConfigError", "CredentialsMissing",
           "DatasetError", "HarnessError", "Problem", "ProviderError", "ScriptError", "SymlinkError",
           "rerecord_command"]


def printable(text: str) -> str:
    """``text`` safe to print, log and write as UTF-8.

    A file name holding bytes that are not UTF-8 reaches Python as lone
    surrogates, which every UTF-8 writer refuses with a traceback: such bytes
    are shown as ``\\xNN`` instead.
    """
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte (from a JSON \\ud800)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


class HarnessError(Exception):
    """Base class: every error the harness raises on purpose has a code."""

    code = "eval-error"
    exit_code = 1

    def __str__(self) -> str:
        return f"{self.code}: {super().__str__()}"


class ConfigError(HarnessError):
    """``[tool.harness]`` is invalid; the run cannot start."""

    code = "eval-config-invalid"
    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One problem found in one file, with the field and the fix."""

    file: Path | str
    field: str
    message: str
    fix: str = ""

    def render(self, root: Path | None = None) -> str:
        """One line a person can act on: ``file: field: message (fix)``."""
        path = self.file
        if root is not None and isinstance(path, Path):
            with contextlib.suppress(ValueError):
                path = path.relative_to(root)
        where = f"{path}: {self.field}" if self.field else f"{path}"
        fix = f" Fix: {self.fix}" if self.fix else ""
        return printable(f"{where}: {self.message}.{fix}")


class DatasetError(HarnessError):
    """Datasets failed validation. Carries every problem of every file at once."""

    code = "eval-dataset-invalid"
    exit_code = 2

    def __init__(self, problems: list[Problem], root: Path | None = None) -> None:
        self.problems = problems
        self.root = root
        lines = [p.render(root) for p in problems]
        super().__init__(f"{len(problems)} problem(s) in the datasets:\n  " + "\n  ".join(lines))


class CacheError(HarnessError):
    """A cache lookup did not produce a usable response for a scenario iteration."""

    code = "eval-cache-error"
    status = "error"

    def with_hint(self, command: str) -> CacheError:
        """The same error with the re-record command appended (built by :mod:`harness.core.rerecord`)."""
        hinted = type(self)(f"{self.args[0] if self.args else ''} Re-record: {command}")
        hinted.__cause__ = self.__cause__
        return hinted


class CacheMiss(CacheError):
    """No entry for the key. In CI this is the verdict, never a skip."""

    code = "eval-cache-miss"
    status = "missed"


class CacheExpired(CacheError):
    """The entry exists but its TTL has passed. It is reported, never deleted."""

    code = "eval-cache-expired"
    status = "expired"


class CacheCorrupt(CacheError):
    """The entry exists but cannot be trusted (unreadable, torn, wrong key)."""

    code = "eval-cache-corrupt"
    status = "corrupt"


class ProviderError(HarnessError):
    """A provider call failed (network, HTTP status, malformed answer)."""

    code = "eval-provider-error"


class ScriptError(ProviderError):
    """The scripted fake provider has no usable answer for a call."""

    code = "eval-script-missing"


class CredentialsMissing(ConfigError):
    """A recording run needs a provider key that is set nowhere; nothing was called."""

    code = "eval-credentials-missing"


class SelectionEmpty(ConfigError):
    """A filter (``--agent``, ``--tenant``, ``--type``, ``--scenario``) selects nothing: a typo, not
    a green run of zero scenarios. The message names the values that exist."""

    code = "eval-selection-empty"


class ProjectNotFound(ConfigError):
    """No harness project from the current folder upward (no ``[tool.harness]``, no datasets
    folder): the command was run in the wrong place, or the repository has not adopted it yet."""

    code = "eval-project-not-found"


class SymlinkError(ConfigError):
    """A symbolic link under eval-datasets/ or eval-cache/: a fresh clone would not reproduce it."""

    code = "eval-symlink"


class StampNewer(ConfigError):
    """A recording run over a cache whose stamp names a newer cache format than this harness's."""

    code = "eval-cache-newer-format"


class WriteFailed(HarnessError, OSError):
    """A file of the run could not be written (a full disk, a read-only tree, no permission):
    the run stops at once, since every later write would fail the same way. Still an
    ``OSError``, so every caller that handled the raw error handles the named one."""

    code = "eval-write-failed"
    exit_code = 2
