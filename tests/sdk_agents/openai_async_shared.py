"""Support triage on ``AsyncOpenAI`` with a tool loop; one client for the process, built at import
time, as an async web service keeps it (its pooled connections belong to one event loop)."""

import json

from openai import AsyncOpenAI

ORDERS = {  # what the team's order service would answer
    "A-1001": {"status": "delayed", "carrier": "DHL"},
    "A-1002": {"status": "delivered", "carrier": "UPS"},
    "B-2001": {"status": "lost", "carrier": "FedEx"},
}
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


def lookup_order(order_id):
    return ORDERS.get(order_id, {"status": "not_found"})


async def triage(scenario):
    messages = [{"role": "system", "content": "Triage the support message; answer JSON "
                                              "with category, priority and reply."}]
    messages += scenario.messages or [{"role": "user", "content": scenario.input}]
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
                             "content": json.dumps(lookup_order(order))})
    raise RuntimeError("the model kept calling tools")
