"""Placeholder API keys: SDK clients construct offline, and the placeholder never leaves.

``OpenAI()`` and ``Anthropic()`` refuse to construct without a key, and an
agent may build its client at import time. Offline CI has no key, so while an
SDK agent runs, every provider key variable that is unset holds
:data:`PLACEHOLDER`. Offline, nothing is sent anywhere. When a paid recording
forwards a request, the placeholder is replaced by the real key (from the
environment or the credentials file, as for declared agents); a request that
would still carry the placeholder is refused instead of sent.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from harness.core.errors import ProviderError
from harness.wire.exchange import WireRequest

#: The value unset key variables hold while an SDK agent runs (never a valid key anywhere).
PLACEHOLDER = "harness-placeholder-key-not-a-secret"
#: The variables the official SDKs read their key from.
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
#: The request headers that carry a key, by API family.
_AUTH_HEADERS = ("authorization", "x-api-key", "api-key")


def install_placeholders() -> list[str]:
    """Set every unset key variable to the placeholder for the rest of the process (the agent's
    module may build its client at import time, before any iteration); returns the ones set."""
    placed = [name for name in KEY_VARIABLES if not os.environ.get(name)]
    for name in placed:
        os.environ[name] = PLACEHOLDER
    return placed


def with_real_key(request: WireRequest, family: str, resolve: Callable[[str], str]) -> WireRequest:
    """The request to forward: the placeholder replaced by the real key of ``family``.

    A key the agent set itself (a real variable in the environment) is left as it is.
    """
    headers: list[tuple[str, str]] = []
    real: str | None = None
    for name, value in request.headers:
        if name in _AUTH_HEADERS and PLACEHOLDER in value:
            real = real or resolve(family)
            value = value.replace(PLACEHOLDER, real)
        headers.append((name, value))
    if any(PLACEHOLDER in value for _, value in headers) or PLACEHOLDER in request.url:
        raise ProviderError(
            f"a {family} request of the agent carries the harness's placeholder key outside an auth "
            "header; it was not sent. Pass the key through the SDK's api_key (or its environment "
            "variable), not inside the URL or another header")
    return WireRequest(request.method, request.url, request.path, request.host, tuple(headers),
                       request.body)
