"""The chat client protocol every provider, fake and cache layer implements.

A client is named by the provider and model it answers for: those two values
are part of the cache key, so the client that replays a cache must carry the
same ones as the client that recorded it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from harness.core.entities import ChatCall, ChatResponse


@runtime_checkable
class ChatClient(Protocol):
    """Answers one canonical chat call."""

    provider: str
    model: str

    def complete(self, call: ChatCall) -> ChatResponse:
        """Return the response for ``call`` or raise a :class:`~harness.core.errors.HarnessError`."""
        ...


def credential_variable(provider: str, override: str | None = None) -> str:
    """The environment variable holding the API key of a provider."""
    if override:
        return override
    return f"{provider.upper().replace('-', '_')}_API_KEY"
