"""Checked once: an output schema's load-time metaschema check is the one its evaluations reuse,
and a resolved rule item is checked once; the messages are the ones the plain checks give."""

from __future__ import annotations

import copy

import pytest
from jsonschema import Draft7Validator, Draft202012Validator, SchemaError

from harness.assertions import check_item
from harness.assertions.rules import _checked_item
from harness.documents import compiled as compiled_module
from harness.documents.schemarefs import schema_problem
from harness.requests.key import canonical_json


def _plain_problem(schema: dict[str, object], cls: type = Draft202012Validator) -> str:
    """What schema_problem said when it ran jsonschema's check_schema itself."""
    with pytest.raises(SchemaError) as caught:
        cls.check_schema(schema)
    where = caught.value.json_path.removeprefix("$").removeprefix(".")
    message = caught.value.message
    message = message if len(message) <= 160 else message[:160] + "…"
    return f"is not a valid JSON Schema: {where + ': ' if where else ''}{message}"


def test_the_load_check_of_a_schema_is_the_verdict_its_evaluation_finds() -> None:
    import hashlib

    schema = {"type": "object", "title": "checked once (test_checked_once)",
              "properties": {"decision": {"enum": ["ask", "answer"]}}, "required": ["decision"]}
    key = (Draft202012Validator, hashlib.sha256(canonical_json(schema)).hexdigest())
    compiled_module._BY_CONTENT.pop(key, None)
    assert schema_problem(schema) is None
    held = compiled_module._BY_CONTENT[key]  # the load put its verdict where evaluations look
    assert compiled_module.compiled(copy.deepcopy(schema)) is held
    assert held.error is None and held.fast is not None


@pytest.mark.parametrize("schema", [
    {"type": "objekt"},
    {"properties": {"a": {"minLength": -1}}},
    {"type": "object", "required": "decision"},
    {"$defs": {"x": {"enum": 3}}, "$ref": "#/$defs/x"},
])
def test_an_invalid_schema_is_worded_as_jsonschema_words_it(schema: dict[str, object]) -> None:
    assert schema_problem(schema) == _plain_problem(schema)
    assert schema_problem(copy.deepcopy(schema)) == _plain_problem(schema)  # from the memo


def test_a_schema_of_another_draft_is_checked_by_that_draft() -> None:
    schema = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "objekt"}
    assert schema_problem(schema) == _plain_problem(schema, Draft7Validator)
    assert schema_problem({"$schema": "http://json-schema.org/draft-07/schema#",
                           "type": "object"}) is None


def test_a_non_text_schema_keyword_keeps_its_message() -> None:
    schema: dict[str, object] = {"$schema": [], "type": "object"}
    assert schema_problem(schema) == _plain_problem(schema)


def test_a_resolved_rule_item_is_checked_once_and_its_problems_are_not_shared() -> None:
    bad = {"json_path": {"path": "questions", "max_items": "three"}, "name": "at most n"}
    first = _checked_item(bad)
    assert first == check_item(bad) and first
    first.append("changed by a caller")
    assert _checked_item(copy.deepcopy(bad)) == check_item(bad)
    good = {"contains": "hello"}
    assert _checked_item(good) == check_item(good) == []
