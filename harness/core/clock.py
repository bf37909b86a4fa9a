"""The one clock the harness judges time by: entry ``created``/``expires``, expiry, run times.

Every "now" that decides something (is this entry expired? when was it
recorded? which run is the latest?) comes from :func:`utc_now`. Library
callers can pass their own ``clock=`` to :class:`~harness.running.session.EvalSession`;
a process (the CLI, the pytest plugin, a CI job) can be pinned to an instant
with the environment variable ``HARNESS_CLOCK`` (ISO 8601 in UTC, e.g.
``2027-01-01T00:00:00Z``).

Why an environment variable and not only a parameter: a test suite drives the
product through subprocesses and pytester runs as well as in-process calls,
and every one of them must read the same fixed clock, or the suite goes red
on the day the committed entries expire although nothing changed. The
variable moves the product's clock, so the product still fails an entry that
is expired *at that instant*; it never disables expiry.

The HTTP ``Retry-After`` arithmetic deliberately stays on the wall clock: it
compares against a date the provider's server sent.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from functools import lru_cache

from harness.core.errors import ConfigError

#: Environment variable that pins the harness clock to one instant (tests, reproducing a run).
CLOCK_ENV = "HARNESS_CLOCK"


def utc_now() -> datetime:
    """Now, timezone-aware, second precision: ``HARNESS_CLOCK`` when set, else the system clock."""
    fixed = os.environ.get(CLOCK_ENV)
    if fixed:
        return parse_clock(fixed)
    return datetime.now(UTC).replace(microsecond=0)


@lru_cache(maxsize=8)
def parse_clock(text: str) -> datetime:
    """``HARNESS_CLOCK``'s value as an aware UTC datetime; a clear error when it is not one."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ConfigError(
            f"{CLOCK_ENV}={text!r} is not an ISO 8601 instant with a time zone: write it like "
            f"2027-01-01T00:00:00Z, or unset {CLOCK_ENV} to use the system clock")
    return moment.astimezone(UTC).replace(microsecond=0)
