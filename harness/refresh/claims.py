"""Claims of the journal: one small file per key being recorded, created exclusively.

A claim says "this process is paying for this key and writing its entry": two
processes (pytest-xdist workers, two terminals) never pay for one call. They
were rows of the journal's SQLite database, and taking and dropping one cost
two write transactions per recorded call, under the lock every thread of the
run waits on: the serial section of a concurrent refresh. A claim is now a file
``<journal>/claims/<name>.claim`` created with ``O_CREAT | O_EXCL`` (atomic on
every local file system) holding ``<host> <pid> <token>``, and dropped by
unlinking it: three system calls, no lock shared by the threads.

A claim whose holder died is taken over: one from a dead process on this host
at once (its pid is gone), one from another host (whose liveness cannot be
checked) once its file is older than the claim TTL. Taking over is the one step
that must not race (two takers, or a taker and a new holder): it runs inside a
write transaction of the journal's database (``takeover``), which serialises
it across processes; it re-reads the holder there and removes the file only
if it still names the dead holder. Creating a claim needs no such lock: it only
ever succeeds on an absent file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from harness.refresh.liveness import known_dead

__all__ = ["Claims"]

#: Key names used as they are for the claim file; anything else is hashed.
_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,128}")
_SUFFIX = ".claim"
#: A claim file still empty after this long was left by a process killed as it created it.
_UNWRITTEN_S = 5.0


class Claims:
    """The claim files of one journal folder (safe to share between threads)."""

    def __init__(self, directory: Path, *, ttl_s: float,
                 takeover: Callable[[], AbstractContextManager[object]]) -> None:
        self.directory = directory / "claims"
        self._folder = str(self.directory)
        self._ttl_s = ttl_s
        self._takeover = takeover
        self._host = socket.gethostname()
        self.directory.mkdir(parents=True, exist_ok=True)

    def path(self, key: str) -> str:
        """The claim file of ``key``."""
        name = key if _PLAIN.fullmatch(key) else hashlib.sha256(key.encode("utf-8")).hexdigest()
        return f"{self._folder}/{name}{_SUFFIX}"

    def try_take(self, key: str) -> str | None:
        """Take the claim of ``key``: its token, or None while a live holder has it.

        A dead holder's claim is removed (see the module docstring) and taken at once.
        """
        path = self.path(key)
        token = f"{self._host} {os.getpid()} {secrets.token_hex(4)}"
        data = token.encode("utf-8")
        for attempt in range(3):  # again after a dead holder's claim was removed, or the folder
            try:
                handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                if not self._remove_dead(path):
                    return None
                continue
            except FileNotFoundError:  # the folder was deleted under a running journal
                if attempt:
                    raise
                self.directory.mkdir(parents=True, exist_ok=True)
                continue
            try:
                os.write(handle, data)
            finally:
                os.close(handle)
            return token
        return None

    def release(self, key: str, token: str) -> None:
        """Drop the claim of ``key`` if it is still ours (a claim taken over is not)."""
        path = self.path(key)
        if self.holder(path) == token:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)

    def holder(self, path: str) -> str | None:
        """The token in a claim file (None: no such file)."""
        try:
            handle = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            return os.read(handle, 256).decode("utf-8", errors="replace")
        finally:
            os.close(handle)

    def held(self) -> Iterator[str]:
        """The claim files present (for tests and diagnostics)."""
        with contextlib.suppress(FileNotFoundError):
            for name in sorted(os.listdir(self._folder)):
                if name.endswith(_SUFFIX):
                    yield f"{self._folder}/{name}"

    def _remove_dead(self, path: str) -> bool:
        """Remove the claim at ``path`` if its holder is dead or it lapsed; whether it is gone."""
        holder = self.holder(path)
        if holder is None:
            return True  # released meanwhile
        if not self._dead(path, holder):
            return False
        with self._takeover():  # serialised across processes: re-read, then remove
            if self.holder(path) != holder:
                return self.holder(path) is None
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)
        return True

    def _dead(self, path: str, holder: str) -> bool:
        try:
            age = time.time() - os.stat(path).st_mtime
        except FileNotFoundError:
            return True
        if age > self._ttl_s:
            return True  # lapsed: a holder on another host, or one that hung for the whole TTL
        if not holder and age > _UNWRITTEN_S:
            return True  # created and never written: its holder died between the two calls
        host, _, rest = holder.partition(" ")
        return known_dead(host, rest.partition(" ")[0], self._host)
