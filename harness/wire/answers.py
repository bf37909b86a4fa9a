"""What a Python agent returned, as the response its assertions read.

An agent that takes just the scenario returns what production code returns:
text, a dict (a JSON answer), the harness's own response, or the SDK's response
object (``ChatCompletion``, a Responses-API ``Response``, an Anthropic
``Message``). Each becomes one :class:`~harness.core.entities.ChatResponse`; the
tool calls assertions check come from the wire exchanges, not from here.
"""

from __future__ import annotations

import json
from typing import Any

from harness.core.entities import ChatResponse


def answer_response(answer: Any) -> ChatResponse:
    """The response of an agent's return value (see the module docstring)."""
    if isinstance(answer, ChatResponse):
        return answer
    if answer is None:
        return ChatResponse(content=None)
    if isinstance(answer, str):
        return ChatResponse(content=answer)
    if isinstance(answer, dict | list | int | float | bool):
        return ChatResponse(content=pretty_json(answer))
    text = _sdk_text(answer)
    if text is not None:
        return ChatResponse(content=text, model=_attr(answer, "model"))
    return ChatResponse(content=str(answer))


def pretty_json(value: Any) -> str:
    """Exactly ``json.dumps(value, ensure_ascii=False, indent=2)``, keys in their own order.

    ``json`` drops its C encoder whenever ``indent`` is given (8 us for a four-field answer,
    paid by every iteration of an agent that returns a dict); plain JSON is laid out here
    with the C string encoder (2 us), anything else (a tuple, a key that is no string, a
    subclass, NaN) goes to ``json.dumps`` itself, which says what is wrong or how it writes it.
    """
    parts: list[str] = []
    try:
        _layout(value, parts, "\n")
    except (_NotPlain, RecursionError):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return "".join(parts)


class _NotPlain(Exception):
    """A value :func:`_layout` leaves to ``json.dumps``."""


_encode_string = json.encoder.encode_basestring  # the C one, as json.dumps(ensure_ascii=False)
_INFINITIES = (float("-inf"), float("inf"))


def _layout(value: Any, out: list[str], newline: str) -> None:
    """Append the ``indent=2`` layout of ``value``; ``newline`` is a newline and the current
    indentation."""
    kind = type(value)
    if kind is str:
        out.append(_encode_string(value))
    elif kind is dict or kind is list:
        if not value:
            out.append("{}" if kind is dict else "[]")
            return
        inner = newline + "  "
        separator = ("{" if kind is dict else "[") + inner
        if kind is dict:
            for key, item in value.items():
                if type(key) is not str:
                    raise _NotPlain
                out.append(separator)
                out.append(_encode_string(key))
                out.append(": ")
                _layout(item, out, inner)
                separator = "," + inner
        else:
            for item in value:
                out.append(separator)
                _layout(item, out, inner)
                separator = "," + inner
        out.append(newline + ("}" if kind is dict else "]"))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value == value and value not in _INFINITIES:
        out.append(float.__repr__(value))
    else:
        raise _NotPlain


def _sdk_text(answer: Any) -> str | None:
    """The assistant text of an SDK response object, by the shape each SDK documents."""
    output_text = getattr(answer, "output_text", None)  # Responses API
    if isinstance(output_text, str):
        return output_text
    choices = getattr(answer, "choices", None)  # Chat Completions
    if isinstance(choices, list) and choices:
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None)
        return content if isinstance(content, str) else ""
    blocks = getattr(answer, "content", None)  # Anthropic Messages
    if isinstance(blocks, list):
        return "".join(str(getattr(block, "text", "")) for block in blocks
                       if getattr(block, "type", None) == "text")
    return None


def _attr(answer: Any, name: str) -> str | None:
    value = getattr(answer, name, None)
    return value if isinstance(value, str) else None
