"""The small JSON path of the assertions: parsing, selection and error messages."""

from __future__ import annotations

from typing import Any

import pytest

from harness.assertions.jsonpath import WILDCARD, format_steps, parse, select, select_with_paths

DOC: dict[str, Any] = {
    "decision": "ask",
    "follow-up_questions": ["a", "b"],
    "questions": [
        {"text": "Goal?", "options": ["strength", "endurance"]},
        {"text": "Days?", "options": ["3", "5"]},
    ],
    "meta": {"a.b": 1, "snake_case": {"x": None}},
    "empty": [],
}


@pytest.mark.parametrize(
    ("path", "steps"),
    [
        ("decision", ("decision",)),
        ("$.decision", ("decision",)),
        ("$[0]", (0,)),
        ("questions[0].options", ("questions", 0, "options")),
        ("questions[*].options[*]", ("questions", WILDCARD, "options", WILDCARD)),
        ("questions.*.text", ("questions", WILDCARD, "text")),
        ("follow-up_questions[-1]", ("follow-up_questions", -1)),
        ("meta['a.b']", ("meta", "a.b")),
        ('meta["a.b"]', ("meta", "a.b")),
        ("[0]", (0,)),
        ("questions[ 1 ]", ("questions", 1)),
        ("$", ()),
        ("$.", ()),
    ],
)
def test_parse(path: str, steps: tuple[Any, ...]) -> None:
    assert parse(path) == steps


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("", "empty JSON path"),
        ("   ", "empty JSON path"),
        ("a..b", "position 2: expected a key, found '.'"),
        ("a.", "ends with '.'"),
        (".a", "expected a key, found '.'"),
        ("a[", "unclosed '['"),
        ("a[0", "unclosed '['"),
        ("a[x]", "expected an index, '*' or a quoted key"),
        ("a[1.5]", "expected an index"),
        ("a]", "unexpected ']'"),
        ("a[0]b", "unexpected 'b'"),
        ("a b", "unexpected ' '"),
        ("$a", "expected '.' or '[' after '$'"),
        ("a['b]", "unclosed quoted key"),
    ],
)
def test_parse_rejects_bad_syntax_with_a_clear_message(path: str, message: str) -> None:
    with pytest.raises(ValueError, match="bad JSON path|empty JSON path") as info:
        parse(path)
    assert message in str(info.value)


def test_parse_rejects_a_non_string() -> None:
    with pytest.raises(ValueError, match="must be a string"):
        parse(3)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("decision", ["ask"]),
        ("$.decision", ["ask"]),
        ("$decision", None),  # syntax error, see below
        ("questions[0].text", ["Goal?"]),
        ("questions[*].text", ["Goal?", "Days?"]),
        ("questions[*].options[*]", ["strength", "endurance", "3", "5"]),
        ("questions[-1].text", ["Days?"]),
        ("follow-up_questions", [["a", "b"]]),
        ("follow-up_questions[1]", ["b"]),
        ("meta['a.b']", [1]),
        ("meta.snake_case.x", [None]),
        ("meta[*]", [1, {"x": None}]),
        ("empty[*]", []),
        ("missing", []),
        ("questions[5]", []),
        ("questions[-3]", []),
        ("questions.text", []),  # a key on a list selects nothing
        ("decision[0]", []),  # an index on a string selects nothing
        ("meta[0]", []),  # an index on a mapping selects nothing
        ("$", [DOC]),
    ],
)
def test_select(path: str, expected: list[Any] | None) -> None:
    if expected is None:
        with pytest.raises(ValueError):
            select(DOC, path)
    else:
        assert select(DOC, path) == expected


def test_select_on_a_root_list() -> None:
    assert select([{"a": 1}, {"a": 2}, {"b": 3}], "[*].a") == [1, 2]
    assert select([{"a": 1}], "$[0].a") == [1]


def test_select_with_paths_names_the_concrete_element() -> None:
    found = select_with_paths(DOC, "questions[*].options[-1]")
    assert found == [("questions[0].options[1]", "endurance"), ("questions[1].options[1]", "5")]
    assert select_with_paths(DOC, "meta[*]") == [
        ("meta['a.b']", 1),
        ("meta.snake_case", {"x": None}),
    ]


def test_select_accepts_parsed_steps() -> None:
    assert select(DOC, parse("questions[1].text")) == ["Days?"]


def test_format_steps_round_trips() -> None:
    for path in ["decision", "questions[0].options", "meta['a.b']", "follow-up_questions[1]"]:
        assert format_steps(parse(path)) == path
    assert format_steps(()) == "$"
    assert format_steps(("a", WILDCARD)) == "a[*]"


def test_selections_select_each_path_once_and_answer_as_select_does() -> None:
    """One answer's selections are made once per path and equal select/select_with_paths; a
    Subject refuses the memo of another document, so no verdict can read a stale one."""
    from harness.assertions.jsonpath import Selections, select, select_with_paths
    from harness.assertions.kind import Subject
    from harness.core.entities import AgentOutput, ChatResponse

    doc = {"questions": [{"options": ["a", "b"]}, {"options": ["c"]}], "decision": "ask"}
    memo = Selections(doc)
    first = memo.with_paths("questions[*].options[*]")
    assert first == select_with_paths(doc, "questions[*].options[*]")
    assert memo.with_paths("questions[*].options[*]") is first  # made once
    assert memo.values("decision") == select(doc, "decision") == ["ask"]
    assert memo.values("missing") == []
    output = AgentOutput(ChatResponse("{}"), "{}", doc)
    assert Subject(output, "json", None, memo).selections is memo
    with pytest.raises(ValueError, match="selections"):
        Subject(output, "json", None, Selections(dict(doc)))
