"""What the two provider batch APIs have in common, seen from the recording run.

A batch API takes many requests at once (at half the price of synchronous
calls), answers within 24 hours, and answers each request on its own: an
answer, or an error for that request alone. :class:`BatchAPI` is the seam the
batch rounds' recorder (:mod:`harness.running.batch_recorder`) drives; the OpenAI and
Anthropic implementations live in ``openai_batch`` and ``anthropic_batch``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from harness.core.entities import ChatCall, ChatResponse
from harness.core.errors import ProviderError


@dataclass(frozen=True)
class BatchStatus:
    """One poll: whether the provider is done with the batch, in its own words."""

    ended: bool
    state: str
    """The provider's status (``in_progress``, ``completed``, ``expired``, ``ended``...)."""
    counts: dict[str, int] = field(default_factory=dict)
    problem: str = ""
    """Why the whole batch failed (OpenAI ``failed``: the input was refused), else empty."""
    files: tuple[str, str] = ("", "")
    """OpenAI: the output and error file ids (empty when the provider made none)."""


@dataclass(frozen=True)
class BatchResults:
    """Each request's outcome by custom_id: an answer, or why there is none."""

    answers: dict[str, ChatResponse]
    failures: dict[str, str]


class BatchAPI(Protocol):
    """Create, poll and collect one provider batch."""

    provider: str
    """``openai`` or ``anthropic``: the wire format, recorded in the journal."""
    http_requests: int
    """HTTP requests this client sent (the benchmark prints them)."""

    def create(self, requests: list[tuple[str, ChatCall]]) -> str:
        """Submit ``(custom_id, call)`` pairs as one batch; its id (the provider has accepted it)."""
        ...

    def status(self, batch_id: str) -> BatchStatus:
        """Poll the batch once."""
        ...

    def results(self, batch_id: str, status: BatchStatus, calls: dict[str, ChatCall]) -> BatchResults:
        """Download and map the results of an ended batch; ``calls`` by custom_id."""
        ...


#: Largest batch the harness submits (OpenAI accepts 50,000 requests, Anthropic 100,000).
MAX_REQUESTS = 10_000


def provider_secrets(client: Any) -> tuple[str, ...]:
    """The secrets a synchronous provider client redacts from messages (its key)."""
    return tuple(getattr(client, "_secrets", ()) or ())


def json_object(body: bytes, label: str, what: str) -> dict[str, Any]:
    """The JSON object a batch endpoint answered; :class:`ProviderError` naming ``what`` (the
    method and path) when it answered anything else."""
    try:
        value = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        value = None
    if not isinstance(value, dict):
        raise ProviderError(f"{label}: {what} answered something that is not a JSON object")
    return value


def required_id(answer: dict[str, Any], label: str, what: str) -> str:
    """The ``id`` of a created file or batch; without one nothing can be polled, so it is an error."""
    found = answer.get("id")
    if not isinstance(found, str) or not found:
        raise ProviderError(f"{label}: {what} answered no id: {answer}")
    return found


def json_lines(body: bytes) -> list[dict[str, Any]]:
    """The JSON objects of a results file, one a line; a blank or unreadable line is skipped (the
    requests it would have answered are reported as returning no result)."""
    found = []
    for raw in body.decode("utf-8", errors="replace").splitlines():
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found
