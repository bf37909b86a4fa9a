"""The text kinds: equals, contains / not_contains, regex, max_chars, with ``path`` and ``tool``.

* A text assertion with ``path`` is ``not_evaluated`` on a text agent (like
  the JSON kinds), rejects on a json agent whose output does not parse, and
  rejects when the path selects nothing or selects a non-string (the reason
  shows what was found; ``3`` or ``null`` is never silently stringified).
* A wildcard path must pass for every string it selects.
"""

from __future__ import annotations

from typing import Any

import pytest
from assertion_support import (
    JSON,
    broken_json,
    json_output,
    not_evaluated,
    passes,
    rejects,
    text_output,
)
from verdicts import outcomes, rejected

from harness.assertions import evaluate
from harness.core.entities import AgentOutput, ChatResponse, ToolCall

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
