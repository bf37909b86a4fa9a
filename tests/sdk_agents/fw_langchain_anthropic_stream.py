"""Support triage on LangChain's ChatAnthropic, streamed, with a tool loop."""

import json

from langchain_anthropic import ChatAnthropic
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool

ORDERS = {"A-1001": {"status": "delayed", "carrier": "DHL"}, "B-2001": {"status": "lost", "carrier": "FedEx"}}


@tool
def lookup_order(order_id: str) -> str:
    """Find an order's shipping status by its number, e.g. A-1001."""
    return json.dumps(ORDERS.get(order_id, {"status": "not_found"}))


def triage(scenario):
    model = ChatAnthropic(model="claude-sonnet-4-5", max_tokens=500, streaming=True)
    model = model.bind_tools([lookup_order])
    messages = [HumanMessage(scenario.input)]
    for _ in range(5):
        reply = None
        for chunk in model.stream(messages):
            reply = chunk if reply is None else reply + chunk
        messages.append(reply)
        if not reply.tool_calls:
            return reply.text() if callable(getattr(reply, "text", None)) else str(reply.content)
        for call in reply.tool_calls:
            messages.append(ToolMessage(lookup_order.invoke(call["args"]), tool_call_id=call["id"]))
    raise RuntimeError("the model kept calling tools")
