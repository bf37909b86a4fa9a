"""The stamp ``<cache>/.eval-cache.json``: the cache format the tree was recorded in.

A change of cache format (key composition or entry layout, pinned by the key
golden tests) turns a whole tree into misses. The stamp turns N unexplained
misses into one sentence. A missing stamp ("record the cache") and a stale pin
("re-record because the format changed") ask for different actions, so they
have different codes and messages.

Two rules keep the stamp from costing adopters money or merges:

- **Only the cache format version can make it stale.** The harness version
  that wrote it is informational (each entry also records the version that
  recorded it): a patch release of the harness computes the same keys, so it
  must replay the committed tree green, not demand a paid re-record.
- **A recording does not touch it** unless its meaning changes (no stamp yet,
  another format, another ``ttl_days``, an old layout to migrate). Each entry
  carries its own ``created`` time, so there is no run-wide ``recorded_at``:
  two branches that re-record different scenarios change disjoint files and
  merge without a conflict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.cache.layout import STAMP_FILE
from harness.core.errors import StampNewer
from harness.core.rerecord import rerecord_command
from harness.documents.atomic import json_bytes, write_file
from harness.documents.strictload import load_json
from harness.requests.key import CACHE_FORMAT_VERSION


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


def read_stamp(cache_root: Path) -> dict[str, Any] | None:
    """The stamp's JSON object; ``None`` when absent. Raises ``ValueError`` when unreadable."""
    path = stamp_path(cache_root)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    data = load_json(raw)  # a duplicate key is refused, not last-wins
    if not isinstance(data, dict):
        raise ValueError("the stamp is not a JSON object")
    return data


def check_stamp(cache_root: Path, refresh_command: str | None = None) -> StampStatus:
    """Compare the stamp's cache format with this harness's; one distinct message per failure.

    The recorded ``harness_version`` is never compared: only a format change
    (which changes keys, and must bump :data:`~harness.requests.key.CACHE_FORMAT_VERSION`)
    can invalidate a tree. A missing stamp alone never asks for a paid refresh of
    everything: a ``--record-missing`` run writes it and pays only for what is absent.
    """
    refresh_command = refresh_command or rerecord_command()
    path = stamp_path(cache_root)
    try:
        data = read_stamp(cache_root)
        recorded_format = None if data is None else data["format_version"]
    except (OSError, ValueError, KeyError) as exc:
        return StampStatus(False, "eval-cache-stamp-invalid",
                           f"{path.name} cannot be read ({exc}); re-record: {refresh_command}")
    if data is not None and type(recorded_format) is not int:  # noqa: E721 - True == 1 == 1.0
        shown = json.dumps(recorded_format)[:40]
        return StampStatus(False, "eval-cache-stamp-invalid",
                           f"{path.name}: format_version must be an integer (found {shown}; "
                           "true and 1.0 are not the format 1); re-record: " + refresh_command)
    if data is None:
        return StampStatus(False, "eval-cache-missing-stamp",
                           f"{path.name} is missing in {cache_root.name}/: the cache was never "
                           f"recorded (or the stamp was deleted). Write it: "
                           f"{rerecord_command(fix='missing')} (it records only what is missing; "
                           "add --scripted for agents with a script)")
    if recorded_format != CACHE_FORMAT_VERSION:
        return StampStatus(False, "eval-cache-stale-pin",
                           f"cache format: recorded {recorded_format} vs current "
                           f"{CACHE_FORMAT_VERSION}; every key changed, re-record: {refresh_command}")
    return StampStatus(True)


def desired_stamp(existing: dict[str, Any] | None, *, ttl_days: int) -> dict[str, Any]:
    """The stamp a recording leaves: this format and TTL; the writer's version kept while the
    format stays the same (so an upgrade alone never rewrites the file)."""
    writer = existing.get("harness_version") if existing else None
    keep_writer = (isinstance(writer, str) and writer
                   and existing is not None and existing.get("format_version") == CACHE_FORMAT_VERSION)
    return {
        "format_version": CACHE_FORMAT_VERSION,
        "harness_version": writer if keep_writer else __version__,
        "ttl_days": ttl_days,
    }


def write_stamp(cache_root: Path, *, ttl_days: int) -> bool:
    """After a recording run, make the stamp say this format and TTL; True when the file changed.

    The file is rewritten only when its content would differ, atomically
    (temporary file + rename), so an ordinary recording changes no byte of it.
    """
    path = stamp_path(cache_root)
    try:
        existing = read_stamp(cache_root)
    except (OSError, ValueError):
        existing = None  # unreadable: replaced by a valid one
    wanted = desired_stamp(existing, ttl_days=ttl_days)
    if existing == wanted:
        return False
    write_file(path, json_bytes(wanted))
    return True


def refuse_newer_format(cache_root: Path) -> None:
    """Before a recording run: refuse a stamp written by a newer cache format.

    Entries recorded now would carry this (older) format beside the newer ones, and the
    stamp would be rewritten to the older format, or left saying the newer one: either way
    the tree no longer says what it holds. ``--record-missing --scripted`` over a future
    format used to exit 0 and leave the stamp stale.
    """
    try:
        data = read_stamp(cache_root)
    except (OSError, ValueError):
        return  # unreadable: a recording replaces it
    recorded = None if data is None else data.get("format_version")
    if type(recorded) is int and recorded > CACHE_FORMAT_VERSION:  # noqa: E721
        raise StampNewer(
            f"{stamp_path(cache_root).name}: the cache was recorded in cache format {recorded}, "
            f"newer than this harness's format {CACHE_FORMAT_VERSION}; recording with this "
            "harness would mix formats in one tree. Fix: upgrade the harness (pip install -U "
            "offline-evals) and record again; nothing was called or written")
