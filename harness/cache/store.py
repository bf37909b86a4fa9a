"""The entry tree: read entries, and write them atomically (refresh only).

An entry is a folder ``<key16>/`` holding ``entry.json`` (full key, scenario,
iteration, provider, model, timestamps, format version, canonical request and
the sha256 of the payload) and ``contents.data`` (the response). Readers never
modify anything; writers build the folder under a temporary name and rename it
into place, so an entry is complete or absent even if the process dies.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from harness import __version__
from harness.cache.layout import (
    CONTENTS_FILE,
    ENTRIES_DIR,
    ENTRY_FILE,
    entry_dir,
    entry_location,
    iteration_dir,
)
from harness.cache.verify import EntryStatus, response_from_json, verify_entry
from harness.core.entities import ChatCall, ChatResponse, JsonObject
from harness.core.errors import CacheCorrupt, CacheExpired
from harness.documents.atomic import TEMP_PREFIX, StepHook, json_bytes, write_folder
from harness.documents.strictload import load_json
from harness.requests.key import compute_key, entry_meta, short_key
from harness.wire.exchange import WireAnswer

__all__ = ["CacheStore", "Entry", "EntryAbsent", "format_time", "response_to_json"]
_TEMP_PREFIX = TEMP_PREFIX


@dataclass(frozen=True, slots=True)
class Entry:
    """A verified entry read from the tree."""

    folder: str
    key: str
    created: datetime
    expires: datetime
    response: ChatResponse
    provenance: JsonObject | None = None
    """Where the answer came from (None: recorded by a version that did not say)."""
    wire: WireAnswer | None = None
    """A wire entry's answer exactly as recorded (status, stored headers, body bytes)."""

    @property
    def path(self) -> Path:
        """The entry folder (built on demand: a replay reads thousands of entries)."""
        return Path(self.folder)


class EntryAbsent(Exception):
    """No entry has this full key (nothing there, or a 16-character prefix collision)."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


def format_time(moment: datetime) -> str:
    """ISO-8601 in UTC with a ``Z`` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def response_to_json(response: ChatResponse) -> JsonObject:
    """The stored, provider-neutral form of a response."""
    return {
        "content": response.content,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls],
        "finish_reason": response.finish_reason,
        "usage": {
            "input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens,
        },
        "model": response.model,
    }


class CacheStore:
    """Reads and (in refresh mode) writes the committed entry tree under ``root``."""

    def __init__(self, root: Path, *, ttl_days: int, on_write_step: StepHook | None = None) -> None:
        self.root = root
        self.ttl_days = ttl_days
        self.on_write_step = on_write_step
        """Test seam of :func:`harness.documents.atomic.write_folder`: called after each step of a write."""
        self._unsynced: list[Path] = []
        self._lock = threading.Lock()

    def sync(self) -> int:
        """Make every entry written since the last call durable; returns how many.

        Entries are not fsynced one by one (two fsyncs per call serialised a
        concurrent refresh on the file system journal): a recording run calls this
        once, before the journal forgets the paid answers, so an answer is always
        durable in the journal, on disk, or both. A process killed mid-run loses no
        written entry either way (the rename is atomic, the page cache survives).
        """
        with self._lock:
            written, self._unsynced = self._unsynced, []
        if not written:
            return 0
        if hasattr(os, "sync"):
            os.sync()
            return len(written)
        for folder in written:  # no sync(2) (Windows): each file of each entry
            for name in (CONTENTS_FILE, ENTRY_FILE):
                with contextlib.suppress(OSError), open(folder / name, "rb+") as handle:
                    os.fsync(handle.fileno())
        return len(written)

    def path_for(self, call: ChatCall, key: str | None = None) -> Path:
        """The entry folder a call maps to."""
        return entry_dir(self.root, call.scenario_id, call.iteration, key or compute_key(call))

    def read(self, call: ChatCall, key: str, now: datetime) -> Entry:
        """The verified entry for ``key`` (see :func:`harness.cache.verify.verify_entry`).

        Raises :class:`EntryAbsent` when there is none (a 16-character prefix collision
        counts as none: only the FULL key is compared), :class:`CacheCorrupt` when the
        entry cannot be trusted and :class:`CacheExpired` when its TTL has passed. Nothing
        is ever deleted or rewritten here. The messages carry no re-record command: the
        caching client adds the one that fits the agent (:mod:`harness.core.rerecord`).
        """
        short = short_key(key)
        folder = f"{self.root}/{entry_location(call.scenario_id, call.iteration, key)}"
        found = verify_entry(folder, call.scenario_id, call.iteration, short)
        if found.absent:
            raise EntryAbsent(Path(folder), "no entry folder for this key")
        stored = found.key
        if stored is not None and stored != key and stored[:len(short)] == short:
            raise EntryAbsent(Path(folder), f"the folder holds another key ({stored[:24]}...) "
                                            "that shares the 16-character prefix")
        if found.status is not EntryStatus.INTACT or found.response is None or found.expires is None \
                or found.created is None:
            raise CacheCorrupt(f"{call.scenario_id} iteration {call.iteration}: the entry at {folder} "
                               f"cannot be trusted: {'; '.join(found.problems)}.")
        if found.expires <= now:
            raise CacheExpired(
                f"{call.scenario_id} iteration {call.iteration}: the entry at {folder} expired "
                f"on {format_time(found.expires)} (recorded {format_time(found.created)}); it is kept "
                "as it is.")
        meta = found.meta or {}
        recorded = meta.get("provenance")
        wire = meta.get("wire")
        answer = None
        if isinstance(wire, dict) and found.payload is not None:
            answer = WireAnswer(int(wire["status"]), tuple(sorted(
                [(str(k), str(v)) for k, v in wire["headers"].items()])), found.payload)
        return Entry(folder, key, found.created, found.expires, found.response,
                     recorded if isinstance(recorded, dict) else None, answer)

    def write(self, call: ChatCall, key: str, response: ChatResponse, now: datetime,
              provenance: JsonObject | None = None) -> Path:
        """Materialise an entry atomically; an existing entry for the same key is replaced.

        ``provenance`` (see :mod:`harness.clients.provenance`) is stored in entry.json
        beside the key, never in it.
        """
        return self._write(call, key, json_bytes(response_to_json(response)), now, provenance)

    def write_read(self, call: ChatCall, key: str, response: ChatResponse, now: datetime,
                   provenance: JsonObject | None = None) -> ChatResponse:
        """:meth:`write`, and the response as a replay of the entry parses it.

        The bytes of ``contents.data`` are in hand: they are parsed as
        :func:`~harness.cache.verify.verify_entry` parses them, so a recording run
        gives the verdicts a replay would, without reading back and verifying the
        folder it has just renamed into place (a fifth of a recorded call's entry work).
        """
        payload = json_bytes(response_to_json(response))
        self._write(call, key, payload, now, provenance)
        return response_from_json(load_json(payload))

    def write_exchange(self, call: ChatCall, key: str, api: str, answer: WireAnswer, now: datetime,
                       provenance: JsonObject | None = None) -> Path:
        """Materialise a wire entry: ``contents.data`` holds the answer's body bytes exactly (a
        streamed answer as its event stream), ``entry.json`` its API, status and stored headers."""
        wire = {"api": api, "status": answer.status, "headers": dict(answer.headers)}
        return self._write(call, key, answer.body, now, provenance, wire)

    def _write(self, call: ChatCall, key: str, payload: bytes, now: datetime,
               provenance: JsonObject | None, wire: JsonObject | None = None) -> Path:
        final = self.path_for(call, key)
        meta: JsonObject = {
            **entry_meta(call),  # the key material, field by field (harness.requests.key)
            "harness_version": __version__,
            "key": key,
            "created": format_time(now),
            "expires": format_time(now + timedelta(days=self.ttl_days)),
            "contents_sha256": hashlib.sha256(payload).hexdigest(),
        }
        if call.purpose:
            meta["purpose"] = call.purpose
        if provenance is not None:
            meta["provenance"] = provenance
        if wire is not None:
            meta["wire"] = wire
        write_folder(final, {CONTENTS_FILE: payload, ENTRY_FILE: json_bytes(meta)},
                     on_step=self.on_write_step)
        with self._lock:
            self._unsynced.append(final)
        return final

    def entries_of(self, scenario_id: str, iteration: int) -> list[Path]:
        """Entry folders recorded for one scenario iteration (for miss diagnostics)."""
        folder = iteration_dir(self.root, scenario_id, iteration)
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))

    def sweep_temporaries(self, call: ChatCall, key: str) -> int:
        """Remove the temporary folders a killed writer left for this entry; returns how many.

        Only call it while holding the entry's journal claim: no other writer can
        then be building the same entry.
        """
        name = short_key(key)
        parent = f"{self.root}/{ENTRIES_DIR}/{call.scenario_id}/{call.iteration}"
        try:  # plain os on strings: every paid call of a refresh asks, and the folder is new
            names = os.listdir(parent)
        except (FileNotFoundError, NotADirectoryError):
            return 0
        prefixes = (f"{_TEMP_PREFIX}{name}-", f"{_TEMP_PREFIX}old-{name}-")
        stale = [found for found in names if found.startswith(prefixes)]
        for found in stale:
            shutil.rmtree(os.path.join(parent, found), ignore_errors=True)
        return len(stale)
