"""Run one agent on one scenario iteration: request -> client -> parsed output.

A declared agent (``agent.yaml``) makes one call with the canonical request
and parses the answer according to its ``output`` kind. The client it gets is
bound to the scenario iteration, so an agent implementation that needs several
calls (a tool loop) gets one cache entry per call.
"""

from __future__ import annotations

import json

from harness.clients.caching import BoundClient
from harness.entities import Agent, AgentOutput, ChatResponse, JsonObject


def run_declared_agent(agent: Agent, request: JsonObject, client: BoundClient) -> AgentOutput:
    """One call, then the output parsed per the agent's contract."""
    response = client.complete(request)
    return parse_output(agent, response)


def parse_output(agent: Agent, response: ChatResponse) -> AgentOutput:
    """Decode a JSON output; a parse failure is recorded, not raised (assertions reject it)."""
    text = response.content or ""
    if agent.output != "json":
        return AgentOutput(response=response, text=text, parsed=None)
    try:
        parsed = json.loads(_strip_fence(text))
    except json.JSONDecodeError as exc:
        return AgentOutput(response=response, text=text, parsed=None,
                           parse_error=f"output is not valid JSON: {exc.msg} at char {exc.pos}")
    return AgentOutput(response=response, text=text, parsed=parsed)


def _strip_fence(text: str) -> str:
    """Models often wrap JSON in a ```json fence; the contract is the JSON inside."""
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        body = stripped[3:-3]
        newline = body.find("\n")
        return body[newline + 1:] if newline != -1 else body
    return stripped
