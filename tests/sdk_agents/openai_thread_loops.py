"""Support triage as a framework runs it synchronously: one ``AsyncOpenAI`` for the process, and
each calling thread's own event loop, kept between calls (what pydantic-ai's ``run_sync`` and the
OpenAI Agents SDK's ``Runner.run_sync`` do), so a pooled connection may meet another loop."""

import asyncio
import json

from openai import AsyncOpenAI

ORDERS = {"A-1001": {"status": "delayed", "carrier": "DHL"}, "B-2001": {"status": "lost", "carrier": "FedEx"}}
TOOLS = [{
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order's shipping status by its number, e.g. A-1001.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]},
    },
}]

client = AsyncOpenAI()


def _thread_loop():
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop


async def _triage(text):
    messages = [{"role": "system", "content": "Triage the support message; answer JSON."},
                {"role": "user", "content": text}]
    for _ in range(5):
        completion = await client.chat.completions.create(model="gpt-4o-mini", messages=messages,
                                                          tools=TOOLS)
        message = completion.choices[0].message
        if not message.tool_calls:
            return json.loads(message.content)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            order = json.loads(call.function.arguments)["order_id"]
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(ORDERS.get(order, {"status": "not_found"}))})
    raise RuntimeError("the model kept calling tools")


def triage(scenario):
    return _thread_loop().run_until_complete(_triage(scenario.input))
