"""Reading runs back from ``eval-results/``, ordered by the time they recorded.

A run's order comes from ``started`` in its ``run.json``, never from folder
times: a clone, a copy or an artifact download resets those. Ties (two runs in
one second) fall back to the run id, which starts with the time in
milliseconds. A folder without ``run.json`` is a run that never finished and
is left out.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.cache.verify import parse_time
from harness.core.errors import HarnessError
from harness.report.model import RunView
from harness.results.record import IterationResult, always_written
from harness.results.recordwriter import RESULTS_DIR, RUN_FILE

#: How many runs a trend looks back over.
TREND_RUNS = 10


class RunNotFound(HarnessError):
    """No finished run matches the id (or there is no run at all)."""

    code = "eval-report-run-unknown"
    exit_code = 2


class RecordUnreadable(HarnessError):
    """A line of a run's records is JSON but no iteration record (edited, or another tool's)."""

    code = "eval-report-record-unreadable"
    exit_code = 2


@dataclass(frozen=True)
class RunInfo:
    """A finished run on disk."""

    run_id: str
    started: datetime
    path: Path
    data: dict[str, Any]


def list_runs(results_root: Path) -> list[RunInfo]:
    """Every finished run, oldest first by its recorded ``started`` timestamp."""
    folder = results_root / RESULTS_DIR
    runs = []
    if folder.is_dir():
        for run_dir in folder.iterdir():
            info = _info(run_dir)
            if info is not None:
                runs.append(info)
    return sorted(runs, key=lambda r: (r.started, r.run_id))


def _info(run_dir: Path) -> RunInfo | None:
    try:
        data = json.loads((run_dir / RUN_FILE).read_text(encoding="utf-8"))
        started = parse_time(str(data["started"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return RunInfo(str(data.get("run_id") or run_dir.name), started, run_dir, data)


def find_run(runs: list[RunInfo], run_id: str | None) -> RunInfo:
    """The run named ``run_id`` (exact, or a unique prefix); the latest when ``None``."""
    if not runs:
        raise RunNotFound("no finished run under eval-results/: run `python -m harness run` first")
    if run_id is None or run_id == "latest":  # a shard already merged is a part, not the latest run
        merged = {str(m.get("run_id")) for r in runs for m in r.data.get("merged_from") or ()}
        return ([r for r in runs if r.run_id not in merged] or runs)[-1]
    exact = [r for r in runs if r.run_id == run_id or r.path.name == run_id]
    matches = exact or [r for r in runs if r.run_id.startswith(run_id)]
    if len(matches) == 1:
        return matches[0]
    recent = ", ".join(r.run_id for r in runs[-5:])
    what = "matches several runs" if matches else "matches no finished run"
    raise RunNotFound(f"run '{run_id}' {what}; the latest are: {recent}")


def load_records(run_dir: Path) -> list[dict[str, Any]]:
    """The iteration records of a run, by scenario and iteration, each read through
    :meth:`IterationResult.from_json` (:func:`read_record`).

    They are the lines of ``records.jsonl`` (and ``records-<worker>.jsonl`` under
    pytest-xdist); runs recorded before records were appended to one file hold one
    ``<agent>/<tenant>/<name>/<iteration>.json`` each, and are read too. A line
    that does not parse (a run killed mid-write) is skipped.
    """
    found: list[tuple[str, Any]] = []
    for path in sorted(run_dir.glob("records*.jsonl")):
        try:
            lines = path.read_bytes().splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, start=1):
            with contextlib.suppress(ValueError):
                found.append((f"{path} line {number}", json.loads(line)))
    for path in run_dir.glob("*/*/*/*.json"):
        try:
            found.append((str(path), json.loads(path.read_text(encoding="utf-8"))))
        except (OSError, ValueError):
            continue
    records = [read_record(record, where) for where, record in found
               if isinstance(record, dict) and "scenario" in record and "status" in record]
    return sorted(records, key=lambda r: (str(r["scenario"]), int(r.get("iteration", 0))))


def read_record(record: dict[str, Any], where: str) -> dict[str, Any]:
    """A stored record as this version writes it: read by :meth:`IterationResult.from_json`
    and written again, so the fields an older version did not write read as their defaults
    (what it did write is kept as stored, ``transcript_path`` and ``transcript_line`` too).

    Raises :class:`RecordUnreadable` naming ``where`` when the record is not one.
    """
    try:
        result = IterationResult.from_json(record)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise RecordUnreadable(
            f"{where}: not an iteration record this harness can read ({type(exc).__name__}: "
            f"{exc}); re-run the run, or delete the line to report the rest") from None
    if always_written() <= record.keys():
        return record  # written by this version: writing it again would give it back
    return {**result.to_json(), **record}


def load_run(results_root: Path, run_id: str | None = None, *, trend: int = TREND_RUNS) -> RunView:
    """A run with its records and the ``run.json`` of up to ``trend`` runs ending with it."""
    runs = list_runs(results_root)
    info = find_run(runs, run_id)
    index = runs.index(info)
    # a shard's judge means cover part of a selection: they trend only beside themselves
    whole = [r for r in runs[:index + 1] if r is info or not _is_shard(r.data)]
    history = [r.data for r in whole[max(0, len(whole) - trend):]]
    return RunView(info.data, load_records(info.path), history)


def _is_shard(data: dict[str, Any]) -> bool:
    """Whether a run.json is one shard of a run (``run --shard K/N``)."""
    selection = data.get("selection")
    return isinstance(selection, dict) and isinstance(selection.get("shard"), dict)
