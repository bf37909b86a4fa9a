"""Counting the fuzz suite's cases, so every CI log shows how many malformed inputs ran.

Each fuzz test calls :func:`count` once per generated input with the outcome
(``error``: a named HarnessError or finding; ``valid``: the mutation happened
to produce an acceptable file). The terminal summary prints the totals; under
pytest-xdist each worker hands its counts to the controller through
``workeroutput``.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest

_COUNTS: Counter[str] = Counter()
_SECONDS: dict[str, float] = {}
_MERGED: Counter[str] = Counter()
_MERGED_SECONDS: dict[str, float] = {}
_WALL = [0.0]


def count(kind: str, outcome: str) -> None:
    """One generated input of ``kind`` (``scenario file``, ``entry``...) ended with ``outcome``."""
    _COUNTS[f"{kind}|{outcome}"] += 1


class timed:  # noqa: N801 - used as a decorator-like context manager
    """Adds the wall time of a ``with`` block to ``kind``'s duration."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.started = 0.0

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        _SECONDS[self.kind] = _SECONDS.get(self.kind, 0.0) + time.perf_counter() - self.started


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Wall time of the fuzz tests, generation included (under xdist: on the controller)."""
    if "test_fuzz" in report.nodeid:
        _WALL[0] += report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints
        workeroutput["fuzz_counts"] = json.dumps({"counts": dict(_COUNTS), "seconds": _SECONDS})


def pytest_testnodedown(node: Any, error: Any) -> None:
    raw = getattr(node, "workeroutput", {}).get("fuzz_counts")
    if raw:
        data = json.loads(raw)
        _MERGED.update(data["counts"])
        for kind, seconds in data["seconds"].items():
            _MERGED_SECONDS[kind] = _MERGED_SECONDS.get(kind, 0.0) + seconds


def pytest_terminal_summary(terminalreporter: Any) -> None:
    counts = _COUNTS + _MERGED
    if not counts:
        return
    seconds = dict(_SECONDS)
    for kind, value in _MERGED_SECONDS.items():
        seconds[kind] = seconds.get(kind, 0.0) + value
    kinds = sorted({key.split("|")[0] for key in counts})
    total = sum(counts.values())
    errors = sum(n for key, n in counts.items() if key.endswith("|error"))
    terminalreporter.write_sep("=", "fuzz suite")
    for kind in kinds:
        n_error, n_valid = counts[f"{kind}|error"], counts[f"{kind}|valid"]
        terminalreporter.write_line(f"{kind:<14} {n_error + n_valid:>5} inputs: {n_error:>5} named errors, "
                                    f"{n_valid:>4} still valid  ({seconds.get(kind, 0.0):.1f} s)")
    failed = [r for r in terminalreporter.stats.get("failed", []) if "test_fuzz" in r.nodeid]
    verdict = (f"{len(failed)} fuzz test(s) FAILED" if failed
               else "no traceback, no byte changed under eval-cache/")
    terminalreporter.write_line(f"fuzz: {total} malformed inputs, {errors} ended in a named error, "
                                f"{total - errors} were still valid; {verdict} "
                                f"({sum(seconds.values()):.1f} s in the harness, {_WALL[0]:.1f} s of "
                                "fuzz tests in all)")
