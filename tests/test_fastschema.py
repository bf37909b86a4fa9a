"""The compiled yes/no schema check never calls valid what jsonschema calls invalid."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from harness.documents.fastkeywords import json_equal
from harness.documents.fastschema import compile_schema
from harness.documents.validation import _registry, fast_check, read_document, validator
from harness.wire.codecs import decode_answer

REPO_ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted(p for p in (REPO_ROOT / "eval-datasets").glob("*/*/*.yaml") if p.name != "tenant.yaml")
OUTPUT_SCHEMAS = sorted((REPO_ROOT / "eval-datasets").glob("*/output.schema.json"))
_ODD = [None, True, False, 0, 1, -1, 1.0, 2.5, "", "x", "ask", [], [1], {}, {"a": 1}, "A" * 300]


def _mutations(value: Any, rng: random.Random, count: int) -> list[Any]:
    """Copies of ``value`` with one node replaced, removed or added, picked at random."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for key, item in node.items():
                walk(item, (*path, key))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, (*path, index))

    walk(value, ())
    out = []
    for _ in range(count):
        doc = copy.deepcopy(value)
        path = rng.choice(paths)
        parent: Any = doc
        for step in path[:-1]:
            parent = parent[step]
        action = rng.random()
        if not path:
            doc = rng.choice(_ODD)
        elif action < 0.6:
            parent[path[-1]] = copy.deepcopy(rng.choice(_ODD))
        elif action < 0.8:
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[rng.choice(["extra", "name", "path", "value", "tool", "role"])] = rng.choice(_ODD)
        else:
            parent.append(copy.deepcopy(rng.choice(_ODD)))
        out.append(doc)
    return out


def _agree(check: Any, slow: Draft202012Validator, instance: Any) -> None:
    fast_says = check(instance)
    slow_says = slow.is_valid(instance)
    assert not (fast_says and not slow_says), f"fast check passed an invalid instance: {instance!r:.300}"


@pytest.mark.parametrize("name", ["agent", "tenant", "scenario", "expect"])
def test_every_bundled_schema_compiles(name: str) -> None:
    assert fast_check(name) is not None


def test_scenarios_and_their_mutations_agree_with_jsonschema() -> None:
    rng = random.Random(7)
    check, slow = fast_check("scenario"), validator("scenario")
    assert check is not None
    for file in SCENARIOS:
        data, problem = read_document(file)
        assert problem is None
        assert check(data) and slow.is_valid(data)
        for mutated in _mutations(data, rng, 40):
            _agree(check, slow, mutated)


def test_expect_items_and_their_mutations_agree_with_jsonschema() -> None:
    rng = random.Random(11)
    check, slow = fast_check("expect"), validator("expect")
    assert check is not None
    items = [item for file in SCENARIOS for item in read_document(file)[0].get("expect", [])]
    assert len(items) > 50
    for item in items:
        assert check(item) and slow.is_valid(item)
        for mutated in _mutations(item, rng, 15):
            _agree(check, slow, mutated)


def test_agents_agree_with_jsonschema() -> None:
    rng = random.Random(3)
    check, slow = fast_check("agent"), validator("agent")
    assert check is not None
    for file in sorted((REPO_ROOT / "eval-datasets").glob("*/agent.yaml")):
        data, _ = read_document(file)
        assert check(data)
        for mutated in _mutations(data, rng, 60):
            _agree(check, slow, mutated)


def _recorded_text(payload: Path) -> str | None:
    """The answer text of an entry: the harness's own payload, or a wire answer (an SDK
    agent's) decoded from the bytes its API sent."""
    entry = json.loads((payload.parent / "entry.json").read_text(encoding="utf-8"))
    if "wire" not in entry:
        content = json.loads(payload.read_bytes())["content"]
        return content if isinstance(content, str) else None
    wire = entry["wire"]
    return decode_answer(wire["api"], payload.read_bytes(),
                         content_type=wire["headers"].get("content-type", "")).content


def test_output_schemas_agree_with_jsonschema_on_recorded_outputs() -> None:
    rng = random.Random(5)
    texts = [_recorded_text(p) for p in sorted((REPO_ROOT / "eval-cache").rglob("contents.data"))]
    outputs = [json.loads(text) for text in texts if (text or "").lstrip().startswith("{")]
    assert outputs and OUTPUT_SCHEMAS
    for file in OUTPUT_SCHEMAS:
        schema = json.loads(file.read_text(encoding="utf-8"))
        check, slow = compile_schema(schema), Draft202012Validator(schema)
        assert check is not None, file
        for output in outputs:
            _agree(check, slow, output)
            for mutated in _mutations(output, rng, 5):
                _agree(check, slow, mutated)


@pytest.mark.parametrize("schema", [
    {"type": "integer"}, {"type": "number", "minimum": 1}, {"enum": [1, True, "a", None]},
    {"const": [1, {"a": False}]}, {"uniqueItems": True}, {"not": {"type": "string"}},
    {"oneOf": [{"type": "integer"}, {"minimum": 2}]}, {"anyOf": [{"maxLength": 1}, {"type": "array"}]},
    {"items": {"type": "string"}, "minItems": 1, "maxItems": 2, "contains": {"const": "x"}},
    {"properties": {"a": False}, "additionalProperties": {"type": "integer"}, "required": ["b"]},
    {"if": {"type": "object"}, "then": {"minProperties": 1}, "else": {"maxLength": 2}},
    {"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"},
    {"exclusiveMinimum": 0, "exclusiveMaximum": 3, "pattern": "^a"},
])
def test_keywords_agree_with_jsonschema_on_odd_values(schema: dict[str, Any]) -> None:
    check, slow = compile_schema(schema), Draft202012Validator(schema)
    assert check is not None
    values = [*_ODD, 2, 3, 1.5, "ab", "abc", [1, 1], [1, True], [[]], [[[]]], ["x", "y"], ["x"],
              {"b": 1}, {"a": 1, "b": 2}, {"b": 1, "c": "no"}, {"b": 1, "c": 4}, [0.0, False]]
    for value in values:
        assert check(value) == slow.is_valid(value), (schema, value)


@pytest.mark.parametrize("schema", [
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
    {"patternProperties": {"^x": {"type": "string"}}}, {"unevaluatedProperties": False},
    {"$dynamicRef": "#x"}, {"prefixItems": [{"type": "string"}]}, {"$ref": "other.json"},
])
def test_what_it_does_not_implement_is_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert compile_schema(schema) is None


def test_json_equality_keeps_booleans_apart_from_numbers() -> None:
    assert json_equal(1, 1.0) and json_equal({"a": [1]}, {"a": [1.0]})
    assert not json_equal(True, 1) and not json_equal([False], [0]) and not json_equal("1", 1)


def test_the_registry_resolves_cross_file_references() -> None:
    assert _registry().contents("expect.schema.json")["$id"] == "expect.schema.json"


def _inline_schemas() -> list[Any]:
    """Every inline ``json_schema`` of the committed scenarios and every agent output schema."""
    found: list[Any] = [json.loads(p.read_text(encoding="utf-8")) for p in OUTPUT_SCHEMAS]
    for file in SCENARIOS:
        data, _ = read_document(file)
        found.extend(item["json_schema"] for item in data.get("expect", [])
                     if isinstance(item.get("json_schema"), dict))
    return found


def test_the_compiled_metaschema_agrees_with_check_schema() -> None:
    """A schema the fast metaschema check calls valid is one ``check_schema`` accepts."""
    from harness.documents.compiled import _metaschema_check

    check = _metaschema_check()
    assert check is not None
    meta = Draft202012Validator(Draft202012Validator.META_SCHEMA,
                                format_checker=Draft202012Validator.FORMAT_CHECKER)
    rng = random.Random(13)
    schemas = _inline_schemas()
    assert len(schemas) >= 5
    odd = [{"pattern": "["}, {"patternProperties": {"(": {}}}, {"$anchor": "1a"}, {"type": "strin"},
           {"propertyNames": {"pattern": "*"}}, {"dependencies": {"a": {"minimum": "x"}}},
           {"$defs": {"a": {"items": [1]}}}, {"required": ["a", "a"]}, {"minLength": -1}]
    for schema in schemas:
        assert check(schema) and meta.is_valid(schema)
        for mutated in [*_mutations(schema, rng, 60), *odd]:
            _agree(check, meta, mutated)
    for bad in odd:
        assert not check(bad)


def test_a_schema_is_checked_once_per_content() -> None:
    """Two equal schemas (distinct objects) share one verdict and one compiled validator."""
    from harness.documents.compiled import compiled

    one = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
    two = copy.deepcopy(one)
    assert compiled(one) is compiled(two)
    assert compiled({"type": "strin"}).error is not None


def test_object_or_boolean_is_one_isinstance_that_still_refuses_numbers() -> None:
    """``type: [object, boolean]`` (every subschema slot of the metaschema): 1 and 0 are not
    booleans, as in jsonschema."""
    schema = {"type": ["object", "boolean"]}
    check = compile_schema(schema)
    assert check is not None
    for value in (True, False, {}, {"a": 1}, 1, 0, 1.0, [], "true", None):
        assert check(value) is Draft202012Validator(schema).is_valid(value), value
