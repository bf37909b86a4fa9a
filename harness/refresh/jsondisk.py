"""diskcache without pickle: the storage of the journal and the rate limit.

diskcache's default ``Disk`` pickles any key or value that is not a plain
string, bytes or number, and unpickles whatever it finds in its database, so
anyone who can write to the cache folder can run code in the next process that
opens it (diskcache's published advisory). The harness's refresh state holds
only JSON, so it is stored through :class:`JsonOnlyDisk`: keys and values are
JSON (diskcache's ``JSONDisk``, zlib-compressed), and a row in any other form,
a pickled one above all, is refused with :class:`RefreshStateError` before it
is decoded. No code path of the harness calls ``pickle.load`` on these folders.

A folder written by an older harness (text rows, no format marker) or a
database SQLite cannot read is refused the same way, naming the folder and the
fix (delete it), never with a traceback.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import diskcache  # type: ignore[import-untyped]

from harness.core.errors import HarnessError

#: Written into every folder this module creates; a folder with rows and without it is an old one.
FORMAT_KEY = "harness:format"
FORMAT = "json-1"
DB_FILE = "cache.db"
_DB = DB_FILE
#: Pages of write-ahead log between two checkpoints (each one fsyncs the database).
WAL_CHECKPOINT_PAGES = 4096


class RefreshStateError(HarnessError):
    """The journal or rate-limit folder cannot be read safely; nothing was called or written."""

    code = "eval-refresh-state-unreadable"
    exit_code = 2


class JsonOnlyDisk(diskcache.JSONDisk):  # type: ignore[misc]
    """``JSONDisk`` that refuses, instead of unpickling, any row it did not write itself.

    It writes what ``JSONDisk`` writes, for less CPU: ``zlib.compress`` sets up a 256 KB
    deflate state on every call (50-65 us), and a recorded call encoded five keys and one
    value. A key's bytes must stay exactly ``JSONDisk``'s (rows are found by them), so each
    string key is compressed once and remembered; a small value is compressed with a small
    window (any zlib reader decompresses it, ``JSONDisk`` included).
    """

    def put(self, key: Any) -> Any:
        if type(key) is str:
            return diskcache.Disk.put(self, _compressed_key(key, self.compress_level))
        return super().put(key)

    def store(self, value: Any, read: bool, key: Any = diskcache.core.UNKNOWN) -> Any:
        if read:
            return super().store(value, read, key=key)
        data = json.dumps(value).encode("utf-8")
        return diskcache.Disk.store(self, _compressed(data, self.compress_level), read, key=key)

    def get(self, key: Any, raw: bool) -> Any:
        if not raw:  # diskcache stores a pickled key with raw = 0
            raise ForeignRow("a pickled key")
        if not isinstance(key, bytes):
            raise ForeignRow("a key that is not JSON")
        return super().get(key, raw)

    def fetch(self, mode: int, filename: str | None, value: Any, read: bool) -> Any:
        if mode != diskcache.core.MODE_RAW and mode != diskcache.core.MODE_BINARY:
            kind = "a pickled value" if mode == diskcache.core.MODE_PICKLE else "a value that is not JSON"
            raise ForeignRow(kind)
        return super().fetch(mode, filename, value, read)


def stored_key(cache: diskcache.Cache, name: str) -> bytes:
    """The bytes a string key is stored as in the database of ``cache`` (its ``key`` column)."""
    return _compressed_key(name, cache.disk.compress_level)


@functools.lru_cache(maxsize=8192)
def _compressed_key(key: str, level: int) -> bytes:
    """``JSONDisk``'s bytes of a string key, byte for byte (a claim and an answer key are each
    used by several operations of one call)."""
    return zlib.compress(json.dumps(key).encode("utf-8"), level)


#: Values up to this size are compressed with a 1 KB window (smaller state, same format).
_SMALL_VALUE = 4096


def _compressed(data: bytes, level: int) -> bytes:
    if len(data) > _SMALL_VALUE:
        return zlib.compress(data, level)
    packer = zlib.compressobj(level, zlib.DEFLATED, 10, 1)
    return packer.compress(data) + packer.flush()


class ForeignRow(Exception):
    """A row this module did not write (raised inside diskcache, translated by :func:`open_state`)."""


def open_state(directory: Path, what: str, consequence: str) -> diskcache.Cache:
    """Open (creating if needed) a refresh-state folder, refusing anything unsafe or unreadable.

    ``what`` names the folder in messages ("journal"); ``consequence`` says what
    deleting it costs, so the fix the message gives is an informed one.
    """
    fix = f"delete the folder {directory} ({consequence})"
    db = directory / _DB
    if db.exists():
        foreign = _foreign_rows(db, what, fix)
        if foreign:
            raise RefreshStateError(
                f"the {what} at {directory} holds {foreign} pickled row(s) written by an older "
                f"harness or another program; they are never unpickled (that would run code from "
                f"the folder). Fix: {fix}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # cull_limit=0: no search for expired rows on every write (a third of a journal write's
        # CPU); an expired row reads as absent anyway, and they are purged once, below.
        # wal_autocheckpoint 4096 pages (16 MB) instead of SQLite's 1000: a checkpoint fsyncs,
        # and it runs inside a commit, under the lock every thread of the run waits on; a
        # commit is still in the WAL when it returns, so it survives a killed process.
        cache = diskcache.Cache(str(directory), disk=JsonOnlyDisk, eviction_policy="none", timeout=60,
                                cull_limit=0, sqlite_wal_autocheckpoint=WAL_CHECKPOINT_PAGES)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise RefreshStateError(f"the {what} at {directory} cannot be opened ({exc}). Fix: {fix}") from None
    try:
        # one transaction: two processes creating the folder at once must not see each other's
        # marker as "rows without the format marker" (read, count and write are one step)
        with cache.transact(retry=True):
            marker = cache.get(FORMAT_KEY)
            if marker is None:
                if len(cache):
                    raise ForeignRow("rows without the format marker")
                cache.set(FORMAT_KEY, FORMAT)
        if marker is not None and marker != FORMAT:
            raise ForeignRow(f"format {marker!r}")
        cache.expire(retry=True)  # expired claims, answers and rate-limit rows: once per open
    except (ForeignRow, sqlite3.DatabaseError, ValueError) as exc:
        cache.close()
        raise RefreshStateError(
            f"the {what} at {directory} was written by another harness version ({exc}); it is "
            f"not read. Fix: {fix}") from None
    return cache


def state_error(directory: Path, what: str, consequence: str, exc: BaseException) -> RefreshStateError:
    """The error for a database that turned unreadable after it was opened."""
    return RefreshStateError(
        f"the {what} at {directory} became unreadable ({type(exc).__name__}: {exc}). "
        f"Fix: delete the folder {directory} ({consequence})")


def _foreign_rows(db: Path, what: str, fix: str) -> int:
    """Rows a pickling ``Disk`` wrote (raw key = 0 or pickle mode), read without decoding any."""
    try:
        connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60)
    except sqlite3.Error as exc:
        raise RefreshStateError(f"the {what} database {db} cannot be opened ({exc}). Fix: {fix}") from None
    try:
        row = connection.execute(
            "SELECT COUNT(*) FROM Cache WHERE raw = 0 OR mode = ?", (diskcache.core.MODE_PICKLE,)
        ).fetchone()
        return int(row[0])
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return 0  # created but never initialised (a process died at once): diskcache sets it up
        raise RefreshStateError(f"the {what} database {db} is not readable ({exc}). Fix: {fix}") from None
    except sqlite3.DatabaseError as exc:
        raise RefreshStateError(f"the {what} database {db} is corrupt ({exc}). Fix: {fix}") from None
    finally:
        connection.close()
