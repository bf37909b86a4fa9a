"""Run one agent on one scenario iteration: request -> client(s) -> parsed output.

A declared agent (``agent.yaml``) calls the model with the canonical request.
When the model calls tools and the scenario scripts their results
(``tool_results``), the results are fed back and the model is called again,
up to ``max_tool_rounds`` times: a lookup -> result -> draft flow is one
scenario. A tool call without a scripted result ends the turn; that call is
the agent's final action (``file_draft`` filed for approval, say). Each call
gets its own cache entry under the iteration, keyed by everything before it.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from harness.clients.caching import BoundClient
from harness.entities import Agent, AgentOutput, ChatResponse, JsonObject, Scenario

_NO_RESULT = object()


#: The signature of a Python agent: it gets the bound chat client, the canonical request
#: built from agent.yaml and the scenario, and returns its final response (or its text).
PythonAgent = Callable[[BoundClient, JsonObject, Scenario], "ChatResponse | str"]


def load_entrypoint(entrypoint: str, root: Path) -> PythonAgent:
    """Import ``module:function`` with the project root first on ``sys.path``."""
    module_name, _, function = entrypoint.partition(":")
    if not function:
        raise ValueError("expected module:function")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    target = getattr(importlib.import_module(module_name), function)
    if not callable(target):
        raise ValueError(f"{entrypoint} is not callable")
    return cast(PythonAgent, target)


def run_agent(agent: Agent, request: JsonObject, client: BoundClient, scenario: Scenario) -> AgentOutput:
    """Run a Python agent (``entrypoint``) or a declared one, and parse its final answer.

    A Python agent calls ``client.complete(request)`` as often as it needs; every
    call is keyed and cached like a declared agent's, so it replays offline too.
    """
    if not agent.entrypoint:
        return run_declared_agent(agent, request, client, scenario)
    function = load_entrypoint(agent.entrypoint, agent.directory.parent.parent)
    answer = function(client, request, scenario)
    response = answer if isinstance(answer, ChatResponse) else ChatResponse(content=str(answer))
    return parse_output(agent, response)


def run_declared_agent(
    agent: Agent, request: JsonObject, client: BoundClient, scenario: Scenario | None = None
) -> AgentOutput:
    """Call the model (looping over scripted tool results), then parse the final answer."""
    tool_results = scenario.tool_results if scenario is not None else {}
    response = client.complete(request)
    steps = [response]
    messages = list(request["messages"])
    used: dict[str, int] = {}
    next_id = _ids_in(messages)
    for _ in range(agent.max_tool_rounds if tool_results else 0):
        if not response.tool_calls:
            break
        results = [_next_result(tool_results, call.name, used) for call in response.tool_calls]
        if any(result is _NO_RESULT for result in results):
            break
        ids = [f"call_{next_id + n}" for n in range(len(results))]
        next_id += len(results)
        messages.append({
            "role": "assistant",
            "content": response.content,
            "tool_calls": [{"id": i, "name": c.name, "arguments": c.arguments}
                           for i, c in zip(ids, response.tool_calls, strict=True)],
        })
        messages.extend({"role": "tool", "tool_call_id": i, "content": _as_text(result)}
                        for i, result in zip(ids, results, strict=True))
        response = client.complete({**request, "messages": list(messages)})
        steps.append(response)
    output = parse_output(agent, response)
    if len(steps) > 1:
        added = tuple(messages[len(request["messages"]):])
        output = AgentOutput(output.response, output.text, output.parsed, output.parse_error,
                             steps=tuple(steps), loop_messages=added)
    return output


def _ids_in(messages: list[Any]) -> int:
    """How many tool-call ids the canonical request already uses (``call_0`` ...)."""
    return sum(len(m.get("tool_calls") or []) for m in messages)


def _next_result(tool_results: JsonObject, name: str, used: dict[str, int]) -> Any:
    """The scripted result of the next call of ``name``; a list is consumed in order."""
    if name not in tool_results:
        return _NO_RESULT
    value = tool_results[name]
    if not isinstance(value, list):
        return value
    index = used.get(name, 0)
    used[name] = index + 1
    return value[index] if index < len(value) else _NO_RESULT


def _as_text(result: Any) -> str:
    """Tool results travel as text; structured ones as compact JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                              sort_keys=True)


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
