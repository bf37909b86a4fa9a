"""How a wire binding records a miss: the script's answer (seeding), the real endpoint's
(paid), an answer already paid for (the journal) or one queued for a batch round.

:class:`harness.wire.binding.WireBinding` keys every request and answers it from the
cache; this is its other half, :class:`RecordingSide`, which only a recording run
(``--refresh-cache``, ``--record-missing``, ``--resume``, ``--batch``) and a seeding
run ever reach. Kept apart so that the replay path every pull request runs reads on
its own, and the paths that cost money read together: a paid 2xx answer is journaled
before its entry is written (a kill loses nothing paid), the journal claim is held from
the send until the answer is stored (two processes never pay twice), and every answer
is handed to the SDK read back from its entry, so recording gives the verdicts its
replay will.
"""

from __future__ import annotations

import json
import threading
import time
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from harness.cache.layout import entry_location
from harness.cache.store import EntryAbsent
from harness.clients.caching import CallRecord, Source
from harness.core.entities import ChatCall, ChatResponse, JsonObject, Usage
from harness.core.errors import CacheError, HarnessError
from harness.requests.key import compute_key
from harness.wire.canonical import declared_tools
from harness.wire.codecs_common import WireDecodeError
from harness.wire.exchange import (
    AUXILIARY,
    RESPONSES,
    Exchange,
    WireAnswer,
    WireRequest,
    base_url_of,
    error_answer,
    response_id,
    stored_headers,
)
from harness.wire.placeholder import with_real_key
from harness.wire.recorder import Pending, WireDeferred, WireRecorder

if TYPE_CHECKING:
    from harness.cache.store import Entry
    from harness.refresh.journal import Journal


class RecordingSide:
    """The recording half of :class:`~harness.wire.binding.WireBinding` (which inherits it):
    what it reads of the binding is declared here, the binding sets it."""

    recorder: WireRecorder
    scenario_id: str
    iteration: int
    calls: list[CallRecord]
    exchanges: list[Exchange]
    errors: list[str]
    deferred: list[str]
    _repeats: dict[str, int]
    _response_ids: dict[str, int]
    _claims: dict[str, AbstractContextManager[None]]
    _lock: threading.Lock

    if TYPE_CHECKING:
        def _hit(self, api: str, call: ChatCall, base: str, key: str, entry: Entry,
                 answer: WireAnswer, started: float) -> WireAnswer: ...

        def _answered(self, api: str, call: ChatCall, base: str, key: str, response: ChatResponse,
                      answer: WireAnswer, record: CallRecord) -> None: ...

    # -- paid recording -------------------------------------------------------------------

    def _pay(self, api: str, call: ChatCall, base: str, key: str, started: float,
             request: WireRequest) -> WireAnswer | Pending:
        """A miss a paid recording answers: from the journal (an answer paid for already), queued
        for the batch, or a :class:`Pending` the interceptor sends with the real key in place."""
        recorder = self.recorder
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
        if recorder.ledger is not None and not self._failed_before(key):  # a retry is not counted
            try:
                recorder.ledger.take_call(f"{call.scenario_id} iteration {call.iteration}")
            except HarnessError as exc:
                return self._not_sent(api, key, str(exc))
        if recorder.batch is not None and api not in AUXILIARY:  # no batch form: sent at once
            deferred = self._defer(api, call, key, request)
            if deferred is not None:
                return deferred
        try:
            outgoing = with_real_key(request, call.provider, recorder.resolve_key)
        except HarnessError as exc:
            return self._not_sent(api, key, str(exc))
        if recorder.limit is not None:  # each attempt waits for its slot, as declared agents' do
            recorder.limit(call.provider, base_url_of(api, request))
        if recorder.ledger is not None:
            recorder.ledger.call_started()
        return Pending(api, call, key, outgoing, started)

    def _not_sent(self, api: str, key: str, reason: str) -> WireAnswer:
        """A paid request refused before it was sent: its claim released, the reason the
        iteration's error, and an answer the SDK raises on without retrying."""
        self._release(key)
        with self._lock:
            if reason not in self.errors:  # a call repeated after its refusal: listed once
                self.errors.append(reason)
        return error_answer(api, reason)

    def finish(self, pending: Pending, answer: WireAnswer) -> WireAnswer:
        """Store a paid answer (2xx only) and return it read back from its entry."""
        recorder = self.recorder
        if recorder.ledger is not None:  # an answer came back: the attempt reached the provider
            recorder.ledger.attempt_finished(reached=True)
        if not answer.ok:
            self._release(pending.key)
            self._failed_attempt(pending)
            if 300 <= answer.status < 400:
                return self.redirect_refused(pending.api, answer)
            return answer
        stored = WireAnswer(answer.status, stored_headers(answer.headers), answer.body)
        try:
            if recorder.journal is not None:  # on disk before the entry: a kill loses nothing paid
                recorder.journal.put_wire(pending.key, pending.call, pending.api, stored)
            response = self._write(pending.api, pending.call, pending.key, stored, "paid", pending.started)
            if recorder.journal is not None:
                with recorder._lock:
                    recorder.journaled.append(pending.key)
        except BaseException as exc:  # not stored: counted as failed, and no retry pays again
            self._failed_attempt(pending)
            if not isinstance(exc, WireDecodeError):
                raise
            reason = (f"the provider's {answer.status} answer to this {pending.api} request is no "
                      f"{pending.api} answer ({exc}); it was not stored, and the SDK is told not to "
                      "retry it (each retry would be paid)")
            with self._lock:
                self.errors.append(reason)
            return error_answer(pending.api, reason)
        finally:
            self._release(pending.key)
        earlier = self._earlier_failure(pending.key)
        if recorder.ledger is not None:
            recorder.ledger.call_ended("paid", input_tokens=response.usage.input_tokens,
                                       output_tokens=response.usage.output_tokens)
        return self._read_back(pending.api, pending.call, pending.key, pending.started, "paid",
                               usage=response.usage, earlier=earlier)

    def redirect_refused(self, api: str, answer: WireAnswer) -> WireAnswer:
        """A 3xx to a request the harness sent is never handed to the SDK: the SDKs' clients
        follow redirects, and the follow-up would carry the request, and the real key the
        harness put in it, wherever the ``Location`` points (the rule of declared agents'
        providers, :mod:`harness.providers.http`). The iteration's error, and an answer the SDK
        raises on without retrying."""
        location = next((value for name, value in answer.headers if name == "location"),
                        "(no Location header)")
        reason = (f"HTTP {answer.status} redirect to {location[:200]} refused (eval-provider-redirect): "
                  "a recording never follows a redirect, which would send the request and its API "
                  "key to another address. Fix: set the agent's base URL (OPENAI_BASE_URL, "
                  "ANTHROPIC_BASE_URL or the client's base_url) to the final URL")
        with self._lock:
            if reason not in self.errors:
                self.errors.append(reason)
        return error_answer(api, reason)

    def failed_send(self, pending: Pending, problem: str, *, reached: bool = True) -> None:
        """A paid send that raised (connection refused, timeout): counted, never stored.

        ``reached``: whether the request may have reached the provider (anything but a refused
        or timed-out connect), so that it may bill it: counted as a paid attempt then.
        """
        self._release(pending.key)
        if self.recorder.ledger is not None:
            self.recorder.ledger.attempt_finished(reached=reached)
        self._failed_attempt(pending, reached=reached)

    def _failed_attempt(self, pending: Pending, *, reached: bool = True) -> None:
        """One paid attempt that brought no stored answer: the call's failed record, with the
        attempts of the same call before it (the SDK's own retries) folded in."""
        earlier = self._earlier_failure(pending.key)
        if self.recorder.ledger is not None:
            self.recorder.ledger.call_ended(None)
        attempts, retries = _folded(int(reached), earlier)
        with self._lock:
            self.calls.append(CallRecord(
                pending.key, False, elapsed_ms(pending.started),
                entry_location(self.scenario_id, self.iteration, pending.key), source="provider",
                obtained="paid", attempts=attempts, retries=retries, failed=True))

    def _failed_before(self, key: str) -> bool:
        """Whether a paid attempt of this very call failed already (the SDK is retrying it)."""
        with self._lock:
            return any(found.key == key and found.failed and found.obtained == "paid"
                       for found in self.calls)

    def _earlier_failure(self, key: str) -> CallRecord | None:
        """The failed record of an earlier attempt of this very call, taken out of the iteration's
        calls (a request the SDK retries has the same key: a failure does not count as a repeat);
        the ledger stops counting that call as failed. None: this is the call's first attempt."""
        with self._lock:
            for index in range(len(self.calls) - 1, -1, -1):
                found = self.calls[index]
                if found.key == key and found.failed and found.obtained == "paid":
                    del self.calls[index]
                    break
            else:
                return None
        if self.recorder.ledger is not None:
            self.recorder.ledger.call_retried(first=found.retries == 0)
        return found

    # -- batch rounds (``--batch``) ---------------------------------------------------------

    def _defer(self, api: str, call: ChatCall, key: str, request: WireRequest) -> WireAnswer | None:
        """Queue a paid request for the round's batch (None: send it now, as ``--batch-retry-errors``
        asks for a request the batch answered with an error). The SDK gets an error it does not
        retry; the iteration stops (:attr:`deferred`) and runs again after the batch."""
        from harness.wire.batch_routes import refusal

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
                return error_answer(api, reason)
            self.deferred.append(key)
        return error_answer(api, "deferred to this run's batch: the iteration runs again when the batch "
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

    # -- writing what was obtained --------------------------------------------------------

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
        try:  # a token count or a moderation is answered without the script (codecs_auxiliary)
            response = ChatResponse(None) if api in AUXILIARY else script.complete(call)
        except HarnessError as exc:
            if ledger is not None:
                ledger.call_ended(None)
            with self._lock:
                self.errors.append(str(exc))
            return error_answer(api, str(exc))
        encoded = encode_answer(api, response, request=body, seed=key)
        answer = WireAnswer(encoded.status, tuple(sorted(
            (k.lower(), v) for k, v in encoded.headers.items())), encoded.body)
        if not write:
            with self._lock:
                self._repeats[base] = self._repeats.get(base, 0) + 1
                decoded_plan = decode_answer(api, answer.body, content_type=answer.content_type)
                self.exchanges.append(Exchange(api, key, decoded_plan, tuple(declared_tools(call.request)),
                                               call.request))
                if api == RESPONSES and (rid := response_id(answer)):
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
            "latency_ms": elapsed_ms(started) if obtained == "paid" else None,
            "input_tokens": response.usage.input_tokens, "output_tokens": response.usage.output_tokens}
        recorder.store.write_exchange(call, key, api, answer, recorder.clock(), provenance)
        with recorder._lock:
            recorder.written += 1
            recorder.materialised[key] = obtained
        return response

    def _read_back(self, api: str, call: ChatCall, key: str, started: float, obtained: str, *,
                   usage: Usage | None = None, base: str | None = None,
                   earlier: CallRecord | None = None) -> WireAnswer:
        """The answer written by this run, read back from its entry (so recording gives the
        verdicts its replay will); in the iteration's calls as ``obtained`` with the tokens this
        run paid for (``usage``: none when the call was counted before) and the attempts that
        failed before it (``earlier``, the SDK's own retries)."""
        recorder = self.recorder
        entry = recorder.store.read(call, key, recorder.clock())
        assert entry.wire is not None
        attempts, retries = _folded(1 if obtained == "paid" and usage is not None else 0, earlier)
        source: Source = obtained if obtained in ("batch", "journal") else "provider"  # type: ignore[assignment]
        self._answered(api, call, base or base_key(call), key, entry.response, entry.wire, CallRecord(
            key, False, elapsed_ms(started), entry_location(self.scenario_id, self.iteration, key),
            source=source, usage=usage or Usage(), obtained=obtained, attempts=attempts,
            retries=retries, provenance=entry.provenance))
        return entry.wire


def _folded(attempts: int, earlier: CallRecord | None) -> tuple[int, int]:
    """A call's attempts and retries: this attempt's, with the failed ones before it folded in."""
    if earlier is None:
        return attempts, 0
    return attempts + earlier.attempts, earlier.retries + 1


def stored_answer(answer: WireAnswer) -> WireAnswer:
    """The part of an answer that is stored (volatile headers dropped)."""
    return WireAnswer(answer.status, stored_headers(answer.headers), answer.body)


def base_key(call: ChatCall) -> str:
    """The key of a call without its ``repeat`` counter (how repeats of one request are counted)."""
    request = {k: v for k, v in call.request.items() if k != "repeat"}
    return compute_key(ChatCall(call.scenario_id, call.iteration, call.provider, call.model, request))


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (``time.perf_counter``), as call records give latency."""
    return round((time.perf_counter() - started) * 1000, 3)
