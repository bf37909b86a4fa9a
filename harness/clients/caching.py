"""The cache-backed chat client.

On a hit the inner client is never invoked. On an absent entry the inner
client answers (and the answer is written) or, when the inner client is the
:class:`~harness.clients.offline.OfflineClient`, refuses. ``refresh=True``
skips the lookup and re-records: the only way the harness spends money, and
never implicit.

With a :class:`~harness.refresh.journal.Journal` (recording against a real
provider), a paid answer is journaled before it is materialised, and an answer
already journaled by an interrupted run is materialised without paying again.
Whatever was recorded, the caller gets the response read back from the entry,
so a recording run gives the verdicts an offline replay of it would give.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from harness.cache.layout import entry_location
from harness.cache.store import CacheStore, EntryAbsent, utc_now
from harness.clients.base import ChatClient
from harness.entities import ChatCall, ChatResponse, JsonObject, Usage
from harness.errors import CacheError
from harness.key import compute_key
from harness.rerecord import Rerecord

if TYPE_CHECKING:
    from harness.refresh.journal import Journal

#: Where an answer came from: the committed cache, a journal left by an interrupted run, the
#: provider (one synchronous call), or a provider batch this run created (``--batch``).
Source = Literal["cache", "journal", "provider", "batch"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call cost and where its answer came from, for the run record."""

    key: str
    cache_hit: bool
    latency_ms: float
    entry: str
    """Entry folder, relative to the cache root."""
    absent_reason: str = ""
    purpose: str = ""
    """Empty for the agent's own call, ``judge:<name>`` for a judge."""
    source: Source = "cache"
    usage: Usage = field(default_factory=Usage)
    """Tokens the call spent this run (zero unless ``source`` is ``provider``)."""


class CachingClient:
    """Wraps an inner client with the committed cache."""

    def __init__(
        self,
        inner: ChatClient,
        store: CacheStore,
        *,
        refresh: bool = False,
        clock: Callable[[], datetime] = utc_now,
        journal: Journal | None = None,
        rerecord: Rerecord | None = None,
        rounds: bool = False,
    ) -> None:
        self.inner = inner
        self.rerecord = rerecord or Rerecord()
        """How to re-record this agent's scenarios: appended to expired and corrupt errors."""
        self.provider = inner.provider
        self.model = inner.model
        self.store = store
        self.refresh = refresh
        self._clock = clock
        self.written = 0
        """Entries written by this client (zero in an offline run, always)."""
        self.journal = journal
        self.journaled: list[str] = []
        """Keys materialised through the journal (forgotten when the whole run succeeds)."""
        self._lock = threading.Lock()
        self._rounds = rounds
        self._materialised: dict[str, Source] = {}
        """With ``rounds`` (a ``--batch`` run re-runs iterations round after round): keys this
        client recorded this run, and how; asked again, it reads the entry back and reports the
        same origin instead of recording it again."""

    def complete(self, call: ChatCall) -> ChatResponse:
        """Protocol method: answer from the cache, else from the inner client."""
        response, _ = self.complete_recorded(call)
        return response

    def complete_recorded(self, call: ChatCall) -> tuple[ChatResponse, CallRecord]:
        """Answer a call and say whether it was a hit, with its key and latency."""
        key = compute_key(call)
        now = self._clock()
        started = time.perf_counter()
        absent_reason = ""
        earlier = self._materialised.get(key) if self._rounds else None
        if earlier is not None:
            response = self.store.read(call, key, now).response
            usage = response.usage if earlier in ("provider", "batch") else Usage()
            return response, self._record(key, False, started, call, "", earlier, usage)
        if not self.refresh:
            try:
                entry = self.store.read(call, key, now)
            except EntryAbsent as absent:
                absent_reason = absent.reason
            except CacheError as error:  # present but unusable: only a refresh replaces it
                raise error.with_hint(self.rerecord.command(call.scenario_id)) from error.__cause__
            else:
                return entry.response, self._record(key, True, started, call)
        if self.journal is None:
            response = self.inner.complete(call)
            self.store.write(call, key, response, now)
            source: Source = "provider"
        else:
            response, source = self._through_journal(self.journal, call, key, now)
            if source == "cache":  # another process recorded it while we waited for the claim
                return response, self._record(key, True, started, call)
        with self._lock:
            self.written += 1
            self._materialised[key] = source
        recorded = self.store.read(call, key, now).response
        usage = response.usage if source in ("provider", "batch") else Usage()
        return recorded, self._record(key, False, started, call, absent_reason, source, usage)

    def _through_journal(
        self, journal: Journal, call: ChatCall, key: str, now: datetime
    ) -> tuple[ChatResponse, Source]:
        """Claim the key, reuse a journaled answer or pay and journal, then materialise."""
        with journal.claim(key):
            if not self.refresh:
                try:
                    return self.store.read(call, key, now).response, "cache"
                except EntryAbsent:
                    pass
            found = journal.lookup(key)
            source: Source = "journal"
            if found is not None:
                response = found.response
                if found.this_run and found.obtained == "batch":
                    source = "batch"  # paid for by this run's batch, materialised now
            else:
                response = self.inner.complete(call)
                journal.put(key, call, response)
                source = "provider"
            self.store.sweep_temporaries(call, key)
            self.store.write(call, key, response, now)
            with self._lock:
                self.journaled.append(key)
            return response, source

    def bind(self, scenario_id: str, iteration: int) -> BoundClient:
        """A client for one scenario iteration, as handed to an agent implementation."""
        return BoundClient(self, scenario_id, iteration)

    def _record(
        self, key: str, hit: bool, started: float, call: ChatCall, absent_reason: str = "",
        source: Source = "cache", usage: Usage | None = None,
    ) -> CallRecord:
        folder = entry_location(call.scenario_id, call.iteration, key)
        latency = (time.perf_counter() - started) * 1000
        return CallRecord(key, hit, round(latency, 3), folder, absent_reason, call.purpose,
                          source, usage or Usage())


class BoundClient:
    """A caching client fixed to one scenario iteration; it logs every call it makes.

    An agent may call the model several times per iteration (a tool loop, a
    self-check); each call gets its own entry under the iteration folder.
    """

    def __init__(self, parent: CachingClient, scenario_id: str, iteration: int) -> None:
        self.parent = parent
        self.scenario_id = scenario_id
        self.iteration = iteration
        self.calls: list[CallRecord] = []

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        """Answer a canonical request for this scenario iteration.

        A judge passes its own ``provider`` and ``model`` (they enter its key, as
        for any call) and a ``purpose`` (``judge:<name>``) that is recorded in
        ``entry.json`` but never keyed; the agent's own calls pass neither.
        """
        call = ChatCall(
            scenario_id=self.scenario_id,
            iteration=self.iteration,
            provider=provider or self.parent.provider,
            model=model or self.parent.model,
            request=request,
            purpose=purpose,
        )
        response, record = self.parent.complete_recorded(call)
        self.calls.append(record)
        return response
