"""The cache-backed chat client.

On a hit the inner client is never invoked. On an absent entry the inner
client answers (and the answer is written) or, when the inner client is the
:class:`~harness.clients.offline.OfflineClient`, refuses. ``refresh=True``
skips the lookup and re-records: the only way the harness spends money, and
never implicit.

With a :class:`~harness.refresh.journal.Journal` (recording against a real
provider), a paid answer is journaled before it is materialised, and an answer
already journaled by an interrupted run is materialised without paying again.
Whatever was recorded, the caller gets the response parsed from the entry's
payload bytes as a replay parses them, so a recording run gives the verdicts an
offline replay of it would give.

Every recorded entry carries its provenance (:mod:`harness.clients.provenance`)
and every call record says how its answer was obtained and what it cost; a
run's :class:`~harness.refresh.ledger.Ledger` (when given) counts both live.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from harness.cache.layout import entry_location
from harness.cache.store import CacheStore, EntryAbsent
from harness.clients.base import ChatClient
from harness.clients.provenance import SCRIPTED, complete_counted, endpoint_kind_of, provenance
from harness.core.clock import utc_now
from harness.core.entities import ChatCall, ChatResponse, JsonObject, Usage
from harness.core.errors import CacheError, HarnessError
from harness.core.rerecord import Rerecord
from harness.providers.retries import Receipt
from harness.requests.key import compute_key

if TYPE_CHECKING:
    from harness.refresh.journal import Journal
    from harness.refresh.ledger import Ledger

#: Where an answer came from: the committed cache, a journal left by an interrupted run, the
#: provider (one synchronous call), or a provider batch this run created (``--batch``).
Source = Literal["cache", "journal", "provider", "batch"]
#: ``obtained`` (records, provenance) of an answer recorded from each source.
_OBTAINED: dict[str, str] = {"cache": "cache", "journal": "journal", "provider": "paid",
                             "batch": "batch"}


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
    obtained: str = "cache"
    """``cache``, ``paid``, ``scripted`` or ``journal`` (this run), see the ledger."""
    attempts: int = 0
    """HTTP attempts of this call that reached the provider this run (each may be billed)."""
    retries: int = 0
    provenance: JsonObject | None = None
    """The entry's provenance (None: recorded by an older version, or no entry)."""
    failed: bool = False
    """The call failed for good (its attempts still count as paid)."""

    def to_json(self) -> JsonObject:
        """The call as a run record lists it (``source``, ``usage`` and ``absent_reason`` only
        when they are not the defaults of a replayed hit)."""
        spent = self.usage.input_tokens or self.usage.output_tokens
        return {"key": self.key, "cache_hit": self.cache_hit, "latency_ms": self.latency_ms,
                "entry": self.entry, **({"purpose": self.purpose} if self.purpose else {}),
                "obtained": self.obtained, "attempts": self.attempts, "retried": self.retries > 0,
                "retries": self.retries, **({"failed": True} if self.failed else {}),
                **({"source": self.source} if self.source != "cache" else {}),
                **({"usage": {"input_tokens": self.usage.input_tokens,
                              "output_tokens": self.usage.output_tokens}} if spent else {}),
                **({"absent_reason": self.absent_reason} if self.absent_reason else {}),
                "provenance": self.provenance}

    @classmethod
    def from_json(cls, data: JsonObject) -> CallRecord:
        """Inverse of :meth:`to_json` (records of older versions lack the accounting fields)."""
        recorded = data.get("provenance")
        usage = data.get("usage") or {}
        return cls(data["key"], data["cache_hit"], data["latency_ms"], data["entry"],
                   absent_reason=str(data.get("absent_reason") or ""),
                   purpose=data.get("purpose", ""), source=data.get("source", "cache"),
                   usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
                   obtained=data.get("obtained", "cache"),
                   attempts=int(data.get("attempts", 0)), retries=int(data.get("retries", 0)),
                   provenance=recorded if isinstance(recorded, dict) else None,
                   failed=bool(data.get("failed", False)))


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
        ledger: Ledger | None = None,
        rerecord: Rerecord | None = None,
        rounds: bool = False,
    ) -> None:
        self.inner = inner
        self.ledger = ledger
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

    def complete_recorded(self, call: ChatCall, canonical_request: bytes | None = None,
                          ) -> tuple[ChatResponse, CallRecord]:
        """Answer a call and say whether it was a hit, with its key, latency and cost.

        A call that fails raises, with its record (attempts paid) attached as
        ``call_record`` so the iteration's record still lists it. ``canonical_request``:
        the request's canonical JSON when the caller has it (see :func:`compute_key`).
        """
        key = compute_key(call, canonical_request)
        now = self._clock()
        started = time.perf_counter()
        absent_reason = ""
        earlier = self._materialised.get(key) if self._rounds else None
        if earlier is not None:
            entry = self.store.read(call, key, now)
            usage = entry.response.usage if earlier in ("provider", "batch") else Usage()
            return entry.response, self._record(
                key, False, started, call, "", earlier, usage, obtained=_OBTAINED[earlier],
                provenance=entry.provenance)  # its attempts were counted when it was recorded
        if not self.refresh:
            try:
                entry = self.store.read(call, key, now)
            except EntryAbsent as absent:
                absent_reason = absent.reason
            except CacheError as error:  # present but unusable: only a refresh replaces it
                raise error.with_hint(self.rerecord.command(call.scenario_id)) from error.__cause__
            else:
                if self.ledger is not None:
                    self.ledger.from_cache()
                return entry.response, self._record(key, True, started, call,
                                                    provenance=entry.provenance)
        receipt: Receipt | None
        recorded_as: JsonObject | None
        if self.journal is None:
            response, receipt = self._ask(call, key, started)
            obtained = self._obtained()
            recorded_as = self._provenance(call, obtained, response, receipt)
            recorded = self.store.write_read(call, key, response, now, recorded_as)
            source: Source = "provider"
        else:
            response, source, receipt, recorded_as, recorded = self._through_journal(
                self.journal, call, key, now, started)
            if source == "cache":  # another process recorded it while we waited for the claim
                if self.ledger is not None:
                    self.ledger.from_cache()
                return response, self._record(key, True, started, call, provenance=recorded_as)
            obtained = _OBTAINED[source]
        with self._lock:
            self.written += 1
            self._materialised[key] = source
        usage = response.usage if source in ("provider", "batch") else Usage()
        return recorded, self._record(key, False, started, call, absent_reason, source, usage,
                                      obtained=obtained, receipt=receipt, provenance=recorded_as)

    def _ask(self, call: ChatCall, key: str, started: float) -> tuple[ChatResponse, Receipt]:
        """The inner client's answer and receipt, counted in the ledger."""
        if self.ledger is not None:
            if self._obtained() == "paid":  # a new paid call takes its share of --max-calls
                self.ledger.take_call(f"{call.scenario_id} iteration {call.iteration}")
            self.ledger.call_started()
        try:
            response, receipt = complete_counted(self.inner, call)
        except HarnessError as exc:
            if self.ledger is not None:
                self.ledger.call_ended(None, retried=bool(getattr(exc, "attempts", 0) > 1))
            paid = int(getattr(exc, "attempts", 0) or 0)
            exc.call_record = self._record(  # type: ignore[attr-defined]
                key, False, started, call, "", "provider", obtained=self._obtained(),
                receipt=Receipt(attempts=paid, retries=max(paid - 1, 0)), failed=True)
            raise
        except BaseException:  # a control-flow signal (a call deferred to a batch), Ctrl-C
            if self.ledger is not None:
                self.ledger.call_ended("deferred")
            raise
        if self.ledger is not None:
            self.ledger.call_ended(self._obtained(), input_tokens=response.usage.input_tokens,
                                   output_tokens=response.usage.output_tokens,
                                   retried=receipt.retries > 0)
        return response, receipt

    def _obtained(self) -> str:
        return SCRIPTED if getattr(self.inner, "endpoint_kind", None) == SCRIPTED else "paid"

    def _provenance(self, call: ChatCall, obtained: str, response: ChatResponse,
                    receipt: Receipt | None) -> JsonObject:
        return provenance(endpoint_kind_of(self.inner, call.provider), obtained, response, receipt)

    def _through_journal(
        self, journal: Journal, call: ChatCall, key: str, now: datetime, started: float
    ) -> tuple[ChatResponse, Source, Receipt | None, JsonObject | None, ChatResponse]:
        """Claim the key, reuse a journaled answer or pay and journal, then materialise; the
        last item is the answer as the entry's replay parses it."""
        with journal.claim(key):
            if not self.refresh:
                try:
                    entry = self.store.read(call, key, now)
                    return entry.response, "cache", None, entry.provenance, entry.response
                except EntryAbsent:
                    pass
            found = journal.lookup(key)
            source: Source = "journal"
            receipt: Receipt | None = None
            if found is not None:
                response = found.response
                if found.this_run and found.obtained == "batch":
                    source = "batch"  # paid for by this run's batch, materialised now
                if self.ledger is not None:
                    if source == "batch":
                        self.ledger.batch_answer(response.usage.input_tokens,
                                                 response.usage.output_tokens)
                    else:
                        self.ledger.journal_reuse()
            else:
                response, receipt = self._ask(call, key, started)
                journal.put(key, call, response)
                source = "provider"
            recorded_as = self._provenance(call, _OBTAINED[source], response, receipt)
            self.store.sweep_temporaries(call, key)
            recorded = self.store.write_read(call, key, response, now, recorded_as)
            with self._lock:
                self.journaled.append(key)
            return response, source, receipt, recorded_as, recorded

    def bind(self, scenario_id: str, iteration: int) -> BoundClient:
        """A client for one scenario iteration, as handed to an agent implementation."""
        return BoundClient(self, scenario_id, iteration)

    def _record(
        self, key: str, hit: bool, started: float, call: ChatCall, absent_reason: str = "",
        source: Source = "cache", usage: Usage | None = None, *, obtained: str = "cache",
        receipt: Receipt | None = None, provenance: JsonObject | None = None,
        failed: bool = False,
    ) -> CallRecord:
        folder = entry_location(call.scenario_id, call.iteration, key)
        latency = (time.perf_counter() - started) * 1000
        return CallRecord(key, hit, round(latency, 3), folder, absent_reason, call.purpose,
                          source, usage or Usage(), obtained,
                          receipt.attempts if receipt is not None else 0,
                          receipt.retries if receipt is not None else 0, provenance, failed)


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
        self.encoded: tuple[JsonObject, bytes] | None = None
        """A request and its canonical JSON, encoded once by the run for its digest: a call of
        that very object reuses the bytes for its key (a declared agent's first call; the run
        sets it only for agents whose harness code sends the request unchanged)."""

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
        try:
            known = self.encoded
            response, record = self.parent.complete_recorded(
                call, known[1] if known is not None and known[0] is request else None)
        except HarnessError as exc:
            failed = getattr(exc, "call_record", None)
            if isinstance(failed, CallRecord):
                self.calls.append(failed)
            raise
        self.calls.append(record)
        return response
