"""The urllib opener of provider calls: no redirect is followed, each attempt has a deadline.

Why its own opener. The default one follows a ``302 Location: http://other-host/``
by re-sending the request, ``Authorization: Bearer <key>`` included, to the other
host, and hands back that host's answer as if the provider had given it. And its
timeout applies to each socket operation, so a server that drips one byte every
half second keeps a call alive for as long as it likes. Here a redirect reaches
the transport as the 3xx it is, and a :class:`Deadline` shuts the attempt's
socket down when ``timeout_s`` has passed since the request started, whatever
phase (headers or body) it is in.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import os
import socket
import threading
import time
import urllib.request
from typing import Any

__all__ = ["Deadline", "TimedRequest", "provider_opener"]


class Deadline:
    """The end of one attempt: at ``seconds`` from now the armed socket is shut down.

    A blocked read then returns at once (end of file or an error), whatever the
    server's pace; :attr:`expired` tells that apart from a server that closed.
    Every deadline of the process is watched by one thread (:class:`_Watchdog`):
    a ``threading.Timer`` per attempt started and tore down a thread for every
    call, 0.14 ms of CPU each, more than the rest of the deadline's work.
    """

    __slots__ = ("seconds", "expires_at", "expired", "_cancelled", "_sock")

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires_at = time.monotonic() + seconds
        self.expired = False
        self._cancelled = False
        self._sock: socket.socket | None = None

    def arm(self, sock: socket.socket) -> None:
        """Shut ``sock`` down at the deadline (at once when it has already passed)."""
        _WATCHDOG.arm(self, sock)

    def cancel(self) -> None:
        """The attempt ended: the deadline must not fire."""
        _WATCHDOG.cancel(self)


class _Watchdog:
    """One daemon thread that shuts down the sockets of attempts whose deadline has passed.

    Arming is a push onto a heap under a lock (the thread is woken only when the new
    deadline is the earliest); cancelling marks the deadline, and the heap is rebuilt
    without the cancelled ones once they are the majority, so a long run of
    120 s deadlines that all end early does not grow it without bound.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Deadline]] = []
        self._order = 0
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def arm(self, deadline: Deadline, sock: socket.socket) -> None:
        with self._cond:
            if deadline._cancelled:
                return
            if deadline._sock is not None:  # re-armed on a fresh connection: same deadline
                deadline._sock = sock
                return
            deadline._sock = sock
            self._order += 1
            heapq.heappush(self._heap, (deadline.expires_at, self._order, deadline))
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="harness-deadlines",
                                                daemon=True)
                self._thread.start()
            elif self._heap[0][2] is deadline:
                self._cond.notify()

    def cancel(self, deadline: Deadline) -> None:
        with self._cond:
            if deadline._cancelled:
                return
            deadline._cancelled = True
            if deadline._sock is None:
                return  # never armed: not in the heap
            deadline._sock = None
            self._cancelled += 1
            if self._cancelled > 64 and self._cancelled * 2 > len(self._heap):
                self._heap = [item for item in self._heap if not item[2]._cancelled]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _watch(self) -> None:
        while True:
            with self._cond:
                sock = self._next_expired()
            if sock is not None:
                with contextlib.suppress(OSError):  # already closed: the attempt is over anyway
                    sock.shutdown(socket.SHUT_RDWR)

    def _next_expired(self) -> socket.socket | None:
        """Wait (lock held by the caller) until a live deadline passes; its socket, marked."""
        while True:
            while self._heap and self._heap[0][2]._cancelled:
                heapq.heappop(self._heap)
                self._cancelled -= 1
            if not self._heap:
                self._cond.wait()
                continue
            wait = self._heap[0][0] - time.monotonic()
            if wait > 0:
                self._cond.wait(wait)
                continue
            deadline = heapq.heappop(self._heap)[2]
            sock, deadline._sock = deadline._sock, None
            deadline.expired = deadline._cancelled = True  # fired: a later cancel is a no-op
            return sock

    def _forked(self) -> None:
        """In a forked child the watching thread is gone: start afresh."""
        self._cond = threading.Condition(threading.Lock())
        self._heap, self._cancelled, self._thread = [], 0, None


_WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG._forked)


class TimedRequest(urllib.request.Request):
    """A request carrying its attempt's :class:`Deadline` to the connection that sends it."""

    deadline: Deadline | None = None


class _DeadlineHTTPConnection(http.client.HTTPConnection):
    """A connection that arms its attempt's deadline on the socket once connected (the HTTPS
    one below inherits this through :class:`http.client.HTTPSConnection`'s own ``connect``)."""

    def __init__(self, *args: Any, deadline: Deadline | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline

    def connect(self) -> None:
        super().connect()
        if self._deadline is not None and self.sock is not None:
            self._deadline.arm(self.sock)


class _DeadlineHTTPSConnection(_DeadlineHTTPConnection, http.client.HTTPSConnection):
    pass


class _DeadlineHTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_DeadlineHTTPConnection, req,
                            deadline=getattr(req, "deadline", None))


class _DeadlineHTTPSHandler(urllib.request.HTTPSHandler):
    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_DeadlineHTTPSConnection, req,
                            deadline=getattr(req, "deadline", None),
                                            context=getattr(self, "_context", None))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Never follow a redirect: the 3xx reaches :meth:`Transport._send` as an HTTP error."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> urllib.request.Request | None:
        return None


def provider_opener() -> urllib.request.OpenerDirector:
    """An opener that never follows redirects and arms each request's :class:`Deadline`."""
    return urllib.request.build_opener(_NoRedirects, _DeadlineHTTPHandler, _DeadlineHTTPSHandler)
