"""The cache-backed chat client.

On a hit the inner client is never invoked. On an absent entry the inner
client answers (and the answer is written) or, when the inner client is the
:class:`~harness.clients.offline.OfflineClient`, refuses. ``refresh=True``
skips the lookup and re-records: the only way the harness spends money, and
never implicit.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from harness.cache.store import CacheStore, EntryAbsent, utc_now
from harness.clients.base import ChatClient
from harness.entities import ChatCall, ChatResponse, JsonObject
from harness.key import compute_key


@dataclass(frozen=True)
class CallRecord:
    """What one call cost and where its answer came from, for the run record."""

    key: str
    cache_hit: bool
    latency_ms: float
    entry: str
    """Entry folder, relative to the cache root."""
    absent_reason: str = ""


class CachingClient:
    """Wraps an inner client with the committed cache."""

    def __init__(
        self,
        inner: ChatClient,
        store: CacheStore,
        *,
        refresh: bool = False,
        clock: Callable[[], datetime] = utc_now,
    ) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.store = store
        self.refresh = refresh
        self._clock = clock
        self.written = 0
        """Entries written by this client (zero in an offline run, always)."""

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
        if not self.refresh:
            try:
                entry = self.store.read(call, key, now)
            except EntryAbsent as absent:
                absent_reason = absent.reason
            else:
                return entry.response, self._record(key, True, started, call)
        response = self.inner.complete(call)
        self.store.write(call, key, response, now)
        self.written += 1
        return response, self._record(key, False, started, call, absent_reason)

    def bind(self, scenario_id: str, iteration: int) -> BoundClient:
        """A client for one scenario iteration, as handed to an agent implementation."""
        return BoundClient(self, scenario_id, iteration)

    def _record(
        self, key: str, hit: bool, started: float, call: ChatCall, absent_reason: str = ""
    ) -> CallRecord:
        folder = self.store.path_for(call, key).relative_to(self.store.root).as_posix()
        latency = (time.perf_counter() - started) * 1000
        return CallRecord(key, hit, round(latency, 3), folder, absent_reason)


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

    def complete(self, request: JsonObject) -> ChatResponse:
        """Answer a canonical request for this scenario iteration."""
        call = ChatCall(
            scenario_id=self.scenario_id,
            iteration=self.iteration,
            provider=self.parent.provider,
            model=self.parent.model,
            request=request,
        )
        response, record = self.parent.complete_recorded(call)
        self.calls.append(record)
        return response
