"""Load time: rubric items of agent.yaml, tenant.yaml and scenario files, checked and merged.

Each layer is checked once, where it is declared (an agent item without a judge
model is reported against ``agent.yaml``, not against every scenario), then a
scenario's items are merged: agent, then tenant, then scenario, a more specific
item replacing one of the same name, so a tenant can sharpen an agent's rule
without copying the others. A resolved item is a plain mapping
``{name, rule, when, provider, model, options, origin}``: a run needs nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.core.entities import JsonObject
from harness.core.errors import Problem
from harness.graded.grader import resolve_grader
from harness.rubric.grade import RUBRIC


def check_rubric(items: Sequence[Mapping[str, Any]] | None, agent_judge: Mapping[str, Any],
                 tools: Sequence[Mapping[str, Any]] | None, file: Path, origin: str,
                 ) -> tuple[tuple[JsonObject, ...], list[Problem]]:
    """One layer's items resolved against the agent's judge model, and every problem in them.

    The schema has already checked the shape; this checks what it cannot: a name
    given twice in one file, an item with no judge model to grade it, and a
    ``when.tools`` entry naming a tool the agent does not declare (``tools`` None: agent.yaml
    cannot know them, an SDK agent declares its tools on the wire, in its own code).
    """
    resolved: list[JsonObject] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    declared = {str(tool.get("name")) for tool in tools or ()}
    for index, item in enumerate(items or []):
        where = f"rubric[{index}]"
        name = str(item["name"])
        if name in seen:
            problems.append(Problem(file, f"{where}.name", f"rubric item '{name}' is declared twice",
                                    "keep one, or give the second another name"))
            continue
        seen.add(name)
        grader = resolve_grader(RUBRIC.noun, name, item, agent_judge, file, where)
        if isinstance(grader, Problem):
            problems.append(grader)
            continue
        when = dict(item.get("when") or {})
        unknown = sorted(set(when.get("tools") or []) - declared) if tools is not None else []
        if unknown:
            problems.append(Problem(
                file, f"{where}.when.tools",
                f"names tool(s) the agent does not declare: {', '.join(unknown)}",
                f"use one of {', '.join(sorted(declared)) or '(the agent declares no tool)'}"))
            continue
        resolved.append({"name": name, "rule": str(item["rule"]).strip(), "when": when,
                         "provider": grader["provider"], "model": grader["model"],
                         "options": grader["options"], "origin": origin})
    return tuple(resolved), problems


def merge_rubric(*layers: Sequence[JsonObject]) -> tuple[JsonObject, ...]:
    """Items of the layers, least specific first; a later item replaces an earlier namesake
    in place (the report keeps the agent's order of rules)."""
    merged: dict[str, JsonObject] = {}
    for layer in layers:
        for item in layer:
            merged[str(item["name"])] = item
    return tuple(merged.values())
