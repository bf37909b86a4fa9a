"""Support triage on pydantic-ai: an Agent with a tool and a structured output."""

import json

from pydantic import BaseModel
from pydantic_ai import Agent

ORDERS = {"A-1001": {"status": "delayed", "carrier": "DHL"}, "B-2001": {"status": "lost", "carrier": "FedEx"}}


class Decision(BaseModel):
    category: str
    priority: str
    reply: str


agent = Agent("openai:gpt-4o-mini",
              system_prompt="You triage customer support messages. Look orders up with lookup_order.")


@agent.tool_plain
def lookup_order(order_id: str) -> str:
    """Find an order's shipping status by its number, e.g. A-1001."""
    return json.dumps(ORDERS.get(order_id, {"status": "not_found"}))


def triage(scenario):
    result = agent.run_sync(scenario.input)
    return result.output
