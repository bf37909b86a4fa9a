"""Run results: per-iteration records and the run summary, under ``eval-results/``.

Records hold latency, token usage and the cache-hit flag: they differ on every
run, so they live in another root than the committed cache, never in git.
Layout: ``results/<run-id>/<agent>/<tenant>/<name>/<iteration>.json`` plus
``results/<run-id>/run.json``.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.cache.store import format_time, response_to_json
from harness.clients.caching import CallRecord
from harness.entities import FAILING_STATUSES, ChatResponse, Scenario, Status, Verdict
from harness.key import canonical_json

RESULTS_DIR = "results"
RUN_FILE = "run.json"


@dataclass(frozen=True)
class IterationResult:
    """The outcome of one scenario iteration."""

    scenario: Scenario
    iteration: int
    status: Status
    verdicts: tuple[Verdict, ...] = ()
    message: str = ""
    """Why it failed (miss explanation, error text); empty when it passed."""
    calls: tuple[CallRecord, ...] = ()
    response: ChatResponse | None = None
    request_digest: str = ""

    @property
    def failed(self) -> bool:
        """Whether this iteration fails the run."""
        return self.status in FAILING_STATUSES


@dataclass
class RunSummary:
    """Counts and failures of a run; the full records are on disk."""

    run_id: str
    started: datetime
    results_dir: Path
    finished: datetime | None = None
    stamp_problem: str = ""
    results: list[IterationResult] = field(default_factory=list)

    @property
    def counts(self) -> Counter[str]:
        """Iterations per status."""
        return Counter(r.status for r in self.results)

    @property
    def failures(self) -> list[IterationResult]:
        """Failed iterations, in run order."""
        return [r for r in self.results if r.failed]

    @property
    def exit_code(self) -> int:
        """0 when every hard assertion passed and the stamp is current, else 1."""
        return 1 if self.failures or self.stamp_problem or not self.results else 0


def new_run_id(now: datetime) -> str:
    """Sortable and unique: UTC time to the millisecond plus a random suffix."""
    return f"{now.strftime('%Y%m%dT%H%M%S')}{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def record_of(result: IterationResult) -> dict[str, Any]:
    """The JSON record of one iteration."""
    scenario = result.scenario
    return {
        "scenario": scenario.id,
        "agent": scenario.agent,
        "tenant": scenario.tenant,
        "name": scenario.name,
        "type": scenario.type,
        "iteration": result.iteration,
        "status": result.status,
        "message": result.message,
        "request_digest": result.request_digest,
        "key": result.calls[0].key if result.calls else None,
        "cache_hit": all(c.cache_hit for c in result.calls) if result.calls else False,
        "latency_ms": round(sum(c.latency_ms for c in result.calls), 3),
        "usage": _usage(result.response),
        "calls": [
            {"key": c.key, "cache_hit": c.cache_hit, "latency_ms": c.latency_ms, "entry": c.entry}
            for c in result.calls
        ],
        "response": response_to_json(result.response) if result.response else None,
        "verdicts": [
            {"assertion": v.assertion, "outcome": v.outcome, "reason": v.reason}
            for v in result.verdicts
        ],
    }


def _usage(response: ChatResponse | None) -> dict[str, int]:
    if response is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {"input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens}


class ResultWriter:
    """Writes one JSON file per iteration, then ``run.json``; each file atomically."""

    def __init__(self, results_root: Path, run_id: str) -> None:
        self.run_dir = results_root / RESULTS_DIR / run_id

    def write(self, result: IterationResult) -> Path:
        """Write an iteration record and return its path."""
        path = self.run_dir / result.scenario.id / f"{result.iteration}.json"
        _write_json(path, record_of(result))
        return path

    def finish(self, summary: RunSummary, selection: dict[str, Any]) -> Path:
        """Write the run summary (timestamps order runs; folder times do not survive a clone)."""
        counts = summary.counts
        data = {
            "run_id": summary.run_id,
            "started": format_time(summary.started),
            "finished": format_time(summary.finished) if summary.finished else None,
            "selection": selection,
            "stamp_problem": summary.stamp_problem,
            "iterations": len(summary.results),
            "counts": dict(sorted(counts.items())),
            "exit_code": summary.exit_code,
        }
        path = self.run_dir / RUN_FILE
        _write_json(path, data)
        return path


def request_digest(request: dict[str, Any]) -> str:
    """A short fingerprint of the canonical request alone (no provider, model or scenario)."""
    return hashlib.sha256(canonical_json(request)).hexdigest()[:16]


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temp, path)
