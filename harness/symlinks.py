"""The one rule about symbolic links: none anywhere under eval-datasets/ or eval-cache/.

A committed symlink passes every run on the machine that made it and breaks in
a fresh clone: Windows (and any checkout with ``core.symlinks=false``) gets a
small text file holding the target path instead, so a tenant folder vanishes or
an entry turns corrupt on a colleague's machine. One rule for both trees keeps
it simple to state and to enforce: ``run`` refuses to start and ``check`` lists
every link, each named with its path.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from harness.errors import SymlinkError

RULE = ("eval-datasets/ and eval-cache/ must not contain symbolic links (a fresh clone on Windows, "
        "or with core.symlinks=false, gets a text file in their place)")
FIX = "replace the link with a copy of the file or folder it points to"


def find_symlinks(folder: Path) -> list[Path]:
    """Every symbolic link at or below ``folder`` (links are never followed), sorted."""
    if folder.is_symlink():
        return [folder]
    if not folder.is_dir():
        return []
    found: list[Path] = []
    pending = [folder]
    while pending:  # one listing per folder; the dirent says whether a child is a link (no stat)
        with os.scandir(pending.pop()) as scan:
            for child in scan:
                if child.is_symlink():
                    found.append(Path(child.path))
                elif child.is_dir(follow_symlinks=False):
                    pending.append(Path(child.path))
    return sorted(found)


def refuse_symlinks(folders: Iterable[Path], relative: Callable[[Path], str] = str) -> None:
    """Raise :class:`~harness.errors.SymlinkError` naming every link under ``folders``."""
    links = [link for folder in folders for link in find_symlinks(folder)]
    if links:
        listed = "\n  ".join(relative(link) for link in links)
        raise SymlinkError(f"{len(links)} symbolic link(s) found: {RULE}.\n  {listed}\nFix: {FIX}")
