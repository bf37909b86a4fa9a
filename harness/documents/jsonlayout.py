"""JSON laid out with ``indent=2``, as ``json.dumps`` writes it, at the speed of its C encoder.

``json`` drops its C encoder whenever ``indent`` is given, and indented JSON is
on two hot paths: every recorded call writes two entry files
(:func:`harness.documents.atomic.json_bytes`, keys sorted for a stable git diff)
and every iteration of a Python agent that returns a dict turns it into its
response text (:mod:`harness.wire.answers`, keys in the agent's own order).
Plain JSON (dicts with string keys, lists, strings, numbers, booleans, null) is
laid out here with the C string encoder; anything else (a tuple, a key that is
no string, a subclass, a cycle) goes to ``json.dumps`` itself, which says what
is wrong or how it writes it. The output is byte for byte ``json.dumps``'s.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["pretty_json"]


def pretty_json(value: Any, *, sort_keys: bool) -> str:
    """Exactly ``json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, indent=2)``."""
    parts: list[str] = []
    try:
        _layout(value, parts, "\n", sort_keys)
    except (_NotPlain, RecursionError):  # json.dumps says what is wrong (a cycle, too deep)
        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=False, indent=2)
    return "".join(parts)


class _NotPlain(Exception):
    """A value :func:`_layout` leaves to ``json.dumps``."""


_encode_string = json.encoder.encode_basestring  # the C one, as json.dumps(ensure_ascii=False)
_INFINITY = float("inf")


def _layout(value: Any, out: list[str], newline: str, sort_keys: bool) -> None:
    """Append the ``indent=2`` layout of ``value``; ``newline`` is a newline and the current
    indentation (json.encoder's ``_make_iterencode``, for plain JSON only)."""
    kind = type(value)
    if kind is str:
        out.append(_encode_string(value))
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator = "{" + inner
        # sorted() raises TypeError on mixed keys, as json.dumps does
        for key in (sorted(value) if sort_keys else value):
            if type(key) is not str:
                raise _NotPlain
            out.append(separator)
            out.append(_encode_string(key))
            out.append(": ")
            _layout(value[key], out, inner, sort_keys)
            separator = "," + inner
        out.append(newline + "}")
    elif kind is list:
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator = "[" + inner
        for item in value:
            out.append(separator)
            _layout(item, out, inner, sort_keys)
            separator = "," + inner
        out.append(newline + "]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float:
        if value != value:
            out.append("NaN")
        elif value == _INFINITY:
            out.append("Infinity")
        elif value == -_INFINITY:
            out.append("-Infinity")
        else:
            out.append(float.__repr__(value))
    else:
        raise _NotPlain
