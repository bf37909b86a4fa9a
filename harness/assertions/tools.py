"""Tool assertions: ``tool_called``, ``tool_not_called``, ``tool_args``.

They look only at the tool calls of the response being asserted on (not at
calls replayed in the scenario's ``messages``), whatever the agent's output
kind: a tool call is an action the model asked for in *this* turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.assertions.kind import Kind, Result, Subject
from harness.assertions.reasons import LABEL_LIMIT, label_quote, show
from harness.assertions.structured import json_equal
from harness.core.entities import ToolCall


def _name(spec: Any) -> str:
    return str(spec["name"]) if isinstance(spec, Mapping) else str(spec)


def _calls(subject: Subject, name: str) -> list[ToolCall]:
    return [call for call in subject.output.tool_calls if call.name == name]


def _called_names(subject: Subject) -> str:
    """Which tools were called, for a reason that explains a miss."""
    names = [call.name for call in subject.output.tool_calls]
    return ", ".join(names) if names else "no tool calls"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


# --- tool_called / tool_not_called -----------------------------------------------------


def _tool_called_label(spec: Any) -> str:
    times = spec.get("times") if isinstance(spec, Mapping) else None
    return f"tool_called {_name(spec)}" + ("" if times is None else f" times={times}")


def _check_tool_called(spec: Any, subject: Subject) -> Result:
    """Called at least once, or exactly ``times`` times when given."""
    name = _name(spec)
    times = spec.get("times") if isinstance(spec, Mapping) else None
    count = len(_calls(subject, name))
    if times is None and count == 0:
        return "reject", f"{name} was not called (found: {_called_names(subject)})"
    if times is not None and count != times:
        return "reject", f"expected {name} called {_times(times)}, found {_times(count)}"
    return "pass", f"{name} called {_times(count)}"


def _tool_not_called_label(spec: Any) -> str:
    return f"tool_not_called {_name(spec)}"


def _check_tool_not_called(spec: Any, subject: Subject) -> Result:
    name = _name(spec)
    calls = _calls(subject, name)
    if calls:
        return "reject", (f"{name} was called {_times(len(calls))}, "
                          f"first with {show(calls[0].arguments)}")
    return "pass", f"{name} was not called (found: {_called_names(subject)})"


# --- tool_args ---------------------------------------------------------------------


def _tool_args_label(spec: Any) -> str:
    return f"tool_args {spec['name']} {label_quote(spec['args'], LABEL_LIMIT)}"


def mismatch(expected: Any, actual: Any, where: str = "args") -> str | None:
    """Why ``actual`` does not contain ``expected`` (``None`` when it does).

    Subset match: a mapping only needs the expected keys (recursively), so a
    scenario pins what matters and tolerates extra arguments; lists and
    scalars must be equal, because "some of the recipients" is rarely meant.
    """
    if isinstance(expected, Mapping):
        if not isinstance(actual, Mapping):
            return f"{where}: expected an object, found {show(actual)}"
        for key, value in expected.items():
            if key not in actual:
                return f"{where}.{key} is missing"
            problem = mismatch(value, actual[key], f"{where}.{key}")
            if problem:
                return problem
        return None
    if not json_equal(expected, actual):
        return f"{where}: expected {show(expected)}, found {show(actual)}"
    return None


def _check_tool_args(spec: Any, subject: Subject) -> Result:
    """Some call of the tool has arguments containing ``args``."""
    name = spec["name"]
    calls = _calls(subject, name)
    if not calls:
        return "reject", f"{name} was not called (found: {_called_names(subject)})"
    problems = []
    for number, call in enumerate(calls, start=1):
        problem = mismatch(spec["args"], call.arguments)
        if problem is None:
            return "pass", f"call {number} of {len(calls)} to {name} matches"
        problems.append(f"call {number}: {problem}" if len(calls) > 1 else problem)
    more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
    return "reject", f"no call of {name} matches: {'; '.join(problems[:3])}{more}"


KINDS: dict[str, Kind] = {
    "tool_called": Kind(_check_tool_called, _tool_called_label),
    "tool_not_called": Kind(_check_tool_not_called, _tool_not_called_label),
    "tool_args": Kind(_check_tool_args, _tool_args_label),
}
