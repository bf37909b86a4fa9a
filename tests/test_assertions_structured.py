"""The structured kinds: json_path, json_schema and the tool assertions.

``json_schema: true`` on an agent without an output schema rejects.
"""

from __future__ import annotations

from assertion_support import (
    JSON,
    SCHEMA,
    broken_json,
    json_output,
    not_evaluated,
    passes,
    rejects,
    text_output,
)

from harness.core.entities import AgentOutput, ChatResponse, ToolCall

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


