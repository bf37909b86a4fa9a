"""Iterations whose re-record was asked for and not obtained: ``<cache>/rerecord-failed.json``.

A ``--refresh-cache`` call that fails (a context overflow, a 500, a timeout)
writes nothing, so the entry an earlier recording left under the same key
stays, and the next offline run would replay it green as if it were fresh.
This committed file says so. A refresh run rewrites it at the end:

- an iteration of the run with a call that failed for good while an older
  answer stays under its key gets a line (the purposes not obtained, when,
  why); a failed call with no older answer needs none: offline, it misses;
- an iteration whose every call was answered loses its line, iterations the
  run did not select keep theirs, and lines of deleted scenarios go;
- a record-missing run never removes a line (it does not ask again for what
  the cache holds); an empty list removes the file.

``run`` and ``check`` read it: they list the iterations, and an agent with
``require_provenance: provider`` fails them (:mod:`harness.running.provenance_gate`).

Only a recording run writes it (an offline run writes zero bytes under the
cache); the write is atomic and happens only when the content changes.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.cache.store import format_time
from harness.core.errors import HarnessError
from harness.core.rerecord import rerecord_command
from harness.documents.atomic import json_bytes, write_file

FAILED_FILE = "rerecord-failed.json"
FORMAT_VERSION = 1
#: Characters of a failure's reason kept in the committed file (the record has all of it).
_REASON_CHARS = 200


class RerecordFileInvalid(HarnessError):
    """``rerecord-failed.json`` cannot be read: a run cannot tell which answers are stale."""

    code = "eval-rerecord-file-invalid"
    exit_code = 2


@dataclass(frozen=True)
class FailedRerecord:
    """One iteration that replays older answers because its last refresh did not obtain them."""

    scenario: str
    iteration: int
    at: str
    """When the refresh that failed ran (UTC, ISO 8601)."""
    failed: tuple[str, ...]
    """Purposes not obtained: ``""`` for the agent's own call, ``judge:<name>``, ``rubric:<name>``."""
    reason: str = ""

    @property
    def label(self) -> str:
        return f"{self.scenario}[{self.iteration}]"

    def describe(self) -> str:
        """One line: which calls, when, why."""
        what = ", ".join(purpose or "the agent's call" for purpose in self.failed)
        why = f": {self.reason}" if self.reason else ""
        return f"{self.label}: {what} not obtained by the refresh of {self.at}{why}"

    def to_json(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "iteration": self.iteration, "at": self.at,
                "failed": list(self.failed), "reason": self.reason}


def failed_path(cache_root: Path) -> Path:
    """Where the file lives: beside the stamp, outside the entry tree."""
    return cache_root / FAILED_FILE


def read_failed(cache_root: Path) -> dict[tuple[str, int], FailedRerecord]:
    """Every listed iteration, keyed ``(scenario id, iteration)``; empty when the file is absent.

    Raises :class:`RerecordFileInvalid` (naming the file, the field and the fix) when it is
    present and not what this module writes: guessing would hide exactly what it is for.
    """
    path = failed_path(cache_root)
    if not path.is_file():
        return {}
    fix = ("Fix: restore it from git, or delete it and re-record the scenarios it named "
           f"({rerecord_command()} --scenario ...)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RerecordFileInvalid(f"{path}: not readable JSON ({exc}). {fix}") from None
    if (not isinstance(data, dict) or data.get("format_version") != FORMAT_VERSION
            or isinstance(data.get("format_version"), bool)
            or not isinstance(data.get("iterations"), list)):
        raise RerecordFileInvalid(f"{path}: format_version must be {FORMAT_VERSION} and "
                                  f"iterations a list. {fix}")
    found: dict[tuple[str, int], FailedRerecord] = {}
    for index, item in enumerate(data["iterations"]):
        try:
            mark = _mark_of(item)
        except (KeyError, TypeError, ValueError) as exc:
            raise RerecordFileInvalid(f"{path}: iterations[{index}]: {exc}. {fix}") from None
        found[(mark.scenario, mark.iteration)] = mark
    return found


def _mark_of(item: Any) -> FailedRerecord:
    if not isinstance(item, dict):
        raise TypeError("must be an object")
    scenario, iteration, failed = item["scenario"], item["iteration"], item["failed"]
    if not isinstance(scenario, str) or scenario.count("/") != 2:
        raise ValueError("scenario must be an id agent/tenant/name")
    if not isinstance(iteration, int) or isinstance(iteration, bool) or iteration < 0:
        raise ValueError("iteration must be an integer >= 0")
    if not isinstance(failed, list) or not failed or not all(isinstance(p, str) for p in failed):
        raise ValueError("failed must be a non-empty list of purposes")
    return FailedRerecord(scenario, iteration, str(item.get("at", "")), tuple(failed),
                          str(item.get("reason", "")))


def update_failed(cache_root: Path, records: Iterable[Mapping[str, Any]], now: datetime,
                  scenarios: Collection[str] | None = None) -> bool:
    """After a refresh: list the iterations of ``records`` (run records) with a call that failed
    for good, drop those whose every call was answered, and (given the ids of every current
    ``scenarios``) drop the lines of deleted scenarios. True when the file changed."""
    marks = read_failed(cache_root)
    before = dict(marks)
    if scenarios is not None:
        marks = {key: mark for key, mark in marks.items() if key[0] in scenarios}
    for record in records:
        key = (str(record["scenario"]), int(record["iteration"]))
        failed = tuple(dict.fromkeys(str(call.get("purpose") or "")
                                     for call in record.get("calls") or []
                                     if call.get("failed") and _kept(cache_root, call)))
        if failed:
            marks[key] = FailedRerecord(key[0], key[1], format_time(now), failed, _reason(record))
        else:
            marks.pop(key, None)
    if marks == before:
        return False
    path = failed_path(cache_root)
    if not marks:
        path.unlink(missing_ok=True)
        return True
    ordered = [marks[key].to_json() for key in sorted(marks)]
    write_file(path, json_bytes({
        "format_version": FORMAT_VERSION,
        "about": "Iterations whose last --refresh-cache did not obtain every answer: they replay "
                 "older answers. Re-record them; a refresh that obtains every answer removes them.",
        "iterations": ordered}))
    return True


def _kept(cache_root: Path, call: Mapping[str, Any]) -> bool:
    """Whether a failed call left an older answer in place (its entry folder exists). Without
    one, the offline run misses there and says so itself: nothing would replay green."""
    entry = call.get("entry")
    return isinstance(entry, str) and bool(entry) and (cache_root / entry).is_dir()


def _reason(record: Mapping[str, Any]) -> str:
    """The first line of what went wrong: the iteration's error, else a judge's warning."""
    texts = [str(record.get("message") or "")] if record.get("status") == "error" else []
    texts += [str(item.get("warning") or "") for item in
              [*(record.get("judges") or []), *(record.get("rubric") or [])]]
    for text in texts:
        if text.strip():
            return text.strip().splitlines()[0][:_REASON_CHARS]
    return ""


def selected_marks(marks: Mapping[tuple[str, int], FailedRerecord],
                   pairs: Iterable[tuple[str, int]]) -> list[FailedRerecord]:
    """The marks of the given (scenario id, iteration) pairs, in their order."""
    return [marks[pair] for pair in pairs if pair in marks]


def warning_text(marks: list[FailedRerecord], file: str, *, shown: int = 10,
                 this_run: bool = False) -> str:
    """What ``run`` prints when selected iterations replay answers a failed refresh left
    (``this_run``: the refresh that just failed to obtain them)."""
    if not marks:
        return ""
    when = "this --refresh-cache" if this_run else "their last --refresh-cache"
    lines = [f"warning: {len(marks)} iteration(s) {'keep' if this_run else 'replay'} older "
             f"answers: {when} did not obtain every answer (listed in {file}):"]
    lines += [f"  {mark.describe()}" for mark in marks[:shown]]
    if len(marks) > shown:
        lines.append(f"  ... and {len(marks) - shown} more in {file}")
    lines.append(f"  re-record: {rerecord_command(marks[0].scenario)} (one --scenario per "
                 "line above); require_provenance: provider in agent.yaml makes them fail the run")
    return "\n".join(lines)
