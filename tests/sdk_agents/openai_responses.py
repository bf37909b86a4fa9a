"""Support triage on the Responses API, streamed, with a function tool and ``previous_response_id``."""

import json

from openai import OpenAI

ORDERS = {  # what the team's order service would answer
    "A-1001": {"status": "delayed", "carrier": "DHL"},
    "A-1002": {"status": "delivered", "carrier": "UPS"},
    "B-2001": {"status": "lost", "carrier": "FedEx"},
}


def lookup_order(order_id):
    return ORDERS.get(order_id, {"status": "not_found"})

TOOLS = [{
    "type": "function",
    "name": "lookup_order",
    "description": "Find an order's shipping status by its number.",
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}},
                   "required": ["order_id"], "additionalProperties": False},
    "strict": True,
}]


def _run(stream):
    """Print-as-you-go streaming, as a chat UI does; returns the completed response."""
    completed = None
    for event in stream:
        if event.type == "response.output_text.delta":
            pass  # a UI would render event.delta here
        elif event.type == "response.completed":
            completed = event.response
    return completed


def triage(scenario):
    client = OpenAI()
    model = scenario.params.get("model", "gpt-4.1-mini")
    text = scenario.input or scenario.messages[-1]["content"]
    response = _run(client.responses.create(
        model=model, instructions="Triage the support message; answer JSON with category, priority, reply.",
        input=text, tools=TOOLS, stream=True))
    for _ in range(5):
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        outputs = [{"type": "function_call_output", "call_id": call.call_id,
                    "output": json.dumps(lookup_order(json.loads(call.arguments)["order_id"]))}
                   for call in calls]
        response = _run(client.responses.create(
            model=model, previous_response_id=response.id, input=outputs, tools=TOOLS, stream=True))
    raise RuntimeError("the model kept calling tools")
