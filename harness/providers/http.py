"""The one HTTP transport of the providers: POST JSON, retry what is transient, redact keys.

Standard library only (``urllib.request``: it honours ``HTTPS_PROXY``/``NO_PROXY``
like the official SDKs). A call is retried on 408, 409, 425, 429 and every 5xx
status, on timeouts, refused or reset connections and truncated bodies, with
exponential backoff and full jitter, honouring ``Retry-After`` (seconds or an
HTTP date, capped) and ``retry-after-ms``, for a bounded number of attempts.
Every other status fails at once. A failure is a
:class:`~harness.errors.ProviderError` naming the scenario, the status and at
most 300 characters of the body, with every API key and bearer token redacted.
"""

from __future__ import annotations

import email.utils
import json
import random
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http.client import HTTPException, IncompleteRead
from typing import Any, Protocol

from harness.errors import ProviderError

#: Statuses worth another attempt; every 5xx is retried too.
RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
EXCERPT_CHARS = 300
REDACTED = "[REDACTED]"
#: Bearer tokens and the usual key shapes, redacted even when they are not the configured key.
_SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    re.compile(r"(?i)((?:x-)?api[-_]key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)


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


class _Transient(Exception):
    """A failure with no HTTP status worth another attempt (timeout, reset, truncation)."""


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret and anything shaped like a key or bearer token masked."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    for pattern in _SECRET_PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


#: A configured key shorter than this is a placeholder (a local server ignores it: ``local``,
#: ``ollama``); masking it inside answers would mangle ordinary words, so only longer ones are.
MIN_SECRET_CHARS = 16
#: Key shapes masked in answers whatever key is configured (an answer quoting a key is committed).
_ANSWER_KEY_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}")


def scrub_answer(value: Any, secrets: Iterable[str] = ()) -> Any:
    """A decoded 2xx answer with every configured key (of at least :data:`MIN_SECRET_CHARS`)
    and every ``sk-`` key shape replaced by ``[REDACTED]`` in every string, keys included.

    Runs before the answer is mapped, journaled or written, so an endpoint that echoes the
    key (a proxy's debug field, a model repeating its prompt) never puts it in the cache.
    """
    masked = tuple(s for s in secrets if len(s) >= MIN_SECRET_CHARS)

    def text(item: str) -> str:
        for secret in masked:
            if secret in item:
                item = item.replace(secret, REDACTED)
        return _ANSWER_KEY_SHAPE.sub(REDACTED, item) if "sk-" in item else item

    def walk(item: Any) -> Any:
        if isinstance(item, str):
            return text(item)
        if isinstance(item, list):
            return [walk(v) for v in item]
        if isinstance(item, dict):
            return {text(k) if isinstance(k, str) else k: walk(v) for k, v in item.items()}
        return item

    return walk(value)


def excerpt(body: bytes | str, secrets: Iterable[str] = (), limit: int = EXCERPT_CHARS) -> str:
    """At most ``limit`` characters of a body, whitespace collapsed, secrets redacted first."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    text = redact(" ".join(text.split()), secrets)
    if not text:
        return "(empty body)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


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


def join_url(base_url: str, path: str) -> str:
    """``base_url`` + ``/path``, keeping the base's query string (Azure's ``api-version``)."""
    parts = urllib.parse.urlsplit(base_url)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


def is_retryable(status: int) -> bool:
    """Whether an HTTP status is worth another attempt."""
    return status in RETRYABLE_STATUSES or status >= 500


class Transport:
    """POSTs JSON to one provider endpoint with bounded, jittered retries."""

    def __init__(
        self,
        base_url: str,
        *,
        label: str,
        headers: Mapping[str, str],
        secrets: Iterable[str] = (),
        timeout_s: float = 120.0,
        policy: RetryPolicy | None = None,
        limiter: Limiter | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
        status_hints: Mapping[int, str] | None = None,
    ) -> None:
        parts = urllib.parse.urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ProviderError(f"{label}: base URL {base_url!r} is not an http(s) URL")
        self.base_url = base_url
        self.label = label
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "User-Agent": "offline-evals", **headers}
        self._secrets = tuple(s for s in secrets if s)
        self.timeout_s = timeout_s
        self.policy = policy or RetryPolicy()
        self._limiter = limiter
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._hints = dict(status_hints or {})
        self._opener = urllib.request.build_opener()

    def post_json(self, path: str, payload: Mapping[str, Any], *, scenario: str) -> Any:
        """The decoded JSON answer of a 2xx reply; raises :class:`ProviderError` otherwise."""
        url = join_url(self.base_url, path)
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        attempts = max(1, self.policy.max_attempts)
        for attempt in range(1, attempts + 1):
            if self._limiter is not None:
                self._limiter.acquire()
            wait: float | None = None
            try:
                reply = self._send(url, data)
            except _Transient as exc:
                problem = str(exc)
            else:
                if 200 <= reply.status < 300:
                    return self._decode(reply, scenario)
                problem = f"HTTP {reply.status}: {excerpt(reply.body, self._secrets)}"
                if not is_retryable(reply.status):
                    hint = self._hints.get(reply.status, "")
                    raise self._error(scenario, problem + (f" ({hint})" if hint else ""), attempt)
                after = parse_retry_after(reply.headers)
                if after is not None:
                    wait = min(after, self.policy.retry_after_cap_s)
            if attempt == attempts:
                raise self._error(scenario, problem, attempt)
            self._sleep(wait if wait is not None else self.policy.backoff(attempt, self._rng))
        raise AssertionError("unreachable")  # pragma: no cover

    def request_bytes(self, method: str, path: str, data: bytes | None = None, *,
                      content_type: str = "application/json", scenario: str = "") -> bytes:
        """The body of a 2xx reply to any method (the batch APIs: uploads, polls, downloads).

        Same retries, limiter, redaction and error messages as :meth:`post_json`.
        """
        url = join_url(self.base_url, path)
        attempts = max(1, self.policy.max_attempts)
        for attempt in range(1, attempts + 1):
            if self._limiter is not None:
                self._limiter.acquire()
            wait: float | None = None
            try:
                reply = self._send(url, data, method=method, content_type=content_type)
            except _Transient as exc:
                problem = str(exc)
            else:
                if 200 <= reply.status < 300:
                    return reply.body
                problem = f"HTTP {reply.status}: {excerpt(reply.body, self._secrets)}"
                if not is_retryable(reply.status):
                    hint = self._hints.get(reply.status, "")
                    raise self._error(scenario, problem + (f" ({hint})" if hint else ""), attempt)
                after = parse_retry_after(reply.headers)
                if after is not None:
                    wait = min(after, self.policy.retry_after_cap_s)
            if attempt == attempts:
                raise self._error(scenario, problem, attempt)
            self._sleep(wait if wait is not None else self.policy.backoff(attempt, self._rng))
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, url: str, data: bytes | None, *, method: str = "POST",
              content_type: str = "application/json") -> Reply:
        headers = {**self._headers, "Content-Type": content_type}
        request = urllib.request.Request(url, data=data, headers=headers, method=method)
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                return Reply(response.status, _read(response), _lower(response.headers))
        except urllib.error.HTTPError as error:
            try:
                body = _read(error)
            finally:
                error.close()
            return Reply(error.code, body, _lower(error.headers))
        except urllib.error.URLError as error:
            if isinstance(error.reason, TimeoutError):
                raise _Transient(f"no answer within {self.timeout_s:g}s (timeout)") from None
            raise _Transient(f"connection failed: {redact(str(error.reason), self._secrets)}") from None
        except TimeoutError:
            raise _Transient(f"no answer within {self.timeout_s:g}s (timeout)") from None
        except (HTTPException, OSError) as error:
            raise _Transient(f"connection failed: {type(error).__name__}: "
                             f"{redact(str(error), self._secrets)}") from None

    def _decode(self, reply: Reply, scenario: str) -> Any:
        try:
            answer = json.loads(reply.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise self._error(
                scenario, f"HTTP {reply.status} but the body is not valid JSON ({exc}): "
                          f"{excerpt(reply.body, self._secrets)}", 1, final=False) from None
        return scrub_answer(answer, self._secrets)

    def _error(self, scenario: str, problem: str, attempts: int, *, final: bool = True) -> ProviderError:
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if final else ""
        return ProviderError(f"{scenario}: {self.label} call failed{tries}: "
                             f"{redact(problem, self._secrets)}. Nothing was written to the cache")


def _read(response: Any) -> bytes:
    """The whole body; a connection closed before Content-Length bytes is a transient failure."""
    try:
        body: bytes = response.read()
    except IncompleteRead as exc:
        expected = f", {exc.expected} more expected" if exc.expected is not None else ""
        raise _Transient(f"truncated body: received {len(exc.partial)} bytes{expected}") from None
    except TimeoutError:
        raise _Transient("timeout while reading the body") from None
    except (HTTPException, OSError) as exc:
        raise _Transient(f"connection lost while reading the body ({type(exc).__name__})") from None
    return body


def _lower(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (headers.items() if headers is not None else [])}


def malformed(scenario: str, label: str, problem: str, answer: Any,
              secrets: Iterable[str] = ()) -> ProviderError:
    """A 2xx answer that cannot be mapped: what is wrong, with an excerpt of what came back."""
    shown = answer if isinstance(answer, (bytes, str)) else json.dumps(answer, ensure_ascii=False)
    return ProviderError(f"{scenario}: {label} answered, but {problem}: {excerpt(shown, secrets)}. "
                         "Nothing was written to the cache")
