"""A requests-per-minute limit that holds across threads and processes.

Every process of a project (pytest-xdist workers, two terminals) shares one
diskcache folder. Each request reserves the next free slot in one SQLite
transaction, a cell-rate (GCRA) scheme with no burst: slots are ``60 / rpm``
seconds apart, so no window of any length sees more than its share, which is
also how providers enforce per-minute limits (in sub-minute buckets). The
caller then sleeps until its slot: no polling, no lost updates. The folder
holds JSON only (:mod:`harness.refresh.jsondisk`), never a pickle. diskcache's own
``throttle`` recipe resets the bucket in every process that starts, so two
processes together could exceed the limit; this one cannot.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from harness.refresh.jsondisk import open_state

#: What deleting the rate-limit folder costs (nothing: it only holds the next free slot).
CONSEQUENCE = "it only holds the next free request slot; deleting it is harmless"

#: A reservation further ahead than this means the clock went back: start afresh.
_MAX_AHEAD_S = 86400.0


class RateLimiter:
    """Blocks each caller until its slot; ``requests_per_minute`` shared under one ``name``."""

    def __init__(
        self,
        directory: Path,
        name: str,
        requests_per_minute: float,
        *,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if requests_per_minute <= 0:
            raise ValueError("requests_per_minute must be positive")
        self.interval_s = 60.0 / requests_per_minute
        self._key = f"next-slot:{name}"
        self._cache = open_state(directory, "rate limit", CONSEQUENCE)
        self._clock = clock
        self._sleep = sleep

    def acquire(self) -> None:
        """Reserve the next slot and sleep until it comes."""
        with self._cache.transact(retry=True):
            now = self._clock()
            next_free = self._cache.get(self._key, default=0.0)
            if not isinstance(next_free, float) or next_free > now + _MAX_AHEAD_S:
                next_free = 0.0
            slot = max(now, next_free)
            self._cache.set(self._key, slot + self.interval_s)
        if slot > now:
            self._sleep(slot - now)

    def close(self) -> None:
        """Close the underlying database handles."""
        self._cache.close()
