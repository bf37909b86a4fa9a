"""Support triage on LangChain (langchain-openai's ChatOpenAI, a tool bound, a manual tool loop)."""

import json

from langchain_core.messages import HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

ORDERS = {"A-1001": {"status": "delayed", "carrier": "DHL"}, "B-2001": {"status": "lost", "carrier": "FedEx"}}


@tool
def lookup_order(order_id: str) -> str:
    """Find an order's shipping status by its number, e.g. A-1001."""
    return json.dumps(ORDERS.get(order_id, {"status": "not_found"}))


model = ChatOpenAI(model="gpt-4o-mini", temperature=0).bind_tools([lookup_order])


def triage(scenario):
    messages = [SystemMessage("You triage customer support messages. Look orders up with lookup_order, "
                              'then answer only JSON: {"category": ..., "priority": ..., "reply": ...}.'),
                HumanMessage(scenario.input)]
    for _ in range(5):
        reply = model.invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return json.loads(reply.content)
        for call in reply.tool_calls:
            messages.append(ToolMessage(lookup_order.invoke(call["args"]), tool_call_id=call["id"]))
    raise RuntimeError("the model kept calling tools")
