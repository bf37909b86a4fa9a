"""The refresh journal: every paid answer is on disk before it is materialised in the tree.

A recording run asks the journal before it pays: an answer journaled by an
earlier run that was killed (or that ended with failed calls) is materialised
again for free. The order for a paid call is: claim the key (a cross-process
lock, so two processes never pay for one call), call the provider, journal
the answer (one SQLite transaction: it survives SIGKILL), then write the entry
atomically. A run whose every call was answered forgets the keys it used, so
the next ``--refresh-cache`` pays for fresh answers; entries of an unfinished
run expire after :data:`JOURNAL_TTL_S`.

Values are JSON text (never pickles) holding the response and where it
belongs; no request header, key or URL is ever journaled.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import diskcache  # type: ignore[import-untyped]

from harness.cache.store import format_time, response_from_json, response_to_json, utc_now
from harness.entities import ChatCall, ChatResponse
from harness.errors import ProviderError

#: How long an answer of an unfinished refresh is kept for the re-run (a week).
JOURNAL_TTL_S = 7 * 24 * 3600
#: A claim left by a process on another host (whose liveness cannot be checked) lapses after this.
CLAIM_TTL_S = 3600.0
_POLL_S = 0.02


class Journal:
    """A diskcache of paid answers keyed by full cache key, shared by every process of a project."""

    def __init__(self, directory: Path, *, ttl_s: float = JOURNAL_TTL_S) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._ttl_s = ttl_s
        self._cache = diskcache.Cache(str(directory), eviction_policy="none", timeout=60)
        self._host = socket.gethostname()

    def get(self, key: str) -> ChatResponse | None:
        """The journaled answer of ``key``, if an earlier paid call left one."""
        raw = self._cache.get(f"answer:{key}", retry=True)
        if not isinstance(raw, str):
            return None
        try:
            return response_from_json(json.loads(raw)["response"])
        except (ValueError, KeyError, TypeError):
            return None

    def put(self, key: str, call: ChatCall, response: ChatResponse) -> None:
        """Journal a paid answer (committed to disk when this returns)."""
        value = json.dumps({"scenario": call.scenario_id, "iteration": call.iteration,
                            "provider": call.provider, "model": call.model,
                            "purpose": call.purpose, "journaled": format_time(utc_now()),
                            "response": response_to_json(response)}, ensure_ascii=False)
        self._cache.set(f"answer:{key}", value, expire=self._ttl_s, retry=True)

    def forget(self, keys: Iterable[str]) -> None:
        """Drop answers that a finished run has materialised."""
        for key in keys:
            self._cache.delete(f"answer:{key}", retry=True)

    def __len__(self) -> int:
        return sum(1 for k in self._cache.iterkeys() if str(k).startswith("answer:"))

    @contextmanager
    def claim(self, key: str, *, wait_s: float = CLAIM_TTL_S) -> Iterator[None]:
        """Hold ``key`` across processes while its answer is paid for and written.

        A claim left by a dead process on this host is taken over at once; one
        from another host lapses after :data:`CLAIM_TTL_S`.
        """
        name = f"claim:{key}"
        token = f"{self._host} {os.getpid()} {secrets.token_hex(4)}"
        deadline = time.monotonic() + wait_s
        while not self._cache.add(name, token, expire=CLAIM_TTL_S, retry=True):
            holder = self._cache.get(name, retry=True)
            if isinstance(holder, str) and self._holder_dead(holder):
                with self._cache.transact(retry=True):
                    if self._cache.get(name) == holder:
                        self._cache.delete(name)
                continue
            if time.monotonic() > deadline:
                raise ProviderError(f"another process has been recording this call for "
                                    f"{wait_s:.0f}s (journal claim {key[:16]}); try again later")
            time.sleep(_POLL_S)
        try:
            yield
        finally:
            with self._cache.transact(retry=True):
                if self._cache.get(name) == token:
                    self._cache.delete(name)

    def _holder_dead(self, holder: str) -> bool:
        host, _, rest = holder.partition(" ")
        pid_text = rest.partition(" ")[0]
        if host != self._host or not pid_text.isdigit() or sys.platform == "win32":
            return False  # cannot tell (on Windows os.kill(pid, 0) would end the process)
        pid = int(pid_text)
        if pid == os.getpid():
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False

    def close(self) -> None:
        """Close the underlying database handles."""
        self._cache.close()
