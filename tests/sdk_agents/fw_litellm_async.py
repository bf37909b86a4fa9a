"""Support triage on litellm's async API (``litellm.acompletion`` with an OpenAI model, a tool loop).

litellm sends its async calls with aiohttp behind httpx's interface (its default transport).
"""

import json

import litellm

ORDERS = {"A-1001": {"status": "delayed", "carrier": "DHL"}, "B-2001": {"status": "lost", "carrier": "FedEx"}}
TOOLS = [{"type": "function", "function": {
    "name": "lookup_order", "description": "Find an order's shipping status by its number, e.g. A-1001.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"]}}}]


async def triage(scenario):
    messages = [{"role": "system", "content": "You triage customer support messages; answer JSON."},
                {"role": "user", "content": scenario.input}]
    for _ in range(5):
        reply = await litellm.acompletion(model="openai/gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        if not message.tool_calls:
            return json.loads(message.content)
        messages.append(message.model_dump(exclude_none=True))
        for call in message.tool_calls:
            order = json.loads(call.function.arguments)["order_id"]
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(ORDERS.get(order, {"status": "not_found"}))})
    raise RuntimeError("the model kept calling tools")
