"""One scenario iteration's wire exchanges: answered from the cache, recorded, or refused.

The interceptor (:mod:`harness.wire.intercept`) hands every LLM API request an
agent's SDK sends to the binding of the iteration that is running. The binding
keys it (:mod:`harness.wire.canonical`), and by the run's mode:

- **offline**: answers from the committed entry, byte for byte. A miss (or an
  expired or corrupt entry) is answered with an HTTP error the SDKs do not retry
  (``400`` with ``x-should-retry: false``) *and* remembered, so the iteration
  fails as ``missed`` with the full explanation even if the agent catches the
  SDK's exception. Any request that is not an LLM API call is refused unless it
  goes to a loopback address (a test service of the project's own): an offline
  run opens no socket to the outside.
- **scripted**: a miss (or every call, with ``--refresh-cache``) is answered by
  the agent's script, encoded in the API's own wire format (streamed when the
  request asks for a stream) and written as an entry: seeding is free.
- **paid**: the SDK's own request is forwarded to the endpoint it was built
  for, with the real key put in place of the placeholder; a 2xx answer is
  written exactly (status, content type, body bytes) and the SDK gets it read
  back from the entry, so recording gives the verdicts its replay will. A non-2xx
  answer goes to the SDK unchanged (its own retries apply) and is never stored.

Identical requests inside one iteration (a retried question, a poll) get their
answers in recorded order: the n-th repeat is keyed with ``repeat: n``.
"""

from __future__ import annotations

import ipaddress
import json
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol

from harness.cache.layout import entry_location
from harness.cache.store import CacheStore, Entry, EntryAbsent
from harness.clients.caching import CallRecord, Source
from harness.clients.offline import OfflineClient
from harness.clients.scripted import ScriptedClient
from harness.core.entities import ChatCall, ChatResponse, JsonObject, Usage
from harness.core.errors import CacheError, CacheMiss, HarnessError, WriteFailed
from harness.core.rerecord import Rerecord
from harness.refresh.ledger import Ledger
from harness.requests.key import compute_key
from harness.wire.canonical import WireRefused, canonical_request, declared_tools
from harness.wire.exchange import RESPONSES, WireAnswer, WireRequest, family_of, stored_headers
from harness.wire.placeholder import with_real_key

if TYPE_CHECKING:
    from harness.refresh.journal import Journal

#: How a run answers wire requests (see the module docstring); ``plan`` counts the requests a
#: recording would pay for and answers none of them (:mod:`harness.running.plan`).
WireMode = Literal["offline", "scripted", "paid", "plan"]
#: Resolves the real API key of a provider family when a paid recording forwards a request.
KeyResolver = Callable[[str], str]


class NetworkRefused(Exception):
    """An offline run refused a request that is no LLM API call and leaves the machine."""


@dataclass(frozen=True, slots=True)
class Exchange:
    """One answered LLM API exchange of an iteration, for assertions and reports."""

    api: str
    key: str
    response: ChatResponse
    """The provider-neutral view of the answer (text, tool calls, usage)."""
    tools: tuple[JsonObject, ...] = ()
    """The function tools the request declared (agent.yaml's shape)."""
    request: JsonObject | None = None
    """The canonical request (the transcript in reports)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A request that needs the real endpoint: the interceptor sends ``outgoing`` and calls
    :meth:`WireBinding.finish` with what came back."""

    api: str
    call: ChatCall
    key: str
    outgoing: WireRequest
    started: float


@dataclass(frozen=True, slots=True)
class WireDeferred:
    """A paid request a ``--batch`` run queues for the next batch round instead of sending it."""

    key: str
    call: ChatCall
    agent: str
    api: str
    request: WireRequest
    """The SDK's own request with the real key in place (what a synchronous send would send)."""


class DeferQueue(Protocol):
    """Where a ``--batch`` round queues paid requests (:class:`harness.running.batch.BatchQueue`).

    Declared here, not imported: the batch rounds run above the binding and import it, so
    the binding names only what it uses of their queue (no import circle).
    """

    @property
    def failed(self) -> dict[str, str]: ...

    def defer(self, item: WireDeferred) -> None: ...


@dataclass
class WireRecorder:
    """What answers the wire exchanges of one agent's iterations in this run."""

    mode: WireMode
    store: CacheStore
    refresh: bool
    clock: Callable[[], datetime]
    offline: OfflineClient | None = None
    """Builds the miss explanation (offline runs)."""
    script: ScriptedClient | None = None
    resolve_key: KeyResolver | None = None
    ledger: Ledger | None = None
    rerecord: Rerecord = field(default_factory=Rerecord)
    journal: Journal | None = None
    """Paid recording: every answer is journaled before its entry is written; a re-run (``--resume``)
    materialises answers an earlier run paid for instead of paying again."""
    batch: DeferQueue | None = None
    """``--batch``: paid requests are queued for the round's batch (:mod:`harness.running.batch`)."""
    batch_retry_errors: bool = False
    agent: str = ""
    written: int = 0
    materialised: dict[str, str] = field(default_factory=dict)
    """Keys written by this run, with how they were obtained: a later round (or a repeat of the
    iteration) reads them back without counting them again."""
    journaled: list[str] = field(default_factory=list)
    """Keys materialised through the journal (forgotten when the whole run succeeds)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def bind(self, scenario_id: str, iteration: int, calls: list[CallRecord]) -> WireBinding:
        """The binding of one scenario iteration; its call records go to ``calls``."""
        return WireBinding(self, scenario_id, iteration, calls)


class WireBinding:
    """The wire exchanges of one scenario iteration (thread-safe: an agent may call concurrently)."""

    def __init__(self, recorder: WireRecorder, scenario_id: str, iteration: int,
                 calls: list[CallRecord]) -> None:
        self.recorder = recorder
        self.scenario_id = scenario_id
        self.iteration = iteration
        self.calls = calls
        self.exchanges: list[Exchange] = []
        self.failures: list[CacheError] = []
        """Misses, expired and corrupt entries: the iteration's verdict, whatever the agent did."""
        self.errors: list[str] = []
        """Requests refused (not keyable, network offline) and paid calls that failed."""
        self.deferred: list[str] = []
        """Keys queued for the next batch round: the iteration stops and runs again after it."""
        self.fatal: WriteFailed | None = None
        """A cache write that failed (full or read-only disk): the run stops, naming it."""
        self.would_call: list[ChatCall] = []
        """Requests a recording would pay for (``plan`` mode only)."""
        self._repeats: dict[str, int] = {}
        self._response_ids: dict[str, int] = {}
        self._claims: dict[str, AbstractContextManager[None]] = {}
        """Journal claims held from a paid request's send until its answer is stored."""
        self._lock = threading.Lock()

    # -- non-LLM requests -------------------------------------------------------------------

    def check_passthrough(self, request: WireRequest) -> None:
        """Let a request that is no LLM API call through, or refuse it (offline, off this machine)."""
        if self.recorder.mode != "offline" or _loopback(request.host):
            return
        reason = (f"the offline run refused {request.method} {_clip(request.url)}: it is no LLM API "
                  "call the cache answers, and an offline run opens no connection off this machine")
        with self._lock:
            self.errors.append(reason)
        raise NetworkRefused(reason)

    # -- LLM API requests -------------------------------------------------------------------

    def begin(self, api: str, request: WireRequest) -> WireAnswer | Pending:
        """The answer to an LLM API request, or what must be sent to get it (paid recording)."""
        started = time.perf_counter()
        recorder = self.recorder
        with self._lock:
            try:
                model, canonical = canonical_request(api, request, self._response_ids)
            except WireRefused as refused:
                self.errors.append(str(refused))
                return _error_answer(api, str(refused))
            call = ChatCall(self.scenario_id, self.iteration, family_of(api), model, canonical)
            base = compute_key(call)
            repeat = self._repeats.get(base, 0)
        if repeat:
            call = ChatCall(call.scenario_id, call.iteration, call.provider, call.model,
                            {**canonical, "repeat": repeat})
        key = base if not repeat else compute_key(call)
        earlier = None
        if recorder.materialised:  # empty in every run but a --batch or --resume one
            with recorder._lock:
                earlier = recorder.materialised.get(key)
        if earlier is not None:  # written by this run (an earlier batch round): counted then
            return self._read_back(api, call, key, started, earlier, base=base)
        if not recorder.refresh:
            try:
                entry = recorder.store.read(call, key, recorder.clock())
            except EntryAbsent as absent:
                if recorder.mode == "offline":
                    return self._missed(api, call, key, started, absent.reason)
            except CacheError as error:  # present but unusable: only a refresh replaces it
                if recorder.mode == "plan":  # the run reports it; it calls nothing
                    return _error_answer(api, str(error).splitlines()[0])
                failure = error.with_hint(recorder.rerecord.command(self.scenario_id))
                return self._failed(api, call, key, started, failure)
            else:
                if entry.wire is None:
                    return self._failed(api, call, key, started, CacheMiss(
                        f"{self.scenario_id} iteration {self.iteration}: the entry at {entry.folder} is "
                        "no wire entry"))
                return self._hit(api, call, base, key, entry, entry.wire, started)
        if recorder.mode == "plan":
            with self._lock:
                self.would_call.append(call)
            if recorder.script is None:  # a paid call: what the provider answers is not known yet
                return _error_answer(api, "planning a recording run: nothing is called")
            return self._scripted(api, call, base, key, started, request, write=False)
        if recorder.mode == "scripted":
            return self._scripted(api, call, base, key, started, request)
        if recorder.mode == "offline":  # refresh is never offline; kept for the type checker
            return self._missed(api, call, key, started, "offline")
        assert recorder.resolve_key is not None
        if recorder.journal is not None:
            self._claim(recorder.journal, key)
            try:
                found = self._from_journal(recorder.journal, api, call, base, key, started)
            except BaseException:
                self._release(key)
                raise
            if found is not None:
                return found
        if recorder.batch is not None:
            deferred = self._defer(api, call, key, request)
            if deferred is not None:
                return deferred
        try:
            outgoing = with_real_key(request, call.provider, recorder.resolve_key)
        except HarnessError as exc:
            self._release(key)
            with self._lock:
                self.errors.append(str(exc))
            return _error_answer(api, str(exc))
        if recorder.ledger is not None:
            recorder.ledger.call_started()
        return Pending(api, call, key, outgoing, started)

    def finish(self, pending: Pending, answer: WireAnswer) -> WireAnswer:
        """Store a paid answer (2xx only) and return it read back from its entry."""
        recorder = self.recorder
        if not answer.ok:
            self._release(pending.key)
            if recorder.ledger is not None:
                recorder.ledger.call_ended(None)
            with self._lock:
                self.calls.append(CallRecord(
                    pending.key, False, _ms(pending.started),
                    entry_location(self.scenario_id, self.iteration, pending.key), source="provider",
                    obtained="paid", attempts=1, failed=True))
            return answer
        stored = WireAnswer(answer.status, stored_headers(answer.headers), answer.body)
        try:
            if recorder.journal is not None:  # on disk before the entry: a kill loses nothing paid
                recorder.journal.put_wire(pending.key, pending.call, pending.api, stored)
            response = self._write(pending.api, pending.call, pending.key, stored, "paid", pending.started)
            if recorder.journal is not None:
                with recorder._lock:
                    recorder.journaled.append(pending.key)
        finally:
            self._release(pending.key)
        if recorder.ledger is not None:
            recorder.ledger.call_ended("paid", input_tokens=response.usage.input_tokens,
                                       output_tokens=response.usage.output_tokens)
        return self._read_back(pending.api, pending.call, pending.key, pending.started, "paid",
                               usage=response.usage)

    def failed_send(self, pending: Pending, problem: str) -> None:
        """A paid send that raised (connection refused, timeout): counted, never stored."""
        self._release(pending.key)
        if self.recorder.ledger is not None:
            self.recorder.ledger.call_ended(None)
        with self._lock:
            self.calls.append(CallRecord(
                pending.key, False, _ms(pending.started),
                entry_location(self.scenario_id, self.iteration, pending.key), source="provider",
                obtained="paid", attempts=1, failed=True))

    def internal_error(self, api: str, exc: Exception) -> WireAnswer:
        """A fault of the harness while answering a request: the iteration's error, with its type
        (a failed cache write stops the run, as everywhere: :attr:`fatal`)."""
        if isinstance(exc, WriteFailed):
            self.fatal = exc
        reason = f"the harness failed answering a {api} request: {type(exc).__name__}: {exc}"
        with self._lock:
            self.errors.append(reason)
        return _error_answer(api, reason)

    # -- batch rounds (``--batch``) ---------------------------------------------------------

    def _defer(self, api: str, call: ChatCall, key: str, request: WireRequest) -> WireAnswer | None:
        """Queue a paid request for the round's batch (None: send it now, as ``--batch-retry-errors``
        asks for a request the batch answered with an error). The SDK gets an error it does not
        retry; the iteration stops (:attr:`deferred`) and runs again after the batch."""
        from harness.wire.batch import refusal

        recorder = self.recorder
        assert recorder.batch is not None and recorder.resolve_key is not None
        failure = recorder.batch.failed.get(key)
        if failure is not None and recorder.batch_retry_errors:
            return None
        reason = (f"{failure}. Nothing was written to the cache; --batch-retry-errors pays for it "
                  "synchronously instead") if failure is not None else refusal(api, request)
        try:
            if reason is None:
                outgoing = with_real_key(request, call.provider, recorder.resolve_key)
                recorder.batch.defer(WireDeferred(key, call, recorder.agent, api, outgoing))
        except HarnessError as exc:
            reason = str(exc)
        finally:
            self._release(key)
        with self._lock:
            if reason is not None:
                self.errors.append(reason if failure is not None else f"--batch: {reason}")
                return _error_answer(api, reason)
            self.deferred.append(key)
        return _error_answer(api, "deferred to this run's batch: the iteration runs again when the batch "
                                  "has answered")

    # -- the journal (paid recording) -------------------------------------------------------

    def _claim(self, journal: Journal, key: str) -> None:
        """Hold ``key`` across processes until its answer is stored (two processes never pay twice)."""
        claim = journal.claim(key)
        claim.__enter__()
        with self._lock:
            self._claims[key] = claim

    def _release(self, key: str) -> None:
        with self._lock:
            claim = self._claims.pop(key, None)
        if claim is not None:
            claim.__exit__(None, None, None)

    def _from_journal(self, journal: Journal, api: str, call: ChatCall, base: str, key: str,
                      started: float) -> WireAnswer | None:
        """Under the claim: an entry another process wrote meanwhile, or an answer this run (or,
        resumed, an earlier one) paid for, materialised now; None when it must be paid for."""
        recorder = self.recorder
        if not recorder.refresh:
            try:
                entry = recorder.store.read(call, key, recorder.clock())
            except (EntryAbsent, CacheError):
                pass
            else:
                self._release(key)
                if entry.wire is not None:
                    return self._hit(api, call, base, key, entry, entry.wire, started)
        found = journal.lookup_wire(key)
        if found is None or found.api != api:
            return None
        obtained = "batch" if found.this_run and found.obtained == "batch" else "journal"
        try:
            response = self._write(api, call, key, found.answer, obtained, started)
            with recorder._lock:
                recorder.journaled.append(key)
        finally:
            self._release(key)
        if recorder.ledger is not None:
            if obtained == "batch":
                recorder.ledger.batch_answer(response.usage.input_tokens, response.usage.output_tokens)
            else:
                recorder.ledger.journal_reuse()
        return self._read_back(api, call, key, started, obtained, base=base,
                               usage=response.usage if obtained == "batch" else Usage())

    # -- helpers ----------------------------------------------------------------------------

    def _scripted(self, api: str, call: ChatCall, base: str, key: str, started: float,
                  request: WireRequest, *, write: bool = True) -> WireAnswer:
        """The script's answer in the API's wire format; written (and counted as scripted)
        unless a plan only needs to know what comes next (``write=False``)."""
        from harness.wire.codecs import decode_answer, encode_answer

        script = self.recorder.script
        ledger = self.recorder.ledger if write else None
        assert script is not None
        body = json.loads(request.body.decode("utf-8"))
        if ledger is not None:
            ledger.call_started()
        try:
            response = script.complete(call)
        except HarnessError as exc:
            if ledger is not None:
                ledger.call_ended(None)
            with self._lock:
                self.errors.append(str(exc))
            return _error_answer(api, str(exc))
        encoded = encode_answer(api, response, request=body, seed=key)
        answer = WireAnswer(encoded.status, tuple(sorted(
            (k.lower(), v) for k, v in encoded.headers.items())), encoded.body)
        if not write:
            with self._lock:
                self._repeats[base] = self._repeats.get(base, 0) + 1
                decoded_plan = decode_answer(api, answer.body, content_type=answer.content_type)
                self.exchanges.append(Exchange(api, key, decoded_plan, tuple(declared_tools(call.request)),
                                               call.request))
                if api == RESPONSES and (rid := _response_id(answer)):
                    self._response_ids[rid] = len(self.exchanges) - 1
            return answer
        decoded = self._write(api, call, key, stored_answer(answer), "scripted", started)
        if ledger is not None:
            ledger.call_ended("scripted", input_tokens=decoded.usage.input_tokens,
                              output_tokens=decoded.usage.output_tokens)
        return self._read_back(api, call, key, started, "scripted", base=base)

    def _write(self, api: str, call: ChatCall, key: str, answer: WireAnswer, obtained: str,
               started: float) -> ChatResponse:
        from harness.wire.codecs import decode_answer

        recorder = self.recorder
        response = decode_answer(api, answer.body, content_type=answer.content_type)
        provenance: JsonObject = {
            "source": "scripted" if obtained == "scripted" else "provider",
            "endpoint_kind": "scripted" if obtained == "scripted" else f"wire:{api}",
            "obtained": obtained, "attempts": 1 if obtained == "paid" else 0,
            "latency_ms": _ms(started) if obtained == "paid" else None,
            "input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens}
        recorder.store.write_exchange(call, key, api, answer, recorder.clock(), provenance)
        with recorder._lock:
            recorder.written += 1
            recorder.materialised[key] = obtained
        return response

    def _read_back(self, api: str, call: ChatCall, key: str, started: float, obtained: str, *,
                   usage: Usage | None = None, base: str | None = None) -> WireAnswer:
        """The answer written by this run, read back from its entry (so recording gives the
        verdicts its replay will); in the iteration's calls as ``obtained`` with the tokens this
        run paid for (``usage``: none when the call was counted before)."""
        recorder = self.recorder
        entry = recorder.store.read(call, key, recorder.clock())
        assert entry.wire is not None
        source: Source = obtained if obtained in ("batch", "journal") else "provider"  # type: ignore[assignment]
        self._answered(api, call, base or _base_key(call), key, entry.response, entry.wire, CallRecord(
            key, False, _ms(started), entry_location(self.scenario_id, self.iteration, key),
            source=source, usage=usage or Usage(), obtained=obtained,
            attempts=1 if obtained == "paid" and usage is not None else 0, provenance=entry.provenance))
        return entry.wire

    def _hit(self, api: str, call: ChatCall, base: str, key: str, entry: Entry, answer: WireAnswer,
             started: float) -> WireAnswer:
        """An answer the cache already holds: counted as from the cache, replayed byte for byte."""
        if self.recorder.ledger is not None:
            self.recorder.ledger.from_cache()
        self._answered(api, call, base, key, entry.response, answer, CallRecord(
            key, True, _ms(started), entry_location(self.scenario_id, self.iteration, key),
            provenance=entry.provenance))
        return answer

    def _answered(self, api: str, call: ChatCall, base: str, key: str, response: ChatResponse,
                  answer: WireAnswer, record: CallRecord) -> None:
        with self._lock:
            self._repeats[base] = self._repeats.get(base, 0) + 1
            self.exchanges.append(Exchange(api, key, response, tuple(declared_tools(call.request)),
                                           call.request))
            if api == RESPONSES and (rid := _response_id(answer)):
                self._response_ids[rid] = len(self.exchanges) - 1
            self.calls.append(record)

    def _missed(self, api: str, call: ChatCall, key: str, started: float, reason: str) -> WireAnswer:
        offline = self.recorder.offline
        assert offline is not None
        try:
            offline.complete(call)
        except CacheMiss as miss:
            return self._failed(api, call, key, started, miss, reason)
        raise AssertionError("the offline client answered")  # pragma: no cover

    def _failed(self, api: str, call: ChatCall, key: str, started: float, failure: CacheError,
                reason: str = "") -> WireAnswer:
        with self._lock:
            self.failures.append(failure)
            self.calls.append(CallRecord(key, False, _ms(started),
                                         entry_location(self.scenario_id, self.iteration, key),
                                         absent_reason=reason))
        return _error_answer(api, str(failure).splitlines()[0])


def stored_answer(answer: WireAnswer) -> WireAnswer:
    """The part of an answer that is stored (volatile headers dropped)."""
    return WireAnswer(answer.status, stored_headers(answer.headers), answer.body)


def _base_key(call: ChatCall) -> str:
    request = {k: v for k, v in call.request.items() if k != "repeat"}
    return compute_key(ChatCall(call.scenario_id, call.iteration, call.provider, call.model, request))


def _error_answer(api: str, message: str) -> WireAnswer:
    """An answer every SDK raises on at once: 400, ``x-should-retry: false``, the API's error shape."""
    if family_of(api) == "anthropic":
        body: JsonObject = {"type": "error", "error": {"type": "invalid_request_error",
                                                       "message": f"harness: {message}"}}
    else:
        body = {"error": {"message": f"harness: {message}", "type": "harness_refused",
                          "code": "harness_refused", "param": None}}
    return WireAnswer(400, (("content-type", "application/json"), ("x-should-retry", "false")),
                      json.dumps(body).encode("utf-8"))


def _response_id(answer: WireAnswer) -> str | None:
    """The id a Responses API answer gave its response (JSON body, or the stream's first event)."""
    text = answer.body.decode("utf-8", "replace")
    candidates = [text] if not text.lstrip().startswith(("event:", "data:")) else [
        line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(data, dict):
            found = data.get("response", data) if "response" in data else data
            if isinstance(found, dict) and isinstance(found.get("id"), str):
                return str(found["id"])
    return None


def _loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)
