"""The interceptor: the transports of httpx (and httpx2) answer from the bound iteration.

The official ``openai`` and ``anthropic`` SDKs (and through them LangChain,
pydantic-ai, the OpenAI Agents SDK, litellm) send every request through an
httpx transport: ``httpx.HTTPTransport.handle_request`` and
``AsyncHTTPTransport.handle_async_request`` (current SDKs ship the same client
as ``httpx2``). Patching those two methods on the classes, once, reaches every
client, including one an agent built at import time, with no change to the
agent. Outside a bound iteration the patched methods call the originals: code
that runs under the harness but outside an iteration (and plain ``pytest``,
which never imports this module) notices nothing.

Which iteration is bound is a context variable: it follows ``asyncio`` tasks and
``asyncio.to_thread``, and work an agent hands to a ``ThreadPoolExecutor``
(``submit``, ``map``, ``loop.run_in_executor``) runs in a copy of the context of
the code that handed it over, so it belongs to that code's iteration. A thread
the agent starts itself does not inherit it: when exactly one iteration is bound
process-wide (an offline run, ``--concurrency 1``), that one answers; when several
are (a recording run overlapping iterations) and the thread's request names none,
it cannot be told which iteration it belongs to, and an LLM API call is refused
(an answer the SDK does not retry, with the reason and the fix) instead of being
sent, paid for and never stored.
"""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import importlib.util
import threading
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from harness.wire import adopted, netguard, tls
from harness.wire.binding import NetworkRefused, WireBinding
from harness.wire.exchange import CHAT, MESSAGES, WireAnswer, WireRequest, api_of, error_answer
from harness.wire.recorder import Pending

#: The httpx distributions whose transports are patched, when installed.
MODULES = ("httpx", "httpx2")

_current: contextvars.ContextVar[WireBinding | None] = contextvars.ContextVar(
    "harness_wire_binding", default=None)
_active: list[WireBinding] = []
_lock = threading.Lock()
_patched: set[str] = set()
#: True while a patched transport forwards a request (a paid send, a pass-through): a transport
#: that sends through another patched one (an adopted aiohttp transport falling back to httpx's, a
#: team's wrapper) hands it on untouched instead of answering or recording it a second time.
_forwarding: contextvars.ContextVar[bool] = contextvars.ContextVar("harness_wire_forwarding",
                                                                   default=False)
#: httpx modules found not installed (looked for once per process).
_absent: set[str] = set()
#: Non-empty once ``ThreadPoolExecutor.submit`` carries the context (:func:`_patch_pools`).
_pools: list[bool] = []


@contextmanager
def bound(binding: WireBinding) -> Iterator[WireBinding]:
    """Answer the SDK requests of the code inside the block from ``binding``'s iteration."""
    install()
    token = _current.set(binding)
    with _lock:
        _active.append(binding)
    try:
        yield binding
    finally:
        binding.finished = True
        _current.reset(token)
        with _lock:
            _active.remove(binding)


def install() -> list[str]:
    """Patch the transports of every installed httpx module (idempotent); returns their names.

    Runs at the start of every iteration: a module looked for and not installed is
    remembered (``importlib.util.find_spec`` searches ``sys.path`` on the disk, which cost
    every iteration of a replay about as much as answering one request).
    """
    with _lock:
        if not _pools:  # the first install: pools carry the context from now on, and the
            _patch_pools()  # offline backstop below every HTTP client is in place
            netguard.install(current)
            _pools.append(True)
        for name in MODULES:
            if name in _patched or name in _absent:
                continue
            if importlib.util.find_spec(name) is None:
                _absent.add(name)
                continue
            _patch(importlib.import_module(name))
            _patched.add(name)
        return sorted(_patched)


def current() -> WireBinding | None:
    """The binding that answers a request made here, if any."""
    return _find()[0]


def _find() -> tuple[WireBinding | None, int]:
    """The binding of a request made here, and how many iterations are bound process-wide."""
    binding = _current.get()
    if binding is not None:
        return binding, 1
    with _lock:
        return (_active[0] if len(_active) == 1 else None), len(_active)


def _patch_pools() -> None:
    """``ThreadPoolExecutor.submit`` runs the work in a copy of the submitter's context when an
    iteration is bound there (as ``asyncio.to_thread`` does): an agent that fans its model calls
    out to a pool keeps them in its iteration. Nothing changes for code outside an iteration."""
    original = ThreadPoolExecutor.submit

    def submit(self: Any, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        if _current.get() is None:
            return original(self, fn, *args, **kwargs)
        return original(self, contextvars.copy_context().run, fn, *args, **kwargs)

    submit.__doc__ = original.__doc__
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign]


def _unattributed(module: Any, request: Any, active: int) -> Any:
    """The refusal of an LLM API call made where no iteration is bound while several are, or
    None: the request is no LLM API call, or at most one iteration is bound."""
    if active <= 1:
        return None
    api = api_of(request.method, request.url.path,
                 anthropic_version="anthropic-version" in request.headers)
    if api is None:
        return None
    return _response(module, request, error_answer(api, (
        f"{request.method} {request.url} came from a thread the agent started itself while "
        f"{active} scenario iterations run at once: it cannot be told which one it belongs to, so "
        "it was not sent. Record with --concurrency 1, or start the thread's work with "
        "contextvars.copy_context().run (a ThreadPoolExecutor and asyncio.to_thread do it already)")))


def _patch(module: Any) -> None:
    module.HTTPTransport.handle_request = _answering(module, module.HTTPTransport.handle_request)
    module.AsyncHTTPTransport.handle_async_request = _answering_async(
        module, module.AsyncHTTPTransport.handle_async_request)
    adopted.watch(module.AsyncBaseTransport, lambda cls: _adopt(module, cls))
    tls.install(module, current)  # clients built in an offline iteration share one TLS context


def _adopt(module: Any, cls: type) -> None:
    """Answer the requests of one of :data:`harness.wire.adopted.ADOPTED`'s transports (a client on
    aiohttp behind httpx's interface: litellm's async calls, the SDKs' ``DefaultAioHttpClient``)."""
    cls.handle_async_request = _answering_async(  # type: ignore[attr-defined]
        module, cls.__dict__["handle_async_request"])


def _answering(module: Any, sync_original: Any) -> Any:
    """``handle_request`` of a transport class, answering from the bound iteration."""

    def handle_request(self: Any, request: Any) -> Any:
        binding, active = _find()
        if binding is None or _forwarding.get():
            refused = _unattributed(module, request, active) if binding is None else None
            if refused is not None:
                return refused
            return sync_original(self, request)
        wire = _wire_request(request)
        api = api_of(wire.method, wire.path, anthropic_version=_versioned(wire))
        if api is None:
            outgoing = _passthrough(module, binding, wire, request)
            passed = _forwarded(sync_original, self, outgoing)
            if outgoing is not request and 300 <= passed.status_code < 400:
                passed.close()
                return _redirect_refused(module, request, binding, wire, passed)
            return passed
        if binding.finished:
            return _outlived(module, request, binding, api)
        answer = _begin(binding, api, wire)
        if isinstance(answer, Pending):
            answer = _finish(binding, answer, lambda: _read(_forwarded(sync_original, self, _outgoing(
                module, request, answer))))
        return _response(module, request, answer)

    return handle_request


def _answering_async(module: Any, async_original: Any) -> Any:
    """``handle_async_request`` of a transport class, answering from the bound iteration."""

    async def handle_async_request(self: Any, request: Any) -> Any:
        binding, active = _find()
        if binding is None or _forwarding.get():
            refused = _unattributed(module, request, active) if binding is None else None
            if refused is not None:
                return refused
            return await async_original(self, request)
        wire = _wire_request(request)
        api = api_of(wire.method, wire.path, anthropic_version=_versioned(wire))
        if api is None:
            outgoing = _passthrough(module, binding, wire, request)
            passed = await _forwarded_async(async_original, self, outgoing)
            if outgoing is not request and 300 <= passed.status_code < 400:
                await passed.aclose()
                return _redirect_refused(module, request, binding, wire, passed)
            return passed
        if binding.finished:
            return _outlived(module, request, binding, api)
        answer = _begin(binding, api, wire)
        if isinstance(answer, Pending):
            pending = answer
            try:
                sent = await _on_agent_loop(_send_and_read(async_original, self,
                                                           _outgoing(module, request, pending)))
            except BaseException as exc:
                binding.failed_send(pending, str(exc), reached=_reached(exc))
                raise
            answer = _store(binding, pending, sent)
        return _response(module, request, answer)

    return handle_async_request


def _forwarded(original: Any, transport: Any, outgoing: Any) -> Any:
    """A sync send of the original transport, marked as forwarded (see :data:`_forwarding`)."""
    token = _forwarding.set(True)
    try:
        return original(transport, outgoing)
    finally:
        _forwarding.reset(token)


async def _forwarded_async(original: Any, transport: Any, outgoing: Any) -> Any:
    """:func:`_forwarded` for an async transport."""
    token = _forwarding.set(True)
    try:
        return await original(transport, outgoing)
    finally:
        _forwarding.reset(token)


async def _send_and_read(original: Any, transport: Any, outgoing: Any) -> WireAnswer:
    """Send a paid request on the agent's transport and read its whole answer."""
    token = _forwarding.set(True)  # awaited in the agent's own task, or as a task of its own
    try:
        sent = await original(transport, outgoing)
        try:
            body = await sent.aread()
        finally:
            await sent.aclose()
    finally:
        _forwarding.reset(token)
    return _answer_of(sent, body)


async def _on_agent_loop(send: Coroutine[Any, Any, WireAnswer]) -> WireAnswer:
    """Await a paid send on the process's one agent loop (:mod:`harness.wire.agentloop`).

    A recording runs iterations on several threads, each with its own event loop when the
    agent's framework makes one per thread (pydantic-ai's ``run_sync``, the OpenAI Agents SDK's
    ``Runner.run_sync``), while the framework keeps one async client for the process. A client's
    pooled connection belongs to the loop that opened it: reused from another thread's loop, it
    failed after the request was written ("... is bound to a different event loop"), a paid
    request whose answer was lost. Every paid send of an async client goes through the one loop,
    so its pool lives there, as in production; the answer is read whole there and handed back.
    Under another event loop implementation (trio) the send is awaited where it is.
    """
    from harness.wire.agentloop import agent_loop

    loop = agent_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio
        return await send
    if running is loop:
        return await send
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(send, loop))


def _outlived(module: Any, request: Any, binding: WireBinding, api: str) -> Any:
    """The refusal of an LLM API call from a task that outlived its iteration (started by the
    agent and never awaited): the iteration's record is written, so the call could be neither
    answered nor recorded for it; it is not sent either (``asyncio.run`` per iteration used to
    cancel such a task; on the one agent loop it runs on)."""
    return _response(module, request, error_answer(api, (
        f"{request.method} {request.url} came from a task of {binding.scenario_id} iteration "
        f"{binding.iteration} that outlived its iteration (started and never awaited): it was "
        "neither answered nor sent; await the task before the agent returns")))


def _versioned(wire: WireRequest) -> bool:
    """Whether the request carries ``anthropic-version`` (see :func:`api_of`)."""
    return wire.header("anthropic-version") is not None


def _begin(binding: WireBinding, api: str, wire: WireRequest) -> WireAnswer | Pending:
    """:meth:`WireBinding.begin`, where a fault of the harness itself becomes the iteration's
    error and an answer the SDK does not retry: raised into the SDK, it would be wrapped as a
    connection error and retried (a loop that hides the fault)."""
    try:
        return binding.begin(api, wire)
    except Exception as exc:  # noqa: BLE001 - reported as the iteration's error, never swallowed
        return binding.internal_error(api, exc)


def _finish(binding: WireBinding, pending: Pending, send: Any) -> WireAnswer:
    try:
        answer: WireAnswer = send()
    except BaseException as exc:
        binding.failed_send(pending, str(exc), reached=_reached(exc))
        raise
    return _store(binding, pending, answer)


def _store(binding: WireBinding, pending: Pending, answer: WireAnswer) -> WireAnswer:
    """:meth:`WireBinding.finish`, where a fault of the harness storing a paid answer becomes the
    iteration's error and an answer the SDK does not retry (raised into the SDK, it would be
    wrapped as a connection error and retried)."""
    try:
        return binding.finish(pending, answer)
    except Exception as exc:  # noqa: BLE001 - reported as the iteration's error, never swallowed
        return binding.internal_error(pending.api, exc)


def _reached(exc: BaseException) -> bool:
    """Whether a send that raised may have reached the provider (and be billed): all but a
    connection that was never made (refused, or its connect timed out)."""
    return type(exc).__name__ not in ("ConnectError", "ConnectTimeout")


def _passthrough(module: Any, binding: WireBinding, wire: WireRequest, request: Any) -> Any:
    """The httpx request to send for one that is no LLM API call (the SDK's own, or rebuilt with
    the real key in place of the placeholder), or a ``ConnectError`` when it is refused."""
    try:
        sent = binding.check_passthrough(wire)
    except NetworkRefused as refused:
        raise module.ConnectError(str(refused), request=request) from None
    if sent is wire:
        return request
    return module.Request(sent.method, request.url, headers=list(sent.headers), content=sent.body,
                          extensions=request.extensions)


def _redirect_refused(module: Any, request: Any, binding: WireBinding, wire: WireRequest,
                      passed: Any) -> Any:
    """A 3xx to a request the harness sent with the real key in place of the placeholder, kept
    from the SDK's client, which would follow it, key and all, wherever it points (the rule
    of :meth:`WireBinding.finish` for LLM API calls)."""
    family = MESSAGES if wire.header("anthropic-version") is not None else CHAT
    return _response(module, request, binding.redirect_refused(family, _answer_of(passed, b"")))


def _wire_request(request: Any) -> WireRequest:
    url = request.url
    raw = request.headers
    pairs = raw.raw
    try:  # ASCII, as httpx's ``Headers.encoding`` finds for every SDK request, in one pass
        headers = tuple((name.decode("ascii").lower(), value.decode("ascii")) for name, value in pairs)
    except UnicodeDecodeError:  # httpx's own choice (utf-8, else iso-8859-1), decoded again
        encoding = raw.encoding
        headers = tuple((name.decode(encoding).lower(), value.decode(encoding)) for name, value in pairs)
    return WireRequest(request.method, str(url), url.path, url.host, headers, request.read())


def _outgoing(module: Any, request: Any, pending: Pending) -> Any:
    """The request to send: the SDK's own, with the real key in place of the placeholder."""
    out = pending.outgoing
    return module.Request(out.method, request.url, headers=list(out.headers), content=out.body,
                          extensions=request.extensions)


def _read(response: Any) -> WireAnswer:
    try:
        body = response.read()
    finally:
        response.close()
    return _answer_of(response, body)


def _answer_of(response: Any, body: bytes) -> WireAnswer:
    headers = tuple((name.lower(), value) for name, value in response.headers.multi_items())
    return WireAnswer(response.status_code, headers, body)


def _response(module: Any, request: Any, answer: WireAnswer) -> Any:
    return module.Response(answer.status, headers=list(answer.headers), content=answer.body,
                           request=request)
