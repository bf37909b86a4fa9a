"""Writing a run under ``eval-results/``: one JSON line per iteration, then ``run.json``.

Records hold latency, token usage and the cache-hit flag: they differ on every
run, so they live in another root than the committed cache, never in git.
Layout: ``results/<run-id>/records.jsonl`` (one JSON line per scenario
iteration; under pytest-xdist each worker writes ``records-<worker>.jsonl``)
plus ``results/<run-id>/run.json``. One appended file per process, not one
file (and folder) per iteration: creating 50,000 files and folders costs far
more than the replay itself. The line is :meth:`IterationResult.to_json`.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, BinaryIO

from harness.cache.store import format_time
from harness.documents.atomic import write_file
from harness.documents.writing import named_write_errors
from harness.results.aggregates import judge_means, rubric_summary
from harness.results.record import IterationResult
from harness.results.runsummary import RunSummary

RESULTS_DIR = "results"
#: The encoder of a records line, built once: ``json.dumps(record, ensure_ascii=False)`` builds
#: this very encoder on every call (same bytes).
_LINE = json.JSONEncoder(ensure_ascii=False)
RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"


class ResultWriter:
    """Appends one JSON line per iteration to the run's records file, then writes ``run.json``.

    Each line is flushed as soon as it is written, so the records of a run that
    dies are kept up to its last iteration; the file is opened on the first record.
    """

    def __init__(self, results_root: Path, run_id: str, worker: str = "") -> None:
        self.run_dir = results_root / RESULTS_DIR / run_id
        self.records_file = self.run_dir / (f"records-{worker}.jsonl" if worker else RECORDS_FILE)
        self._handle: BinaryIO | None = None
        self._lines = 0
        self._lock = threading.Lock()
        self._shown = self.records_file.relative_to(results_root).as_posix()
        self.failed_calls = False
        """A record written by this writer lists a call that failed for good."""

    def write(self, result: IterationResult) -> dict[str, Any]:
        """Append an iteration record and return it (with its ``transcript_path`` and line)."""
        record = result.to_json()
        record["transcript_path"] = self._shown
        if not self.failed_calls and any(call.get("failed") for call in record.get("calls") or ()):
            self.failed_calls = True
        with self._lock:
            self._lines += 1
            record["transcript_line"] = self._lines
            line = (_LINE.encode(record) + "\n").encode("utf-8")
            with named_write_errors(self.records_file, "run record"):  # a full disk: named
                handle = self._handle
                if handle is None:
                    self.run_dir.mkdir(parents=True, exist_ok=True)
                    handle = self._handle = open(self.records_file, "ab")  # noqa: SIM115 - kept open
                handle.write(line)
                handle.flush()
        return record

    def sole_writer(self) -> bool:
        """Whether no other process wrote records of this run (no other records file)."""
        try:
            names = os.listdir(self.run_dir)
        except FileNotFoundError:
            return True
        return all(name == self.records_file.name for name in names if name.startswith("records"))

    def close(self) -> None:
        """Close the records file (a later record reopens it)."""
        with self._lock:
            if self._handle is not None:
                handle, self._handle = self._handle, None
                with named_write_errors(self.records_file, "run record"):
                    handle.close()

    def finish(self, summary: RunSummary, selection: dict[str, Any]) -> Path:
        """Write the run summary (timestamps order runs; folder times do not survive a clone)."""
        self.close()
        path = self.run_dir / RUN_FILE
        _write_json(path, run_data(summary, selection))
        return path


def run_data(summary: RunSummary, selection: dict[str, Any]) -> dict[str, Any]:
    """The content of ``run.json``: what reports need beyond the iteration records."""
    return {
        "run_id": summary.run_id,
        "started": format_time(summary.started),
        "finished": format_time(summary.finished) if summary.finished else None,
        "selection": selection,
        "stamp_problem": summary.stamp_problem,
        "datasets": summary.datasets,
        "iterations": summary.iterations,
        "counts": dict(sorted(summary.counts.items())),
        "exit_code": summary.exit_code,
        "metrics": [m.to_json() for m in summary.metrics],
        "blocking": [{"scenario": r.scenario.id, "iteration": r.iteration,
                      "type": r.scenario.type, "message": r.message}
                     for r in summary.blocking],
        "judges": judge_means(summary.totals.judge_scores),
        "accounting": summary.accounting,
        "rubric": rubric_summary(summary.totals.rubric_outcomes),
        "strength": summary.totals.strength_by_agent(),
    }


def _write_json(path: Path, data: Any) -> None:
    """Pretty JSON written under a temporary name and renamed into place (no fsync: run
    files are not committed; a reader sees the whole file or none)."""
    write_file(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
