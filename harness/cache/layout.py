"""Where cache entries live, and how long their paths get.

``<cache>/cache/<agent>/<tenant>/<name>/<iteration>/<key[:16]>/{entry.json, contents.data}``

The 16-character key folder keeps the tree short enough to clone on Windows;
the full key is checked inside ``entry.json``.
"""

from __future__ import annotations

from pathlib import Path

from harness.requests.key import SHORT_KEY_LENGTH, short_key

ENTRY_FILE = "entry.json"
CONTENTS_FILE = "contents.data"
STAMP_FILE = ".eval-cache.json"
ENTRIES_DIR = "cache"
#: The longest file name inside an entry folder; it decides the worst path.
_LONGEST_LEAF = max(ENTRY_FILE, CONTENTS_FILE, key=len)


def iteration_dir(cache_root: Path, scenario_id: str, iteration: int) -> Path:
    """The folder holding every entry (agent call and judge calls) of one iteration."""
    return cache_root / ENTRIES_DIR / scenario_id / str(iteration)


def entry_dir(cache_root: Path, scenario_id: str, iteration: int, key: str) -> Path:
    """The folder of one entry, named by the key prefix."""
    return Path(f"{cache_root}/{entry_location(scenario_id, iteration, key)}")


def entry_location(scenario_id: str, iteration: int, key: str) -> str:
    """An entry folder relative to the cache root: ``cache/<scenario>/<iteration>/<key16>``."""
    return f"{ENTRIES_DIR}/{scenario_id}/{iteration}/{short_key(key)}"


def worst_relative_path(cache_rel: str, scenario_id: str, iterations: int) -> str:
    """The longest path, relative to the project root, that a scenario's entries will use."""
    last = max(iterations - 1, 0)
    key = "0" * SHORT_KEY_LENGTH
    return f"{cache_rel.rstrip('/')}/{ENTRIES_DIR}/{scenario_id}/{last}/{key}/{_LONGEST_LEAF}"
