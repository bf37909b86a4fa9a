"""``json_bytes`` lays JSON out itself (issue 20 item 3): its bytes must be json.dumps's, always.

Entries, stamps and rerecord-failed.json are committed: one byte of difference
would rewrite every entry a team re-records. So the output is compared with
``json.dumps(..., sort_keys=True, ensure_ascii=False, indent=2)`` on generated
values: every JSON type, unicode and control characters, NaN and infinities,
huge integers, empty and nested containers, and the values it hands to
``json.dumps`` itself (tuples, non-string keys, subclasses).
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.documents.atomic import json_bytes


def stdlib(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


leaves = (st.none() | st.booleans() | st.integers() | st.integers(min_value=-(10**40), max_value=10**40)
          | st.floats(allow_nan=True, allow_infinity=True) | st.text()
          | st.sampled_from(["", "\u2028", "\x00\x1f\x7f", "é\"\\/\n\t", "🙂"]))
plain = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                     | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(plain)
def test_plain_json_is_laid_out_byte_for_byte_as_json_dumps(value: Any) -> None:
    assert json_bytes(value) == stdlib(value)


class Colour(enum.IntEnum):
    RED = 1


class Name(str):
    pass


@pytest.mark.parametrize("value", [
    (1, [2, (3,)]), {1: "a", 2: "b"}, {"a": {True: 1}}, {"n": Colour.RED}, [Name("x")],
    {"x": [float("nan"), math.inf, -math.inf, -0.0, 1e16, 1e-7]},
])
def test_values_json_dumps_handles_itself_give_its_bytes(value: Any) -> None:
    assert json_bytes(value) == stdlib(value)


def test_what_json_dumps_refuses_is_refused_the_same_way() -> None:
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular"):
        json_bytes({"a": cycle})
    with pytest.raises(TypeError):
        json_bytes({"a": object()})
    with pytest.raises(TypeError):
        json_bytes({"a": 1, 2: "b"})
    with pytest.raises(UnicodeEncodeError):  # a lone surrogate is no UTF-8, either way
        json_bytes({"a": "\ud800"})
