"""The one event loop every ``async def`` agent of a process runs on, as in production.

An async agent's production process runs on one event loop (a web server's), and
teams write it that way: ``client = AsyncOpenAI()`` at import time, awaited in every
request. The connections such a client pools belong to the loop that opened them.
``asyncio.run`` per iteration gave each iteration a loop of its own, so the second
iteration of a recording reused a connection of the first iteration's (closed) loop
and failed ("Event loop is closed", "... is bound to a different event loop"): an
unchanged agent could not be recorded.

So a process runs every async agent's coroutine on one loop, in a daemon thread of
its own, started at the first async call. An iteration's coroutine runs there as a
task in a copy of the calling thread's context (the wire binding of its iteration
is a context variable, :mod:`harness.wire.intercept`), and the calling thread waits
for it: iterations that a recording runs at once interleave on the loop as the
requests of a production server do. A forked child (``run --jobs``) starts its own.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import os
import threading
from collections.abc import Awaitable
from typing import Any

__all__ = ["agent_loop", "run_on_agent_loop"]

_lock = threading.Lock()
_loop: list[tuple[asyncio.AbstractEventLoop, threading.Thread]] = []


def run_on_agent_loop(awaitable: Awaitable[Any]) -> Any:
    """Run ``awaitable`` to completion on the process's agent loop; its result, or its exception.

    Called from a thread that is not the loop's own (an iteration runs in the main thread or
    a worker thread, never on the loop). An awaitable that is not a coroutine (a future, an
    object with ``__await__``) is awaited inside one. Whatever the agent raises, even
    ``KeyboardInterrupt`` or ``SystemExit``, is raised here and never reaches the loop (it would
    stop it, and every later iteration would wait for a loop that no longer runs).
    """
    loop = agent_loop()
    if threading.current_thread() is _loop[0][1]:  # waiting here would wait for itself
        if asyncio.iscoroutine(awaitable):
            awaitable.close()
        raise RuntimeError("an iteration cannot be run from inside an async agent (the agent loop)")
    context = contextvars.copy_context()
    done: concurrent.futures.Future[Any] = concurrent.futures.Future()
    loop.call_soon_threadsafe(lambda: loop.create_task(_settled(awaitable, done), context=context))
    return done.result()


async def _settled(awaitable: Awaitable[Any], done: concurrent.futures.Future[Any]) -> None:
    """Await the agent and hand its outcome to the waiting thread, whatever it is."""
    try:
        result = await awaitable
    except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
        done.set_exception(exc)
    else:
        done.set_result(result)


def agent_loop() -> asyncio.AbstractEventLoop:
    """The process's agent loop, started (in its daemon thread) at the first call."""
    with _lock:
        if not _loop or not _loop[0][1].is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=_serve, args=(loop,), name="harness-agent-loop",
                                      daemon=True)
            thread.start()
            _loop[:] = [(loop, thread)]
        return _loop[0][0]


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    while not loop.is_closed():  # an agent that calls loop.stop() does not stop every later one
        try:
            loop.run_forever()
        except BaseException:  # noqa: BLE001, S112 - raised by an agent's callback: the loop goes on
            continue


def _forget_in_child() -> None:
    """A forked child has no loop thread (only the forking thread survives a fork)."""
    global _lock
    _lock = threading.Lock()
    _loop.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
