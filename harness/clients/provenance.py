"""Where an answer came from: the provenance written beside each recorded entry.

``entry.json`` carries an optional ``provenance`` object (never part of the
key; entries recorded by older versions have none and read as unknown)::

    {"source": "scripted" | "provider",
     "endpoint_kind": "scripted" | "openai" | "azure-openai" | "openai-compatible" | "anthropic",
     "obtained": "scripted" | "paid" | "journal" | "batch",
     "attempts": 2, "latency_ms": 812.4, "input_tokens": 1234, "output_tokens": 56}

``attempts`` counts the HTTP attempts of the recording call that reached the
provider (retries included); an answer taken from the journal cost this run
nothing (``attempts`` 0, ``latency_ms`` null).
"""

from __future__ import annotations

from typing import Any

from harness.clients.base import ChatClient
from harness.core.entities import ChatCall, ChatResponse, JsonObject
from harness.providers.retries import Receipt

#: ``source``, ``endpoint_kind`` and ``obtained`` of a scripted answer.
SCRIPTED = "scripted"


def is_scripted(inner: ChatClient) -> bool:
    """Whether ``inner`` answers from a script (no money, no network)."""
    return getattr(inner, "endpoint_kind", None) == SCRIPTED


def endpoint_kind_of(inner: ChatClient, provider: str) -> str:
    """The endpoint kind of the client that answers ``provider`` through ``inner``."""
    routed = getattr(inner, "endpoint_kind_of", None)
    kind: Any = routed(provider) if callable(routed) else getattr(inner, "endpoint_kind", None)
    if isinstance(kind, str):
        return kind
    return "anthropic" if provider == "anthropic" else "openai-compatible"


def complete_counted(inner: ChatClient, call: ChatCall) -> tuple[ChatResponse, Receipt]:
    """Ask ``inner``, with a receipt; a client without one counts one attempt (none if scripted)."""
    with_receipt = getattr(inner, "complete_with_receipt", None)
    if callable(with_receipt):
        response, receipt = with_receipt(call)
        return response, receipt
    return inner.complete(call), Receipt(attempts=0 if is_scripted(inner) else 1)


def provenance(kind: str, obtained: str, response: ChatResponse,
               receipt: Receipt | None = None) -> JsonObject:
    """The provenance object of an entry recorded from ``response``."""
    return {
        "source": SCRIPTED if kind == SCRIPTED else "provider",
        "endpoint_kind": kind,
        "obtained": obtained,
        "attempts": receipt.attempts if receipt is not None else 0,
        "latency_ms": receipt.latency_ms if receipt is not None else None,
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
    }
