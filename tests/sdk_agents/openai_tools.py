"""Support triage on OpenAI Chat Completions with a tool loop; the client is built at import time."""

import json

from openai import OpenAI

ORDERS = {  # what the team's order service would answer
    "A-1001": {"status": "delayed", "carrier": "DHL"},
    "A-1002": {"status": "delivered", "carrier": "UPS"},
    "B-2001": {"status": "lost", "carrier": "FedEx"},
}


def lookup_order(order_id):
    return ORDERS.get(order_id, {"status": "not_found"})



client = OpenAI()

SYSTEM = ("You triage customer support messages. Look orders up with lookup_order, then answer "
          'only JSON: {"category": ..., "priority": ..., "reply": ...}.')
TOOLS = [{
    "type": "function",
    "function": {
        "name": "lookup_order",
        "description": "Find an order's shipping status by its number, e.g. A-1001.",
        "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                       "required": ["order_id"]},
    },
}]


def triage(scenario):
    messages = [{"role": "system", "content": f"{SYSTEM} Tenant: {scenario.tenant}."}]
    messages += scenario.messages or [{"role": "user", "content": scenario.input}]
    model = scenario.params.get("model", "gpt-4o-mini")
    for _ in range(5):
        completion = client.chat.completions.create(model=model, messages=messages, tools=TOOLS,
                                                    temperature=0)
        message = completion.choices[0].message
        if not message.tool_calls:
            return json.loads(message.content)
        messages.append(message)
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": json.dumps(lookup_order(args["order_id"]))})
    raise RuntimeError("the model kept calling tools")
