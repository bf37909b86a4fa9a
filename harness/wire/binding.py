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

This module keys and replays; obtaining an answer the cache lacks (the script, the
real endpoint, the journal, the batch queue) is :mod:`harness.wire.recording`, the
binding's other half; what a run's mode gives them both is :mod:`harness.wire.recorder`.
"""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager
from typing import NoReturn

from harness.cache.layout import entry_location
from harness.cache.store import Entry, EntryAbsent
from harness.clients.caching import CallRecord
from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import CacheError, CacheMiss, HarnessError, WriteFailed
from harness.requests.key import compute_key
from harness.wire.canonical import WireRefused, canonical_request, declared_tools
from harness.wire.exchange import (
    RESPONSES,
    Exchange,
    WireAnswer,
    WireRequest,
    error_answer,
    family_of,
    response_id,
)
from harness.wire.netguard import is_local
from harness.wire.placeholder import PLACEHOLDER, with_real_key
from harness.wire.recorder import Pending, WireRecorder
from harness.wire.recording import RecordingSide, elapsed_ms


class NetworkRefused(Exception):
    """An offline run refused a request that is no LLM API call and leaves the machine."""


class WireBinding(RecordingSide):
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
        self.faults: list[str] = []
        """Faults of the harness itself while answering (also in :attr:`errors`): a plan cannot
        count the calls past one, so it says so instead of printing a short exact count."""
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
        self.finished = False
        """The iteration is over: a task the agent started and never awaited, still running on
        the agent loop, gets no answer for its LLM calls (:func:`harness.wire.intercept.bound`)."""
        self._lock = threading.Lock()

    # -- non-LLM requests -------------------------------------------------------------------

    def check_passthrough(self, request: WireRequest) -> WireRequest:
        """The request that is no LLM API call as it may go through, or refuse it (offline, off
        this machine).

        One that carries the placeholder key (``client.models.list()``, a file upload: the SDK's
        other endpoints) goes to its provider with the real key in a paid recording, and is
        refused in every other mode: the placeholder never leaves the process.
        """
        carries = any(PLACEHOLDER in value for _, value in request.headers)
        recorder = self.recorder
        if carries and recorder.mode == "paid" and recorder.resolve_key is not None:
            family = "anthropic" if request.header("anthropic-version") is not None else "openai"
            try:
                return with_real_key(request, family, recorder.resolve_key)
            except HarnessError as exc:
                self._refuse(str(exc))
        if carries:
            self._refuse(f"the {recorder.mode} run refused {request.method} {_clip(request.url)}: it is "
                         "no LLM API call the cache answers, and it carries the harness's placeholder "
                         "key, which never leaves the process (a paid recording sends the real key)"
                         + _known_fix(request.url))
        if recorder.mode != "offline" or is_local(request.host):
            return request
        self._refuse(f"the offline run refused {request.method} {_clip(request.url)}: it is no LLM "
                     "API call the cache answers, and an offline run opens no connection off this "
                     "machine" + _known_fix(request.url))

    def refuse_connection(self, reason: str) -> None:
        """A connection off this machine that no httpx transport made, refused offline below
        every HTTP client (:mod:`harness.wire.netguard`): the iteration's error."""
        with self._lock:
            if reason not in self.errors:
                self.errors.append(reason)

    def _refuse(self, reason: str) -> NoReturn:
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
                return error_answer(api, str(refused))
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
                    return error_answer(api, str(error).splitlines()[0])
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
                return error_answer(api, "planning a recording run: nothing is called")
            return self._scripted(api, call, base, key, started, request, write=False)
        if recorder.mode == "scripted":
            return self._scripted(api, call, base, key, started, request)
        if recorder.mode == "offline":  # refresh is never offline; kept for the type checker
            return self._missed(api, call, key, started, "offline")
        return self._pay(api, call, base, key, started, request)

    def internal_error(self, api: str, exc: Exception) -> WireAnswer:
        """A fault of the harness while answering a request: the iteration's error, with its type
        (a failed cache write stops the run, as everywhere: :attr:`fatal`)."""
        if isinstance(exc, WriteFailed):
            self.fatal = exc
        reason = f"the harness failed answering a {api} request: {type(exc).__name__}: {exc}"
        with self._lock:
            self.errors.append(reason)
            self.faults.append(reason)
        return error_answer(api, reason)

    # -- replay ---------------------------------------------------------------------------

    def _hit(self, api: str, call: ChatCall, base: str, key: str, entry: Entry, answer: WireAnswer,
             started: float) -> WireAnswer:
        """An answer the cache already holds: counted as from the cache, replayed byte for byte."""
        if self.recorder.ledger is not None:
            self.recorder.ledger.from_cache()
        self._answered(api, call, base, key, entry.response, answer, CallRecord(
            key, True, elapsed_ms(started), entry_location(self.scenario_id, self.iteration, key),
            provenance=entry.provenance))
        return answer

    def _answered(self, api: str, call: ChatCall, base: str, key: str, response: ChatResponse,
                  answer: WireAnswer, record: CallRecord) -> None:
        with self._lock:
            self._repeats[base] = self._repeats.get(base, 0) + 1
            self.exchanges.append(Exchange(api, key, response, tuple(declared_tools(call.request)),
                                           call.request))
            if api == RESPONSES and (rid := response_id(answer)):
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
            self.calls.append(CallRecord(key, False, elapsed_ms(started),
                                         entry_location(self.scenario_id, self.iteration, key),
                                         absent_reason=reason))
        return error_answer(api, str(failure).splitlines()[0])


#: Requests frameworks make on their own (no model call), and the switch of theirs that stops
#: each: a refusal names it (docs/agents.md, "Frameworks").
_KNOWN_FIXES = (
    ("https://raw.githubusercontent.com/BerriAI/litellm/",
     "litellm fetches its model cost map when imported: set LITELLM_LOCAL_MODEL_COST_MAP=True"),
    ("https://api.openai.com/v1/traces/",
     "the OpenAI Agents SDK uploads its traces: set OPENAI_AGENTS_DISABLE_TRACING=1"),
)


def _known_fix(url: str) -> str:
    """``; <fix>`` for a request a framework makes on its own, else empty."""
    return next((f"; {fix}" for prefix, fix in _KNOWN_FIXES if url.startswith(prefix)), "")


def _clip(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit] + "..."
