"""Answers and helpers shared by the wire codec tests (test_wire_codecs*.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.core.entities import ChatResponse, ToolCall, Usage
from harness.wire.codecs import ANTHROPIC_MESSAGES, OPENAI_CHAT, OPENAI_RESPONSES, encode_answer

FIXTURES = Path(__file__).parent / "fixtures" / "wire"
CHAT_APIS = (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES)

#: Answers every chat-like API can carry exactly (finish reasons consistent with the content).
CASES = {
    "text": ChatResponse("The invoice is overdue by 12 days.", (), "stop", Usage(31, 9), "model-a"),
    "single_tool": ChatResponse("Looking it up.", (ToolCall("lookup_invoice", {"id": "INV-7"}),),
                                "tool_calls", Usage(40, 12), "model-a"),
    "parallel_tools": ChatResponse(None, (ToolCall("lookup_invoice", {"id": "INV-7"}),
                                          ToolCall("lookup_customer", {"id": 42, "deep": [1, {"x": None}]}),
                                          ToolCall("ping", {})),
                                   "tool_calls", Usage(55, 30), "model-b"),
    "unicode": ChatResponse("Olá — ünïcödé ✓ 日本語 🧾 \"quoted\" \\ back\nline", (), "stop", Usage(3, 4),
                            "model-ü"),
    "empty_content_tool": ChatResponse(None, (ToolCall("declare_open_question",
                                                       {"question": "Which account? ✓"}),),
                                       "tool_calls", Usage(10, 2), "model-a"),
    "raw_arguments": ChatResponse(None, (ToolCall("broken", {"_raw": "{not json"}),), "tool_calls",
                                  Usage(1, 1), "model-a"),
    "length": ChatResponse("A long answer that was cut", (), "length", Usage(8, 200), "model-a"),
    "content_filter": ChatResponse("I can't", (), "content_filter", Usage(8, 2), "model-a"),
}


def encode(api: str, response: ChatResponse, stream: bool, **request: Any) -> tuple[bytes, str]:
    answer = encode_answer(api, response, request={"model": "requested", "stream": stream, **request},
                           seed="seed-1", created=1_700_000_000)
    assert answer.status == 200
    return answer.body, answer.headers["content-type"]


