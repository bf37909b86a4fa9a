"""The hard-assertion engine: every kind's pass, reject and not_evaluated cases.

Decisions pinned here (see the module docstrings of ``harness.assertions``):

* A text assertion with ``path`` is ``not_evaluated`` on a text agent (like
  the JSON kinds), rejects on a json agent whose output does not parse, and
  rejects when the path selects nothing or selects a non-string (the reason
  shows what was found; ``3`` or ``null`` is never silently stringified).
* A wildcard path must pass for every string it selects.
* ``json_schema: true`` on an agent without an output schema rejects.
* A malformed item or a crashing check rejects; nothing raises.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import pytest
from verdicts import crashed, outcomes, rejected

from harness.assertions import ASSERTION_KINDS, REGISTRY, evaluate, overall, terms
from harness.core.entities import AgentOutput, ChatResponse, ToolCall, Verdict

Kind = Literal["text", "json"]

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["decision"],
    "properties": {"decision": {"enum": ["ask", "answer"]}, "questions": {"type": "array"}},
}


def text_output(content: str, *calls: ToolCall) -> AgentOutput:
    return AgentOutput(ChatResponse(content, tuple(calls)), content, None)


def json_output(doc: Any, *calls: ToolCall) -> AgentOutput:
    raw = json.dumps(doc, ensure_ascii=False)
    return AgentOutput(ChatResponse(raw, tuple(calls)), raw, doc)


def broken_json(content: str = "Sure! {decision: ask") -> AgentOutput:
    return AgentOutput(ChatResponse(content), content, None,
                       parse_error="Expecting value: line 1 column 1 (char 0)")


def run(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
        schema: Mapping[str, Any] | None = None) -> Verdict:
    (verdict,) = evaluate([item], output, output_kind=kind, output_schema=schema)
    return verdict


def passes(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
           schema: Mapping[str, Any] | None = None) -> str:
    verdict = run(item, output, kind, schema)
    assert verdict.outcome == "pass", verdict
    return verdict.reason


def rejects(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text",
            schema: Mapping[str, Any] | None = None) -> str:
    """A real reject: fails when the check raised (tests/verdicts.py)."""
    return rejected(run(item, output, kind, schema))


def not_evaluated(item: Mapping[str, Any], output: AgentOutput, kind: Kind = "text") -> str:
    verdict = run(item, output, kind)
    assert verdict.outcome == "not_evaluated", verdict
    return verdict.reason


DOC: dict[str, Any] = {
    "decision": "ask",
    "rationale": "rb_004 the goal changes the routine materially",
    "answer": "  Ｏｋａｙ ",
    "count": 3,
    "nothing": None,
    "questions": [
        {"text": "What is your goal?", "options": ["strength", "endurance"]},
        {"text": "How many days?", "options": ["3", "5", "7"]},
    ],
    "follow-up": {"needed": True},
}
JSON = json_output(DOC)


# --- equals ----------------------------------------------------------------------


def test_equals_passes_on_trimmed_text() -> None:
    passes({"equals": "Hello there."}, text_output("  Hello there.\n"))
    passes({"equals": {"value": " Hello there. "}}, text_output("Hello there."))


def test_equals_rejects_saying_expected_and_found() -> None:
    reason = rejects({"equals": "Hello"}, text_output("Goodbye"))
    assert reason == "expected 'Hello', found 'Goodbye'"


def test_equals_is_case_sensitive_unless_ignore_case() -> None:
    rejects({"equals": "hello"}, text_output("HELLO"))
    passes({"equals": {"value": "hello", "ignore_case": True}}, text_output("HELLO"))
    passes({"equals": {"value": "strasse", "ignore_case": True}}, text_output("Straße"))


@pytest.mark.parametrize(
    ("value", "found"),
    [
        ("HELLO", "ＨＥＬＬＯ"),  # full-width letters
        ("file", "ﬁle"),  # ligature
        ("café", "cafe\u0301"),  # composed vs decomposed
        ("cafe\u0301", "café"),
    ],
)
def test_equals_normalises_nfkc_by_default(value: str, found: str) -> None:
    passes({"equals": value}, text_output(found))
    rejects({"equals": {"value": value, "normalize": "none"}}, text_output(found))
    rejects({"equals": {"value": value, "normalize": False}}, text_output(found))


def test_equals_nfc_keeps_compatibility_characters_apart() -> None:
    passes({"equals": {"value": "café", "normalize": "NFC"}}, text_output("cafe\u0301"))
    rejects({"equals": {"value": "file", "normalize": "NFC"}}, text_output("ﬁle"))


def test_equals_full_width_and_case_together() -> None:
    passes({"equals": {"value": "okay", "path": "answer", "ignore_case": True}}, JSON, "json")


# --- text assertions with path ------------------------------------------------------------


def test_path_selects_a_string_of_the_json_output() -> None:
    reason = passes({"equals": {"value": "ask", "path": "decision"}}, JSON, "json")
    assert reason == "decision: equals 'ask'"
    reason = rejects({"equals": {"value": "answer", "path": "decision"}}, JSON, "json")
    assert reason == "decision: expected 'answer', found 'ask'"


def test_text_assertion_without_path_reads_the_raw_json_text() -> None:
    passes({"contains": '"decision": "ask"'}, JSON, "json")


@pytest.mark.parametrize("kind", ["equals", "contains", "not_contains", "max_chars"])
def test_path_on_a_text_agent_is_not_evaluated(kind: str) -> None:
    value: Any = 5 if kind == "max_chars" else "x"
    reason = not_evaluated({kind: {"value": value, "path": "decision"}}, text_output("x"))
    assert "needs output: json" in reason


def test_regex_path_on_a_text_agent_is_not_evaluated() -> None:
    not_evaluated({"regex": {"pattern": "x", "path": "decision"}}, text_output("x"))


def test_path_on_unparsable_json_rejects() -> None:
    reason = rejects({"contains": {"value": "ask", "path": "decision"}}, broken_json(), "json")
    assert "not valid JSON" in reason and "Expecting value" in reason


@pytest.mark.parametrize(
    ("path", "found"),
    [("count", "3"), ("nothing", "null"), ("questions[0].options", "['strength', 'endurance']"),
     ("follow-up", "{'needed': true}")],
)
def test_path_selecting_a_non_string_rejects_showing_the_value(path: str, found: str) -> None:
    reason = rejects({"contains": {"value": "3", "path": path}}, JSON, "json")
    assert reason == f"{path} is not a string: found {found}"


def test_path_selecting_nothing_rejects() -> None:
    reason = rejects({"not_contains": {"value": "x", "path": "missing"}}, JSON, "json")
    assert reason.startswith("missing selects nothing in {")


def test_wildcard_path_must_pass_for_every_string() -> None:
    reason = passes({"contains": {"value": "?", "path": "questions[*].text"}}, JSON, "json")
    assert reason == "all 2 strings at questions[*].text pass"
    reason = rejects({"contains": {"value": "goal", "path": "questions[*].text"}}, JSON, "json")
    assert reason == "questions[1].text: 'goal' not found in 'How many days?'"


# --- contains / not_contains ----------------------------------------------------------------


def test_contains_pass_and_reject() -> None:
    assert passes({"contains": "routine"}, text_output("Here is a routine.")) == "found 'routine'"
    reason = rejects({"contains": "routine"}, text_output("Here is a plan."))
    assert reason == "'routine' not found in 'Here is a plan.'"


def test_contains_case_and_normalisation() -> None:
    rejects({"contains": "ROUTINE"}, text_output("a routine"))
    passes({"contains": {"value": "ROUTINE", "ignore_case": True}}, text_output("a routine"))
    passes({"contains": "PROFILE"}, text_output("your ＰＲＯＦＩＬＥ page"))
    passes({"contains": "profile"}, text_output("your proﬁle page"))
    passes({"contains": "café"}, text_output("un cafe\u0301 noir"))
    rejects({"contains": {"value": "profile", "normalize": "none"}}, text_output("proﬁle"))


def test_contains_any() -> None:
    item = {"contains": {"any": ["goal", "objective"]}}
    assert passes(item, text_output("What is your objective?")) == "found 'objective'"
    reason = rejects(item, text_output("How old are you?"))
    assert reason == "none of ['goal', 'objective'] found in 'How old are you?'"


def test_contains_all() -> None:
    item = {"contains": {"all": ["goal", "days"], "ignore_case": True}}
    passes(item, text_output("Your GOAL and your Days?"))
    reason = rejects(item, text_output("Your goal?"))
    assert reason == "missing 'days' in 'Your goal?'"


def test_reason_truncates_long_found_text() -> None:
    reason = rejects({"contains": "needle"}, text_output("hay " * 500))
    assert len(reason) < 180
    assert reason.endswith("…'")


def test_not_contains_pass_and_reject() -> None:
    assert passes({"not_contains": "password"}, text_output("All good.")) == "'password' not found"
    reason = rejects({"not_contains": "password"}, text_output("Your password is hunter2."))
    assert reason == "found 'password' in 'Your password is hunter2.'"


def test_not_contains_snippet_is_cut_around_the_match() -> None:
    reason = rejects({"not_contains": "secret"}, text_output("a" * 200 + " secret " + "b" * 200))
    assert reason.startswith("found 'secret' in '…") and reason.endswith("…'")
    assert len(reason) < 160


def test_not_contains_case_and_normalisation() -> None:
    passes({"not_contains": "password"}, text_output("PASSWORD"))
    item = {"not_contains": {"value": "password", "ignore_case": True}}
    rejects(item, text_output("ＰＡＳＳＷＯＲＤ"))
    rejects({"not_contains": "fire"}, text_output("ﬁre drill"))


@pytest.mark.parametrize("mode", ["any", "all"])
def test_not_contains_rejects_on_any_of_the_values(mode: str) -> None:
    item = {"not_contains": {mode: ["password", "token"]}}
    passes(item, text_output("nothing to see"))
    assert rejects(item, text_output("the token is x")).startswith("found 'token'")


# --- regex -----------------------------------------------------------------------------


def test_regex_pass_and_reject() -> None:
    assert passes({"regex": r"\d{3}-\d{4}"}, text_output("call 555-1234")) == "matched '555-1234'"
    reason = rejects({"regex": r"^\d+$"}, text_output("twelve"))
    assert reason == r"no match for /^\d+$/ in 'twelve'"


def test_regex_flags() -> None:
    rejects({"regex": "^hello"}, text_output("HELLO"))
    passes({"regex": {"pattern": "^hello", "flags": ["i"]}}, text_output("HELLO"))
    passes({"regex": "(?i)^hello"}, text_output("HELLO"))
    rejects({"regex": "^second"}, text_output("first\nsecond"))
    passes({"regex": {"pattern": "^second", "flags": ["m"]}}, text_output("first\nsecond"))
    rejects({"regex": "first.second"}, text_output("first\nsecond"))
    passes({"regex": {"pattern": "first.second", "flags": ["s"]}}, text_output("first\nsecond"))
    passes({"regex": {"pattern": "^SECOND$", "flags": ["i", "m", "s"]}}, text_output("a\nsecond"))


def test_regex_with_path() -> None:
    passes({"regex": {"pattern": r"^rb_\d{3}\b", "path": "rationale"}}, JSON, "json")
    rejects({"regex": {"pattern": r"^\d", "path": "questions[*].options[*]"}},
            json_output({"questions": [{"options": ["1", "x"]}]}), "json")


def test_not_regex_passes_only_when_nothing_matches_in_any_selected_text() -> None:
    item = {"not_regex": {"pattern": r"[?？]|\b(which|should we)\b", "flags": ["i"],
                          "path": "summary"}}
    assert passes(item, json_output({"summary": "Declared one open question."}), "json") == (
        "summary: no match for /[?？]|\\b(which|should we)\\b/")
    reason = rejects(item, json_output({"summary": "Done. Should we keep the fee？ "}), "json")
    assert reason == ("summary: /[?？]|\\b(which|should we)\\b/ matched 'Should we' in "
                      "'Done. Should we keep the fee？ '")
    options = {"not_regex": {"pattern": r"\(recommended\)", "path": "options[*]"}}
    passes(options, json_output({"options": ["Price", "Comfort"]}), "json")
    rejects(options, json_output({"options": ["Price", "Comfort (recommended)"]}), "json")
    assert rejects({"not_regex": "(unclosed"}, text_output("x")).startswith(
        "invalid assertion: invalid regex")


def test_invalid_regex_rejects_as_invalid_assertion() -> None:
    reason = rejects({"regex": "(unclosed"}, text_output("x"))
    assert reason.startswith("invalid assertion: invalid regex '(unclosed'")


# --- max_chars -----------------------------------------------------------------------------


def test_max_chars() -> None:
    assert passes({"max_chars": 5}, text_output("12345")) == "5 characters <= 5"
    reason = rejects({"max_chars": 4}, text_output("12345"))
    assert reason == "expected at most 4 characters, found 5: '12345'"
    passes({"max_chars": {"value": 0}}, text_output(""))


def test_max_chars_with_path() -> None:
    passes({"max_chars": {"value": 20, "path": "questions[*].text"}}, JSON, "json")
    reason = rejects({"max_chars": {"value": 15, "path": "questions[*].text"}}, JSON, "json")
    assert reason.startswith("questions[0].text: expected at most 15 characters, found 18")


# --- json_path --------------------------------------------------------------------------------


def test_json_path_equals() -> None:
    assert passes({"json_path": {"path": "decision", "equals": "ask"}}, JSON, "json") == (
        "decision = 'ask'")
    reason = rejects({"json_path": {"path": "decision", "equals": "answer"}}, JSON, "json")
    assert reason == "decision: expected 'answer', found 'ask'"


def test_json_path_equals_structured_values() -> None:
    passes({"json_path": {"path": "follow-up", "equals": {"needed": True}}}, JSON, "json")
    passes({"json_path": {"path": "questions[1].options", "equals": ["3", "5", "7"]}}, JSON, "json")
    passes({"json_path": {"path": "count", "equals": 3.0}}, JSON, "json")


def test_json_path_true_is_not_one() -> None:
    rejects({"json_path": {"path": "flag", "equals": True}}, json_output({"flag": 1}), "json")
    rejects({"json_path": {"path": "flag", "equals": 0}}, json_output({"flag": False}), "json")
    passes({"json_path": {"path": "flag", "equals": True}}, json_output({"flag": True}), "json")


def test_json_path_in() -> None:
    passes({"json_path": {"path": "decision", "in": ["ask", "answer"]}}, JSON, "json")
    reason = rejects({"json_path": {"path": "decision", "in": ["answer", "refuse"]}}, JSON, "json")
    assert reason == "decision: expected one of ['answer', 'refuse'], found 'ask'"


def test_json_path_exists() -> None:
    passes({"json_path": {"path": "questions[0]", "exists": True}}, JSON, "json")
    passes({"json_path": {"path": "questions[0]"}}, JSON, "json")  # exists: true is implied
    passes({"json_path": {"path": "nothing"}}, JSON, "json")  # null is present
    assert rejects({"json_path": {"path": "missing"}}, JSON, "json").startswith(
        "missing selects nothing")
    passes({"json_path": {"path": "missing", "exists": False}}, JSON, "json")
    reason = rejects({"json_path": {"path": "decision", "exists": False}}, JSON, "json")
    assert reason == "expected decision not to exist, found decision = 'ask'"


def test_json_path_selecting_nothing_fails_equals_and_in() -> None:
    rejects({"json_path": {"path": "missing", "equals": None}}, JSON, "json")
    rejects({"json_path": {"path": "missing", "in": ["ask"]}}, JSON, "json")
    rejects({"json_path": {"path": "questions[*].missing", "min_items": 0}}, JSON, "json")


def test_json_path_items() -> None:
    passes({"json_path": {"path": "questions", "min_items": 1, "max_items": 2}}, JSON, "json")
    passes({"json_path": {"path": "questions[*].options", "min_items": 2}}, JSON, "json")
    reason = rejects({"json_path": {"path": "questions[*].options", "max_items": 2}}, JSON, "json")
    assert reason == "questions[1].options: expected at most 2 items, found 3"
    reason = rejects({"json_path": {"path": "questions", "min_items": 3}}, JSON, "json")
    assert reason == "questions: expected at least 3 items, found 2"
    reason = rejects({"json_path": {"path": "decision", "min_items": 1}}, JSON, "json")
    assert reason == "decision: expected a list for min_items/max_items, found 'ask'"


def test_json_path_wildcard_checks_every_value() -> None:
    item = {"json_path": {"path": "questions[*].options[*]", "in": ["strength", "endurance", "3",
                                                                    "5", "7"]}}
    assert passes(item, JSON, "json") == "all 5 values at questions[*].options[*] hold"
    item = {"json_path": {"path": "questions[*].options[*]", "in": ["3", "5", "7"]}}
    reason = rejects(item, JSON, "json")
    assert reason.startswith("questions[0].options[0]: expected one of")
    assert "; questions[0].options[1]:" in reason


def test_json_path_on_text_agent_is_not_evaluated() -> None:
    reason = not_evaluated({"json_path": {"path": "decision", "equals": "ask"}}, text_output("ask"))
    assert reason == "json_path needs output: json (this agent's output is text)"


def test_json_path_on_unparsable_output_rejects() -> None:
    reason = rejects({"json_path": {"path": "decision", "exists": False}}, broken_json(), "json")
    assert reason == "output is not valid JSON: Expecting value: line 1 column 1 (char 0)"


def test_json_path_on_root_and_dashed_keys() -> None:
    passes({"json_path": {"path": "$.follow-up.needed", "equals": True}}, JSON, "json")
    passes({"json_path": {"path": "$", "min_items": 2}}, json_output([1, 2]), "json")


def test_json_path_bad_syntax_is_an_invalid_assertion() -> None:
    reason = rejects({"json_path": {"path": "questions[x]"}}, JSON, "json")
    assert reason.startswith("invalid assertion: bad JSON path 'questions[x]'")


# --- json_schema ----------------------------------------------------------------------------


def test_json_schema_true_uses_the_agents_schema() -> None:
    reason = passes({"json_schema": True}, JSON, "json", SCHEMA)
    assert reason == "output validates against the agent's output schema"
    reason = rejects({"json_schema": True}, json_output({"decision": "maybe"}), "json", SCHEMA)
    assert reason.startswith("output does not match the agent's output schema: $.decision: ")
    assert "'maybe' is not one of ['ask', 'answer']" in reason


def test_json_schema_true_without_agent_schema_rejects() -> None:
    reason = rejects({"json_schema": True}, JSON, "json", None)
    assert reason == "json_schema: true, but the agent declares no output_schema"


def test_json_schema_inline() -> None:
    inline = {"type": "object", "required": ["decision", "questions"]}
    assert passes({"json_schema": inline}, JSON, "json", SCHEMA) == (
        "output validates against the inline schema")
    reason = rejects({"json_schema": {"type": "object", "required": ["x", "y"]}}, JSON, "json")
    assert reason == ("output does not match the inline schema: $: 'x' is a required property; "
                      "$: 'y' is a required property")


def test_json_schema_lists_at_most_three_errors() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    reason = rejects({"json_schema": schema}, json_output([1, 2, 3, 4, 5]), "json")
    assert reason.endswith("(+2 more)")
    assert reason.count("is not of type 'string'") == 3


def test_json_schema_on_text_agent_is_not_evaluated() -> None:
    not_evaluated({"json_schema": True}, text_output("{}"))
    not_evaluated({"json_schema": {"type": "object"}}, text_output("{}"))


def test_json_schema_on_unparsable_output_rejects() -> None:
    reason = rejects({"json_schema": True}, broken_json(), "json", SCHEMA)
    assert reason.startswith("output is not valid JSON")


def test_json_schema_invalid_schemas_reject() -> None:
    reason = rejects({"json_schema": {"type": "nope"}}, JSON, "json")
    assert reason.startswith("invalid assertion: inline json_schema is not a valid JSON Schema")
    reason = rejects({"json_schema": True}, JSON, "json", {"type": 5})
    assert reason.startswith("the agent's output schema is not a valid JSON Schema")


# --- tools -------------------------------------------------------------------------------------

DRAFT = ToolCall("file_draft", {"body": "Hi", "meta": {"to": "ops", "tags": ["a", "b"], "n": 1}})
DRAFT2 = ToolCall("file_draft", {"body": "Bye", "meta": {"to": "sales"}})
LOOKUP = ToolCall("lookup_order", {"order": "A-1"})


def test_tool_called() -> None:
    assert passes({"tool_called": "file_draft"}, text_output("ok", DRAFT)) == (
        "file_draft called once")
    reason = rejects({"tool_called": "file_draft"}, text_output("ok", LOOKUP))
    assert reason == "file_draft was not called (found: lookup_order)"
    reason = rejects({"tool_called": "file_draft"}, text_output("ok"))
    assert reason == "file_draft was not called (found: no tool calls)"


def test_tool_called_times() -> None:
    output = text_output("ok", DRAFT, LOOKUP, DRAFT2)
    passes({"tool_called": {"name": "file_draft", "times": 2}}, output)
    passes({"tool_called": {"name": "file_draft"}}, output)
    reason = rejects({"tool_called": {"name": "file_draft", "times": 1}}, output)
    assert reason == "expected file_draft called once, found 2 times"
    passes({"tool_called": {"name": "send_message", "times": 0}}, output)


def test_tool_assertions_ignore_the_output_kind() -> None:
    passes({"tool_called": "file_draft"}, json_output({}, DRAFT), "json")
    passes({"tool_called": "file_draft"}, AgentOutput(ChatResponse(None, (DRAFT,)), "", None,
                                                      parse_error="empty"), "json")


def test_tool_not_called() -> None:
    passes({"tool_not_called": "send_message"}, text_output("ok", DRAFT))
    passes({"tool_not_called": {"name": "send_message"}}, text_output("ok"))
    reason = rejects({"tool_not_called": "file_draft"}, text_output("ok", DRAFT, DRAFT2))
    assert reason.startswith("file_draft was called 2 times, first with {'body': 'Hi'")


def test_tool_args_nested_subset_match() -> None:
    output = text_output("ok", LOOKUP, DRAFT)
    reason = passes({"tool_args": {"name": "file_draft", "args": {"meta": {"to": "ops"}}}}, output)
    assert reason == "call 1 of 1 to file_draft matches"
    passes({"tool_args": {"name": "file_draft", "args": {}}}, output)
    passes({"tool_args": {"name": "file_draft",
                          "args": {"body": "Hi", "meta": {"tags": ["a", "b"], "n": 1.0}}}}, output)


def test_tool_args_mismatch() -> None:
    output = text_output("ok", DRAFT)
    reason = rejects({"tool_args": {"name": "file_draft", "args": {"meta": {"to": "sales"}}}},
                     output)
    assert reason == "no call of file_draft matches: args.meta.to: expected 'sales', found 'ops'"
    reason = rejects({"tool_args": {"name": "file_draft", "args": {"meta": {"cc": "x"}}}}, output)
    assert reason == "no call of file_draft matches: args.meta.cc is missing"
    reason = rejects({"tool_args": {"name": "file_draft", "args": {"body": {"text": "Hi"}}}},
                     output)
    assert reason == "no call of file_draft matches: args.body: expected an object, found 'Hi'"


def test_tool_args_lists_and_scalars_compare_by_equality() -> None:
    output = text_output("ok", DRAFT)
    rejects({"tool_args": {"name": "file_draft", "args": {"meta": {"tags": ["a"]}}}}, output)
    rejects({"tool_args": {"name": "file_draft", "args": {"meta": {"n": True}}}}, output)


def test_tool_args_some_call_must_match() -> None:
    output = text_output("ok", DRAFT, DRAFT2)
    reason = passes({"tool_args": {"name": "file_draft", "args": {"body": "Bye"}}}, output)
    assert reason == "call 2 of 2 to file_draft matches"
    reason = rejects({"tool_args": {"name": "file_draft", "args": {"body": "Yo"}}}, output)
    assert reason == ("no call of file_draft matches: call 1: args.body: expected 'Yo', found 'Hi';"
                      " call 2: args.body: expected 'Yo', found 'Bye'")
    reason = rejects({"tool_args": {"name": "send_message", "args": {}}}, output)
    assert reason == "send_message was not called (found: file_draft, file_draft)"


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


# --- text assertions over tool-call arguments ----------------------------------------------

def _tool_output() -> AgentOutput:
    calls = (ToolCall("file_draft", {"body": "Hello, approval hash 9f3a", "meta": {"note": "ok"}}),
             ToolCall("file_draft", {"body": "Second draft", "meta": {"note": "fine"}}))
    return AgentOutput(ChatResponse("Filed two drafts.", calls), "Filed two drafts.", None)


def test_not_contains_in_tool_arguments_checks_every_string_of_every_call() -> None:
    [verdict] = evaluate([{"not_contains": {"value": "approval hash", "tool": "file_draft"}}],
                         _tool_output(), output_kind="text", output_schema=None)
    assert rejected(verdict).startswith("file_draft#0.body:")
    [clean] = evaluate([{"not_contains": {"value": "receipt", "tool": "file_draft"}}],
                       _tool_output(), output_kind="text", output_schema=None)
    assert clean.outcome == "pass"


def test_max_chars_and_regex_on_a_tool_argument_path() -> None:
    verdicts = evaluate([{"max_chars": {"value": 12, "tool": "file_draft", "path": "body"}},
                         {"regex": {"pattern": "^(Hello|Second)", "tool": "file_draft",
                                    "path": "body"}},
                         {"contains": {"value": "x", "tool": "file_draft", "path": "missing"}}],
                        _tool_output(), output_kind="text", output_schema=None)
    assert outcomes(verdicts) == ["reject", "pass", "not_evaluated"]
    assert "file_draft#0.body" in verdicts[0].reason


def test_text_assertion_on_an_uncalled_tool_is_not_evaluated() -> None:
    [verdict] = evaluate([{"contains": {"value": "x", "tool": "send_message"}}],
                         _tool_output(), output_kind="text", output_schema=None)
    assert verdict.outcome == "not_evaluated" and "send_message was not called" in verdict.reason
