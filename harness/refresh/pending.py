"""The journal's pending log: paid answers appended to a file, folded into the database in batches.

Journaling a paid answer was one SQLite write transaction per call (five pages
of write-ahead log and seven statements: 0.3-0.5 ms of a recorded call, under
the lock every thread of the run takes turns through). An answer is now one
``os.write`` of a JSON line to this process's log
``<journal>/pending/<host>-<pid>-<token>.jsonl`` (opened ``O_APPEND``). The
database takes the log's answers, in one transaction, when the run forgets what
it materialised (the answers it forgets never reach the database: a whole
successful run writes no answer row), when the journal closes, and whenever the
log grows past :data:`FOLD_BYTES` (other processes read it on every lookup, so
it stays small). Batching alone would not pay: a row costs diskcache ~55 us of
statements inside a transaction too; the saving is the rows never written.

Why nothing paid is lost: ``put`` returns only after the line's ``write(2)``
returned, and a write the kernel accepted survives the killing of the process
(it is in the page cache, as a committed WAL frame is: the journal's SQLite does
not fsync a commit either). A torn last line (a process killed inside the write,
or a full disk) is an answer whose ``put`` never returned, and is ignored; any
other line that is not this module's JSON is refused by name.

Who reads a log: its own process (the answers in hand, :attr:`PendingLog.values`),
every other process that looks a key up (:func:`read_log` of each other log, before
the database: a line is newer than the database's row, since a fold empties the
log only after its transaction committed), and the next journal opened on the
folder, which folds the logs of dead processes into the database and deletes them
(:func:`dead_logs`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.refresh.liveness import known_dead

__all__ = ["FOLD_BYTES", "Folded", "PendingLog", "PendingLogError", "dead_logs", "host_name", "other_logs",
           "read_log"]

#: Bytes of answers held in a log before they are folded into the database in one transaction.
FOLD_BYTES = 256 * 1024
_SUFFIX = ".jsonl"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


class PendingLogError(Exception):
    """A pending log holds a line this module did not write (translated by the journal)."""


#: An answer as the database stores it: its row name, its value, and when it was journaled.
Folded = dict[str, tuple[dict[str, Any], float]]


class PendingLog:
    """This process's pending log of one journal folder (safe to share between threads)."""

    def __init__(self, directory: Path, fold: Callable[[Folded], None], *,
                 fold_bytes: int | None = None) -> None:
        self.folder = str(directory / "pending")
        self.host = host_name()
        """This host's name as log names spell it."""
        self.name = f"{self.host}-{os.getpid()}-{secrets.token_hex(4)}{_SUFFIX}"
        self.path = f"{self.folder}/{self.name}"
        self._fold = fold
        self._fold_bytes = FOLD_BYTES if fold_bytes is None else fold_bytes
        self._written = 0
        self._lock = threading.Lock()
        self._fd: int | None = None
        self.values: Folded = {}
        """The answers written to the log and not yet folded, by row name (this process's)."""

    def append(self, name: str, value: dict[str, Any]) -> None:
        """Write one answer to the log; it is journaled when this returns."""
        at = time.time()
        line = (json.dumps({"name": name, "at": at, "value": value}, ensure_ascii=True,
                           separators=(",", ":")) + "\n").encode("ascii")
        with self._lock:
            _write_all(self._handle(), line)
            self.values[name] = (value, at)
            self._written += len(line)
            if self._written >= self._fold_bytes:
                self._fold_locked()

    def get(self, name: str) -> dict[str, Any] | None:
        """This process's unfolded answer for ``name``, if any."""
        found = self.values.get(name)
        return found[0] if found is not None else None

    def fold(self, *, without: frozenset[str] = frozenset(),
             also: Callable[[], None] | None = None) -> None:
        """Hand the log's answers (but those named in ``without``) to the database, then empty it.

        ``also`` runs after the fold, still under this log's lock (the journal's forget
        deletes its rows there, so no answer is appended between the two).
        """
        with self._lock:
            for name in without:
                self.values.pop(name, None)
            self._fold_locked()
            if also is not None:
                also()

    def close(self) -> None:
        """Fold what is left, close the log and delete it (a log that cannot be folded stays)."""
        with self._lock:
            self._fold_locked()
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)

    def _fold_locked(self) -> None:
        if self.values:
            self._fold(dict(self.values))  # committed: only now may the lines go
            self.values.clear()
        if self._fd is not None and self._written:
            os.ftruncate(self._fd, 0)  # O_APPEND: the next line is written at the new end
        self._written = 0

    def _handle(self) -> int:
        if self._fd is None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_BINARY", 0)
            try:
                self._fd = os.open(self.path, flags, 0o600)
            except FileNotFoundError:
                os.makedirs(self.folder, exist_ok=True)
                self._fd = os.open(self.path, flags, 0o600)
        return self._fd


def host_name() -> str:
    """This host's name with every character but letters, digits, ``_`` and ``.`` replaced:
    a log's name splits into host, pid and token at its last two ``-``."""
    return _UNSAFE.sub("_", socket.gethostname()) or "host"


def _write_all(handle: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]


def other_logs(folder: str, own: str) -> list[str]:
    """The paths of every pending log of the folder but ``own`` (a file name)."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return [f"{folder}/{name}" for name in names if name.endswith(_SUFFIX) and name != own]


def read_log(path: str, wanted: str | None = None) -> Folded:
    """The answers of a pending log, the last line of a name winning (nothing: it is gone).

    With ``wanted``, only that row name is decoded, and a log that does not spell it is
    not parsed at all. Raises :class:`PendingLogError` for a complete line that is not
    one this module wrote.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    if wanted is not None and json.dumps(wanted, ensure_ascii=True).encode("ascii") not in data:
        return {}
    found: Folded = {}
    lines = data.split(b"\n")
    for number, line in enumerate(lines[:-1], 1):  # the last piece: empty, or a torn line
        try:
            row = json.loads(line)
            name, at, value = row["name"], row["at"], row["value"]
        except (ValueError, TypeError, KeyError) as exc:
            raise PendingLogError(f"{path} line {number} is not a journaled answer ({exc})") from None
        if not (isinstance(name, str) and isinstance(at, int | float) and isinstance(value, dict)):
            raise PendingLogError(f"{path} line {number} is not a journaled answer")
        if wanted is None or name == wanted:
            found[name] = (value, float(at))
    return found


def dead_logs(folder: str, own: str, *, this_host: str, lapse_s: float) -> Iterator[str]:
    """The other logs whose process is known dead, or that nobody wrote to for ``lapse_s``.

    ``this_host`` as :func:`host_name` spells it.
    """
    for path in other_logs(folder, own):
        parts = os.path.basename(path)[:-len(_SUFFIX)].rsplit("-", 2)
        if len(parts) != 3:
            continue  # not a name this module gives: left alone
        host, pid = parts[0], parts[1]
        try:
            age = time.time() - os.stat(path).st_mtime
        except FileNotFoundError:
            continue
        if age > lapse_s or known_dead(host, pid, this_host):
            yield path
