"""A read-only survey of the committed entry tree, shared by the integrity and unused guards and prune.

``<cache>/cache/<agent>/<tenant>/<name>/<iteration>/<key16>/{entry.json, contents.data}``:
the location of a folder says which scenario iteration it belongs to, and
``entry.json`` must agree. Everything that does not fit the layout is kept as
a problem with its reason, never silently skipped: a survey that skips what
it does not understand is a guard that cannot fail.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.cache.layout import CONTENTS_FILE, ENTRIES_DIR, ENTRY_FILE
from harness.cache.store import parse_time, response_from_json
from harness.key import SHORT_KEY_LENGTH
from harness.strictload import load_json

#: Prefix of the folders (and stamp files) a write builds before renaming them into place.
TEMP_PREFIX = ".tmp-"
_DEPTH = 5  # agent / tenant / name / iteration / key16
_FULL_KEY = re.compile(r"[0-9a-f]{64}")
_SHORT_KEY = re.compile(rf"[0-9a-f]{{{SHORT_KEY_LENGTH}}}")


@dataclass(frozen=True)
class EntryRecord:
    """One entry folder as found on disk, with every reason it cannot be trusted."""

    folder: Path
    scenario_id: str
    iteration: int | None
    meta: dict[str, Any] | None
    """The parsed entry.json, or ``None`` when it is missing or unreadable."""
    problems: tuple[str, ...]
    created: datetime | None = None
    expires: datetime | None = None

    @property
    def key(self) -> str | None:
        key = (self.meta or {}).get("key")
        return key if isinstance(key, str) else None

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
    if base.is_dir():
        _walk(base, base, 0, entries, temps, strays)
    return CacheTree(tuple(entries), tuple(temps), tuple(strays))


def _walk(base: Path, folder: Path, depth: int, entries: list[EntryRecord], temps: list[Path],
          strays: list[tuple[Path, str]]) -> None:
    with os.scandir(folder) as scan:  # the entry types come with the listing: no stat per child
        children = sorted((Path(e.path), e.is_dir()) for e in scan)
    for child, is_dir in children:
        if child.name.startswith(TEMP_PREFIX):
            temps.append(child)
        elif not is_dir:
            strays.append((child, "a file outside any entry folder (the layout is "
                                  "<agent>/<tenant>/<scenario>/<iteration>/<key16>/)"))
        elif depth + 1 == _DEPTH:
            entries.append(inspect_entry(child, child.relative_to(base)))
        else:
            _walk(base, child, depth + 1, entries, temps, strays)


def inspect_entry(folder: Path, location: Path) -> EntryRecord:
    """Read one entry folder; ``location`` is ``agent/tenant/name/iteration/key16``."""
    parts = location.parts
    scenario_id = "/".join(parts[:3])
    problems: list[str] = []
    iteration = int(parts[3]) if parts[3].isdigit() and str(int(parts[3])) == parts[3] else None
    if iteration is None:
        problems.append(f"iteration folder '{parts[3]}' is not a plain number (0, 1, 2...)")
    if not _SHORT_KEY.fullmatch(folder.name):
        problems.append(f"folder name '{folder.name}' is not a {SHORT_KEY_LENGTH}-hex key prefix")
    for child in sorted(folder.iterdir()):
        if child.name not in (ENTRY_FILE, CONTENTS_FILE):
            problems.append(f"unexpected {'folder' if child.is_dir() else 'file'} '{child.name}'")
    meta = _read_meta(folder / ENTRY_FILE, problems)
    created = expires = None
    payload = _read_payload(folder / CONTENTS_FILE, problems)
    if meta is not None:
        _check_identity(meta, folder.name, scenario_id, iteration, problems)
        try:
            created, expires = parse_time(meta["created"]), parse_time(meta["expires"])
        except (KeyError, TypeError, ValueError) as exc:
            problems.append(f"entry.json has no readable created/expires ({exc!r})")
        if payload is not None and hashlib.sha256(payload).hexdigest() != meta.get("contents_sha256"):
            problems.append("contents.data bytes do not match contents_sha256 in entry.json (edited by "
                            "hand, or line endings converted by git: check .gitattributes)")
    if payload is not None:
        try:
            response_from_json(load_json(payload))
        except (ValueError, KeyError, TypeError) as exc:
            problems.append(f"contents.data does not decode as a response ({exc!r})")
    return EntryRecord(folder, scenario_id, iteration, meta, tuple(problems), created, expires)


def _read_meta(path: Path, problems: list[str]) -> dict[str, Any] | None:
    if not path.is_file():
        problems.append("entry.json is missing")
        return None
    try:
        meta = load_json(path.read_bytes())
    except ValueError as exc:
        problems.append(f"entry.json does not parse ({exc})")
        return None
    if not isinstance(meta, dict):
        problems.append("entry.json is not a JSON object")
        return None
    return meta


def _read_payload(path: Path, problems: list[str]) -> bytes | None:
    if not path.is_file():
        problems.append("contents.data is missing")
        return None
    return path.read_bytes()


def _check_identity(meta: dict[str, Any], short: str, scenario_id: str, iteration: int | None,
                    problems: list[str]) -> None:
    key = meta.get("key")
    if not isinstance(key, str) or not _FULL_KEY.fullmatch(key):
        problems.append(f"entry.json has no valid 64-hex 'key' (got {str(key)[:24]!r})")
    elif not key.startswith(short):
        problems.append(f"full key {key[:SHORT_KEY_LENGTH]}... does not match its folder prefix {short}")
    if meta.get("scenario") != scenario_id:
        problems.append(f"entry.json names scenario {meta.get('scenario')!r} but sits under {scenario_id}")
    if iteration is not None and meta.get("iteration") != iteration:
        problems.append(f"entry.json names iteration {meta.get('iteration')!r} but sits under {iteration}")
