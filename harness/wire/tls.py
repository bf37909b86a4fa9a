"""One TLS context for every httpx client built inside an offline iteration.

An SDK client (``openai.OpenAI()``, ``anthropic.Anthropic()``) builds an httpx
transport, and the transport builds an ``ssl.SSLContext`` that loads the whole
CA bundle: 25 to 35 ms of CPU per client, which an agent that makes a client per
call pays for every call (the committed SDK examples: 16 clients, a sixth of
their run). An offline iteration never opens a TLS connection (its API calls
are answered from the cache, and only loopback addresses may pass through), so
inside one, a client asking for the default verifying context gets one shared
context made the same way, once per process and per setting that changes it
(``trust_env`` and the ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` it reads).

Everything else builds its own context exactly as before: recording and paid
calls (the real TLS path), a client built outside an iteration, and any client
asking for ``verify=False``, a context of its own, or a client certificate.
Installed by :mod:`harness.wire.intercept` beside its transport hooks.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["install", "shared_contexts"]

_SHARED: dict[tuple[str, bool, str | None, str | None], Any] = {}
_LOCK = threading.Lock()
_MARK = "_harness_shared_offline_tls"


def install(module: Any, current: Callable[[], Any]) -> None:
    """Wrap ``module``'s transport context factory (httpx or httpx2; idempotent); ``current``
    gives the bound iteration's :class:`~harness.wire.binding.WireBinding`, or ``None``."""
    default = getattr(getattr(module, "_transports", None), "default", None)
    original = getattr(default, "create_ssl_context", None)
    if default is None or original is None or getattr(original, _MARK, False):
        return  # another layout (a future httpx): every client keeps its own context

    def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
        binding = current()
        if (binding is None or binding.recorder.mode != "offline" or verify is not True
                or cert is not None):
            return original(verify=verify, cert=cert, trust_env=trust_env)
        key = (module.__name__, bool(trust_env),
               os.environ.get("SSL_CERT_FILE") if trust_env else None,
               os.environ.get("SSL_CERT_DIR") if trust_env else None)
        with _LOCK:
            context = _SHARED.get(key)
            if context is None:
                context = _SHARED[key] = original(verify=True, cert=None, trust_env=trust_env)
            return context

    setattr(create_ssl_context, _MARK, True)
    default.create_ssl_context = create_ssl_context


def shared_contexts() -> int:
    """How many shared contexts this process made (one per httpx module and setting)."""
    with _LOCK:
        return len(_SHARED)
