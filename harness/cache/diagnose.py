"""Why a call missed: the nearest recorded request of its scenario iteration, and a readable diff.

``entry.json`` stores the canonical request, provider and model of every entry,
so on a miss the offline client compares the call with each entry recorded for
the same scenario iteration (same purpose first: an agent call is compared with
agent entries, a judge call with that judge's), picks the one with the fewest
differences and says what changed, in the order a person would check:
provider and model, system prompt lines (numbered), tools, options, the other
messages. Nothing is deleted or modified to find out.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache.layout import ENTRY_FILE
from harness.core.entities import ChatCall, JsonObject
from harness.requests.key import CACHE_FORMAT_VERSION

#: Changed system prompt lines shown before "... N more".
MAX_PROMPT_LINES = 8
#: Difference lines shown in all.
MAX_LINES = 24
_TEXT = 90


@dataclass(frozen=True)
class Nearest:
    """The closest recorded entry and what differs from the call that missed."""

    entry: Path
    recorded: str
    differences: list[str]


def nearest_entry(call: ChatCall, entries: list[Path]) -> Nearest | None:
    """The recorded entry closest to ``call`` (fewest differences), or ``None`` if none is readable."""
    candidates: list[tuple[int, int, Path, JsonObject, list[str]]] = []
    for folder in entries:
        meta = _meta(folder)
        if meta is None:
            continue
        differences, weight = describe_differences(call, meta)
        same_purpose = (meta.get("purpose") or "") == call.purpose
        candidates.append((0 if same_purpose else 1, weight, folder, meta, differences))
    if not candidates:
        return None
    candidates.sort(key=lambda c: str(c[3].get("created", "")), reverse=True)  # ties: the newest
    candidates.sort(key=lambda c: (c[0], c[1]))
    _, _, folder, meta, differences = candidates[0]
    return Nearest(folder, str(meta.get("created", "?")), differences)


def describe_differences(call: ChatCall, meta: JsonObject) -> tuple[list[str], int]:
    """Readable lines saying how ``call`` differs from a recorded entry, and a distance."""
    lines: list[str] = []
    weight = 0
    if (meta.get("purpose") or "") != call.purpose:
        lines.append(f"purpose: {meta.get('purpose') or 'agent'} -> {call.purpose or 'agent'}")
        weight += 50
    for name in ("provider", "model"):
        if meta.get(name) != getattr(call, name):
            lines.append(f"{name}: {meta.get(name)} -> {getattr(call, name)}")
            weight += 5
    recorded = _dict(meta.get("request"))
    current = call.request
    old_messages = _list(recorded.get("messages"))
    new_messages = _list(current.get("messages"))
    prompt_lines, prompt_weight = _system_diff(old_messages, new_messages)
    lines.extend(prompt_lines)
    weight += prompt_weight
    tool_line = _tools_diff(_list(recorded.get("tools")), _list(current.get("tools")))
    if tool_line:
        lines.append(tool_line)
        weight += 3
    option_line = _options_diff(_dict(recorded.get("options")), _dict(current.get("options")))
    if option_line:
        lines.append(option_line)
        weight += option_line.count(";") + 1
    message_lines = _messages_diff(old_messages, new_messages)
    lines.extend(message_lines)
    weight += len(message_lines)
    extra = sorted((set(recorded) | set(current)) - {"messages", "tools", "options"})
    for name in extra:
        if recorded.get(name) != current.get(name):
            lines.append(f"request {name}: {_short(recorded.get(name))} -> {_short(current.get(name))}")
            weight += 1
    if meta.get("format_version") not in (None, CACHE_FORMAT_VERSION):
        lines.append(f"cache format: recorded {meta.get('format_version')}, now {CACHE_FORMAT_VERSION}")
        weight += 1
    if not lines:
        lines.append("the request, provider and model are identical: the entry's key was computed "
                     "differently (another harness version?); re-record it")
    return lines, weight


def explain_miss(call: ChatCall, entries: list[Path], relative: Callable[[Path], str]) -> list[str]:
    """The lines a miss message adds: the nearest entry and what changed since it was recorded."""
    nearest = nearest_entry(call, entries)
    if nearest is None:
        return []
    shown = nearest.differences
    if len(shown) > MAX_LINES:
        shown = [*shown[:MAX_LINES], f"... and {len(nearest.differences) - MAX_LINES} more lines"]
    return [f"  nearest recorded entry: {relative(nearest.entry)} (recorded {nearest.recorded}); "
            "what changed since:", *(f"    {line}" for line in shown)]


def _meta(folder: Path) -> JsonObject | None:
    try:
        data = json.loads((folder / ENTRY_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _system_diff(old: list[Any], new: list[Any]) -> tuple[list[str], int]:
    lines: list[str] = []
    weight = 0
    old_system = [(i, m) for i, m in enumerate(old) if _role(m) == "system"]
    new_system = [(i, m) for i, m in enumerate(new) if _role(m) == "system"]
    for position in range(max(len(old_system), len(new_system))):
        label = "system prompt" if position == 0 else f"system message {position + 1}"
        if position >= len(old_system):
            lines.append(f"{label}: added")
            weight += 1
            continue
        if position >= len(new_system):
            lines.append(f"{label}: removed")
            weight += 1
            continue
        before = str(_dict(old_system[position][1]).get("content") or "").split("\n")
        after = str(_dict(new_system[position][1]).get("content") or "").split("\n")
        if before == after:
            continue
        changed = _line_diff(before, after)
        weight += len(changed)
        if len(changed) > MAX_PROMPT_LINES:
            changed = [*changed[:MAX_PROMPT_LINES],
                       f"... and {len(changed) - MAX_PROMPT_LINES} more changed lines"]
        lines.append(f"{label} changed:")
        lines.extend(f"  {line}" for line in changed)
    return lines, weight


def _line_diff(before: list[str], after: list[str]) -> list[str]:
    out: list[str] = []
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        out.extend(f"line {i + 1}: - {_clip(before[i])}" for i in range(i1, i2))
        out.extend(f"line {j + 1}: + {_clip(after[j])}" for j in range(j1, j2))
    return out


def _tools_diff(old: list[Any], new: list[Any]) -> str:
    before = {str(_dict(t).get("name")): _dict(t) for t in old}
    after = {str(_dict(t).get("name")): _dict(t) for t in new}
    parts: list[str] = []
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    if added:
        parts.append("added " + ", ".join(added))
    if removed:
        parts.append("removed " + ", ".join(removed))
    for name in sorted(set(before) & set(after)):
        fields = sorted(f for f in set(before[name]) | set(after[name])
                        if before[name].get(f) != after[name].get(f))
        if fields:
            parts.append(f"changed {name} ({', '.join(fields)})")
    if not parts and [_dict(t).get("name") for t in old] != [_dict(t).get("name") for t in new]:
        parts.append("reordered")
    return "tools: " + "; ".join(parts) if parts else ""


def _options_diff(old: JsonObject, new: JsonObject) -> str:
    parts: list[str] = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            parts.append(f"{name} added ({_short(new[name])})")
        elif name not in new:
            parts.append(f"{name} removed (was {_short(old[name])})")
        elif old[name] != new[name]:
            parts.append(f"{name} {_short(old[name])} -> {_short(new[name])}")
    return "options: " + "; ".join(parts) if parts else ""


def _messages_diff(old: list[Any], new: list[Any]) -> list[str]:
    lines: list[str] = []
    if len(old) != len(new):
        lines.append(f"messages: {len(old)} recorded, {len(new)} now")
    for index in range(min(len(old), len(new))):
        before, after = _dict(old[index]), _dict(new[index])
        if _role(before) == "system" and _role(after) == "system":
            continue  # shown line by line above
        if before == after:
            continue
        where = f"message {index + 1} ({_role(after)})"
        if _role(before) != _role(after):
            lines.append(f"{where}: role {_role(before)} -> {_role(after)}")
            continue
        if before.get("content") != after.get("content"):
            lines.append(f"{where} content: {_quote(before.get('content'))} -> "
                         f"{_quote(after.get('content'))}")
        for name in sorted((set(before) | set(after)) - {"role", "content"}):
            if before.get(name) != after.get(name):
                lines.append(f"{where} {name} changed")
    for index in range(len(old), len(new)):
        added = _quote(_dict(new[index]).get("content"))
        lines.append(f"message {index + 1} ({_role(new[index])}) added: {added}")
    for index in range(len(new), len(old)):
        lines.append(f"message {index + 1} ({_role(old[index])}) removed")
    return lines


def _role(message: Any) -> str:
    return str(_dict(message).get("role", "?"))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> JsonObject:
    return value if isinstance(value, dict) else {}


def _clip(text: str, limit: int = _TEXT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _quote(value: Any) -> str:
    if value is None:
        return "null"
    return json.dumps(_clip(" ".join(str(value).split()), 60), ensure_ascii=False)


def _short(value: Any) -> str:
    return _clip(json.dumps(value, ensure_ascii=False, sort_keys=True), 40)
