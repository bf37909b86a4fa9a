"""The one HTTP transport of the providers: POST JSON, retry what is transient, redact keys.

Standard library only: ``http.client`` on kept-alive connections
(:mod:`harness.providers.pool`), or the ``urllib.request`` opener when a proxy applies
(it honours ``HTTPS_PROXY``/``NO_PROXY`` like the official SDKs). A call is retried on
408, 409, 425, 429 and every 5xx status, on timeouts, refused or reset connections and
truncated bodies, with exponential backoff and full jitter, honouring ``Retry-After``
(seconds or an HTTP date, capped) and ``retry-after-ms``, for a bounded number of
attempts (the rules, and the records a call leaves, are
:mod:`harness.providers.retries`). Every other status fails at once, and so does an
error a :data:`Diagnose` hook recognises (a context overflow, a server that cannot take
tools): another attempt would be paid for and fail the same way. A failure is a
:class:`CallFailed` naming the scenario, the status and at most 300 characters of the
body, with every API key and bearer token redacted (:mod:`harness.providers.redaction`).

Two bounds no provider can talk its way past. Redirects are never followed: the
default urllib opener re-sends the request, ``Authorization`` header included,
to whatever host a ``Location`` names, and records that host's answer; a 3xx is
a provider error naming the ``Location`` (fix: point ``base_url`` at the final
URL). And ``timeout_s`` bounds each whole attempt, from connect to the last body
byte: urllib's timeout is per socket operation, so a server dripping one byte
every half second held a call for minutes; a timer now shuts the socket at the
attempt's deadline.

Accounting is honest: every attempt that reached the provider is counted
(a timed-out request may well have been generated and billed), in the
:class:`Receipt` of the call and through the :class:`AttemptObserver` of the
run, which prints each retry.
"""

from __future__ import annotations

import json
import random
import socket
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from harness.core.errors import ProviderError
from harness.providers.redaction import excerpt, may_hold_secret, redact, scrub_answer
from harness.providers.retries import (
    AttemptObserver,
    CallFailed,
    Diagnose,
    Limiter,
    Receipt,
    Reply,
    RetryPolicy,
    Transient,
    is_retryable,
    parse_retry_after,
)

if TYPE_CHECKING:
    from harness.providers.opener import Deadline
    from harness.providers.pool import Connections

#: :attr:`Transport._pool` before the first call has decided it.
_UNDECIDED = object()

def join_url(base_url: str, path: str) -> str:
    """``base_url`` + ``/path``, keeping the base's query string (Azure's ``api-version``)."""
    parts = urllib.parse.urlsplit(base_url)
    joined = parts.path.rstrip("/") + "/" + path.lstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, joined, parts.query, ""))


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
        diagnose: Diagnose | None = None,
        observer: AttemptObserver | None = None,
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
        self._diagnose = diagnose
        self.observer = observer
        self._urls: dict[str, str] = {}
        """``path`` -> its URL (every call of a run posts to the same one or two)."""
        self._targets: dict[str, str] = {}
        """URL -> its request target (path and query), for the kept-alive connections."""
        self._pool: object = _UNDECIDED
        """The kept-alive connections (or None behind a proxy), decided at the first call."""
        self._opener: Any = None
        """Built at the first call, behind a proxy only: an offline replay builds transports but never imports
        ``urllib.request`` (with ``http.client``, ``ssl`` and ``email``, 9 MB and 30 ms)."""

    def post_json(self, path: str, payload: Mapping[str, Any], *, scenario: str,
                  receipt: Receipt | None = None) -> Any:
        """The decoded JSON answer of a 2xx reply; raises :class:`CallFailed` otherwise.

        ``receipt`` (when given) is filled in as attempts are made, so a caller
        knows what the call cost even when it fails.
        """
        url = self._urls.get(path) or self._urls.setdefault(path, join_url(self.base_url, path))
        data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        attempts = max(1, self.policy.max_attempts)
        receipt = receipt if receipt is not None else Receipt()
        for attempt in range(1, attempts + 1):
            if self._limiter is not None:
                self._limiter.acquire()
            wait: float | None = None
            started = time.perf_counter()
            try:
                reply = self._send(url, data)
            except Transient as exc:
                problem, reached = str(exc), exc.reached
                receipt.timeouts += exc.timeout
                self._count(receipt, reached=reached)
            else:
                reached = True
                self._count(receipt, reached=True)
                if 200 <= reply.status < 300:
                    receipt.latency_ms = round((time.perf_counter() - started) * 1000, 3)
                    return self._decode(reply, scenario, receipt)
                problem = self._status_problem(reply)
                known = self._recognise(reply)
                if known is not None:
                    problem = f"{problem} ({known[0]})"
                retry = is_retryable(reply.status) if known is None else known[1]
                if not retry:
                    hint = self._hints.get(reply.status, "") if known is None else ""
                    raise self._error(scenario, problem + (f" ({hint})" if hint else ""), attempt,
                                      paid=receipt.attempts)
                after = parse_retry_after(reply.headers)
                if after is not None:
                    wait = min(after, self.policy.retry_after_cap_s)
            if attempt == attempts:
                raise self._error(scenario, problem, attempt, paid=receipt.attempts)
            delay = wait if wait is not None else self.policy.backoff(attempt, self._rng)
            receipt.retries += 1
            if self.observer is not None:
                self.observer.retrying(scenario, attempt, attempts, redact(problem, self._secrets),
                                       delay, reached=reached)
            self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _count(self, receipt: Receipt, *, reached: bool) -> None:
        receipt.attempts += reached
        if self.observer is not None:
            self.observer.attempt_finished(reached=reached)

    def _status_problem(self, reply: Reply) -> str:
        """``HTTP <status>: <body excerpt>``; a redirect names its ``Location`` and the fix."""
        problem = f"HTTP {reply.status}: {excerpt(reply.body, self._secrets)}"
        if 300 <= reply.status < 400:
            location = redact(reply.headers.get("location", "(no Location header)"), self._secrets)
            problem = (f"HTTP {reply.status} redirect to {location[:200]} refused (eval-provider-"
                       "redirect): provider calls never follow redirects, which would send the "
                       "API key to another host. Fix: set the agent's endpoint.base_url (or the "
                       "base URL variable) to the final URL")
        return problem

    def _recognise(self, reply: Reply) -> tuple[str, bool] | None:
        if self._diagnose is None:
            return None
        return self._diagnose(reply.status, reply.body.decode("utf-8", errors="replace"))

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
            except Transient as exc:
                problem = str(exc)
            else:
                if 200 <= reply.status < 300:
                    return reply.body
                problem = self._status_problem(reply)
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

        from harness.providers.opener import Deadline

        headers = {**self._headers, "Content-Type": content_type}
        deadline = Deadline(self.timeout_s)
        try:
            connections = self._connections()
            if connections is not None:
                return self._exchange(connections, method, url, data, headers, deadline)
            from harness.providers.opener import TimedRequest

            request = TimedRequest(url, data=data, headers=headers, method=method)
            request.deadline = deadline
            return self._open(request)
        except Transient:
            if deadline.expired:
                raise Transient(self._timed_out(), timeout=True) from None
            raise
        finally:
            deadline.cancel()

    def _connections(self) -> Connections | None:
        """The kept-alive connections of this transport (:mod:`harness.providers.pool`), or None
        when a proxy applies to the base URL (the urllib opener then talks to the proxy)."""
        if self._pool is _UNDECIDED:
            import urllib.request

            from harness.providers.pool import Connections

            parts = urllib.parse.urlsplit(self.base_url)
            proxied = parts.scheme in urllib.request.getproxies() \
                and not urllib.request.proxy_bypass(parts.netloc)
            self._pool = None if proxied else Connections(parts.scheme, parts.netloc,
                                                          self.timeout_s)
        return self._pool  # type: ignore[return-value]

    def _exchange(self, connections: Connections, method: str, url: str, data: bytes | None,
                  headers: Mapping[str, str], deadline: Deadline) -> Reply:
        """One attempt on a kept-alive connection, its failures named as :meth:`_open` names them."""
        from http.client import HTTPException

        from harness.providers.pool import ConnectFailed

        target = self._targets.get(url)
        if target is None:
            parts = urllib.parse.urlsplit(url)
            target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            if len(self._targets) < 64:  # batch polls and downloads name ids in their URLs
                self._targets[url] = target
        try:
            status, body, got = connections.exchange(method, target, data, headers, deadline, _read)
        except ConnectFailed as failed:
            error = failed.reason
            if isinstance(error, TimeoutError):
                raise Transient(self._timed_out(), timeout=True) from None
            never_sent = isinstance(error, (ConnectionRefusedError, socket.gaierror))
            raise Transient(f"connection failed: {redact(str(error), self._secrets)}",
                             reached=not never_sent) from None
        except TimeoutError:
            raise Transient(self._timed_out(), timeout=True) from None
        except (HTTPException, OSError) as error:
            raise Transient(f"connection failed: {type(error).__name__}: "
                             f"{redact(str(error), self._secrets)}") from None
        return Reply(status, body, _lower(got))

    def _open(self, request: urllib.request.Request) -> Reply:
        import urllib.error
        from http.client import HTTPException

        from harness.providers.opener import provider_opener

        if self._opener is None:  # never follows a redirect (the key would go along)
            self._opener = provider_opener()
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
                raise Transient(self._timed_out(), timeout=True) from None
            never_sent = isinstance(error.reason, (ConnectionRefusedError, socket.gaierror))
            raise Transient(f"connection failed: {redact(str(error.reason), self._secrets)}",
                             reached=not never_sent) from None
        except TimeoutError:
            raise Transient(self._timed_out(), timeout=True) from None
        except ConnectionRefusedError as error:
            raise Transient(f"connection failed: {error}", reached=False) from None
        except (HTTPException, OSError) as error:
            raise Transient(f"connection failed: {type(error).__name__}: "
                             f"{redact(str(error), self._secrets)}") from None

    def _timed_out(self) -> str:
        return (f"no complete answer within {self.timeout_s:g}s (timeout_s bounds the whole "
                "attempt; the provider may have generated "
                "and billed an answer: counted as paid)")

    def _decode(self, reply: Reply, scenario: str, receipt: Receipt) -> Any:
        try:
            answer = json.loads(reply.body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise self._error(
                scenario, f"HTTP {reply.status} but the body is not valid JSON ({exc}): "
                          f"{excerpt(reply.body, self._secrets)}", 1, final=False,
                paid=receipt.attempts) from None
        if not may_hold_secret(reply.body, self._secrets):
            return answer  # scrub_answer would return it unchanged
        return scrub_answer(answer, self._secrets)

    def _error(self, scenario: str, problem: str, attempts: int, *, final: bool = True,
               paid: int = 0) -> CallFailed:
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}" if final else ""
        cost = (f" ({paid} attempt{'s' if paid != 1 else ''} reached the provider: counted as paid)"
                if final and paid else "")
        return CallFailed(f"{scenario}: {self.label} call failed{tries}: "
                          f"{redact(problem, self._secrets)}. Nothing was written to the cache{cost}",
                          paid)


def _read(response: Any) -> bytes:
    """The whole body; a connection closed before Content-Length bytes is a transient failure."""
    from http.client import HTTPException, IncompleteRead

    try:
        body: bytes = response.read()
    except IncompleteRead as exc:
        expected = f", {exc.expected} more expected" if exc.expected is not None else ""
        raise Transient(f"truncated body: received {len(exc.partial)} bytes{expected}") from None
    except TimeoutError:
        raise Transient("timeout while reading the body", timeout=True) from None
    except (HTTPException, OSError) as exc:
        raise Transient(f"connection lost while reading the body ({type(exc).__name__})") from None
    return body


def _lower(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in (headers.items() if headers is not None else [])}


def malformed(scenario: str, label: str, problem: str, answer: Any,
              secrets: Iterable[str] = ()) -> ProviderError:
    """A 2xx answer that cannot be mapped: what is wrong, with an excerpt of what came back."""
    shown = answer if isinstance(answer, (bytes, str)) else json.dumps(answer, ensure_ascii=False)
    return ProviderError(f"{scenario}: {label} answered, but {problem}: {excerpt(shown, secrets)}. "
                         "Nothing was written to the cache")
