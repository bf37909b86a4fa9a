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
import http.client
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
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires_at = time.monotonic() + seconds
        self.expired = False
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._cancelled = False

    def arm(self, sock: socket.socket) -> None:
        """Shut ``sock`` down at the deadline (at once when it has already passed)."""
        with self._lock:
            if self._cancelled:
                return
            timer = threading.Timer(max(0.0, self.expires_at - time.monotonic()), self._fire, (sock,))
            timer.daemon = True
            self._timer = timer
            timer.start()

    def _fire(self, sock: socket.socket) -> None:
        with self._lock:
            if self._cancelled:
                return
            self.expired = True
        with contextlib.suppress(OSError):  # already closed: the attempt is over anyway
            sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        """The attempt ended: the timer must not fire."""
        with self._lock:
            self._cancelled = True
            if self._timer is not None:
                self._timer.cancel()


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
