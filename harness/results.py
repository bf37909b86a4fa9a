"""Run results: per-iteration records and the run summary, under ``eval-results/``.

Records hold latency, token usage and the cache-hit flag: they differ on every
run, so they live in another root than the committed cache, never in git.
Layout: ``results/<run-id>/records.jsonl`` (one JSON line per scenario
iteration; under pytest-xdist each worker writes ``records-<worker>.jsonl``)
plus ``results/<run-id>/run.json``. One appended file per process, not one
file (and folder) per iteration: creating 50,000 files and folders costs far
more than the replay itself.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
import threading
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO

from harness.atomic import write_file
from harness.behavior import actual_behavior
from harness.cache.store import format_time, response_from_json, response_to_json
from harness.clients.caching import CallRecord
from harness.counterexamples import CounterexampleResult, strength
from harness.entities import (
    BLOCKING_TYPES,
    FAILING_STATUSES,
    ChatResponse,
    JsonObject,
    JudgeScore,
    RubricResult,
    Scenario,
    Status,
    Verdict,
)
from harness.key import canonical_json
from harness.metrics import MetricValue
from harness.rubric.tally import tally
from harness.writing import named_write_errors

RESULTS_DIR = "results"
RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"


@dataclass(frozen=True, slots=True)
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
    judges: tuple[JudgeScore, ...] = ()
    """Judge scores: reported, never part of the status."""
    rubric: tuple[RubricResult, ...] = ()
    """Rubric outcomes (pass/fail per applicable item): reported, never part of the status."""
    answer_source: str = ""
    """Where the agent's own answer came from: ``scripted``, ``provider`` or empty (unknown)."""
    expected_decision: Any = None
    actual_decision: Any = None
    metric_samples: tuple[tuple[str, bool | None], ...] = ()
    """Metric name -> counted, for each metric whose population holds this iteration."""
    environment: JsonObject = field(default_factory=dict)
    """``{provider, model}`` of the agent that answered."""
    transcript: tuple[JsonObject, ...] = ()
    """The conversation after the agent's system prompt, then the response."""
    duration_ms: float = 0.0
    """Wall time of the iteration (agent, assertions, judges): the JUnit ``time``."""
    counterexamples: tuple[CounterexampleResult, ...] = ()
    """The scenario's counterexamples as its hard assertions judged them (the same for every
    iteration; never a model call)."""
    mutants: JsonObject | None = None
    """The generated mutants of this iteration's answer as judged (``run --mutants``), as
    :meth:`harness.mutants.MutantReport.to_json` gives them; ``None`` when not asked."""

    @property
    def failed(self) -> bool:
        """Whether this iteration fails the run."""
        return self.status in FAILING_STATUSES

    @property
    def blocking(self) -> bool:
        """A reject in a negative or adversarial scenario: it blocks whatever the aggregate."""
        return self.status == "rejected" and self.scenario.type in BLOCKING_TYPES

    def slim(self) -> IterationResult:
        """What a run keeps in memory of a passed iteration: its status, judge scores and
        metric samples, not its response, transcript, verdicts or calls (those are in its
        record on disk). A failed iteration is kept whole: reports quote its message."""
        if self.failed or (self.response is None and not self.transcript and not self.calls):
            return self
        return IterationResult(self.scenario, self.iteration, self.status, judges=self.judges,
                               rubric=self.rubric, answer_source=self.answer_source,
                               metric_samples=self.metric_samples, environment=_NO_ENVIRONMENT,
                               expected_decision=_small(self.expected_decision),
                               actual_decision=_small(self.actual_decision),
                               counterexamples=self.counterexamples, mutants=self.mutants)


#: The environment of a slimmed result (its record on disk has the real one).
_NO_ENVIRONMENT: JsonObject = {}


def _small(value: Any) -> Any:
    """A decision as kept in memory: short strings are interned (a run repeats a few values)."""
    return sys.intern(value) if isinstance(value, str) and len(value) <= 64 else value


@dataclass
class RunSummary:
    """Counts and failures of a run; the full records are on disk.

    ``results`` holds every iteration in plan order, passed ones slimmed by
    :meth:`IterationResult.slim` so that a run of 50,000 scenarios keeps a few
    hundred bytes per iteration in memory rather than every response.
    """

    run_id: str
    started: datetime
    results_dir: Path
    finished: datetime | None = None
    stamp_problem: str = ""
    results: list[IterationResult] = field(default_factory=list)
    datasets: str = ""
    """The datasets folder relative to the project root (the JUnit classname's first part)."""
    metrics: list[MetricValue] = field(default_factory=list)
    """Declared metric values, computed when the run finishes."""
    accounting: dict[str, int | None] | None = None
    """The ledger's totals of a recording run (paid attempts, retries, journal...); None offline."""
    shard: dict[str, Any] | None = None
    """The split of one shard of a run (``--shard K/N``, see :mod:`harness.shards`): running
    nothing is then no failure of its own, since a selection of fewer scenarios than shards
    leaves some empty; the merge judges the whole. """
    notes: list[str] = field(default_factory=list)
    """Warnings printed above the summary: iterations that replay answers a failed refresh left."""

    @property
    def counts(self) -> Counter[str]:
        """Iterations per status."""
        return Counter(r.status for r in self.results)

    @property
    def failures(self) -> list[IterationResult]:
        """Failed iterations, in run order."""
        return [r for r in self.results if r.failed]

    @property
    def blocking(self) -> list[IterationResult]:
        """Rejects in negative or adversarial scenarios, in run order."""
        return [r for r in self.results if r.blocking]

    @property
    def exit_code(self) -> int:
        """0 when every hard assertion passed, every gated metric met its target and the
        stamp is current, else 1. Judge scores never enter it."""
        failed = self.failures or any(m.blocks for m in self.metrics)
        return 1 if failed or self.stamp_problem or not (self.results or self.shard is not None) else 0


def new_run_id(now: datetime) -> str:
    """Sortable and unique: UTC time to the millisecond plus a random suffix."""
    return f"{now.strftime('%Y%m%dT%H%M%S')}{now.microsecond // 1000:03d}Z-{secrets.token_hex(3)}"


def identity_record(result: IterationResult) -> dict[str, Any]:
    """The fields every serialised form of an iteration starts with: who, which, and how it ended.

    The one place they are spelled: the records file (:func:`record_of`), what
    pytest-xdist workers ship (:func:`summary_record_of`) and the in-memory report
    view (:func:`harness.report.model.summary_record`) all begin with it.
    """
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
    }


def record_of(result: IterationResult) -> dict[str, Any]:
    """The JSON record of one iteration (``key``, ``cache_hit`` and ``latency_ms`` are the
    agent's own calls; ``calls`` lists judge calls too, with their ``purpose``)."""
    own = [c for c in result.calls if not c.purpose]
    return {
        **identity_record(result),
        "request_digest": result.request_digest,
        "key": own[0].key if own else None,
        "cache_hit": all(c.cache_hit for c in own) if own else False,
        "latency_ms": round(sum(c.latency_ms for c in own), 3),
        "duration_ms": round(result.duration_ms, 3),
        "usage": _usage(result.response),
        "calls": [c.to_json() for c in result.calls],
        "response": response_to_json(result.response) if result.response else None,
        "verdicts": [
            {"assertion": v.assertion, "outcome": v.outcome, "reason": v.reason,
             **({"origin": v.origin} if v.origin else {}),
             **({"crashed": True} if v.crashed else {})}
            for v in result.verdicts
        ],
        **validation_record(result),
        **counterexample_record(result),
    }


def summary_record_of(result: IterationResult) -> dict[str, Any]:
    """What a run summary needs of an iteration, as JSON (pytest-xdist workers ship it to the
    controller): the whole record of a failed iteration; of a passed one, its status, judge
    scores, decisions and metric samples (its full record is in the records file)."""
    if result.failed:
        return record_of(result)
    return {
        **identity_record(result),
        "expected_decision": result.expected_decision,
        "actual_decision": result.actual_decision,
        "environment": dict(result.environment),
        "metrics": dict(result.metric_samples),
        **counterexample_record(result),
        "judges": [judge_json(j) for j in result.judges],
        "rubric": [rubric_json(r) for r in result.rubric],
        "answer_source": result.answer_source,
    }


def counterexample_record(result: IterationResult) -> dict[str, Any]:
    """``{"counterexamples": [...]}`` when the scenario has counterexamples, else nothing (and
    ``"mutants"`` when the run generated them)."""
    if result.mutants is not None:
        return {**counterexample_record(replace(result, mutants=None)), "mutants": result.mutants}
    if not result.counterexamples:
        return {}
    return {"counterexamples": [c.to_json() for c in result.counterexamples]}


def judge_json(judge: JudgeScore) -> dict[str, Any]:
    """A judge score as records hold it (``source`` only when known)."""
    return {"name": judge.name, "score": judge.score, "interpretation": judge.interpretation,
            "reason": judge.reason, "provider": judge.provider, "model": judge.model,
            "warning": judge.warning, **({"source": judge.source} if judge.source else {})}


def rubric_json(result: RubricResult) -> dict[str, Any]:
    """A rubric outcome as records hold it (``source`` only when known)."""
    return {"name": result.name, "rule": result.rule, "outcome": result.outcome,
            "reason": result.reason, "provider": result.provider, "model": result.model,
            "warning": result.warning, **({"source": result.source} if result.source else {})}


def validation_record(result: IterationResult) -> dict[str, Any]:
    """The fields of the skill spec's empirical validation record, plus judges and metrics.

    ``test_id`` is the scenario's first tag (put the spec's test id first), else its id.
    """
    scenario = result.scenario
    turns = result.transcript or scenario.messages  # the transcript has the params rendered
    users = [m for m in turns if m.get("role") == "user"]
    return {
        "test_id": scenario.tags[0] if scenario.tags else scenario.id,
        "tags": list(scenario.tags),
        "description": scenario.description,
        "environment": dict(result.environment),
        "input": users[-1].get("content") if users else None,
        "expected_decision": result.expected_decision,
        "actual_decision": result.actual_decision,
        "actual_behavior": actual_behavior(result.status, result.actual_decision, result.response,
                                           result.verdicts, result.message),
        "pass_fail": "fail" if result.failed else "pass",
        "reviewer": scenario.review.get("reviewer"),
        "reviewed_at": scenario.review.get("reviewed_at"),
        "blocking": result.blocking,
        "judges": [judge_json(j) for j in result.judges],
        "rubric": [rubric_json(r) for r in result.rubric],
        "warnings": [j.warning for j in result.judges if j.warning]
                    + [r.warning for r in result.rubric if r.warning],
        "metrics": dict(result.metric_samples),
        "transcript": list(result.transcript),
    }


def _usage(response: ChatResponse | None) -> dict[str, int]:
    if response is None:
        return {"input_tokens": 0, "output_tokens": 0}
    return {"input_tokens": response.usage.input_tokens,
            "output_tokens": response.usage.output_tokens}


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

    def write(self, result: IterationResult) -> dict[str, Any]:
        """Append an iteration record and return it (with its ``transcript_path`` and line)."""
        record = record_of(result)
        record["transcript_path"] = self._shown
        with self._lock:
            self._lines += 1
            record["transcript_line"] = self._lines
            line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
            with named_write_errors(self.records_file, "run record"):  # a full disk: named
                handle = self._handle
                if handle is None:
                    self.run_dir.mkdir(parents=True, exist_ok=True)
                    handle = self._handle = open(self.records_file, "ab")  # noqa: SIM115 - kept open
                handle.write(line)
                handle.flush()
        return record

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
        "iterations": len(summary.results),
        "counts": dict(sorted(summary.counts.items())),
        "exit_code": summary.exit_code,
        "metrics": [m.to_json() for m in summary.metrics],
        "blocking": [{"scenario": r.scenario.id, "iteration": r.iteration,
                      "type": r.scenario.type, "message": r.message}
                     for r in summary.blocking],
        "judges": judge_means((j.name, j.score, j.interpretation, j.source)
                              for r in summary.results for j in r.judges),
        "accounting": summary.accounting,
        "rubric": rubric_summary((r.scenario.agent, x.name, x.rule, x.outcome, x.source)
                                 for r in summary.results for x in r.rubric),
        "strength": strength_by_agent(summary.results),
    }


def strength_by_agent(results: Iterable[IterationResult]) -> dict[str, dict[str, int]]:
    """Counterexamples caught / total per agent (each scenario once), for run.json."""
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for result in results:
        by_agent.setdefault(result.scenario.agent, []).append(
            {"scenario": result.scenario.id, **counterexample_record(result)})
    table = {}
    for agent, records in sorted(by_agent.items()):
        caught, total = strength(records)
        table[agent] = {"caught": caught, "total": total}
    return table


def rubric_summary(outcomes: Iterable[tuple[str, str, str, str, str]]) -> dict[str, dict[str, Any]]:
    """Per ``<agent>/<rule>``, from ``(agent, name, rule, outcome, source)``: outcome counts,
    the pass rate, how many graded answers were scripted, and the trend pass rate (without
    them)."""
    table = tally(((agent,), name, rule, outcome, source)
                  for agent, name, rule, outcome, source in outcomes)
    return {f"{group[0]}/{name}": cell.to_json() for (group, name), cell in table.items()}


def judge_means(scores: Iterable[tuple[str, int | None, str, str]]) -> dict[str, dict[str, Any]]:
    """Per judge, from ``(name, score, interpretation, source)``: the mean over scored
    iterations, how many were inconclusive or not evaluated, how many scores came from
    scripted answers, and ``trend_mean``, the mean without them (``None`` when every score
    was scripted: a constant from a script is not a grade to trend)."""
    table: dict[str, dict[str, Any]] = {}
    for name, score, interpretation, source in scores:
        cell = table.setdefault(name, {"scores": [], "real": [], "inconclusive": 0,
                                       "not_evaluated": 0})
        if score is not None:
            cell["scores"].append(score)
            if source != "scripted":
                cell["real"].append(score)
        elif interpretation == "not_evaluated":
            cell["not_evaluated"] += 1
        else:
            cell["inconclusive"] += 1
    return {name: {"mean": _mean_of(c["scores"]), "scored": len(c["scores"]),
                   "inconclusive": c["inconclusive"], "not_evaluated": c["not_evaluated"],
                   "scripted": len(c["scores"]) - len(c["real"]), "trend_mean": _mean_of(c["real"])}
            for name, c in sorted(table.items())}


def _mean_of(scores: list[int]) -> float | None:
    return round(sum(scores) / len(scores), 3) if scores else None


def request_digest(request: dict[str, Any]) -> str:
    """A short fingerprint of the canonical request alone (no provider, model or scenario)."""
    return hashlib.sha256(canonical_json(request)).hexdigest()[:16]


def _write_json(path: Path, data: Any) -> None:
    """Pretty JSON written under a temporary name and renamed into place (no fsync: run
    files are not committed; a reader sees the whole file or none)."""
    write_file(path, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def result_from_record(record: dict[str, Any], scenario: Scenario) -> IterationResult:
    """Rebuild an iteration result from its JSON record (xdist workers ship records)."""
    response = record.get("response")
    return IterationResult(
        scenario=scenario,
        iteration=int(record["iteration"]),
        status=record["status"],
        verdicts=tuple(Verdict(v["assertion"], v["outcome"], v["reason"], v.get("origin", ""),
                               bool(v.get("crashed")))
                       for v in record.get("verdicts", [])),
        message=record.get("message", ""),
        calls=tuple(CallRecord.from_json(c) for c in record.get("calls", [])),
        response=response_from_json(response) if response else None,
        request_digest=record.get("request_digest", ""),
        judges=tuple(JudgeScore(j["name"], j["score"], j["interpretation"], j["reason"],
                                j["provider"], j["model"], j.get("warning", ""), j.get("source", ""))
                     for j in record.get("judges", [])),
        rubric=tuple(RubricResult(x["name"], x.get("rule", ""), x["outcome"], x.get("reason", ""),
                                  x.get("provider", ""), x.get("model", ""), x.get("warning", ""),
                                  x.get("source", ""))
                     for x in record.get("rubric") or []),
        answer_source=str(record.get("answer_source") or ""),
        expected_decision=record.get("expected_decision"),
        actual_decision=record.get("actual_decision"),
        metric_samples=tuple((record.get("metrics") or {}).items()),
        environment=dict(record.get("environment") or {}),
        transcript=tuple(record.get("transcript") or ()),
        duration_ms=float(record.get("duration_ms") or 0.0),
        counterexamples=tuple(
            CounterexampleResult(c["name"], c.get("why", ""), tuple(c.get("rejected") or ()),
                                 tuple(c.get("let_through") or ()))
            for c in record.get("counterexamples") or ()),
        mutants=record.get("mutants"),
    )
