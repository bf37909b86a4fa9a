"""The symbolic-link rule: no symlink anywhere under the datasets or the cache root.

A symlink is committed by git as a tiny text file holding its target. It
works on the machine that made it and nowhere else: a Windows clone without
symlink support checks out that text, a fresh clone lacks the target outside
the repository, and a link inside the tree makes one file reachable under two
scenario ids. So ``run`` and ``check`` refuse every link under
``eval-datasets/`` (and ``eval-cache/``) with its path and the fix, instead of
reading through some links and refusing others.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from harness.core.errors import Problem, SymlinkError

RULE = "is a symbolic link; links are not allowed under {root} (they break in a fresh clone and on Windows)"
FIX = "replace the link with the real file or folder (git rm the link, copy the target in)"


def symlinks_under(root: Path) -> list[Path]:
    """Every symbolic link at or below ``root`` (links are reported, never followed), sorted."""
    if root.is_symlink():
        return [root]
    if not root.is_dir():
        return []
    found: list[Path] = []
    pending = [str(root)]  # strings: a Path per folder cost more than the listing (30k in a big cache)
    while pending:  # one listing per folder: the link bit comes with the listing
        with os.scandir(pending.pop()) as scan:
            for entry in scan:
                if entry.is_symlink():
                    found.append(Path(entry.path))
                elif entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return sorted(found)


def symlink_problems(root: Path, shown_root: str) -> list[Problem]:
    """One problem per link under ``root``, naming the path, the rule and the fix."""
    return [Problem(link, "", RULE.format(root=f"{shown_root}/"), FIX) for link in symlinks_under(root)]


def through_link(path: Path, root: Path) -> bool:
    """Whether ``path`` (inside ``root``) reaches its file through a link at or below ``root``."""
    current = Path(os.path.abspath(path))
    base = Path(os.path.abspath(root))
    while current != base and base in current.parents:
        if current.is_symlink():
            return True
        current = current.parent
    return base.is_symlink()


def refuse_symlinks(root: Path, shown_root: str, relative: Callable[[Path], str] = str,
                    links: list[Path] | None = None) -> None:
    """Raise :class:`~harness.core.errors.SymlinkError` (exit 2) naming every link under ``root``.

    ``run`` calls it on the cache root before any call: a run that passes on the
    machine with the link would fail in a fresh clone. ``links``: :func:`symlinks_under`
    of ``root`` when the caller has it already (walked in a helper during the load).
    """
    links = symlinks_under(root) if links is None else links
    if links:
        rule = RULE.format(root=f"{shown_root}/")
        listed = "\n  ".join(f"{relative(link)}: {rule}" for link in links)
        raise SymlinkError(f"{len(links)} symbolic link(s) found:\n  {listed}\nFix: {FIX}")
