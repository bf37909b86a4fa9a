"""Benchmark: what reading a recorded wire answer costs, next to what the SDK itself pays.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_wire_codecs.py [--calls 300] [--rounds 7] [--text 400]

On replay, every wire exchange is parsed twice: once by the agent's SDK (that
cost is the floor, the agent pays it in production too) and once by
``decode_answer`` for the harness's own view (tool calls, transcript). This
prints, for each API and both formats, the time of one ``decode_answer`` beside
the time of one SDK call answered with the same bytes by an httpx (or, for
SDKs built on it, httpx2) ``MockTransport`` (request built, sent, answer parsed into SDK objects, stream
consumed), and their ratio. The rounds are interleaved (decode, SDK, decode,
SDK...) so that load on the machine hits both alike; the median round is
printed, CPU time beside wall time, with the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

import anthropic  # noqa: E402
import openai  # noqa: E402

try:  # recent SDKs are built on the httpx2 fork and refuse an httpx client
    import httpx2 as sdk_httpx  # noqa: E402
except ImportError:
    import httpx as sdk_httpx  # type: ignore[no-redef]  # noqa: E402

from harness.core.entities import ChatResponse, ToolCall, Usage  # noqa: E402
from harness.wire.codecs import (  # noqa: E402
    ANTHROPIC_MESSAGES,
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    decode_answer,
    encode_answer,
)

MESSAGES: Any = [{"role": "user", "content": "Where is invoice INV-7?"}]


def answer(text_size: int) -> ChatResponse:
    text = ("The invoice is overdue; the customer was reminded twice. " * 20)[:text_size]
    return ChatResponse(text, (ToolCall("lookup_invoice", {"id": "INV-7", "fields": ["due", "paid"]}),
                               ToolCall("lookup_customer", {"id": 42})), "tool_calls", Usage(300, 80), "m")


def sdk_call(api: str, stream: bool, body: bytes, content_type: str) -> Callable[[], object]:
    """One SDK call of ``api`` answered with ``body`` through an httpx MockTransport."""
    def handler(request: Any) -> Any:
        return sdk_httpx.Response(200, headers={"content-type": content_type}, content=body)

    http = sdk_httpx.Client(transport=sdk_httpx.MockTransport(handler))
    if api == ANTHROPIC_MESSAGES:
        client: Any = anthropic.Anthropic(api_key="x", base_url="http://wire.invalid", http_client=http,
                                          max_retries=0)
        return lambda: (list(client.messages.create(model="m", max_tokens=50, messages=MESSAGES, stream=True))
                        if stream else client.messages.create(model="m", max_tokens=50, messages=MESSAGES))
    client = openai.OpenAI(api_key="x", base_url="http://wire.invalid/v1", http_client=http, max_retries=0)
    if api == OPENAI_CHAT:
        return lambda: (list(client.chat.completions.create(model="m", messages=MESSAGES, stream=True))
                        if stream else client.chat.completions.create(model="m", messages=MESSAGES))
    return lambda: (list(client.responses.create(model="m", input="hi", stream=True))
                    if stream else client.responses.create(model="m", input="hi"))


def timed(action: Callable[[], object], calls: int) -> tuple[float, float]:
    """Wall and CPU seconds per call over ``calls`` calls."""
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(calls):
        action()
    return (time.perf_counter() - wall) / calls, (time.process_time() - cpu) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--text", type=int, default=400, help="characters of answer text")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    print(f"{'api':<20}{'format':<8}{'bytes':>7}{'decode µs':>11}{'cpu':>7}{'sdk µs':>9}{'cpu':>7}"
          f"{'decode/sdk':>12}")
    for api in (OPENAI_CHAT, OPENAI_RESPONSES, ANTHROPIC_MESSAGES):
        for stream in (False, True):
            encoded = encode_answer(api, answer(args.text), seed="bench",
                                    request={"model": "m", "stream": stream,
                                             "stream_options": {"include_usage": True}})
            body, content_type = encoded.body, encoded.headers["content-type"]
            sdk = sdk_call(api, stream, body, content_type)
            sdk()  # warm: imports, pydantic model building
            decode: list[tuple[float, float]] = []
            floor: list[tuple[float, float]] = []
            for _ in range(args.rounds):
                decode.append(timed(lambda b=body, c=content_type, a=api: decode_answer(a, b, content_type=c),
                                    args.calls))
                floor.append(timed(sdk, max(1, args.calls // 10)))
            d_wall = statistics.median(w for w, _ in decode)
            d_cpu = statistics.median(c for _, c in decode)
            s_wall = statistics.median(w for w, _ in floor)
            s_cpu = statistics.median(c for _, c in floor)
            print(f"{api:<20}{'sse' if stream else 'json':<8}{len(body):>7}{d_wall * 1e6:>11.1f}"
                  f"{d_cpu * 1e6:>7.1f}{s_wall * 1e6:>9.1f}{s_cpu * 1e6:>7.1f}{d_wall / s_wall:>12.3f}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
