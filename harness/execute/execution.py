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
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from harness.clients.caching import BoundClient
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, ChatResponse, JsonObject, ScenarioInput
from harness.requests.request import merged_params
from harness.wire.answers import answer_response
from harness.wire.exchange import AUXILIARY

if TYPE_CHECKING:
    from harness.wire.binding import WireBinding

_NO_RESULT = object()


#: A Python agent: ``(scenario_input)`` (its SDK calls answered at the wire) or the older
#: ``(client, request, scenario)`` driving the harness's client; it returns its answer.
PythonAgent = Callable[..., Any]


def load_entrypoint(entrypoint: str, root: Path, agent_dir: Path | None = None) -> PythonAgent:
    """Import ``module:function`` (the project root first on ``sys.path``) or ``file.py:function``
    (a file beside agent.yaml, so an agent's code can live in its dataset folder).

    Loaded once per process and remembered (every iteration of the agent asks; resolving the
    file's path alone costs more than many a replayed call). One that fails is not remembered:
    each iteration reports the failure as its own error.
    """
    place = (entrypoint, root, agent_dir)
    found = _LOADED.get(place)
    if found is None:
        found = _LOADED[place] = _load_entrypoint(entrypoint, root, agent_dir)
    return found


#: Entrypoints loaded by this process, by (entrypoint, project root, agent folder).
_LOADED: dict[tuple[str, Path, Path | None], PythonAgent] = {}
#: The same, by (entrypoint, agent folder) as :func:`run_agent` asks each iteration: deriving
#: the root's path and hashing two new paths cost ~15 us of every replayed iteration.
_AGENT_ENTRYPOINTS: dict[tuple[str, Path], PythonAgent] = {}


def _load_entrypoint(entrypoint: str, root: Path, agent_dir: Path | None) -> PythonAgent:
    module_name, _, function = entrypoint.partition(":")
    if not function:
        raise ValueError("expected module:function or file.py:function")
    from harness.wire.placeholder import install_placeholders

    install_placeholders()  # an SDK client built at import time constructs with no real key
    if module_name.endswith(".py"):
        module = _module_from_file((agent_dir or root) / module_name)
    else:
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        module = importlib.import_module(module_name)
    target = getattr(module, function)
    if not callable(target):
        raise ValueError(f"{entrypoint} is not callable")
    return cast(PythonAgent, target)


def find_entrypoint(entrypoint: str, root: Path, agent_dir: Path) -> str | None:
    """Why ``entrypoint`` cannot be loaded (None: its module or file exists), without importing it."""
    module_name, _, function = entrypoint.partition(":")
    if not function:
        return "expected module:function or file.py:function"
    if module_name.endswith(".py"):
        return None if (agent_dir / module_name).is_file() else f"no file {module_name} beside agent.yaml"
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # noqa: BLE001 - a parent package's own code raised on import
        return f"{type(exc).__name__}: {exc}"
    return None if found is not None else f"No module named {module_name!r}"


def _module_from_file(path: Path) -> Any:
    """The module of an agent file, imported once per process under a name derived from its path."""
    name = "harness_agent_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def run_agent(agent: Agent, request: JsonObject, client: BoundClient, scenario: Scenario,
              wire: WireBinding | None = None, *, iteration: int = 0,
              tenant_params: JsonObject | None = None) -> AgentOutput:
    """Run a Python agent (``entrypoint``) or a declared one, and parse its final answer.

    A Python agent that takes ``(client, request, scenario)`` calls
    ``client.complete(request)`` as often as it needs. One that takes just the
    scenario gets a :class:`~harness.core.entities.ScenarioInput` and calls its model
    through the official SDKs as in production; ``wire`` answers those calls from
    the cache (:mod:`harness.wire`). Either way every call is keyed and cached, and
    the tool calls of the wire exchanges are the agent's tool calls.
    """
    if agent.command and wire is not None:
        from harness.wire.command import run_command_agent

        view = scenario_input(agent, scenario, iteration, request, tenant_params or {})
        text = run_command_agent(agent, view, wire)
        return _with_exchanges(parse_output(agent, answer_response(text)), wire)
    if not agent.entrypoint:
        return run_declared_agent(agent, request, client, scenario)
    with _bound(wire):  # the import too: a request the module makes as it loads is the run's
        function = _AGENT_ENTRYPOINTS.get((agent.entrypoint, agent.directory))
        if function is None:  # the project root (two folders up) is resolved on the first call only
            function = _AGENT_ENTRYPOINTS[(agent.entrypoint, agent.directory)] = load_entrypoint(
                agent.entrypoint, agent.directory.parent.parent, agent.directory)
        old_kind = takes_client(function)
        if old_kind:
            answer: Any = function(client, request, scenario)
        else:
            view = scenario_input(agent, scenario, iteration, request, tenant_params or {})
            answer = call_agent(cast(Callable[[ScenarioInput], Any], function), view)
    output = parse_output(agent, answer_response(answer), answer)
    if wire is not None and (wire.exchanges or not old_kind):
        output = _with_exchanges(output, wire)
    return output


def _with_exchanges(output: AgentOutput, wire: WireBinding) -> AgentOutput:
    """The agent's tool calls and declared tools, from its wire exchanges."""
    tools = {tool["name"]: tool for exchange in wire.exchanges for tool in exchange.tools}
    turns = tuple(_turn(exchange.api, exchange.response) for exchange in wire.exchanges)
    return replace(output, steps=tuple(exchange.response for exchange in wire.exchanges),
                   wire_tools=tuple(tools.values()), loop_messages=turns)


def _turn(api: str, response: ChatResponse) -> JsonObject:
    """One model answer of a wire exchange, as the transcript of reports shows it (a token count
    or a moderation is no model turn: shown as a ``call`` that says what it answered)."""
    if api in AUXILIARY:
        tokens = response.usage.input_tokens
        said = (f"{tokens} input tokens" if tokens
                else "flagged" if response.finish_reason == "content_filter" else "not flagged")
        return {"role": "call", "api": api, "content": said}
    turn: JsonObject = {"role": "assistant", "api": api, "content": response.content}
    if response.tool_calls:
        turn["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls]
    return turn


def takes_client(function: Callable[..., Any]) -> bool:
    """Whether an entrypoint is the older kind, ``(client, request, scenario)``.

    Cached per function (``inspect.signature`` costs ~50 us, paid by every iteration
    otherwise); a callable that cannot be hashed is inspected each time.
    """
    try:
        return _takes_client(function)
    except TypeError:  # unhashable callable object
        return _takes_client.__wrapped__(function)


@lru_cache(maxsize=64)
def _takes_client(function: Callable[..., Any]) -> bool:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 3 or (bool(positional) and positional[0].name == "client")


def call_agent(function: Callable[[ScenarioInput], Any], view: ScenarioInput) -> Any:
    """Call a scenario-only agent; an ``async def`` one runs to completion on the process's one
    agent loop (:mod:`harness.wire.agentloop`: a client built at import time keeps working)."""
    answer = function(view)
    if inspect.isawaitable(answer):
        from harness.wire.agentloop import run_on_agent_loop

        return run_on_agent_loop(answer)
    return answer


def scenario_input(agent: Agent, scenario: Scenario, iteration: int, request: JsonObject,
                   tenant_params: JsonObject) -> ScenarioInput:
    """The plain view of a scenario a Python agent receives (templates rendered)."""
    messages = tuple(dict(m) for m in request["messages"]
                     if not (m.get("role") == "system" and not m.get("content")))
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    return ScenarioInput(
        id=scenario.id, agent=scenario.agent, tenant=scenario.tenant, name=scenario.name,
        iteration=iteration, input=users[-1]["content"] if users else None, messages=messages,
        params=merged_params(agent, tenant_params, scenario), tenant_params=dict(tenant_params),
        context=scenario.context, type=scenario.type, tags=scenario.tags)


@contextmanager
def _bound(wire: WireBinding | None) -> Iterator[None]:
    if wire is None:
        yield
        return
    from harness.wire.intercept import bound

    with bound(wire):
        yield


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


def parse_output(agent: Agent, response: ChatResponse, answer: Any = None) -> AgentOutput:
    """Decode a JSON output; a parse failure is recorded, not raised (assertions reject it).

    ``answer`` is a Python agent's own return value: a dict or list it returned is
    the parsed output as it is.
    """
    text = response.content or ""
    if agent.output != "json":
        return AgentOutput(response=response, text=text, parsed=None)
    if isinstance(answer, dict | list):
        return AgentOutput(response=response, text=text, parsed=answer)
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
