"""One iteration record: ``to_json``/``from_json`` round-trip every result, and its projections
(``summary`` shipped by xdist workers, ``slim`` kept in memory) are cuts of that one record."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import Project
from harness.assertions.counterexamples import CounterexampleResult
from harness.clients.caching import CallRecord
from harness.core.declared import Scenario
from harness.core.entities import ChatResponse, JudgeScore, RubricResult, ToolCall, Usage, Verdict
from harness.results.record import _FIELDS, SLIM_FIELDS, SUMMARY_FIELDS, IterationResult, scenario_of

NO_NOISE = ("-p", "no:benchmark", "-p", "no:cacheprovider")

text = st.text(max_size=12)
names = st.text("abcdefghij-_", min_size=1, max_size=8)
json_leaf = st.none() | st.booleans() | st.integers(-10**6, 10**6) | text
json_value = st.recursive(json_leaf, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(names, inner, max_size=3), max_leaves=6)
json_object = st.dictionaries(names, json_value, max_size=3)
millis = st.integers(0, 10**7).map(lambda n: n / 1000)  # records keep 3 decimals

scenarios = st.builds(
    Scenario, agent=names, tenant=names, name=names,
    file=st.just(Path("eval-datasets/a/t/n.yaml")),
    type=st.sampled_from(["positive", "negative", "adversarial", "edge"]), description=text,
    messages=st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                             "content": text}), max_size=2).map(tuple),
    context=st.none(), params=st.just({}), iterations=st.just(1), expect=st.just(()),
    judge=st.just(()), tags=st.lists(names, max_size=2).map(tuple),
    review=st.just({}) | st.fixed_dictionaries({"reviewer": names, "reviewed_at": text}))
usages = st.builds(Usage, st.integers(0, 999), st.integers(0, 999))
calls = st.builds(
    CallRecord, key=st.text("0123456789abcdef", min_size=64, max_size=64), cache_hit=st.booleans(),
    latency_ms=millis, entry=names, absent_reason=text,
    purpose=st.sampled_from(["", "judge:relevance", "rubric:polite"]),
    source=st.sampled_from(["cache", "journal", "provider", "batch"]), usage=usages,
    obtained=st.sampled_from(["cache", "paid", "scripted", "journal"]),
    attempts=st.integers(0, 5), retries=st.integers(0, 5), provenance=st.none() | json_object,
    failed=st.booleans())
responses = st.builds(ChatResponse, content=st.none() | text,
                      tool_calls=st.lists(st.builds(ToolCall, names, json_object), max_size=2).map(tuple),
                      finish_reason=st.sampled_from(["stop", "length", "tool_calls"]), usage=usages,
                      model=st.none() | names)
verdicts = st.builds(Verdict, text, st.sampled_from(["pass", "reject", "not_evaluated"]), text,
                     st.sampled_from(["", "agent", "tenant", "scenario"]), st.booleans())
judges = st.builds(JudgeScore, names, st.none() | st.integers(1, 5),
                   st.sampled_from(["poor", "average", "good", "inconclusive", "not_evaluated"]),
                   text, names, names, text, st.sampled_from(["", "scripted", "provider"]))
rubric = st.builds(RubricResult, names, text,
                   st.sampled_from(["pass", "fail", "inconclusive", "not_evaluated"]), text, names,
                   names, text, st.sampled_from(["", "scripted", "provider"]))
counterexamples = st.builds(CounterexampleResult, names, text,
                            st.lists(text, max_size=2).map(tuple), st.lists(text, max_size=2).map(tuple))
#: Every status, failed ones (rejected, missed, error, toothless...) as often as passed.
statuses = st.sampled_from(["passed", "rejected", "missed", "expired", "corrupt", "error",
                            "unchecked", "toothless"])


def tuples(strategy: st.SearchStrategy[Any], size: int = 3) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(strategy, max_size=size).map(tuple)


results = st.builds(
    IterationResult, scenario=scenarios, iteration=st.integers(0, 20), status=statuses,
    verdicts=tuples(verdicts), message=text, calls=tuples(calls), response=st.none() | responses,
    request_digest=st.text("0123456789abcdef", max_size=16), judges=tuples(judges),
    rubric=tuples(rubric), answer_source=st.sampled_from(["", "scripted", "provider"]),
    expected_decision=json_value, actual_decision=json_value,
    metric_samples=st.dictionaries(names, st.none() | st.booleans(), max_size=3).map(
        lambda d: tuple(d.items())),
    environment=st.just({}) | st.fixed_dictionaries({"provider": names, "model": names}),
    transcript=tuples(st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                             "content": text}), 2),
    duration_ms=millis, counterexamples=tuples(counterexamples, 2),
    mutants=st.none() | json_object)


def test_every_field_of_the_result_type_has_its_one_entry_in_the_record_table() -> None:
    """A field added to IterationResult without an entry would be neither written nor read
    (and the strategy below would leave it at its default): this is where it shows."""
    identity = {"scenario", "iteration", "status", "message"}
    assert {f.name for f in fields(IterationResult)} == identity | set(_FIELDS)
    assert set(SUMMARY_FIELDS) <= set(_FIELDS) and set(SLIM_FIELDS) <= set(SUMMARY_FIELDS)


def through_json(record: dict[str, Any]) -> dict[str, Any]:
    """The record as a file or an xdist report carries it: serialised bytes, parsed back."""
    parsed: dict[str, Any] = json.loads(json.dumps(record, ensure_ascii=False))
    return parsed


@settings(max_examples=300, deadline=None)
@given(results)
def test_every_result_round_trips_through_its_record(result: IterationResult) -> None:
    assert IterationResult.from_json(through_json(result.to_json()), result.scenario) == result


@settings(max_examples=150, deadline=None)
@given(results)
def test_a_record_read_without_the_dataset_writes_back_the_same_record(result: IterationResult) -> None:
    """A report of a past run has no dataset: the scenario it rebuilds from the record gives
    the same record again (the input, the review, the test id included)."""
    record = through_json(result.to_json())
    again = IterationResult.from_json(record)
    assert again.scenario == scenario_of(record)
    assert through_json(again.to_json()) == record


@settings(max_examples=150, deadline=None)
@given(results)
def test_the_summary_is_the_whole_record_of_a_failure_and_the_summary_fields_of_a_pass(
        result: IterationResult) -> None:
    shipped = IterationResult.from_json(through_json(result.to_json("summary")), result.scenario)
    if result.failed:
        assert shipped == result
        return
    kept = {f.name: getattr(result, f.name) for f in fields(IterationResult)
            if f.name in (*SUMMARY_FIELDS, "scenario", "iteration", "status", "message")}
    assert shipped == IterationResult(**kept)


@settings(max_examples=150, deadline=None)
@given(results)
def test_slim_keeps_the_slim_fields_of_a_pass_and_a_failure_whole(result: IterationResult) -> None:
    slim = result.slim()
    if result.failed or (result.response is None and not result.transcript and not result.calls):
        assert slim is result
        return
    for f in fields(IterationResult):
        expected = getattr(result, f.name) if f.name in (*SLIM_FIELDS, "scenario", "iteration",
                                                         "status") else f.default
        if f.name == "environment":
            expected = {}
        assert getattr(slim, f.name) == expected, f.name


SCENARIO = Scenario("helper", "acme", "wrong", Path("eval-datasets/helper/acme/wrong.yaml"),
                    "positive", "Answers no.", ({"role": "user", "content": "Yes?"},), None, {}, 1,
                    (), ())


def test_the_controller_keeps_every_field_of_a_failed_iteration() -> None:
    """What the worker ships of a failed iteration is what the controller rebuilds. Before one
    record this failed: ``summary_record_of`` shipped ``record_of``, which had no
    ``answer_source``, so ``result_from_record`` read it as unknown (``'' != 'scripted'``)."""
    failed = IterationResult(
        SCENARIO, 0, "rejected", (Verdict("json_path answer == 'yes'", "reject", "found 'no'"),),
        "found 'no'", (CallRecord("k" * 64, True, 0.5, "cache/helper/acme/wrong/0/kkkk"),),
        ChatResponse('{"answer": "no"}'), "abcd",
        (JudgeScore("relevance", 4, "good", "ok", "openai", "gpt-judge-1", "", "scripted"),),
        answer_source="scripted", environment={"provider": "openai", "model": "gpt-test-1"},
        transcript=({"role": "user", "content": "Yes?"},), duration_ms=1.5)
    assert IterationResult.from_json(through_json(failed.to_json("summary")), SCENARIO) == failed


@pytest.fixture
def evals(pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]) -> Project:
    """A recorded project in pytester's folder: one scenario passes, one is rejected, both
    answered by scripts."""
    (pytester.path / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    project = Project(pytester.path, capsys)
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/wrong", {"answer": "no"})
    assert project.record().code == 1
    return project


def _provenance(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("provenance:"))


def test_the_pytest_summary_reports_a_failed_iteration_as_harness_run_does(
        pytester: pytest.Pytester, evals: Project) -> None:
    """The pytest front end's summary is rebuilt from what each item ships (serial, or on the
    xdist controller): it names the source of a rejected scripted answer as ``harness run``
    does. Before one record it read that source as unknown (``1 scripted, 1 unknown``)."""
    cli = evals.run("run")
    serial = pytester.runpytest_subprocess("--evals", *NO_NOISE)
    parallel = pytester.runpytest_subprocess("--evals", "-n", "2", *NO_NOISE)
    serial.assert_outcomes(passed=1, failed=1)
    parallel.assert_outcomes(passed=1, failed=1)
    assert _provenance(cli.out).startswith("provenance: agent answers: 2 scripted")
    assert _provenance(serial.stdout.str()) == _provenance(parallel.stdout.str()) == _provenance(cli.out)


@settings(max_examples=150, deadline=None)
@given(results)
def test_a_shipped_summary_projects_to_itself(result: IterationResult) -> None:
    """The ``--jobs`` parent folds a job's summary record as it came (no second projection):
    that is sound only because the result read from it projects back to the same record."""
    shipped = through_json(result.to_json("summary"))
    again = IterationResult.from_json(shipped, result.scenario)
    assert through_json(again.to_json("summary")) == shipped
