"""Hypothesis strategies for malformed inputs: start from a valid document, break it.

Purely random bytes are refused by the YAML parser on the first character and
test almost nothing; mutating a real document (a field replaced, dropped or
duplicated, a value of the wrong type, a hostile path, then sometimes the
text itself damaged) reaches the schema checks, the path rules, the template
parameters and the entry verifier behind the parser.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml
from hypothesis import strategies as st

#: Values no well-behaved file holds: wrong types, huge numbers, NaN, control characters.
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=24),
    st.sampled_from(["", " ", "..", "../../../../etc/passwd", "/etc/hostname", "C:\\x", "\x00",
                     "{{missing}}", "{{", "caf\u0065\u0301", "\ud7ff", "2030-01-01T00:00:00",
                     "2030-01-01T00:00:00Z", "sk-" + "A" * 30, "0" * 64, "x" * 400]),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=10,
)
#: Text damage applied after serialising: each keeps the file plausible enough to parse sometimes.
TEXT_DAMAGE = ("none", "truncate", "insert", "duplicate_line", "invalid_utf8", "bom", "crlf", "tab_indent",
               "alias_bomb", "deep", "nul", "yaml_types")
#: YAML values that are not JSON values (or not what they look like): dates, binary, sets, bare keys.
YAML_TYPES = ("tool_results: {lookup_baseline: {when: 2024-01-01 10:00:00}}", "params: {day: 2024-01-01}",
              "params: {b: !!binary aGVsbG8=}", "params: {s: !!set {a, b}}", "params: {on: 1}",
              "params: {1: one}", "context: .nan", "params: {x: !!python/object:os.system x}",
              "params: {x: !custom 1}", "params: {? [1, 2] : x}", "iterations: .inf")
BOMB = ("lol: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"l{i}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)))


def _paths(value: Any, depth: int, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of a JSON-like value down to ``depth`` levels (the root is ``()``)."""
    found = [prefix]
    if len(prefix) >= depth:
        return found
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, depth, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, depth, (*prefix, index)))
    return found


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return document


def _delete(document: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return document
    parent = document
    for part in path[:-1]:
        parent = parent[part]
    del parent[path[-1]]
    return document


@st.composite
def mutated(draw: st.DrawFn, base: Any, keys: tuple[str, ...], hostile: dict[str, list[Any]],
            depth: int = 8) -> Any:
    """``base`` after one to three structural mutations (replace, drop, add a key, hostile value)
    of nodes down to ``depth`` levels."""
    document = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        paths = _paths(document, depth)
        action = draw(st.sampled_from(("replace", "drop", "add", "hostile")))
        path = draw(st.sampled_from(paths))
        if action == "replace":
            document = _set(document, path, draw(VALUES))
        elif action == "drop" and path:
            document = _delete(document, path)
        elif action == "add" and isinstance(document, dict):
            key = draw(st.sampled_from(keys) | st.text(min_size=1, max_size=12))
            if key != "entrypoint":  # an entrypoint imports a module: never a random one
                document[key] = draw(VALUES)
        elif action == "hostile" and isinstance(document, dict) and hostile:
            key = draw(st.sampled_from(sorted(hostile)))
            # a copy: a later mutation of this document must not edit the shared table
            document[key] = copy.deepcopy(draw(st.sampled_from(hostile[key])))
    return document


def serialise(document: Any, fmt: str) -> bytes:
    """YAML (block style, unicode kept) or JSON (NaN written as the non-JSON ``NaN``)."""
    if fmt == "json":
        return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass")
    text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=1000)
    return text.encode("utf-8", "surrogatepass")


@st.composite
def damaged(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` after one kind of text damage (``none`` leaves it as it is)."""
    kind = draw(st.sampled_from(TEXT_DAMAGE))
    at = draw(st.integers(min_value=0, max_value=max(len(data), 0)))
    if kind == "truncate":
        return data[:at]
    if kind == "insert":
        return data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    if kind == "duplicate_line":
        lines = data.splitlines(keepends=True)
        if lines:
            index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
            lines.insert(draw(st.integers(min_value=index, max_value=len(lines))), lines[index])
        return b"".join(lines)
    if kind == "invalid_utf8":
        return data[:at] + b"\xff\xfe\xc3" + data[at:]
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "tab_indent":
        return data.replace(b"\n  ", b"\n\t")
    if kind == "alias_bomb":
        return data + b"\n" + BOMB.encode()
    if kind == "deep":
        depth = draw(st.integers(min_value=60, max_value=5000))
        return data + b"\nextra: " + b"[" * depth + b"]" * depth + b"\n"
    if kind == "yaml_types":
        return data + b"\n" + draw(st.sampled_from(YAML_TYPES)).encode() + b"\n"
    if kind == "nul":
        return data[:at] + b"\x00" + data[at:]
    return data


@st.composite
def malformed_document(draw: st.DrawFn, base: Any, keys: tuple[str, ...],
                       hostile: dict[str, list[Any]], formats: tuple[str, ...] = ("yaml",)
                       ) -> tuple[str, bytes]:
    """``(format, bytes)``: a serialised, mutated and maybe damaged copy of ``base``."""
    fmt = draw(st.sampled_from(formats))
    document = draw(mutated(base, keys, hostile))
    return fmt, draw(damaged(serialise(document, fmt)))
