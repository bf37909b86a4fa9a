"""An agent's return value as its response: a dict or list is laid out as json.dumps lays it out."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

import pytest

from harness.documents.jsonlayout import pretty_json
from harness.wire.answers import answer_response

PLAIN: list[Any] = [
    {"category": "shipping", "priority": "high", "reply": "Ihr Paket \u00e4 \u2603 \"quoted\" \\ \n tab\t"},
    {"z": 1, "a": [1, 2.5, -0.0, 1e300, True, False, None, [], {}], "m": {"nested": {"deep": [{}]}}},
    [], {}, [[[]]], [{"k": "v"}, "s", 3], 0, -17, 2**70, 3.14159, True, False, "text",
    {"\u0000control\u001f": "\u007f\ud7ff"},
]


@pytest.mark.parametrize("value", PLAIN, ids=range(len(PLAIN)))
def test_plain_json_is_laid_out_exactly_as_json_dumps(value: Any) -> None:
    assert pretty_json(value, sort_keys=False) == json.dumps(value, ensure_ascii=False, indent=2)


def test_keys_keep_the_agent_s_order() -> None:
    laid_out = pretty_json({"b": 1, "a": 2}, sort_keys=False)
    assert laid_out.index('"b"') < laid_out.index('"a"')
    assert pretty_json({"b": 1, "a": 2}, sort_keys=True) == json.dumps({"a": 2, "b": 1}, indent=2)


@pytest.mark.parametrize("value", [
    {1: "int key", None: "null key", 2.5: "float key", False: "bool key"},
    {"t": (1, 2)}, {"nan": float("nan")}, {"inf": [float("inf"), float("-inf")]},
    OrderedDict(a=1), {"sub": type("Text", (str,), {})("x")},
], ids=["keys", "tuple", "nan", "inf", "subclass-dict", "subclass-str"])
def test_anything_else_is_what_json_dumps_writes(value: Any) -> None:
    assert pretty_json(value, sort_keys=False) == json.dumps(value, ensure_ascii=False, indent=2)


def test_a_value_json_cannot_hold_raises_as_json_dumps_does() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        pretty_json({"when": object()}, sort_keys=False)
    looped: list[Any] = []
    looped.append(looped)
    with pytest.raises(ValueError, match="Circular reference"):
        pretty_json(looped, sort_keys=False)


def test_a_returned_dict_is_the_response_content() -> None:
    decision = {"category": "shipping", "reply": "on its way"}
    assert answer_response(decision).content == json.dumps(decision, ensure_ascii=False, indent=2)
    assert answer_response([1, 2]).content == "[\n  1,\n  2\n]"
