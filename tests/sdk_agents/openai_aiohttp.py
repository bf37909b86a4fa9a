"""Support triage on ``AsyncOpenAI`` over aiohttp (the SDK's ``DefaultAioHttpClient``), a tool loop."""

import json

from openai import AsyncOpenAI, DefaultAioHttpClient

ORDERS = {  # what the team's order service would answer
    "A-1001": {"status": "delayed", "carrier": "DHL"},
    "B-2001": {"status": "lost", "carrier": "FedEx"},
}

TOOLS = [{
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order's shipping status by its number.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]},
    },
}]


async def triage(scenario):
    messages = [{"role": "system", "content": "Triage the support message; answer JSON "
                                              "with category, priority and reply."}]
    messages += scenario.messages or [{"role": "user", "content": scenario.input}]
    async with AsyncOpenAI(http_client=DefaultAioHttpClient()) as client:
        for _ in range(5):
            completion = await client.chat.completions.create(
                model=scenario.params.get("model", "gpt-4o-mini"), messages=messages, tools=TOOLS)
            message = completion.choices[0].message
            if not message.tool_calls:
                return json.loads(message.content)
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                order = json.loads(call.function.arguments)["order_id"]
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": json.dumps(ORDERS.get(order, {"status": "not_found"}))})
    raise RuntimeError("the model kept calling tools")
