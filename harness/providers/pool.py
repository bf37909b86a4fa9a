"""Kept-alive connections of one provider transport: no new TCP (or TLS) handshake per call.

urllib opens a connection for every request and asks the server to close it
(``Connection: close``); against a provider that is a TCP handshake per call,
and over HTTPS a TLS handshake too, and the opener's handler chain on top: the
largest CPU cost of a recorded call. Here each transport keeps the connections
its calls used (up to :data:`KEEP`, one per call in flight) and sends the next
call on one of them.

The two bounds of :mod:`harness.providers.opener` hold: ``http.client`` never
follows a redirect (a 3xx reaches the transport as the status it is), and each
attempt's :class:`~harness.providers.opener.Deadline` is armed on the socket
the attempt uses, reused or new. A connection goes back to the pool only after
its whole answer was read, its deadline was cancelled before firing, and the
server did not ask to close it; any failure closes it.

A server may close a kept connection while it is idle. A reused connection
that fails before a single byte of an answer (reset, broken pipe, closed
without a status line) is therefore retried once, at once, on a new
connection, and not counted as an attempt: the server dropped the idle
connection, it did not take the request. A new connection that fails so is an
ordinary transient failure of the attempt.

Only used when no proxy applies to the base URL (``HTTPS_PROXY``, ``NO_PROXY``):
a proxied call keeps the urllib opener, which speaks to proxies as the
environment says.

The response headers are parsed by :mod:`harness.providers.headers` instead of
the ``email`` package (a third of ``http.client``'s work per answer); everything
else of the answer (status line, chunked bodies, ``Content-Length``, keep-alive)
is ``http.client``'s own.
"""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Mapping
from typing import Any

from harness.providers.headers import HTTPConnection, HTTPSConnection
from harness.providers.opener import Deadline

__all__ = ["KEEP", "ConnectFailed", "Connections"]

#: Idle connections kept per transport (more than any sensible ``--concurrency``).
KEEP = 64
#: What a kept connection the server closed while idle fails with before any answer byte.
_STALE = (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
          ConnectionAbortedError)


class ConnectFailed(Exception):
    """The connection could not be opened (``reason``: the ``OSError``); nothing was sent."""

    def __init__(self, reason: OSError) -> None:
        super().__init__(str(reason))
        self.reason = reason


class Connections:
    """The kept-alive connections to one ``scheme://netloc``; safe to share between threads."""

    def __init__(self, scheme: str, netloc: str, timeout_s: float) -> None:
        self._factory = HTTPSConnection if scheme == "https" else HTTPConnection
        self._netloc = netloc
        self._timeout_s = timeout_s
        self._idle: list[http.client.HTTPConnection] = []
        self._lock = threading.Lock()

    def exchange(self, method: str, target: str, body: bytes | None, headers: Mapping[str, str],
                 deadline: Deadline, read: Callable[[Any], bytes]) -> tuple[int, bytes, Any]:
        """Send one request and read its whole answer: ``(status, body, headers)``.

        ``read`` reads the body (it turns a truncated one into the transport's
        transient failure). Raises :class:`ConnectFailed`, ``OSError`` or
        ``http.client.HTTPException`` as the attempt fails.
        """
        while True:
            conn, reused = self._take()
            if not reused:
                try:
                    conn.connect()
                except OSError as exc:
                    conn.close()
                    raise ConnectFailed(exc) from None
            if conn.sock is not None:
                deadline.arm(conn.sock)
            try:
                conn.request(method, target, body, dict(headers))
                response = conn.getresponse()
            except _STALE:
                conn.close()
                if reused and not deadline.expired:
                    continue  # the server closed it while idle: once more on a new connection
                raise
            except BaseException:
                conn.close()
                raise
            try:
                data = read(response)
            except BaseException:
                conn.close()
                raise
            self._give_back(conn, response, deadline)
            return response.status, data, response.headers

    def _take(self) -> tuple[http.client.HTTPConnection, bool]:
        with self._lock:
            if self._idle:
                return self._idle.pop(), True
        return self._factory(self._netloc, timeout=self._timeout_s), False

    def _give_back(self, conn: http.client.HTTPConnection, response: http.client.HTTPResponse,
                   deadline: Deadline) -> None:
        deadline.cancel()  # before the connection can serve another attempt
        if response.will_close or deadline.expired:
            conn.close()
            return
        with self._lock:
            if len(self._idle) < KEEP:
                self._idle.append(conn)
                return
        conn.close()

    def close(self) -> None:
        """Close every idle connection."""
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()
