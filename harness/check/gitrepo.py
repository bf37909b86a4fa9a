"""Running real ``git`` for the guards, read-only.

The guards ask git itself (``ls-files``, ``check-ignore``, ``check-attr``,
``diff``) instead of re-implementing ignore or attribute rules: only git knows
every ``.gitignore``, ``info/exclude``, global ``core.excludesFile`` and macro
attribute in effect. Every command runs with ``--no-optional-locks`` so a
check never rewrites the index of the repository it observes.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class GitError(Exception):
    """A git command failed; the message carries the command and git's own words."""


@dataclass(frozen=True)
class GitRepo:
    """A git work tree seen from the project root (git paths are relative to ``cwd``)."""

    cwd: Path
    toplevel: Path

    def run(self, args: Sequence[str], *, stdin: str | None = None, ok_codes: tuple[int, ...] = (0,)) -> str:
        """Run ``git <args>`` in the project root and return stdout; raise :class:`GitError`."""
        return _git(self.cwd, args, stdin=stdin, ok_codes=ok_codes)

    def run_z(self, args: Sequence[str], *, stdin: Sequence[str] | None = None,
              ok_codes: tuple[int, ...] = (0,)) -> list[str]:
        """Like :meth:`run` for ``-z`` output: NUL-separated fields, input NUL-separated too."""
        text = None if stdin is None else "".join(f"{s}\0" for s in stdin)
        out = self.run(args, stdin=text, ok_codes=ok_codes)
        fields = out.split("\0")
        return fields[:-1] if fields and fields[-1] == "" else fields


def find_repo(root: Path) -> GitRepo | None:
    """The repository holding ``root``, or ``None`` when git is absent or ``root`` is not in one."""
    if shutil.which("git") is None:
        return None
    try:
        top = _git(root, ["rev-parse", "--show-toplevel"]).strip()
    except GitError:
        return None
    return GitRepo(cwd=root, toplevel=Path(top))


def _git(cwd: Path, args: Sequence[str], *, stdin: str | None = None,
         ok_codes: tuple[int, ...] = (0,)) -> str:
    command = ["git", "--no-optional-locks", *args]
    try:
        done = subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True,
                              encoding="utf-8", errors="surrogateescape", check=False)
    except OSError as exc:
        raise GitError(f"{' '.join(command)}: {exc}") from exc
    if done.returncode not in ok_codes:
        said = done.stderr.strip() or done.stdout.strip() or f"exit {done.returncode}"
        raise GitError(f"git {' '.join(args)}: {said}")
    return done.stdout


NOT_A_REPO = ("not a git repository; the git guards cannot observe the tree, and a guard that "
              "cannot observe must not pass")
NOT_A_REPO_FIX = "run the check inside the git checkout that commits the cache (git init, or clone)"
