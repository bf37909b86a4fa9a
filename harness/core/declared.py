"""What the datasets declare: an agent (``agent.yaml``) and a scenario (its file), as loaded.

The loader builds these once per run and every stage reads them; nothing writes them after.
They live apart from the records passed between stages (:mod:`harness.core.entities`)
because a run holds every scenario for its whole length, so :class:`Scenario` is laid out
to keep as little as it can (a shared folder, one user turn as its text, the rare fields
as one shared instance), and that machinery is this module's alone.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from harness.core.entities import JsonObject


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent (skill under test) as declared in ``<agent>/agent.yaml``."""

    name: str
    directory: Path
    provider: str
    model: str
    system_prompt: str
    """Prompt text with line endings normalised to ``\\n`` (template, not yet rendered)."""
    system_prompt_file: Path | None
    """None for a Python or command agent that declares no prompt (its own code holds it)."""
    options: JsonObject
    """Answer-changing options (temperature, max_tokens, seed, response_format...)."""
    tools: tuple[JsonObject, ...]
    output: Literal["text", "json"]
    output_schema: JsonObject | None
    script_file: Path | None
    """Script of the scripted fake provider, used to seed the cache without spending money."""
    endpoint: JsonObject = field(default_factory=dict)
    """Connection settings (base_url, timeout...). Never part of the key."""
    params: JsonObject = field(default_factory=dict)
    """Default template parameters, overridden by tenant then scenario params."""
    judge: JsonObject = field(default_factory=dict)
    """Default judge model (``provider``, ``model``, ``options``) and ``evaluators``."""
    metrics: tuple[JsonObject, ...] = ()
    """Deterministic metrics over the agent's scenarios (see :mod:`harness.assertions.metrics`)."""
    rubric: tuple[JsonObject, ...] = ()
    """Rubric items of every scenario of the agent, resolved (see :mod:`harness.rubric`)."""
    decision_path: str = "decision"
    """JSON path of the decision in a json output: expected and actual decisions in records."""
    max_tool_rounds: int = 4
    """How many times scripted tool results are fed back before the turn is cut short."""
    entrypoint: str = ""
    """``module:function`` of a Python agent that drives the chat client itself (empty: declared)."""
    tool_schema: bool = True
    """Check every tool call against the declared tool parameters (the ``tool_schema`` assertion)."""
    command: tuple[str, ...] = ()
    """An agent in any language, run as a subprocess against a loopback replay endpoint."""
    command_timeout_s: float = 300.0

    @property
    def at_the_wire(self) -> bool:
        """Whether the agent's own code calls its model (its exchanges are cached at the wire)."""
        return bool(self.entrypoint or self.command)

    @property
    def tools_known(self) -> bool:
        """Whether agent.yaml names the tools its answers may call. An SDK agent's code declares
        them on the wire, per request: a load-time check of a ``when.tools`` name has nothing to
        check it against (its answers' calls are judged against the wire's tools)."""
        return bool(self.tools) or not self.at_the_wire

    require_provenance: str = ""
    """``provider``: answers must come from the provider (:mod:`harness.running.provenance_gate`);
    ``any``: no requirement; empty: the project's ``[tool.harness]`` default."""


#: The folder of every scenario file, one ``Path`` per folder (:class:`Scenario` keeps the
#: folder and the file name: a ``Path`` per file held ~350 bytes per scenario, 17 MB at 50,000).
_FOLDERS: dict[str, Path] = {}


def _shared_folder(folder: Path) -> Path:
    found = _FOLDERS.get(str(folder))
    if found is None:
        found = _FOLDERS[str(folder)] = folder
    return found


@dataclass(frozen=True, slots=True)
class _Rare:
    """The fields most scenarios leave empty, held apart: a scenario that sets none of them
    shares one instance (:data:`_NO_RARE`) instead of nine references to empty values of its
    own (72 bytes at 50,000 scenarios is 3.6 MB)."""

    context: str | None
    params: JsonObject
    judge: tuple[JsonObject, ...]
    tags: tuple[str, ...]
    tool_results: JsonObject
    counterexamples: tuple[JsonObject, ...]
    rubric: tuple[JsonObject, ...]
    equivalent_mutants: tuple[JsonObject, ...]
    review: JsonObject


#: The empty mapping of an unset ``params``, ``tool_results`` or ``review`` (read, never written).
_NO_MAPPING: JsonObject = {}


def _one_user_turn(messages: tuple[JsonObject, ...]) -> str | None:
    """The text of ``messages`` when they are one ``{"role": "user", "content": <text>}`` turn
    (the form ``input:`` becomes), else None: such a scenario keeps the text alone."""
    if len(messages) != 1:
        return None
    turn = messages[0]
    if type(turn) is not dict or list(turn) != ["role", "content"] or turn["role"] != "user":
        return None
    content = turn["content"]
    return content if type(content) is str else None


@dataclass(frozen=True, slots=True, init=False)
class Scenario:
    """One scenario file: ``<agent>/<tenant>/<name>.yaml|json``.

    A run of 50,000 scenarios holds every one of them for the whole run, so a scenario keeps
    as little as it can and rebuilds the rest when asked: its file from a shared folder and
    an interned extension, a single user turn as its text, the rarely set fields as one
    ``None`` (:class:`_Rare`). Every field reads as declared below.
    """

    agent: str
    tenant: str
    name: str
    folder: Path
    """The folder of its file (one object shared by every scenario of the folder)."""
    _file_tail: str | tuple[str]
    """The file name after ``name`` (``.yaml``, interned), or ``(file name,)`` when it does
    not start with ``name``."""
    type: str
    description: str
    _turns: str | tuple[JsonObject, ...]
    """The text of a single user turn, or every turn."""
    iterations: int
    expect: tuple[JsonObject, ...]
    _rare: _Rare

    def __init__(self, agent: str, tenant: str, name: str, file: Path, type: str,  # noqa: A002
                 description: str, messages: tuple[JsonObject, ...], context: str | None,
                 params: JsonObject, iterations: int, expect: tuple[JsonObject, ...],
                 judge: tuple[JsonObject, ...], tags: tuple[str, ...] = (),
                 tool_results: JsonObject | None = None,
                 counterexamples: tuple[JsonObject, ...] = (), rubric: tuple[JsonObject, ...] = (),
                 equivalent_mutants: tuple[JsonObject, ...] = (),
                 review: JsonObject | None = None) -> None:
        """Fields as declared, but the file is given whole (``file``) and kept as its shared
        folder and its name."""
        put = object.__setattr__
        put(self, "agent", agent)
        put(self, "tenant", tenant)
        put(self, "name", name)
        put(self, "folder", _shared_folder(file.parent))
        file_name = file.name
        put(self, "_file_tail", sys.intern(file_name[len(name):]) if file_name.startswith(name)
            else (file_name,))
        put(self, "type", type)
        put(self, "description", description)
        text = _one_user_turn(messages)
        put(self, "_turns", text if text is not None else messages)
        put(self, "iterations", iterations)
        put(self, "expect", expect)
        rare = _Rare(context, params or _NO_MAPPING, judge, tags, tool_results or _NO_MAPPING,
                     counterexamples, rubric, equivalent_mutants, review or _NO_MAPPING)
        put(self, "_rare", _NO_RARE if rare == _NO_RARE else rare)

    @property
    def file_name(self) -> str:
        """The scenario file's name (``<name>.yaml``)."""
        tail = self._file_tail
        return self.name + tail if isinstance(tail, str) else tail[0]

    @property
    def file(self) -> Path:
        """The scenario file (built on demand from its folder and name)."""
        return self.folder / self.file_name

    @property
    def id(self) -> str:
        """The scenario's identity: its path under the datasets root, without extension."""
        return f"{self.agent}/{self.tenant}/{self.name}"

    @property
    def messages(self) -> tuple[JsonObject, ...]:
        """Conversation turns after the system prompt (``input`` becomes one user turn); a new
        tuple of new turns on every call when the scenario has one user turn."""
        turns = self._turns
        return ({"role": "user", "content": turns},) if isinstance(turns, str) else turns

    @property
    def context(self) -> str | None:
        return self._rare.context

    @property
    def params(self) -> JsonObject:
        return self._rare.params

    @property
    def judge(self) -> tuple[JsonObject, ...]:
        return self._rare.judge

    @property
    def tags(self) -> tuple[str, ...]:
        return self._rare.tags

    @property
    def tool_results(self) -> JsonObject:
        """Scripted results per tool name (one value, or a list used in call order)."""
        return self._rare.tool_results

    @property
    def counterexamples(self) -> tuple[JsonObject, ...]:
        """Known-wrong answers the hard assertions must reject (never keyed, never sent)."""
        return self._rare.counterexamples

    @property
    def rubric(self) -> tuple[JsonObject, ...]:
        """Rubric items (agent, tenant and scenario ones, resolved): graded pass/fail, never gating."""
        return self._rare.rubric

    @property
    def equivalent_mutants(self) -> tuple[JsonObject, ...]:
        """Generated mutants that are still right answers (``match`` glob, ``reason``): reported as
        equivalent, left out of the mutant strength (see :mod:`harness.mutants`)."""
        return self._rare.equivalent_mutants

    @property
    def review(self) -> JsonObject:
        """Who last reviewed the scenario and its recorded answer (``reviewer``, ``reviewed_at``),
        copied into every per-test record; empty when nobody has."""
        return self._rare.review


#: The rare fields of a scenario that sets none of them.
_NO_RARE = _Rare(None, _NO_MAPPING, (), (), _NO_MAPPING, (), (), (), _NO_MAPPING)
