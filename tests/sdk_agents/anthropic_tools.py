"""Support triage on Anthropic Messages with a tool loop; the client is built per call."""

import json

import anthropic

ORDERS = {  # what the team's order service would answer
    "A-1001": {"status": "delayed", "carrier": "DHL"},
    "A-1002": {"status": "delivered", "carrier": "UPS"},
    "B-2001": {"status": "lost", "carrier": "FedEx"},
}


def lookup_order(order_id):
    return ORDERS.get(order_id, {"status": "not_found"})

TOOLS = [{
    "name": "lookup_order",
    "description": "Find an order's shipping status by its number.",
    "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                     "required": ["order_id"]},
}]


def triage(scenario):
    client = anthropic.Anthropic()
    messages = list(scenario.messages or [{"role": "user", "content": scenario.input}])
    for _ in range(5):
        message = client.messages.create(
            model=scenario.params.get("model", "claude-sonnet-4-5"),
            max_tokens=1024,
            system=f"You triage support messages for {scenario.tenant}. "
                   "Answer JSON: category, priority, reply.",
            tools=TOOLS,
            messages=messages,
        )
        if message.stop_reason != "tool_use":
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "assistant", "content": message.content})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id,
             "content": json.dumps(lookup_order(block.input["order_id"]))}
            for block in message.content if block.type == "tool_use"]})
    raise RuntimeError("the model kept calling tools")
