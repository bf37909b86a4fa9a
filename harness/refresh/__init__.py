"""What makes a paid refresh safe: the crash-safe journal, the cross-process rate limit, progress.

All state lives under ``<results>/.refresh/`` (git-ignored with the results,
never inside the committed cache): ``journal/`` and ``ratelimit/`` are
diskcache folders that several processes (pytest-xdist workers, two terminals)
share safely; ``journal/claims.lock`` (byte-range locks, where ``fcntl`` exists)
or ``journal/claims/`` (files) holds each process's claims, and ``journal/pending/``
the answers it journaled and the database does not hold yet.

Stage ``recording``: the state of a paid refresh below the clients that use it (journal,
ledger, rate limit, deferral, prices, Ctrl-C). The steps that drive a whole run (the
dry-run ``plan``, ``batch`` rounds, the ``progress`` line) are in :mod:`harness.running`.
May import: core, documents, requests, cache.
"""

from __future__ import annotations

from pathlib import Path

REFRESH_DIR = ".refresh"


def journal_dir(results_root: Path) -> Path:
    """The journal folder of a project."""
    return results_root / REFRESH_DIR / "journal"


def ratelimit_dir(results_root: Path) -> Path:
    """The shared rate-limit folder of a project."""
    return results_root / REFRESH_DIR / "ratelimit"


def budget_dir(results_root: Path) -> Path:
    """The shared ``--max-calls`` counters of a project (one per run id)."""
    return results_root / REFRESH_DIR / "budget"
