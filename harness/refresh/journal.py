"""The refresh journal: every paid answer is on disk before it is materialised in the tree.

The order for a paid call is: claim the key (a cross-process lock, so two
processes never pay for one call), call the provider, journal the answer (one
line appended to this process's pending log, :mod:`harness.refresh.pending`:
it survives SIGKILL, and the database takes the log's answers in one
transaction per batch), then write the entry atomically. A run whose every call
was answered forgets the keys it used.

Refresh means fresh: each answer is journaled with the id of the run that paid
for it, and a run reuses only its own answers (pytest-xdist workers share one
run id) unless it was started with ``resume=True`` (``--resume``), which
reuses answers an earlier run paid for (a killed run, or one that ended with
failed calls) and collects the batches it left pending. Entries of an
unfinished run expire after :data:`JOURNAL_TTL_S`.

Batch recording journals each batch it creates (its id, the provider, the
agent and the custom_id -> key map) *before* it waits for the answers, so a
killed process resumes polling with ``--resume`` instead of paying again.

Values are JSON through :mod:`harness.refresh.jsondisk` (never pickles), and JSON
lines in the pending logs; no request header, key or URL is ever journaled.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness.cache.store import format_time, response_to_json
from harness.cache.verify import response_from_json
from harness.core.clock import utc_now
from harness.core.entities import ChatCall, ChatResponse, JsonObject
from harness.core.errors import ProviderError
from harness.refresh.claims import Claims
from harness.refresh.jsondisk import DB_FILE, ForeignRow, open_state, state_error, stored_key
from harness.refresh.pending import Folded, PendingLog, PendingLogError, dead_logs, other_logs, read_log
from harness.refresh.rownames import RowNames
from harness.wire.exchange import APIS, WireAnswer

#: How long an answer of an unfinished refresh is kept for the re-run (a week).
JOURNAL_TTL_S = 7 * 24 * 3600
#: A claim left by a process on another host (whose liveness cannot be checked) lapses after this.
CLAIM_TTL_S = 3600.0
_POLL_S = 0.02
#: How an answer was paid for: one synchronous call, or one request of a provider batch.
Obtained = Literal["paid", "batch"]
#: What deleting the journal folder costs, for the fix in its error messages.
CONSEQUENCE = ("it only holds answers of unfinished runs and the ids of pending batches: "
               "those calls are paid again by the next recording run")


@dataclass(frozen=True)
class JournaledWire:
    """A wire answer found in the journal (an SDK agent's exchange), and whether this run paid for it."""

    api: str
    answer: WireAnswer
    obtained: Obtained
    this_run: bool


@dataclass(frozen=True)
class JournaledAnswer:
    """An answer found in the journal, and whether this run paid for it."""

    response: ChatResponse
    obtained: Obtained
    this_run: bool


class Journal:
    """A diskcache of paid answers keyed by full cache key, shared by every process of a project,
    with each process's pending log of answers not yet in it (:mod:`harness.refresh.pending`)."""

    def __init__(self, directory: Path, *, run: str = "", resume: bool = False,
                 ttl_s: float = JOURNAL_TTL_S, claim_locks: bool | None = None) -> None:
        """``claim_locks``: claims as byte-range locks or as files (default: locks where
        ``fcntl`` exists; :mod:`harness.refresh.claims`)."""
        self.directory = directory
        self.run = run
        self.resume = resume
        self._ttl_s = ttl_s
        self._cache = open_state(directory, "journal", CONSEQUENCE)
        self._turn = _turn_of(directory)
        self._claims = Claims(directory, ttl_s=CLAIM_TTL_S, takeover=self._takeover, locks=claim_locks)
        self._pending = PendingLog(directory, self._fold)
        try:
            self._rows = RowNames(directory / DB_FILE)
        except sqlite3.Error as exc:
            self._claims.close()
            self._cache.close()
            raise state_error(directory, "journal", CONSEQUENCE, exc) from None
        try:
            self._recover()
        except BaseException:
            self._rows.close()
            self._claims.close()
            self._cache.close()
            raise

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """A database that turns unreadable mid-run is a named error, not a traceback.

        The threads of one process take turns through a lock: left to SQLite, a thread
        that finds the database locked sleeps in its busy handler (1, 2, 5... 100 ms)
        and misses the moment it is free, which at 16 concurrent calls cost more wall
        time than the calls themselves. Other processes still meet SQLite's lock.
        """
        with self._turn:
            try:
                yield
            except (ForeignRow, PendingLogError, sqlite3.DatabaseError, OSError) as exc:
                raise state_error(self.directory, "journal", CONSEQUENCE, exc) from None

    def _raw(self, name: str) -> Any:
        """The journaled value of a row: this process's log, another process's, else the database.

        A line of a log is newer than the database's row of the same name (a log is
        emptied only after its answers were committed), so logs are read first. The
        database is read only when it may hold the row (:mod:`harness.refresh.rownames`).
        """
        mine = self._pending.get(name)
        if mine is not None:
            return mine
        with self._guard():
            for path in other_logs(self._pending.folder, self._pending.name):
                theirs = read_log(path, name).get(name)
                if theirs is not None:
                    return theirs[0]
            if not self._rows.may_hold(stored_key(self._cache, name)):
                return None
            return self._cache.get(name, retry=True)

    def _append(self, name: str, value: dict[str, Any]) -> None:
        """Journal one answer: one line of the pending log (the batch's fold may follow)."""
        try:
            self._pending.append(name, value)
        except (PendingLogError, sqlite3.DatabaseError, OSError) as exc:
            raise state_error(self.directory, "journal", CONSEQUENCE, exc) from None

    def _fold(self, answers: Folded) -> None:
        """Write answers of a pending log into the database, in one transaction."""
        now = time.time()
        with self._guard(), self._cache.transact(retry=True):
            for name, (value, at) in answers.items():
                left = at + self._ttl_s - now
                if left > 0:  # an answer journaled longer ago than the TTL has expired meanwhile
                    self._cache.set(name, value, expire=left, retry=True)

    def _recover(self) -> None:
        """Fold the pending logs of dead processes into the database and delete them.

        Each log in a write transaction of its own (the cross-process lock): two journals
        opened at once fold a log once, and the second finds it gone.
        """
        with self._guard():
            dead = list(dead_logs(self._pending.folder, self._pending.name,
                                  this_host=self._pending.host, lapse_s=CLAIM_TTL_S))
        for path in dead:
            with self._takeover():
                answers = read_log(path)
                if answers:
                    self._fold(answers)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)

    def lookup(self, key: str) -> JournaledAnswer | None:
        """The journaled answer of ``key`` this run may reuse: its own, or any with ``resume``."""
        raw = self._raw(f"answer:{key}")
        if not isinstance(raw, dict):
            return None
        this_run = raw.get("run") == self.run and bool(self.run)
        if not (this_run or self.resume):
            return None
        try:
            response = response_from_json(raw["response"])
        except (ValueError, KeyError, TypeError):
            return None
        obtained: Obtained = "batch" if raw.get("obtained") == "batch" else "paid"
        return JournaledAnswer(response, obtained, this_run)

    def get(self, key: str) -> ChatResponse | None:
        """The reusable journaled answer of ``key``, if any (see :meth:`lookup`)."""
        found = self.lookup(key)
        return found.response if found is not None else None

    def put(self, key: str, call: ChatCall, response: ChatResponse, *,
            obtained: Obtained = "paid", run: str | None = None) -> None:
        """Journal a paid answer (committed to disk when this returns).

        ``run`` is the run that paid for it (default: this one); a batch an
        earlier run created and this one collects stays that run's.
        """
        value = {"run": self.run if run is None else run, "obtained": obtained, "scenario": call.scenario_id,
                 "iteration": call.iteration, "provider": call.provider, "model": call.model,
                 "purpose": call.purpose, "journaled": format_time(utc_now()),
                 "response": response_to_json(response)}
        self._append(f"answer:{key}", value)

    def put_wire(self, key: str, call: ChatCall, api: str, answer: WireAnswer, *,
                 obtained: Obtained = "paid", run: str | None = None) -> None:
        """Journal a paid wire answer exactly (status, stored headers, body bytes as base64).

        Same rules as :meth:`put`; the body is kept byte for byte so the entry
        materialised from it is the one a synchronous recording writes.
        """
        value = {"run": self.run if run is None else run, "obtained": obtained, "scenario": call.scenario_id,
                 "iteration": call.iteration, "provider": call.provider, "model": call.model,
                 "purpose": call.purpose, "journaled": format_time(utc_now()),
                 "wire": {"api": api, "status": answer.status, "headers": dict(answer.headers),
                          "body": base64.b64encode(answer.body).decode("ascii")}}
        self._append(f"answer:{key}", value)

    def lookup_wire(self, key: str) -> JournaledWire | None:
        """The journaled wire answer of ``key`` this run may reuse (its own, or any with ``resume``)."""
        raw = self._raw(f"answer:{key}")
        if not isinstance(raw, dict) or not isinstance(wire := raw.get("wire"), dict):
            return None
        this_run = raw.get("run") == self.run and bool(self.run)
        if not (this_run or self.resume):
            return None
        headers = wire.get("headers")
        if wire.get("api") not in APIS or not isinstance(wire.get("status"), int) \
                or not isinstance(headers, dict):
            return None
        try:
            body = base64.b64decode(str(wire.get("body", "")), validate=True)
        except (binascii.Error, ValueError):
            return None
        answer = WireAnswer(int(wire["status"]), tuple(sorted((str(k), str(v)) for k, v in headers.items())),
                            body)
        obtained: Obtained = "batch" if raw.get("obtained") == "batch" else "paid"
        return JournaledWire(str(wire["api"]), answer, obtained, this_run)

    def forget(self, keys: Iterable[str]) -> None:
        """Drop answers that a finished run has materialised.

        The pending log's other answers are folded into the database first (they are
        still needed), those forgotten never are; the rows already folded are deleted
        in one transaction.
        """
        names = frozenset(f"answer:{key}" for key in keys)

        def delete() -> None:
            with self._guard(), self._cache.transact(retry=True):
                for name in names:
                    self._cache.delete(name, retry=True)

        try:
            self._pending.fold(without=names, also=delete)
        except (PendingLogError, sqlite3.DatabaseError, OSError) as exc:
            raise state_error(self.directory, "journal", CONSEQUENCE, exc) from None

    def _answers(self) -> dict[str, Any]:
        """Every journaled answer by row name: the database's, then every log's over them."""
        found: dict[str, Any] = {}
        with self._guard():
            for name in self._cache.iterkeys():
                if str(name).startswith("answer:"):
                    found[str(name)] = self._cache.get(name)
            for path in other_logs(self._pending.folder, self._pending.name):
                found.update((n, v) for n, (v, _) in read_log(path).items() if n.startswith("answer:"))
        found.update((n, v) for n, (v, _) in list(self._pending.values.items()))
        return {name: value for name, value in found.items() if value is not None}

    def earlier_answers(self) -> int:
        """Answers journaled by other runs that this run will not reuse (it was not resumed)."""
        if self.resume:
            return 0
        return sum(1 for v in self._answers().values() if isinstance(v, dict) and v.get("run") != self.run)

    def __len__(self) -> int:
        return len(self._answers())

    # -- batches -----------------------------------------------------------------------------

    def add_batch(self, record: JsonObject) -> None:
        """Journal a batch the provider has accepted (before waiting for it): id, route, custom ids."""
        value = {**record, "run": self.run, "created": format_time(utc_now())}
        with self._guard():
            self._cache.set(f"batch:{record['id']}", value, expire=self._ttl_s, retry=True)

    def pending_batches(self) -> list[JsonObject]:
        """Batches journaled and not yet collected, oldest first (every run's)."""
        found: list[JsonObject] = []
        with self._guard():
            for name in list(self._cache.iterkeys()):
                if str(name).startswith("batch:"):
                    value = self._cache.get(name, retry=True)
                    if isinstance(value, dict):
                        found.append(value)
        return sorted(found, key=lambda b: str(b.get("created", "")))

    def finish_batch(self, batch_id: str) -> None:
        """The batch's answers are journaled (or reported): stop tracking it."""
        with self._guard():
            self._cache.delete(f"batch:{batch_id}", retry=True)

    # -- claims ------------------------------------------------------------------------------

    @contextmanager
    def claim(self, key: str, *, wait_s: float = CLAIM_TTL_S) -> Iterator[None]:
        """Hold ``key`` across processes while its answer is paid for and written.

        A claim is a byte-range lock of the journal's lock file, or a file where there
        is no ``fcntl`` (:mod:`harness.refresh.claims`), never a row: taking and
        dropping it writes nothing to the database. A lock dies with its process; a
        claim file left by a dead process on this host is taken over at once, one
        from another host lapses after :data:`CLAIM_TTL_S`.
        """
        deadline = time.monotonic() + wait_s
        while True:
            try:
                token = self._claims.try_take(key)
            except OSError as exc:
                raise state_error(self.directory, "journal", CONSEQUENCE, exc) from None
            if token is not None:
                break
            if time.monotonic() > deadline:
                raise ProviderError(f"another process has been recording this call for "
                                    f"{wait_s:.0f}s (journal claim {key[:16]}); try again later")
            time.sleep(_POLL_S)
        try:
            yield
        finally:
            self._claims.release(key, token)

    @contextmanager
    def _takeover(self) -> Iterator[None]:
        """A write transaction of the database: the cross-process lock of a claim takeover."""
        with self._guard(), self._cache.transact(retry=True):
            yield

    def close(self) -> None:
        """Fold the pending log into the database, delete it, close the database handles."""
        try:
            self._pending.close()
        except (PendingLogError, sqlite3.DatabaseError, OSError) as exc:
            raise state_error(self.directory, "journal", CONSEQUENCE, exc) from None
        finally:
            self._claims.close()
            with self._turn:
                self._rows.close()
            self._cache.close()


_TURNS: dict[str, threading.RLock] = {}
_TURNS_LOCK = threading.Lock()


def _turn_of(directory: Path) -> threading.RLock:
    """One lock per journal folder and process, shared by every :class:`Journal` on it."""
    name = os.path.abspath(directory)
    with _TURNS_LOCK:
        return _TURNS.setdefault(name, threading.RLock())


def describe(value: Any) -> str:
    """A short description of a journaled batch for messages: provider, id, request count."""
    if not isinstance(value, dict):
        return "?"
    count = len(value.get("requests") or {})
    return f"{value.get('provider', '?')} batch {value.get('id', '?')} ({count} requests)"
