"""Which provider and model grade an item, with which options: resolved once, at load.

An item may name its own ``provider``/``model``/``options``; otherwise the
agent's ``judge:`` block gives them. With neither, the dataset is refused with
one wording for judges and rubric items alike, naming the file, the item and
the two ways to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core.entities import JsonObject
from harness.core.errors import Problem
from harness.graded.prompt import DEFAULT_OPTIONS

__all__ = ["NO_MODEL_FIX", "resolve_grader"]

#: The fix of an item with no grader model (the same for every kind).
NO_MODEL_FIX = ("add judge: {provider: ..., model: ...} to agent.yaml, or provider and model to "
                "this item")


def resolve_grader(noun: str, name: str, item: Mapping[str, Any], agent_judge: Mapping[str, Any],
                   file: Path, where: str) -> JsonObject | Problem:
    """``{provider, model, options}`` of an item, or the :class:`Problem` saying none is declared.

    ``noun`` names the kind in the message (``judge``, ``rubric item``); ``where`` is the
    item's field (``judge[0]``, ``rubric[2]``) in ``file``."""
    provider = item.get("provider") or agent_judge.get("provider")
    model = item.get("model") or agent_judge.get("model")
    if not provider or not model:
        return Problem(file, where, f"{noun} '{name}' has no judge model to grade it", NO_MODEL_FIX)
    options = {**DEFAULT_OPTIONS, **dict(agent_judge.get("options") or {}),
               **dict(item.get("options") or {})}
    return {"provider": str(provider), "model": str(model), "options": options}
