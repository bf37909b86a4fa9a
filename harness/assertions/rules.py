"""Rules declared once: ``expect`` items of agent.yaml and tenant.yaml, applied to every scenario.

A limit asserted only in the scenarios that happened to set it is a hole
everywhere else (issue 18: ``max_questions`` asserted in 4 scenarios, the
plain-text render mode in 3 of 8, the SMS length cap in one). So an agent or a
tenant declares an item once::

    expect:                                  # agent.yaml or tenant.yaml
      - name: at most max_questions questions
        when: {expected: [ask]}
        json_path: {path: questions, max_items: "{{max_questions}}"}

and every scenario of that agent or tenant gets it, with the verdict labelled
by the level it came from (``agent``, ``tenant``; a scenario's own items are
``scenario``). Resolution happens at load time, once per scenario:

* ``{{param}}`` anywhere in the item is replaced by the scenario's template
  parameter (agent < tenant < scenario params); a value that is the whole
  ``{{param}}`` and reads as an integer becomes an integer, so
  ``max_items: "{{max_questions}}"`` is a number;
* ``when`` filters: ``types``, ``tags`` (globs, any), ``expected`` (the
  scenario's expected decision) are decided at load; ``actual`` (the decision
  in the output), ``present`` (JSON paths that must select something in the
  output) and ``tools`` (any of them called) are decided per answer, and an
  answer they do not fit gets ``not_evaluated`` for that item, with the reason;
* a scenario opts out of an inherited item only by name and with a reason
  (``opt_out: [{rule: ..., reason: ...}]``); an opt-out that names no item that
  applies is an error, and so is a scenario item that reuses an inherited name
  (that would be a silent opt-out);
* a tenant item replaces the agent item of the same name (the tenant sharpens
  the agent's rule, as rubric items do).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.assertions import check_item
from harness.assertions.jsonpath import Selections
from harness.assertions.jsonpath import parse as parse_path
from harness.core.entities import AgentOutput, JsonObject
from harness.core.errors import Problem

__all__ = ["LOAD_CONDITIONS", "RUN_CONDITIONS", "Rule", "check_rules", "merge_layers",
           "resolve_rules", "runtime_problem", "substitute"]

#: ``when`` conditions decided when the dataset is loaded.
LOAD_CONDITIONS = ("types", "tags", "expected")
#: ``when`` conditions decided on each answer.
RUN_CONDITIONS = ("actual", "present", "tools")
_PARAM = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_MIN_REASON = 10


@dataclass(frozen=True)
class Rule:
    """One declared item of agent.yaml or tenant.yaml, checked where it was declared."""

    name: str
    origin: str
    when: JsonObject
    item: JsonObject
    """``{name, <kind>: spec}`` with ``{{param}}`` references still in it."""
    templated: bool = True
    """Whether ``item`` may hold a ``{{param}}`` reference. One that holds none resolves to
    itself in every scenario, already checked where it was declared: :func:`resolve_rules`
    neither copies nor checks it again per scenario (1,684 copies in the examples)."""

    @cached_property
    def runtime(self) -> JsonObject:
        """Its per-answer conditions (``actual``, ``present``, ``tools``): one mapping per rule,
        the same object for every scenario it reaches (the loader shares checked items by it)."""
        return {key: self.when[key] for key in RUN_CONDITIONS if key in self.when}


def check_rules(items: Any, file: Path, origin: str, params: Mapping[str, Any],
                tools: Sequence[str] | None) -> tuple[tuple[Rule, ...], list[Problem]]:
    """A layer's ``expect`` items as rules, and every problem in them (all of them at once).
    ``tools``: the tool names ``when.tools`` may use; None when agent.yaml cannot know them
    (an SDK agent declares its tools on the wire, in its own code).

    Each item is checked with the layer's own params substituted, so a typo is
    reported once against the file that declares it, not once per scenario.
    """
    if items is None:
        return (), []
    if not isinstance(items, list):
        return (), [Problem(file, "expect", "must be a list of items",
                            "write expect: [{name: ..., <kind>: ...}, ...]")]
    rules: list[Rule] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, raw in enumerate(items):
        where = f"expect[{index}]"
        if not isinstance(raw, Mapping):
            problems.append(Problem(file, where, "must be a mapping with a name and one kind"))
            continue
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem(file, f"{where}.name", "is required for an item of "
                                    f"{file.name}", "name it: scenarios opt out of it by name"))
            continue
        if name in seen:
            problems.append(Problem(file, f"{where}.name", f"'{name}' is declared twice",
                                    "give each item its own name"))
            continue
        seen.add(name)
        when = raw.get("when") or {}
        found = _when_problems(when, tools)
        item = {key: value for key, value in raw.items() if key != "when"}
        resolved, missing = substitute(item, params)
        found += [f"{{{{{p}}}}} is not a parameter of {origin} {file.parent.name}" for p in missing]
        if not missing:
            found += check_item(resolved)
        problems.extend(Problem(file, where, reason, "see docs/assertions.md (Rules declared once)")
                        for reason in found)
        if not found:
            rules.append(Rule(name, origin, dict(when), item, templated="{{" in repr(item)))
    return tuple(rules), problems


def _when_problems(when: Any, tools: Sequence[str] | None) -> list[str]:
    if not isinstance(when, Mapping):
        return ["when must be a mapping of conditions"]
    problems = []
    for key, value in when.items():
        if key not in LOAD_CONDITIONS + RUN_CONDITIONS:
            problems.append(f"when.{key} is not a condition (use "
                            f"{', '.join(LOAD_CONDITIONS + RUN_CONDITIONS)})")
        elif not isinstance(value, list) or not value:
            problems.append(f"when.{key} must be a non-empty list")
        elif key == "present":
            for path in value:
                try:
                    parse_path(str(path))
                except ValueError as exc:
                    problems.append(f"when.present: {exc}")
        elif key == "tools" and tools is not None:
            unknown = sorted(set(map(str, value)) - set(tools))
            if unknown:
                problems.append(f"when.tools names tool(s) the agent does not declare: "
                                f"{', '.join(unknown)}")
    return problems


def substitute(value: Any, params: Mapping[str, Any]) -> tuple[Any, list[str]]:
    """``value`` with ``{{param}}`` references replaced, and the names that are not params."""
    missing: list[str] = []

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            whole = _PARAM.fullmatch(node.strip())
            if whole:
                name = whole.group(1)
                if name not in params:
                    missing.append(name)
                    return node
                found = params[name]
                if isinstance(found, str) and re.fullmatch(r"-?\d+", found.strip()):
                    return int(found)
                return found

            def one(match: re.Match[str]) -> str:
                if match.group(1) not in params:
                    missing.append(match.group(1))
                    return match.group(0)
                return str(params[match.group(1)])

            return _PARAM.sub(one, node)
        if isinstance(node, Mapping):
            return {key: walk(item) for key, item in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    return walk(value), missing


def merge_layers(*layers: Sequence[Rule]) -> tuple[Rule, ...]:
    """Agent then tenant rules; a tenant rule replaces the agent rule of its name in place."""
    merged: dict[str, Rule] = {}
    for layer in layers:
        for rule in layer:
            merged[rule.name] = rule
    return tuple(merged.values())


def _applies_at_load(when: Mapping[str, Any], scenario_type: str, tags: Sequence[str],
                     expected: Any) -> bool:
    if when.get("types") and scenario_type not in when["types"]:
        return False
    if when.get("tags") and not any(fnmatch.fnmatchcase(tag, str(glob))
                                    for tag in tags for glob in when["tags"]):
        return False
    return not ("expected" in when and expected not in when["expected"])


def resolve_rules(rules: Sequence[Rule], data: Mapping[str, Any], file: Path,
                  params: Mapping[str, Any], expected: Any,
                  ) -> tuple[list[tuple[JsonObject, str, JsonObject]], list[Problem]]:
    """The inherited items that apply to one scenario, as ``(item, origin, runtime when)``,
    and the problems of its ``opt_out`` list and of its params."""
    problems: list[Problem] = []
    own_names = {item.get("name") for item in data.get("expect") or [] if isinstance(item, Mapping)}
    opted: dict[str, str] = {}
    for index, entry in enumerate(data.get("opt_out") or []):
        named, reason = str(entry.get("rule", "")), str(entry.get("reason", "")).strip()
        if len(reason) < _MIN_REASON:
            problems.append(Problem(file, f"opt_out[{index}].reason",
                                    f"opting out of '{named}' needs a reason a reviewer can check",
                                    "say why this scenario is the exception (a sentence)"))
        opted[named] = reason
    applicable = [rule for rule in rules if _applies_at_load(
        rule.when, str(data.get("type", "")), [str(t) for t in data.get("tags") or []], expected)]
    names = {rule.name for rule in applicable}
    for index, entry in enumerate(data.get("opt_out") or []):
        named = str(entry.get("rule", ""))
        if named not in names:
            known = ", ".join(sorted(names)) or "(none apply to this scenario)"
            problems.append(Problem(file, f"opt_out[{index}].rule",
                                    f"'{named}' is not an agent or tenant rule that applies here",
                                    f"use one of: {known}"))
    resolved: list[tuple[JsonObject, str, JsonObject]] = []
    for rule in applicable:
        if rule.name in opted:
            continue
        if rule.name in own_names:
            problems.append(Problem(
                file, "expect", f"an item reuses the name of the {rule.origin} rule "
                f"'{rule.name}', which would replace it without a reason",
                f"rename the item, or add opt_out: [{{rule: {rule.name}, reason: ...}}]"))
            continue
        if rule.templated:
            item, missing = substitute(rule.item, params)
            bad = [f"{{{{{p}}}}} is not defined" for p in missing] or _checked_item(item)
        else:  # no reference to resolve: the item as check_rules checked it
            item, bad = rule.item, []
        if bad:
            problems.extend(Problem(file, "params", f"{rule.origin} rule '{rule.name}': {reason}",
                                    "define the parameter, or opt out of the rule with a reason")
                            for reason in bad)
            continue
        resolved.append((item, rule.origin, rule.runtime))
    return resolved, problems


#: :func:`check_item`'s answer per resolved item, by its ``repr`` (keys in order, types kept):
#: a rule resolves to the same item in every scenario whose params it reads agree, and the
#: committed examples checked the same few items against the expect schema ~500 times.
_CHECKED: dict[str, list[str]] = {}
_MAX_CHECKED = 4096


def _checked_item(item: Any) -> list[str]:
    """:func:`check_item` of a resolved rule item, once per distinct item per process."""
    key = repr(item)
    found = _CHECKED.get(key)
    if found is None:
        found = check_item(item)
        if len(_CHECKED) >= _MAX_CHECKED:
            _CHECKED.clear()
        _CHECKED[key] = found
    return list(found)


def runtime_problem(when: Mapping[str, Any], output: AgentOutput, decision_path: str,
                    selections: Selections | None = None) -> str | None:
    """Why an item's per-answer ``when`` does not hold for ``output`` (``None``: it holds).
    ``selections``: a memo of ``output.parsed``'s paths shared by the answer's items."""
    if selections is None or selections.doc is not output.parsed:
        selections = Selections(output.parsed)
    if "actual" in when:
        actual = _decision(output, decision_path, selections)
        if actual not in when["actual"]:
            return f"applies when the decision is {', '.join(map(str, when['actual']))}; found {actual}"
    if "present" in when:
        for path in when["present"]:
            if not _selects(output, str(path), selections):
                return f"applies when {path} is present; the answer has none"
    if "tools" in when:
        called = {call.name for call in output.tool_calls}
        if not called & set(when["tools"]):
            return f"applies when {', '.join(map(str, when['tools']))} is called; it was not"
    return None


def _decision(output: AgentOutput, path: str, selections: Selections) -> Any:
    found = selections.values(path) if output.parsed is not None else []
    return found[0] if len(found) == 1 and not isinstance(found[0], dict | list) else None


def _selects(output: AgentOutput, path: str, selections: Selections) -> bool:
    if output.parsed is None:
        return False
    return any(value not in (None, "", [], {}) for value in selections.values(path))
