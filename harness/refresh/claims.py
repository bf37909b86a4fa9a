"""Claims of the journal: a POSIX byte-range lock per key being recorded, else a file.

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

Where ``fcntl`` exists, a claim is a lock instead: an exclusive ``lockf`` of one
byte of ``<journal>/claims.lock``, at an offset derived from the key (56 bits
of its BLAKE2b: two keys of one project never share a byte in practice, and if
they did one would only wait for the other). Creating and removing a file was
an inode allocated and freed per recorded call (0.16-0.38 ms of its CPU in a
refresh); a lock is one ``fcntl`` to take and one to drop, and the kernel drops
a dead holder's lock with its process, so nothing is left to take over. POSIX
locks belong to a process, not to a thread or a descriptor (a second lock of
the same byte by the same process succeeds, and closing any descriptor of the
file drops them all), so each process keeps one descriptor per lock file,
shared by every :class:`Claims` on it, and a table of the bytes its threads
hold (:class:`_LockFile`). A claim file an older harness process (or one
running where there is no ``fcntl``) holds is still honoured: once the lock is
taken, the key's claim file is looked for, and a live one makes the claim wait
as before (a dead one is taken over as before). What is not covered: an older
process that creates its claim file after that look pays for the same call
once more; its entry replaces ours atomically, nothing is lost or torn.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from harness.refresh.liveness import known_dead

try:
    import fcntl
except ImportError:  # Windows: claims are files
    fcntl = None  # type: ignore[assignment]

__all__ = ["Claims"]

#: Key names used as they are for the claim file; anything else is hashed.
_PLAIN = re.compile(r"[A-Za-z0-9_-]{1,128}")
_SUFFIX = ".claim"
#: A claim file still empty after this long was left by a process killed as it created it.
_UNWRITTEN_S = 5.0
#: The lock file of a journal folder whose bytes are the claims (where ``fcntl`` exists).
LOCK_FILE = "claims.lock"
_LOCKED = "lock:"


class Claims:
    """The claim files of one journal folder (safe to share between threads)."""

    def __init__(self, directory: Path, *, ttl_s: float,
                 takeover: Callable[[], AbstractContextManager[object]], locks: bool | None = None) -> None:
        """``locks``: claims as byte-range locks (default: wherever ``fcntl`` exists)."""
        self.directory = directory / "claims"
        self._folder = str(self.directory)
        self._ttl_s = ttl_s
        self._takeover = takeover
        self._host = socket.gethostname()
        self.directory.mkdir(parents=True, exist_ok=True)
        use_locks = fcntl is not None if locks is None else locks
        self._locks = _LockFile.open(directory / LOCK_FILE) if use_locks else None

    def close(self) -> None:
        """Stop using the lock file (its descriptor closes with its last user)."""
        if self._locks is not None:
            self._locks.leave()
            self._locks = None

    def path(self, key: str) -> str:
        """The claim file of ``key``."""
        name = key if _PLAIN.fullmatch(key) else hashlib.sha256(key.encode("utf-8")).hexdigest()
        return f"{self._folder}/{name}{_SUFFIX}"

    def try_take(self, key: str) -> str | None:
        """Take the claim of ``key``: its token, or None while a live holder has it.

        A dead holder's claim is removed (see the module docstring) and taken at once.
        """
        path = self.path(key)
        if self._locks is not None:
            return self._lock(key, path, self._locks)
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

    def _lock(self, key: str, path: str, locks: _LockFile) -> str | None:
        """Take the lock of ``key``, then honour a claim file an older process holds."""
        offset = _offset(key)
        if not locks.take(offset):
            return None
        try:
            if self._remove_dead(path):  # no claim file (one syscall), or a dead holder's, removed
                return f"{_LOCKED}{offset}"
        except BaseException:
            locks.drop(offset)
            raise
        locks.drop(offset)
        return None

    def release(self, key: str, token: str) -> None:
        """Drop the claim of ``key`` if it is still ours (a claim taken over is not)."""
        if token.startswith(_LOCKED):
            if self._locks is not None:
                self._locks.drop(int(token[len(_LOCKED):]))
            return
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


def _offset(key: str) -> int:
    """The byte of the lock file that is the claim of ``key`` (below 2**56: any ``off_t``)."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=7).digest(), "big")


class _LockFile:
    """This process's descriptor of one lock file, and the bytes its threads hold in it.

    One per file and process (:meth:`open`): POSIX locks are the process's, so the
    table, not the kernel, keeps two threads apart, and the descriptor is closed only
    when no :class:`Claims` uses it (closing it drops every lock the process holds).
    A forked child inherits the tables but none of the locks: it empties them.
    """

    _open: dict[str, _LockFile] = {}
    _registry = threading.Lock()

    def __init__(self, name: str, fd: int) -> None:
        self.name = name
        self.fd = fd
        self.users = 0
        self.held: set[int] = set()
        self.mutex = threading.Lock()

    @classmethod
    def open(cls, path: Path) -> _LockFile:
        """The shared lock file at ``path`` (created if absent), with one more user."""
        name = os.path.realpath(path)
        with cls._registry:
            found = cls._open.get(name)
            if found is None:
                flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                found = cls._open[name] = _LockFile(name, os.open(name, flags, 0o644))
            found.users += 1
            return found

    def leave(self) -> None:
        """One user fewer; the last one closes the descriptor (no thread holds a lock then)."""
        with self._registry:
            self.users -= 1
            if self.users > 0:
                return
            del self._open[self.name]
            with self.mutex:
                self.held.clear()
                os.close(self.fd)

    @classmethod
    def after_fork_in_child(cls) -> None:
        """A forked child holds none of its parent's locks (POSIX locks are not inherited):
        it starts with empty tables, and new mutexes (another thread may have held one)."""
        cls._registry = threading.Lock()
        for found in cls._open.values():
            found.held = set()
            found.mutex = threading.Lock()

    def take(self, offset: int) -> bool:
        """Lock the byte at ``offset`` without waiting; False while a thread or process holds it."""
        assert fcntl is not None
        with self.mutex:
            if offset in self.held:
                return False
            try:
                fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset)
            except OSError as exc:
                if exc.errno in (errno.EACCES, errno.EAGAIN):
                    return False
                raise
            self.held.add(offset)
            return True

    def drop(self, offset: int) -> None:
        """Unlock the byte at ``offset``, then let this process's threads take it again."""
        assert fcntl is not None
        with self.mutex:
            if offset in self.held:
                fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, offset)
                self.held.discard(offset)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_LockFile.after_fork_in_child)
