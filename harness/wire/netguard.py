"""The offline run's backstop below every HTTP client: no connection leaves the machine.

The interceptor (:mod:`harness.wire.intercept`) answers what an agent sends through httpx.
An HTTP client it does not see sends past it: litellm's async calls go through aiohttp, a
tool may use ``urllib`` or a raw socket. Offline, such a request used to go out as it was:
litellm's ``acompletion`` looked ``api.openai.com`` up and connected to it with the
harness's placeholder key, from a run that promises no network connection.

So while an offline iteration is bound, a Python audit hook (``sys.addaudithook``: it sees
``socket.connect``, ``socket.sendto`` and ``socket.getaddrinfo`` of every library, C or
Python) refuses any of them that would leave the machine, before it happens: the library
gets ``ConnectionRefusedError`` with the reason, and the iteration fails with it, even if
the library swallows the error (the refusal is the binding's, as the interceptor's are).
Loopback addresses, Unix sockets and name lookups of ``localhost`` pass: a test service of
the project's own stays reachable, as it does through the interceptor.

An audit hook cannot be removed, so it is added once per process, at the first bound
iteration, and costs a set lookup per audited event of the process when nothing is bound.
"""

from __future__ import annotations

import errno
import ipaddress
import sys
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install", "is_local"]

#: The audited events that reach another machine: (event, index of the address in its args).
_EVENTS = {"socket.connect": 1, "socket.sendto": 1, "socket.getaddrinfo": 0}
_installed: list[bool] = []
_lock = threading.Lock()


def install(find: Callable[[], Any]) -> None:
    """Add the hook once; ``find()`` gives the binding a request made here belongs to, or None."""
    with _lock:
        if _installed:
            return
        _installed.append(True)

    def audit(event: str, args: tuple[Any, ...]) -> None:
        where = _EVENTS.get(event)
        if where is None:
            return
        binding = find()
        if binding is None or binding.recorder.mode != "offline":
            return
        host, port = _destination(event, args[where], args)
        if host is None or is_local(host):
            return
        reason = (f"the offline run refused a connection to {host}{f':{port}' if port else ''} "
                  "that no httpx transport made: an HTTP client the cache does not answer (aiohttp used "
                  "directly, urllib, requests, a raw socket; point it at `harness serve`), and an "
                  "offline run opens no connection off this machine")
        binding.refuse_connection(reason)
        raise ConnectionRefusedError(errno.ECONNREFUSED, reason)

    sys.addaudithook(audit)


def _destination(event: str, address: Any, args: tuple[Any, ...]) -> tuple[str | None, Any]:
    """(host, port) an event would reach; host None for what is no network (a Unix socket)."""
    if event == "socket.getaddrinfo":
        host = address.decode() if isinstance(address, bytes) else address
        return (host or None) if isinstance(host, str) else None, args[1]
    if isinstance(address, tuple) and address and isinstance(address[0], str):
        return address[0], address[1] if len(address) > 1 else None
    return None, None


def is_local(host: str) -> bool:
    """A loopback address or name (a test service on this machine), the unspecified address a
    server binds to, or no host at all: what an offline run may reach, through httpx (the
    binding's passthrough rule) or below it."""
    if host.lower() in ("", "localhost", "localhost.", "ip6-localhost"):
        return True
    try:
        found = ipaddress.ip_address(host.strip("[]").split("%")[0])
        return found.is_loopback or found.is_unspecified
    except ValueError:
        return False
