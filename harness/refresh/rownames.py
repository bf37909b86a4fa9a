"""Which rows the journal's database holds, re-read only when another connection committed.

A recorded call looks its key up in the journal before it pays, and the answer
is almost never in the database (a successful run folds no answer into it:
:mod:`harness.refresh.pending`); yet each lookup was a diskcache ``get``, a read
transaction and a ``SELECT`` on a connection gone cold during the 50 ms of the
call (0.13-0.15 ms of CPU in a refresh). SQLite says whether anything changed:
``PRAGMA data_version`` on a connection changes whenever any *other* connection
(another process, or diskcache's own connections in this one) has committed
since that connection last looked. :class:`RowNames` keeps one connection of
its own that never writes, the set of row keys read in one snapshot together
with that snapshot's version, and reads the set again only when the version
moved: a lookup of a key outside an unchanged set skips the database (3-4 us
for the pragma against 40 us for the ``get`` in a tight loop).

Keys are compared as stored (:func:`harness.refresh.jsondisk.stored_key`:
diskcache's bytes of a JSON key); a key in the set is still read through
diskcache, which checks its expiry and decodes its value. The set is read from
diskcache's own table (``Cache``: ``key``, ``raw``), which is not its public API:
if a diskcache release lays it out otherwise, the query fails and every key
"may be held" from then on, so each lookup reads through diskcache as before
(slower, never wrong).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

__all__ = ["RowNames"]


class RowNames:
    """The stored keys of one diskcache database (callers serialise the calls: one connection)."""

    def __init__(self, db: Path) -> None:
        self._connection = sqlite3.connect(str(db), timeout=60, isolation_level=None,
                                           check_same_thread=False)
        self._version: int | None = None
        self._keys: frozenset[bytes] = frozenset()
        self._usable = True
        """False once the table could not be read: then every key may be held."""

    def may_hold(self, key: bytes) -> bool:
        """False only when no row has ``key`` (as stored); True when one may (read it to know)."""
        if not self._usable:
            return True
        try:
            if self._data_version() != self._version:
                self._reread()
        except sqlite3.Error:  # diskcache's table is laid out otherwise: read through it
            self._usable = False
            return True
        return key in self._keys

    def _data_version(self) -> int:
        return int(self._connection.execute("PRAGMA data_version").fetchall()[0][0])

    def _reread(self) -> None:
        """The keys and the version of one snapshot (a read transaction holds both)."""
        self._connection.execute("BEGIN")
        try:
            version = self._data_version()
            keys = frozenset(bytes(row[0]) for row in
                             self._connection.execute("SELECT key FROM Cache WHERE raw = 1"))
        finally:
            self._connection.execute("COMMIT")
        self._version, self._keys = version, keys

    def close(self) -> None:
        self._connection.close()
