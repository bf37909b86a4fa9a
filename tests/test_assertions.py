"""The hard-assertion engine: labels, order, crashes and malformed items.

Decisions pinned here (see the module docstrings of ``harness.assertions``);
each kind's pass, reject and not_evaluated cases are in ``test_assertions_text.py``
and ``test_assertions_structured.py``:

* Every item runs, in order, after a reject.
* A malformed item or a crashing check rejects; nothing raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import pytest
from assertion_support import DOC, JSON, SCHEMA, json_output, run, text_output
from verdicts import crashed, outcomes

from harness.assertions import ASSERTION_KINDS, REGISTRY, evaluate, overall, terms
from harness.core.entities import Verdict

# --- labels --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "label"),
    [
        ({"json_path": {"path": "decision", "equals": "ask"}}, "json_path decision == 'ask'"),
        ({"json_path": {"path": "questions"}}, "json_path questions exists"),
        ({"json_path": {"path": "q", "exists": False}}, "json_path q does not exist"),
        ({"json_path": {"path": "q", "in": ["a", "b"], "max_items": 3}},
         "json_path q in ['a', 'b'], max_items 3"),
        ({"not_contains": "password"}, "not_contains 'password'"),
        ({"not_contains": {"any": ["a", "b"]}}, "not_contains 'a', 'b'"),
        ({"contains": {"any": ["a", "b"], "path": "x"}}, "contains any of 'a', 'b' at x"),
        ({"contains": {"all": ["a", "b"]}}, "contains all of 'a', 'b'"),
        ({"equals": "ask"}, "equals 'ask'"),
        ({"regex": {"pattern": "^a", "flags": ["i", "m"]}}, "regex /^a/im"),
        ({"max_chars": 500}, "max_chars 500"),
        ({"json_schema": True}, "json_schema (agent output schema)"),
        ({"json_schema": {"type": "object"}}, "json_schema (inline)"),
        ({"tool_called": "file_draft"}, "tool_called file_draft"),
        ({"tool_called": {"name": "file_draft", "times": 2}}, "tool_called file_draft times=2"),
        ({"tool_not_called": "send_message"}, "tool_not_called send_message"),
        ({"tool_args": {"name": "file_draft", "args": {"body": "x"}}},
         "tool_args file_draft {'body': 'x'}"),
        ({"name": "asks one question", "contains": "?"}, "asks one question"),
    ],
)
def test_labels(item: Mapping[str, Any], label: str) -> None:
    assert run(item, JSON, "json").assertion == label


def test_long_values_are_cut_in_labels() -> None:
    label = run({"contains": "x" * 200}, text_output("x")).assertion
    assert len(label) < 60 and label.endswith("…'")


# --- the engine ----------------------------------------------------------------------------------


def test_every_assertion_runs_after_a_reject_in_order() -> None:
    expect: list[dict[str, Any]] = [
        {"contains": "missing"},
        {"tool_called": "file_draft"},
        {"json_path": {"path": "decision", "equals": "ask"}},
        {"regex": "(broken"},
        {"not_contains": "decision"},
        {"json_schema": True},
    ]
    verdicts = evaluate(expect, json_output(DOC), output_kind="json", output_schema=SCHEMA)
    assert outcomes(verdicts) == ["reject", "reject", "pass", "reject", "reject", "pass"]
    assert verdicts[2].assertion == "json_path decision == 'ask'"
    assert overall(verdicts) == "reject"


def test_a_crashing_assertion_rejects_with_the_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(value: str, form: Any, fold: bool) -> str:
        raise RuntimeError("normaliser exploded")

    monkeypatch.setattr(terms, "normalised", boom)
    expect = [{"equals": "x"}, {"tool_not_called": "x"}]
    first, second = evaluate(expect, text_output("x"), output_kind="text", output_schema=None)
    assert first == Verdict("equals 'x'", "reject",
                            "assertion crashed: RuntimeError: normaliser exploded", crashed=True)
    assert crashed(first)
    assert second.outcome == "pass"


@pytest.mark.parametrize(
    ("item", "label", "reason"),
    [
        ({"contain": "x"}, "invalid assertion",
         "invalid assertion: unknown key 'contain' (did you mean 'contains'?)"),
        ({"contains": "x", "equals": "y"}, "contains + equals",
         "invalid assertion: one assertion kind per item, found contains, equals: "
         "split them into items"),
        ({"contains": {"value": "x", "ignorecase": True}}, "contains",
         "invalid assertion: contains: Additional properties are not allowed "
         "('ignorecase' was unexpected)"),
        ({"name": "typo", "max_chars": "500"}, "typo",
         "invalid assertion: max_chars: '500' is not of type 'integer', 'object'"),
        ("contains", "invalid assertion",
         "invalid assertion: an expect item must be a mapping with one assertion kind, "
         "found 'contains'"),
        ({}, "invalid assertion", "invalid assertion: no assertion kind (expected one of: "
         + ", ".join(sorted(ASSERTION_KINDS)) + ")"),
    ],
)
def test_malformed_items_reject_without_raising(item: Any, label: str, reason: str) -> None:
    verdict = run(item, text_output("x"))
    assert verdict == Verdict(label, "reject", reason)


def test_empty_expect_gives_no_verdicts() -> None:
    verdicts = evaluate([], text_output("x"), output_kind="text", output_schema=None)
    assert verdicts == []
    assert overall(verdicts) == "not_evaluated"


def test_overall() -> None:
    def verdict(outcome: Literal["pass", "reject", "not_evaluated"]) -> Verdict:
        return Verdict("x", outcome, "")

    assert overall([verdict("pass"), verdict("reject"), verdict("not_evaluated")]) == "reject"
    assert overall([verdict("not_evaluated"), verdict("reject")]) == "reject"
    assert overall([verdict("pass"), verdict("not_evaluated")]) == "pass"
    assert overall([verdict("not_evaluated"), verdict("not_evaluated")]) == "not_evaluated"
    assert overall(iter([verdict("pass")])) == "pass"


def test_registry_lists_every_kind_of_the_spec() -> None:
    assert set(REGISTRY) == ASSERTION_KINDS == {
        "equals", "contains", "not_contains", "regex", "not_regex", "max_chars",
        "json_path", "json_schema", "tool_called", "tool_not_called", "tool_args",
        "words", "sentences", "questions", "language",
    }
