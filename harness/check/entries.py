"""A read-only survey of the committed entry tree, shared by the integrity and unused guards and prune.

``<cache>/cache/<agent>/<tenant>/<name>/<iteration>/<key16>/{entry.json, contents.data}``:
the location of a folder says which scenario iteration it belongs to, and
``entry.json`` must agree. Everything that does not fit the layout is kept as
a problem with its reason, never silently skipped: a survey that skips what
it does not understand is a guard that cannot fail.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.cache.layout import CONTENTS_FILE, ENTRIES_DIR, ENTRY_FILE
from harness.cache.verify import verify_entry
from harness.documents.atomic import TEMP_PREFIX
from harness.documents.links import RULE as SYMLINK_RULE
from harness.requests.key import SHORT_KEY_LENGTH

_DEPTH = 5  # agent / tenant / name / iteration / key16
_SHORT_KEY = re.compile(rf"[0-9a-f]{{{SHORT_KEY_LENGTH}}}")
#: The fields of entry.json an :class:`EntryRecord` keeps: its identity, its purpose (agent or
#: judge), and where its answer came from (the rerecord guard).
KEPT_FIELDS = ("key", "scenario", "iteration", "purpose", "provenance")


@dataclass(frozen=True)
class EntryRecord:
    """One entry folder as found on disk, with every reason it cannot be trusted."""

    folder: Path
    scenario_id: str
    iteration: int | None
    meta: dict[str, Any] | None
    """What the guards read of the parsed entry.json (:data:`KEPT_FIELDS`), or ``None`` when it
    is missing or unreadable. Not all of it: a survey holds every entry of the tree at once, and
    the stored request is most of an entry (50,000 whole entries held 0.6 GB)."""
    problems: tuple[str, ...]
    created: datetime | None = None
    expires: datetime | None = None

    @property
    def key(self) -> str | None:
        key = (self.meta or {}).get("key")
        return key if isinstance(key, str) else None  # a non-string key is one of the problems

    @property
    def purpose(self) -> str:
        """``""`` for an agent entry, ``judge:<name>`` for a judge entry."""
        purpose = (self.meta or {}).get("purpose")
        return purpose if isinstance(purpose, str) else ""


@dataclass(frozen=True)
class CacheTree:
    """Every entry folder, every leftover temporary write and everything outside the layout."""

    entries: tuple[EntryRecord, ...]
    temps: tuple[Path, ...]
    strays: tuple[tuple[Path, str], ...]


def scan_tree(cache_root: Path) -> CacheTree:
    """Survey ``<cache>/cache/`` without modifying anything."""
    entries: list[EntryRecord] = []
    temps = sorted(p for p in cache_root.glob(f"*{TEMP_PREFIX}*") if p.is_file())
    strays: list[tuple[Path, str]] = []
    base = cache_root / ENTRIES_DIR
    if base.is_symlink():
        strays.append((base, SYMLINK_RULE.format(root=f"{cache_root.name}/")))
    elif base.is_dir():
        _walk(base, base, 0, entries, temps, strays)
    return CacheTree(tuple(entries), tuple(temps), tuple(strays))


def _walk(base: Path, folder: Path, depth: int, entries: list[EntryRecord], temps: list[Path],
          strays: list[tuple[Path, str]]) -> None:
    with os.scandir(folder) as scan:  # the entry types come with the listing: no stat per child
        children = sorted((Path(e.path), e.is_dir(follow_symlinks=False), e.is_symlink()) for e in scan)
    for child, is_dir, is_link in children:
        if is_link:
            strays.append((child, SYMLINK_RULE.format(root=f"{base.parent.name}/")))
        elif child.name.startswith(TEMP_PREFIX):
            temps.append(child)
        elif not is_dir:
            strays.append((child, "a file outside any entry folder (the layout is "
                                  "<agent>/<tenant>/<scenario>/<iteration>/<key16>/)"))
        elif depth + 1 == _DEPTH:
            entries.append(inspect_entry(child, child.relative_to(base)))
        else:
            _walk(base, child, depth + 1, entries, temps, strays)


def inspect_entry(folder: Path, location: Path) -> EntryRecord:
    """Read one entry folder; ``location`` is ``agent/tenant/name/iteration/key16``.

    The entry itself is verified by :func:`harness.cache.verify.verify_entry`, the
    verifier a run uses, so ``check`` and ``run`` accept the same entries with the
    same reasons; the layout (folder names, extra files) is this survey's part.
    """
    parts = location.parts
    scenario_id = "/".join(parts[:3])
    problems: list[str] = []
    iteration = int(parts[3]) if parts[3].isdigit() and str(int(parts[3])) == parts[3] else None
    if iteration is None:
        problems.append(f"iteration folder '{parts[3]}' is not a plain number (0, 1, 2...)")
    if not _SHORT_KEY.fullmatch(folder.name):
        problems.append(f"folder name '{folder.name}' is not a {SHORT_KEY_LENGTH}-hex key prefix")
    with os.scandir(folder) as scan:
        for child in sorted(scan, key=lambda c: c.name):
            if child.name not in (ENTRY_FILE, CONTENTS_FILE):
                kind = "symbolic link" if child.is_symlink() else (
                    "folder" if child.is_dir(follow_symlinks=False) else "file")
                problems.append(f"unexpected {kind} '{child.name}'")
    found = verify_entry(str(folder), scenario_id, iteration, folder.name)
    problems.extend(found.problems)
    kept = None if found.meta is None else {
        name: found.meta[name] for name in KEPT_FIELDS if name in found.meta}
    return EntryRecord(folder, scenario_id, iteration, kept, tuple(problems), found.created,
                       found.expires)
