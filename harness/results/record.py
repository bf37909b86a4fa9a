"""The iteration record: one result type and its one JSON shape, written and read in one place.

Every serialised form of an iteration is :meth:`IterationResult.to_json` or a
projection of it, and every reader goes back through
:meth:`IterationResult.from_json`:

- ``full``: the line of ``records.jsonl`` (:mod:`harness.results.recordwriter`), also what the
  reports, ``compare`` and the shard merge read back (:mod:`harness.report.load`);
- ``summary``: what a pytest-xdist worker ships to the controller: the whole record of
  a failed iteration, the :data:`SUMMARY_FIELDS` of a passed one;
- :meth:`IterationResult.slim`: a passed iteration reduced to its :data:`SLIM_FIELDS` (the
  summary without the environment). A run no longer keeps its results: it folds each into
  :class:`~harness.results.totals.RunTotals`.

Each field is encoded and decoded by one entry of :data:`_FIELDS`, so a field added to
the type is added to every form at once (the two used to be written four times by hand,
and ``answer_source`` was lost for failed iterations on the xdist controller). The
round trip ``from_json(to_json(r)) == r`` is a property test (tests/test_record.py).
Beside the fields, the full record holds values derived from them for its readers
(``key``, ``usage``, ``pass_fail``, ``actual_behavior``...): written, never read back.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from harness.assertions.counterexamples import CounterexampleResult
from harness.cache.store import response_to_json
from harness.cache.verify import response_from_json
from harness.clients.caching import CallRecord
from harness.core.declared import Scenario
from harness.core.entities import (
    BLOCKING_TYPES,
    FAILING_STATUSES,
    ChatResponse,
    JsonObject,
    JudgeScore,
    RubricResult,
    Status,
    Verdict,
)
from harness.results.behavior import actual_behavior

#: ``full``: the records file; ``summary``: what an xdist worker ships to the controller.
Projection = Literal["full", "summary"]


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
        """A passed iteration reduced to its :data:`SLIM_FIELDS`, not its response,
        transcript, verdicts or calls (those are in its record on disk). A failed iteration
        is kept whole: reports quote its message."""
        if self.failed or (self.response is None and not self.transcript and not self.calls):
            return self
        return IterationResult(  # the SLIM_FIELDS spelled out: a dict of them and ** cost twice as much
            self.scenario, self.iteration, self.status, judges=self.judges, rubric=self.rubric,
            answer_source=_small(self.answer_source), metric_samples=self.metric_samples,
            expected_decision=_small(self.expected_decision),
            actual_decision=_small(self.actual_decision), counterexamples=self.counterexamples,
            mutants=self.mutants, environment=_NO_ENVIRONMENT)

    def set_duration(self, duration_ms: float) -> None:
        """Fill in the wall time of a result nobody else holds yet (the run that made it, before
        it is written or kept): a frozen result is copied field by field by ``replace``, which
        cost a replay more per iteration than the check of a substring."""
        object.__setattr__(self, "duration_ms", duration_ms)

    def fields_json(self, names: tuple[str, ...]) -> dict[str, Any]:
        """The JSON of the named fields alone, as :meth:`to_json` writes them (projections and
        aggregates are built from it)."""
        found: dict[str, Any] = {}
        for name in names:
            found.update(_FIELDS[name].write(self))
        return found

    def to_json(self, projection: Projection = "full") -> dict[str, Any]:
        """The record of this iteration (``key``, ``cache_hit`` and ``latency_ms`` are the
        agent's own calls; ``calls`` lists judge calls too, with their ``purpose``), or the
        ``summary`` projection of it (see the module docstring)."""
        if projection == "summary" and not self.failed:
            return {**_identity(self), **self.fields_json(SUMMARY_FIELDS),
                    "warnings": _warnings(self)}
        record: dict[str, Any] = _identity(self)
        for write in _full_writers():
            record.update(write(self))
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, Any], scenario: Scenario | None = None,
                  ) -> IterationResult:
        """The result a record (or a projection of one) holds: fields a record lacks (a
        projection, or a record of an older version) take their defaults.

        ``scenario`` is the dataset's (the pytest controller has it); without it the
        scenario is rebuilt from what the record says of it (:func:`scenario_of`), as a
        report of a past run does. Raises ``KeyError``, ``TypeError`` or ``ValueError`` on
        a record that is not one (:func:`harness.report.load.load_records` names the line).
        """
        return cls(scenario if scenario is not None else scenario_of(record),
                   int(record["iteration"]), record["status"],
                   message=str(record.get("message") or ""),
                   **{name: spec.read(record) for name, spec in _FIELDS.items()})


#: The fields of a passed iteration that reports read (:meth:`~IterationResult.slim` keeps them).
SLIM_FIELDS: tuple[str, ...] = ("judges", "rubric", "answer_source", "metric_samples",
                                "expected_decision", "actual_decision", "counterexamples",
                                "mutants")
#: ...and what a pytest-xdist worker ships of it (the ``summary`` projection, with the
#: identity and the judges' warnings): the environment too, for the controller's reports.
SUMMARY_FIELDS: tuple[str, ...] = (*SLIM_FIELDS, "environment")

#: The environment of a slimmed result (its record on disk has the real one).
_NO_ENVIRONMENT: JsonObject = {}


def _small(value: Any) -> Any:
    """A decision as kept in memory: short strings are interned (a run repeats a few values)."""
    return sys.intern(value) if isinstance(value, str) and len(value) <= 64 else value


@dataclass(frozen=True, slots=True)
class _Field:
    """How one field of :class:`IterationResult` is written into a record and read back."""

    write: Callable[[IterationResult], dict[str, Any]]
    read: Callable[[Mapping[str, Any]], Any]


#: The file of a scenario rebuilt from a record (records name the scenario, not its file).
_NO_FILE = Path()


@functools.cache
def always_written() -> frozenset[str]:
    """The keys every full record has (``counterexamples`` and ``mutants`` only when there are
    some): a stored record that has them all needs no defaults filled in."""
    return frozenset(IterationResult(scenario_of({"scenario": "a/t/n"}), 0, "passed").to_json())


def _identity(result: IterationResult) -> dict[str, Any]:
    """Who, which, and how it ended: every form of a record starts with these."""
    scenario = result.scenario
    return {"scenario": scenario.id, "agent": scenario.agent, "tenant": scenario.tenant,
            "name": scenario.name, "type": scenario.type, "iteration": result.iteration,
            "status": result.status, "message": result.message}


def scenario_of(record: Mapping[str, Any]) -> Scenario:
    """The scenario as a record describes it (identity, type, description, tags, review, its
    last user input): enough to write the record again, not to run it. A record does not say
    where its scenario file is: ``file`` is :data:`_NO_FILE`."""
    scenario_id = str(record["scenario"])
    agent, _, rest = scenario_id.partition("/")
    tenant, _, name = rest.partition("/")
    given = record.get("input")
    return Scenario(
        agent=str(record.get("agent", agent)), tenant=str(record.get("tenant", tenant)),
        name=str(record.get("name", name)), file=_NO_FILE,
        type=str(record.get("type", "")), description=str(record.get("description") or ""),
        messages=({"role": "user", "content": given},) if given is not None else (),
        context=None, params={}, iterations=1, expect=(), judge=(),
        tags=tuple(str(t) for t in record.get("tags") or ()),
        review={k: record[k] for k in ("reviewer", "reviewed_at") if record.get(k) is not None})


def _judge_json(judge: JudgeScore) -> dict[str, Any]:
    return {"name": judge.name, "score": judge.score, "interpretation": judge.interpretation,
            "reason": judge.reason, "provider": judge.provider, "model": judge.model,
            "warning": judge.warning, **({"source": judge.source} if judge.source else {})}


def _judge_of(data: Mapping[str, Any]) -> JudgeScore:
    return JudgeScore(data["name"], data["score"], data["interpretation"], data["reason"],
                      data["provider"], data["model"], data.get("warning", ""),
                      data.get("source", ""))


def _rubric_json(item: RubricResult) -> dict[str, Any]:
    return {"name": item.name, "rule": item.rule, "outcome": item.outcome, "reason": item.reason,
            "provider": item.provider, "model": item.model, "warning": item.warning,
            **({"source": item.source} if item.source else {})}


def _rubric_of(data: Mapping[str, Any]) -> RubricResult:
    return RubricResult(data["name"], data.get("rule", ""), data["outcome"],
                        data.get("reason", ""), data.get("provider", ""), data.get("model", ""),
                        data.get("warning", ""), data.get("source", ""))


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {"assertion": verdict.assertion, "outcome": verdict.outcome, "reason": verdict.reason,
            **({"origin": verdict.origin} if verdict.origin else {}),
            **({"crashed": True} if verdict.crashed else {})}


def _verdict_of(data: Mapping[str, Any]) -> Verdict:
    return Verdict(data["assertion"], data["outcome"], data["reason"], data.get("origin", ""),
                   bool(data.get("crashed")))


def _counterexample_of(data: Mapping[str, Any]) -> CounterexampleResult:
    return CounterexampleResult(data["name"], data.get("why", ""),
                                tuple(data.get("rejected") or ()),
                                tuple(data.get("let_through") or ()))


def _plain(key: str, default: Any = None) -> _Field:
    """A field stored as is under ``key`` (JSON values)."""
    return _Field(lambda r: {key: getattr(r, key)}, lambda d: d.get(key, default))


#: Every field of :class:`IterationResult` but its identity (scenario, iteration, status,
#: message): how it is written, how it is read back. The one place a record's shape is spelled.
_FIELDS: dict[str, _Field] = {
    "request_digest": _Field(lambda r: {"request_digest": r.request_digest},
                             lambda d: str(d.get("request_digest") or "")),
    "duration_ms": _Field(lambda r: {"duration_ms": round(r.duration_ms, 3)},
                          lambda d: float(d.get("duration_ms") or 0.0)),
    "calls": _Field(lambda r: {"calls": [c.to_json() for c in r.calls]},
                    lambda d: tuple(CallRecord.from_json(c) for c in d.get("calls") or ())),
    "response": _Field(lambda r: {"response": response_to_json(r.response) if r.response else None},
                       lambda d: response_from_json(d["response"]) if d.get("response") else None),
    "verdicts": _Field(lambda r: {"verdicts": [_verdict_json(v) for v in r.verdicts]},
                       lambda d: tuple(_verdict_of(v) for v in d.get("verdicts") or ())),
    "environment": _Field(lambda r: {"environment": dict(r.environment)},
                          lambda d: dict(d.get("environment") or {})),
    "expected_decision": _plain("expected_decision"),
    "actual_decision": _plain("actual_decision"),
    "judges": _Field(lambda r: {"judges": [_judge_json(j) for j in r.judges]},
                     lambda d: tuple(_judge_of(j) for j in d.get("judges") or ())),
    "rubric": _Field(lambda r: {"rubric": [_rubric_json(x) for x in r.rubric]},
                     lambda d: tuple(_rubric_of(x) for x in d.get("rubric") or ())),
    "answer_source": _Field(lambda r: {"answer_source": r.answer_source},
                            lambda d: str(d.get("answer_source") or "")),
    "metric_samples": _Field(lambda r: {"metrics": dict(r.metric_samples)},
                             lambda d: tuple((d.get("metrics") or {}).items())),
    "transcript": _Field(lambda r: {"transcript": list(r.transcript)},
                         lambda d: tuple(d.get("transcript") or ())),
    "counterexamples": _Field(
        lambda r: ({"counterexamples": [c.to_json() for c in r.counterexamples]}
                   if r.counterexamples else {}),
        lambda d: tuple(_counterexample_of(c) for c in d.get("counterexamples") or ())),
    "mutants": _Field(lambda r: {"mutants": r.mutants} if r.mutants is not None else {},
                      lambda d: d.get("mutants")),
}


def _own_calls(result: IterationResult) -> dict[str, Any]:
    """Of the agent's own calls (not judges): the key, whether all hit, their latency."""
    own = [c for c in result.calls if not c.purpose]
    return {"key": own[0].key if own else None,
            "cache_hit": all(c.cache_hit for c in own) if own else False,
            "latency_ms": round(sum(c.latency_ms for c in own), 3)}


def _usage(result: IterationResult) -> dict[str, Any]:
    usage = result.response.usage if result.response is not None else None
    return {"usage": {"input_tokens": usage.input_tokens if usage else 0,
                      "output_tokens": usage.output_tokens if usage else 0}}


def _spec_fields(result: IterationResult) -> dict[str, Any]:
    """The skill spec's empirical validation fields that precede the environment.

    ``test_id`` is the scenario's first tag (put the spec's test id first), else its id.
    """
    scenario = result.scenario
    return {"test_id": scenario.tags[0] if scenario.tags else scenario.id,
            "tags": list(scenario.tags), "description": scenario.description}


def _input(result: IterationResult) -> dict[str, Any]:
    turns = result.transcript or result.scenario.messages  # the transcript has the params rendered
    users = [m for m in turns if m.get("role") == "user"]
    return {"input": users[-1].get("content") if users else None}


def _judgement(result: IterationResult) -> dict[str, Any]:
    """What the answer did, pass or fail, who reviewed the scenario, whether it blocks."""
    review = result.scenario.review
    return {"actual_behavior": actual_behavior(result.status, result.actual_decision,
                                               result.response, result.verdicts, result.message),
            "pass_fail": "fail" if result.failed else "pass",
            "reviewer": review.get("reviewer"), "reviewed_at": review.get("reviewed_at"),
            "blocking": result.blocking}


def _warnings(result: IterationResult) -> list[str]:
    return ([j.warning for j in result.judges if j.warning]
            + [x.warning for x in result.rubric if x.warning])


#: The full record after the identity, in order: a field's name, or a derived part.
_FULL: tuple[str | Callable[[IterationResult], dict[str, Any]], ...] = (
    "request_digest", _own_calls, "duration_ms", _usage, "calls", "response", "verdicts",
    _spec_fields, "environment", _input, "expected_decision", "actual_decision", _judgement,
    "judges", "rubric", "answer_source", lambda r: {"warnings": _warnings(r)}, "metric_samples",
    "transcript", "counterexamples", "mutants",
)


@functools.cache
def _full_writers() -> tuple[Callable[[IterationResult], dict[str, Any]], ...]:
    """:data:`_FULL` as the functions that write each part, looked up once (a replay writes a
    record per iteration)."""
    return tuple(_FIELDS[part].write if isinstance(part, str) else part for part in _FULL)
