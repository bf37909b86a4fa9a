"""What a Python agent returned, as the response its assertions read.

An agent that takes just the scenario returns what production code returns:
text, a dict (a JSON answer), the harness's own response, or the SDK's response
object (``ChatCompletion``, a Responses-API ``Response``, an Anthropic
``Message``). Each becomes one :class:`~harness.core.entities.ChatResponse`; the
tool calls assertions check come from the wire exchanges, not from here.
"""

from __future__ import annotations

from typing import Any

from harness.core.entities import ChatResponse
from harness.documents.jsonlayout import pretty_json


def answer_response(answer: Any) -> ChatResponse:
    """The response of an agent's return value (see the module docstring)."""
    if isinstance(answer, ChatResponse):
        return answer
    if answer is None:
        return ChatResponse(content=None)
    if isinstance(answer, str):
        return ChatResponse(content=answer)
    if isinstance(answer, dict | list | int | float | bool):
        return ChatResponse(content=pretty_json(answer, sort_keys=False))
    text = _sdk_text(answer)
    if text is not None:
        return ChatResponse(content=text, model=_attr(answer, "model"))
    return ChatResponse(content=str(answer))


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
