"""When a provider call is tried again, and what its attempts cost.

The retry rules of :class:`harness.providers.http.Transport`, apart from the
HTTP it speaks: which statuses and failures are transient, the jittered
backoff, ``Retry-After`` in its three spellings, and the records a call
leaves (:class:`Receipt`, :class:`CallFailed`) and the hooks a run watches
it with (:class:`AttemptObserver`, :class:`Limiter`, :data:`Diagnose`).
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from harness.core.errors import ProviderError

__all__ = ["RETRYABLE_STATUSES", "AttemptObserver", "CallFailed", "Diagnose", "Limiter", "Receipt",
           "Reply", "RetryPolicy", "Transient", "is_retryable", "parse_retry_after"]

#: Statuses worth another attempt; every 5xx is retried too.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})


class AttemptObserver(Protocol):
    """Told about every attempt of every call (the run's ledger: counts, retry lines)."""

    def attempt_finished(self, *, reached: bool) -> None:
        """One HTTP attempt ended; ``reached``: the request reached the provider (paid)."""
        ...

    def retrying(self, scenario: str, attempt: int, attempts: int, problem: str,
                 wait_s: float, *, reached: bool) -> None:
        """Attempt ``attempt`` of ``attempts`` failed with ``problem``; the next one follows."""
        ...


#: Recognises an error body: ``(explanation with the fix, retry?)``, or None when unknown.
Diagnose = Callable[[int, str], "tuple[str, bool] | None"]


@dataclass
class Receipt:
    """What one call cost: filled in by :meth:`Transport.post_json` as it goes."""

    attempts: int = 0
    """HTTP attempts that reached the provider, retries included (each may be billed)."""
    retries: int = 0
    """Attempts after the first (whether or not they reached the provider)."""
    timeouts: int = 0
    latency_ms: float | None = None
    """Wall time of the successful attempt, in milliseconds."""


class CallFailed(ProviderError):
    """A call that failed for good, with how many attempts reached the provider (paid)."""

    def __init__(self, message: str, attempts: int = 0) -> None:
        super().__init__(message)
        self.attempts = attempts


class Limiter(Protocol):
    """Something that blocks until the next request may be sent (a rate limit)."""

    def acquire(self) -> None:
        """Wait for a slot."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a call is retried."""

    max_attempts: int = 6
    """First attempt plus retries (``endpoint.max_retries`` + 1)."""
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0
    retry_after_cap_s: float = 60.0
    """A longer ``Retry-After`` is shortened to this, so a run never hangs for an hour."""

    def backoff(self, retry: int, rng: random.Random) -> float:
        """Full jitter: uniform in ``[0, min(cap, base * 2**(retry-1))]`` for retry 1, 2..."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (retry - 1)))
        return rng.uniform(0.0, ceiling)


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, body bytes and lower-cased headers."""

    status: int
    body: bytes
    headers: Mapping[str, str]


class Transient(Exception):
    """A failure with no HTTP status worth another attempt (timeout, reset, truncation).

    ``reached``: the request was sent, so the provider may have generated (and billed) an
    answer; only a refused connection or a failed name lookup never reached it.
    """

    def __init__(self, problem: str, *, reached: bool = True, timeout: bool = False) -> None:
        super().__init__(problem)
        self.reached = reached
        self.timeout = timeout


def parse_retry_after(headers: Mapping[str, str], now: datetime | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, or ``Retry-After`` in seconds or as an HTTP date."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = (headers.get("retry-after") or "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, (moment - (now or datetime.now(UTC))).total_seconds())


def is_retryable(status: int) -> bool:
    """Whether an HTTP status is worth another attempt."""
    return status in RETRYABLE_STATUSES or status >= 500
