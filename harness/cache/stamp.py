"""The stamp ``<cache>/.eval-cache.json``: under which versions the tree was recorded.

A change of cache format (or of the harness that computes keys) can turn a
whole tree into misses. The stamp turns N unexplained misses into one
sentence. A missing stamp ("record the cache") and a stale pin ("re-record
because the harness changed") ask for different actions, so they have
different codes and messages.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness import __version__
from harness.cache.layout import STAMP_FILE
from harness.cache.store import format_time
from harness.key import CACHE_FORMAT_VERSION
from harness.strictload import load_json


@dataclass(frozen=True)
class StampStatus:
    """Result of checking the stamp: ``ok`` or a code with its one-line message."""

    ok: bool
    code: str = ""
    message: str = ""

    def __str__(self) -> str:
        return f"{self.code}: {self.message}" if self.code else "stamp current"


def stamp_path(cache_root: Path) -> Path:
    """Where the stamp lives."""
    return cache_root / STAMP_FILE


def check_stamp(
    cache_root: Path, refresh_command: str = "python -m harness run --refresh-cache"
) -> StampStatus:
    """Compare the stamp with the running harness; one distinct message per failure."""
    path = stamp_path(cache_root)
    if not path.is_file():
        return StampStatus(False, "eval-cache-missing-stamp",
                           f"{path.name} is missing in {cache_root.name}/: the cache was never "
                           f"recorded (or the stamp was deleted). Record it: {refresh_command}")
    try:
        data = load_json(path.read_bytes())
        recorded_format = data["format_version"]
        recorded_harness = data["harness_version"]
    except (ValueError, KeyError, TypeError) as exc:
        return StampStatus(False, "eval-cache-stamp-invalid",
                           f"{path.name} cannot be read ({exc}); re-record: {refresh_command}")
    if recorded_format != CACHE_FORMAT_VERSION:
        return StampStatus(False, "eval-cache-stale-pin",
                           f"cache format: recorded {recorded_format} vs current "
                           f"{CACHE_FORMAT_VERSION}; every key changed, re-record: {refresh_command}")
    if recorded_harness != __version__:
        return StampStatus(False, "eval-cache-stale-pin",
                           f"harness: recorded {recorded_harness} vs current {__version__}; "
                           f"re-record: {refresh_command}")
    return StampStatus(True)


def write_stamp(cache_root: Path, *, ttl_days: int, now: datetime) -> Path:
    """Write the stamp atomically after a refresh."""
    path = stamp_path(cache_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "format_version": CACHE_FORMAT_VERSION,
        "harness_version": __version__,
        "recorded_at": format_time(now),
        "ttl_days": ttl_days,
    }
    temp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    temp.write_bytes((json.dumps(data, indent=2, sort_keys=True) + "\n").encode("utf-8"))
    os.replace(temp, path)
    return path
