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
import json
import os
import secrets
import shutil
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import __version__
from harness.cache.layout import CONTENTS_FILE, ENTRY_FILE, entry_dir, entry_location, iteration_dir
from harness.clock import utc_now as utc_now  # re-exported: the one clock (harness.clock)
from harness.entities import ChatCall, ChatResponse, JsonObject, ToolCall, Usage
from harness.errors import CacheCorrupt, CacheExpired, rerecord_command
from harness.key import CACHE_FORMAT_VERSION, compute_key
from harness.strictload import load_json

_TEMP_PREFIX = ".tmp-"
_CHUNK = 1 << 16


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


def parse_time(text: str) -> datetime:
    """Inverse of :func:`format_time` (also accepts ``+00:00``)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


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


def response_from_json(data: Any) -> ChatResponse:
    """Rebuild a response; raises ``KeyError``/``TypeError``/``ValueError`` on a bad shape."""
    if not isinstance(data, dict):
        raise TypeError("the payload is not a JSON object")
    usage = data.get("usage") or {}
    content = data["content"]
    if content is not None and not isinstance(content, str):
        raise TypeError("content is neither a string nor null")
    return ChatResponse(
        content=content,
        tool_calls=tuple(
            ToolCall(name=str(c["name"]), arguments=dict(c.get("arguments") or {}))
            for c in data.get("tool_calls") or []
        ),
        finish_reason=str(data.get("finish_reason") or "stop"),
        usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        model=data.get("model"),
    )


def _dump(value: Any) -> bytes:
    """Pretty, sorted JSON with a final newline: stable bytes and a readable git diff."""
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


class CacheStore:
    """Reads and (in refresh mode) writes the committed entry tree under ``root``."""

    def __init__(self, root: Path, *, ttl_days: int) -> None:
        self.root = root
        self.ttl_days = ttl_days
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
        """The verified entry for ``key``.

        Raises :class:`EntryAbsent` when there is none (a prefix collision counts as none),
        :class:`CacheCorrupt` when the entry cannot be trusted and :class:`CacheExpired`
        when its TTL has passed. Nothing is ever deleted or rewritten here.
        """
        folder = f"{self.root}/{entry_location(call.scenario_id, call.iteration, key)}"
        meta_file = f"{folder}/{ENTRY_FILE}"
        try:
            meta_bytes = read_file(meta_file)
        except (FileNotFoundError, NotADirectoryError):
            raise EntryAbsent(Path(folder), "no entry folder for this key") from None
        try:
            meta = load_json(meta_bytes)
            stored_key = meta["key"]
        except (ValueError, KeyError, TypeError) as exc:
            raise _corrupt(call, f"{meta_file}: entry.json is unreadable ({exc})") from exc
        if stored_key != key:
            raise EntryAbsent(Path(folder), f"the folder holds another key ({stored_key[:24]}...) "
                                            "that shares the 16-character prefix")
        contents_file = f"{folder}/{CONTENTS_FILE}"
        try:
            payload = read_file(contents_file)
        except FileNotFoundError:
            raise _corrupt(call, f"{contents_file}: missing beside its entry.json") from None
        if hashlib.sha256(payload).hexdigest() != meta.get("contents_sha256"):
            raise _corrupt(call, f"{contents_file}: bytes do not match the sha256 in entry.json "
                               "(edited by hand, or line endings changed: check .gitattributes)")
        try:
            response = response_from_json(load_json(payload))
            created = parse_time(meta["created"])
            expires = parse_time(meta["expires"])
        except (ValueError, KeyError, TypeError) as exc:
            raise _corrupt(call, f"{folder}: entry cannot be decoded ({exc})") from exc
        if expires <= now:
            raise CacheExpired(
                f"{call.scenario_id} iteration {call.iteration}: the entry at {folder} expired "
                f"on {format_time(expires)} (recorded {format_time(created)}); it is kept as it "
                f"is. Re-record: {rerecord_command(call.scenario_id)}")
        recorded = meta.get("provenance")
        return Entry(folder, key, created, expires, response,
                     recorded if isinstance(recorded, dict) else None)

    def write(self, call: ChatCall, key: str, response: ChatResponse, now: datetime,
              provenance: JsonObject | None = None) -> Path:
        """Materialise an entry atomically; an existing entry for the same key is replaced.

        ``provenance`` (see :mod:`harness.clients.provenance`) is stored in entry.json
        beside the key, never in it.
        """
        final = self.path_for(call, key)
        payload = _dump(response_to_json(response))
        meta = {
            "format_version": CACHE_FORMAT_VERSION,
            "harness_version": __version__,
            "key": key,
            "scenario": call.scenario_id,
            "iteration": call.iteration,
            "provider": call.provider,
            "model": call.model,
            "created": format_time(now),
            "expires": format_time(now + timedelta(days=self.ttl_days)),
            "contents_sha256": hashlib.sha256(payload).hexdigest(),
            "request": call.request,
        }
        if call.purpose:
            meta["purpose"] = call.purpose
        if provenance is not None:
            meta["provenance"] = provenance
        parent = final.parent
        parent.mkdir(parents=True, exist_ok=True)
        temp = parent / f"{_TEMP_PREFIX}{final.name}-{secrets.token_hex(3)}"
        temp.mkdir()
        try:
            _write(temp / CONTENTS_FILE, payload)
            _write(temp / ENTRY_FILE, _dump(meta))
            _replace_dir(temp, final)
            with self._lock:
                self._unsynced.append(final)
        except BaseException:
            shutil.rmtree(temp, ignore_errors=True)
            raise
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
        final = self.path_for(call, key)
        if not final.parent.is_dir():
            return 0
        prefixes = (f"{_TEMP_PREFIX}{final.name}-", f"{_TEMP_PREFIX}old-{final.name}-")
        stale = [p for p in final.parent.iterdir() if p.name.startswith(prefixes)]
        for path in stale:
            shutil.rmtree(path, ignore_errors=True)
        return len(stale)


def _corrupt(call: ChatCall, reason: str) -> CacheCorrupt:
    """A corrupt-entry error that says how to get a trustworthy entry back."""
    return CacheCorrupt(f"{call.scenario_id} iteration {call.iteration}: {reason}. "
                        f"Re-record: {rerecord_command(call.scenario_id)}")


def read_file(path: str | Path) -> bytes:
    """A whole small file, without the buffered-reader set-up of ``open()`` (a replay reads
    two files per call: this is the hot path)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        chunk = os.read(fd, _CHUNK)
        if len(chunk) < _CHUNK:  # a short read of a regular file is its end
            return chunk
        chunks = [chunk]
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)


def _replace_dir(temp: Path, final: Path) -> None:
    """Rename ``temp`` to ``final``; an old ``final`` is moved aside first, then removed."""
    if not final.exists():
        os.replace(temp, final)
        return
    old = final.parent / f"{_TEMP_PREFIX}old-{final.name}-{secrets.token_hex(3)}"
    os.replace(final, old)
    os.replace(temp, final)
    shutil.rmtree(old, ignore_errors=True)
