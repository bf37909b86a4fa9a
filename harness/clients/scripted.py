"""A fake provider that answers from a script file.

It carries the provider name and model id of the real provider, so the cache
it seeds has exactly the keys an offline replay will compute: the example
caches are recorded through the same write path as a paid refresh, without
spending money.
"""

from __future__ import annotations

import fnmatch
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.core.entities import ChatCall, ChatResponse, ToolCall, Usage
from harness.core.errors import ScriptError
from harness.documents.jsonlayout import pretty_json
from harness.documents.validation import read_document


class ScriptedClient:
    """Answers ``<tenant>/<scenario>`` calls from a script, in call order per iteration."""

    #: Recorded as the provenance of every entry it answers (``"source": "scripted"``).
    endpoint_kind = "scripted"

    def __init__(self, provider: str, model: str, script: dict[str, Any], *, source: str = "") -> None:
        self.provider = provider
        self.model = model
        self._script = script
        self._source = source or "the script"
        self._calls: defaultdict[tuple[str, int, str], int] = defaultdict(int)
        self._lock = threading.Lock()  # recording runs call it from several threads

    @classmethod
    def from_file(cls, provider: str, model: str, path: Path) -> ScriptedClient:
        """Load a script file (YAML or JSON mapping of ``<tenant>/<scenario>`` to answers)."""
        data, problem = read_document(path)
        if problem is not None:
            raise ScriptError(problem.render())
        if not isinstance(data, dict):
            raise ScriptError(f"{path}: a script must map '<tenant>/<scenario>' to answers")
        return cls(provider, model, data, source=str(path))

    def complete(self, call: ChatCall) -> ChatResponse:
        """The next scripted answer for the call's scenario, iteration and purpose.

        A judge call (purpose ``judge:<name>``) reads ``<tenant>/<scenario>#judge:<name>``;
        when that key is absent, the first key with a ``*`` that matches it as a glob
        (``*#judge:relevance``) answers instead.
        """
        agent, _, local_id = call.scenario_id.partition("/")
        if call.purpose:
            local_id = f"{local_id}#{call.purpose}"
        answers = self._lookup(local_id)
        if answers is None:
            raise ScriptError(f"{self._source} has no answer for '{local_id}' "
                              f"(scenario {call.scenario_id})")
        if not isinstance(answers, list):
            answers = [answers]
        counter = (call.scenario_id, call.iteration, call.purpose)
        with self._lock:
            index = self._calls[counter]
            self._calls[counter] += 1
        if index >= len(answers):
            raise ScriptError(f"{self._source}: '{local_id}' has {len(answers)} answer(s), "
                              f"call {index + 1} of iteration {call.iteration} has none")
        model = call.model if call.purpose else self.model  # a judge answers as its own model
        return response_of(answers[index], f"{self._source}: '{local_id}'[{index}]", model)

    def _lookup(self, local_id: str) -> Any:
        if local_id in self._script:
            return self._script[local_id]
        for pattern, answers in self._script.items():
            if "*" in str(pattern) and fnmatch.fnmatchcase(local_id, str(pattern)):
                return answers
        return None


def response_of(item: Any, where: str, model: str | None = None) -> ChatResponse:
    """One scripted answer (``content`` or ``json``, optional ``tool_calls``...) as a response.

    Scenario counterexamples use the same answer format, so they are read here too.
    """
    if not isinstance(item, dict):
        raise ScriptError(f"{where}: an answer must be a mapping with content or json")
    if ("content" in item) == ("json" in item):
        raise ScriptError(f"{where}: give exactly one of content or json")
    content = item.get("content")
    if "json" in item:
        content = pretty_json(item["json"], sort_keys=False)  # json.dumps(indent=2), in C
    usage = item.get("usage") or {}
    return ChatResponse(
        content=content,
        tool_calls=tuple(
            ToolCall(name=c["name"], arguments=dict(c.get("arguments") or {}))
            for c in item.get("tool_calls") or []
        ),
        finish_reason=item.get("finish_reason", "tool_calls" if item.get("tool_calls") else "stop"),
        usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
        model=model,
    )
