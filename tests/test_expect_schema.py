"""``harness/schemas/expect.schema.json``: one ``expect`` item, typos rejected.

The dataset loader ``$ref``s this schema from the scenario schema, so it must
stay self-contained (``$id: expect.schema.json``) and agree with the engine.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator  # type: ignore[import-untyped, unused-ignore]
from referencing import Registry, Resource

from harness.assertions import ASSERTION_KINDS, EXPECT_SCHEMA_FILE, check_item, expect_schema

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ROOT / "docs" / "formats.md"

SCHEMA = expect_schema()
VALIDATOR = Draft202012Validator(SCHEMA)


def errors(item: Any) -> list[str]:
    return [error.message for error in VALIDATOR.iter_errors(item)]


def doc_examples() -> list[Any]:
    """Every ``expect`` item of the YAML examples in docs/formats.md."""
    blocks = re.findall(r"```yaml\n(.*?)```", FORMATS.read_text(encoding="utf-8"), re.S)
    items: list[Any] = []
    for block in blocks:
        if not re.search(r"^expect:", block, re.M):
            continue  # other examples may hold "..." placeholders that are not YAML
        data = yaml.safe_load(block)
        items.extend(data["expect"])
    return items


#: Every form of the tables of the "Assertions (expect)" section, made concrete.
TABLE_FORMS: list[dict[str, Any]] = [
    {"equals": "text"},
    {"equals": {"value": "text"}},
    {"equals": {"value": "text", "path": "answer", "ignore_case": True, "normalize": "NFKC"}},
    {"contains": "x"},
    {"contains": {"value": "x"}},
    {"contains": {"any": ["x", "y"]}},
    {"contains": {"all": ["x", "y"], "path": "questions[*].text", "ignore_case": False,
                  "normalize": "NFC"}},
    {"not_contains": "password"},
    {"not_contains": {"any": ["password", "token"], "ignore_case": True}},
    {"not_contains": {"value": "x", "normalize": "none"}},
    {"regex": "^Hello"},
    {"regex": {"pattern": "^hello", "path": "greeting", "flags": ["i", "m", "s"]}},
    {"max_chars": 500},
    {"max_chars": {"value": 500, "path": "summary"}},
    {"json_path": {"path": "decision", "equals": "ask"}},
    {"json_path": {"path": "questions[0].options", "exists": True, "min_items": 2,
                   "max_items": 4}},
    {"json_path": {"path": "questions[*].options[*]", "in": ["a", "b"]}},
    {"json_path": {"path": "error", "exists": False}},
    {"json_path": {"path": "meta", "equals": {"a": [1, None, True]}}},
    {"json_path": {"path": "x", "equals": None}},
    {"json_schema": True},
    {"json_schema": {"type": "object", "required": ["decision"]}},
    {"tool_called": "file_draft"},
    {"tool_called": {"name": "file_draft", "times": 1}},
    {"tool_called": {"name": "file_draft"}},
    {"tool_not_called": "send_message"},
    {"tool_args": {"name": "file_draft", "args": {"body": "x", "meta": {"to": ["a"]}}}},
    {"name": "asks for the goal", "contains": "goal"},
]


def test_schema_is_valid_and_self_contained() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$id"] == "expect.schema.json"
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    refs = re.findall(r'"\$ref": "([^"]*)"', EXPECT_SCHEMA_FILE.read_text(encoding="utf-8"))
    assert refs and all(ref.startswith("#/$defs/") for ref in refs)


def test_schema_kinds_match_the_engine() -> None:
    assert set(SCHEMA["properties"]) - {"name"} == ASSERTION_KINDS


def test_docs_have_examples() -> None:
    assert {"json_path": {"path": "decision", "equals": "ask"}} in doc_examples()


@pytest.mark.parametrize("item", doc_examples() + TABLE_FORMS)
def test_accepts_every_documented_form(item: dict[str, Any]) -> None:
    assert errors(item) == []
    assert check_item(item) == []


@pytest.mark.parametrize(
    "item",
    [
        {"contain": "x"},  # typo in the kind
        {"contains": "x", "nmae": "typo"},
        {"contains": {"value": "x", "ignorecase": True}},  # typo in an option
        {"contains": {"value": "x", "flags": ["i"]}},
        {"equals": {"value": "x", "any": ["y"]}},
        {"regex": {"pattern": "x", "ignore_case": True}},
        {"max_chars": {"value": 5, "normalize": "NFC"}},
        {"json_path": {"path": "x", "equal": "y"}},
        {"json_path": {"path": "x", "exist": True}},
        {"tool_called": {"name": "x", "time": 2}},
        {"tool_not_called": {"name": "x", "times": 0}},
        {"tool_args": {"name": "x", "args": {}, "arguments": {}}},
    ],
)
def test_rejects_unknown_keys(item: dict[str, Any]) -> None:
    assert any("Additional properties are not allowed" in message for message in errors(item))


@pytest.mark.parametrize(
    "item",
    [
        {"contains": "x", "equals": "y"},
        {"name": "two", "tool_called": "a", "tool_not_called": "b"},
        {"json_schema": True, "json_path": {"path": "x"}},
    ],
)
def test_rejects_two_kinds_in_one_item(item: dict[str, Any]) -> None:
    assert any("too many properties" in message for message in errors(item))
    assert check_item(item)[0].startswith("one assertion kind per item")


@pytest.mark.parametrize(
    "item",
    [
        {},
        {"name": "only a name"},
        {"name": "", "contains": "x"},
        {"name": 3, "contains": "x"},
        "contains: x",
        ["contains", "x"],
        {"equals": 42},
        {"equals": None},
        {"contains": ""},
        {"contains": {}},
        {"contains": {"any": []}},
        {"contains": {"any": "x"}},
        {"contains": {"value": "x", "all": ["y"]}},
        {"contains": {"value": "x", "normalize": "nfkc"}},
        {"contains": {"value": "x", "ignore_case": "yes"}},
        {"regex": ""},
        {"regex": {"pattern": "x", "flags": ["x"]}},
        {"regex": {"pattern": "x", "flags": ["i", "i"]}},
        {"regex": {"pattern": "x", "flags": "i"}},
        {"regex": {"flags": ["i"]}},
        {"max_chars": -1},
        {"max_chars": 1.5},
        {"max_chars": True},
        {"max_chars": "500"},
        {"max_chars": {"path": "x"}},
        {"json_path": "decision"},
        {"json_path": {"equals": "ask"}},
        {"json_path": {"path": ""}},
        {"json_path": {"path": "x", "exists": "yes"}},
        {"json_path": {"path": "x", "in": []}},
        {"json_path": {"path": "x", "in": "ask"}},
        {"json_path": {"path": "x", "min_items": -1}},
        {"json_schema": False},
        {"json_schema": "output.schema.json"},
        {"tool_called": ""},
        {"tool_called": {"times": 1}},
        {"tool_called": {"name": "x", "times": -1}},
        {"tool_called": ["a", "b"]},
        {"tool_not_called": 3},
        {"tool_args": {"name": "x"}},
        {"tool_args": {"args": {}}},
        {"tool_args": {"name": "x", "args": ["a"]}},
    ],
)
def test_rejects_malformed_items(item: Any) -> None:
    assert errors(item)
    assert check_item(item)


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"json_path": {"path": "a..b"}}, "bad JSON path 'a..b' at position 2"),
        ({"contains": {"value": "x", "path": "a["}}, "bad JSON path 'a['"),
        ({"regex": "(x"}, "invalid regex '(x'"),
        ({"regex": {"pattern": "x", "path": "[x]"}}, "bad JSON path '[x]'"),
        ({"json_schema": {"type": "nope"}}, "inline json_schema is not a valid JSON Schema: type:"),
    ],
)
def test_check_item_sees_what_the_schema_cannot(item: Any, problem: str) -> None:
    assert errors(item) == []
    (found,) = check_item(item)
    assert problem in found


def test_check_item_points_at_the_field() -> None:
    assert check_item({"contains": {"value": "x", "ignorecase": True}}) == [
        "contains: Additional properties are not allowed ('ignorecase' was unexpected)"]
    assert check_item({"tool_called": {"name": "x", "times": -1}}) == [
        "tool_called.times: -1 is less than the minimum of 0"]
    assert check_item({"contain": "x"}) == ["unknown key 'contain' (did you mean 'contains'?)"]


def test_can_be_referenced_from_another_schema() -> None:
    """How the loader uses it: ``{"$ref": "expect.schema.json"}`` through a registry."""
    registry = Registry().with_resource(
        "expect.schema.json", Resource.from_contents(expect_schema()))
    scenario = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "scenario.schema.json",
        "type": "object",
        "properties": {"expect": {"type": "array", "items": {"$ref": "expect.schema.json"}}},
    }
    validator = Draft202012Validator(scenario, registry=registry)
    assert list(validator.iter_errors({"expect": TABLE_FORMS})) == []
    bad = list(validator.iter_errors({"expect": [{"contains": "x"}, {"contain": "x"}]}))
    assert [list(error.absolute_path) for error in bad] == [["expect", 1]]


def test_expect_schema_returns_a_copy() -> None:
    copy = expect_schema()
    copy["properties"].clear()
    assert expect_schema()["properties"]
