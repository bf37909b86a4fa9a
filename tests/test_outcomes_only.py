"""Judging without wording reasons (``reasons.outcomes_only``), as counterexamples are judged.

The committed examples are the corpus: every counterexample and every mutated
answer of their scenarios must get the same outcome and the same assertion
labels with and without reasons, while a real answer's reasons stay worded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.assertions import evaluate
from harness.assertions.answer import answer_verdicts
from harness.assertions.counterexamples import output_of
from harness.assertions.reasons import UNSHOWN, outcomes_only, show
from harness.core.entities import AgentOutput, ChatResponse
from harness.loading.config import load_config
from harness.loading.datasets import Dataset, load_dataset

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def examples() -> Dataset:
    return load_dataset(load_config(REPO))


def test_every_counterexample_of_the_examples_gets_the_same_outcomes(examples: Dataset) -> None:
    compared = rejects = 0
    for scenario in examples.scenarios:
        agent = examples.agents[scenario.agent]
        for index, item in enumerate(scenario.counterexamples):
            output = output_of(agent, item, f"{scenario.id} #{index}")
            worded = answer_verdicts(agent, scenario, output)
            with outcomes_only():
                quiet = answer_verdicts(agent, scenario, output)
            assert [(v.assertion, v.outcome, v.crashed, v.origin) for v in quiet] == [
                (v.assertion, v.outcome, v.crashed, v.origin) for v in worded], scenario.id
            compared += len(worded)
            rejects += sum(v.outcome == "reject" for v in worded)
    assert compared > 2000 and rejects > 300  # the corpus is the examples, not a sample


def test_reasons_are_worded_again_outside_and_labels_never_change() -> None:
    item = {"not_contains": {"any": ["internal_id", "debug trace"]}}
    output = AgentOutput(ChatResponse("your internal_id is 42"), "your internal_id is 42", None)
    (worded,) = evaluate([item], output, output_kind="text", output_schema=None)
    with outcomes_only():
        assert show({"a": 1}) == UNSHOWN
        (quiet,) = evaluate([item], output, output_kind="text", output_schema=None)
    (again,) = evaluate([item], output, output_kind="text", output_schema=None)
    assert quiet.outcome == worded.outcome == "reject"
    assert quiet.assertion == worded.assertion == "not_contains 'internal_id', 'debug trace'"
    assert "'internal_id'" in worded.reason and UNSHOWN in quiet.reason
    assert again == worded


def test_an_invalid_output_rejects_against_its_schema_without_wording(examples: Dataset) -> None:
    schema = {"type": "object", "required": ["answer"],
              "properties": {"answer": {"type": "string", "minLength": 3}}}
    item = {"json_schema": schema}
    for doc, outcome in (({"answer": "yes"}, "pass"), ({"answer": 3}, "reject"), ({}, "reject")):
        output = AgentOutput(ChatResponse(str(doc)), str(doc), doc)
        (worded,) = evaluate([item], output, output_kind="json", output_schema=None)
        with outcomes_only():
            (quiet,) = evaluate([item], output, output_kind="json", output_schema=None)
        assert worded.outcome == quiet.outcome == outcome
