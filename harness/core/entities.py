"""Plain records passed between the stages of the data flow.

Every arrow of ``datasets -> request -> key -> client -> assertions -> records``
carries one of these frozen dataclasses, so a reader can follow a single
scenario from its file to its result without jumping back and forth.
JSON-shaped payloads (messages, options, tool schemas, parsed outputs) stay
plain ``dict``/``list`` values because they are hashed and stored as JSON.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

JsonObject = dict[str, Any]

#: Ternary verdict of one hard assertion; ``reject`` wins over ``pass``.
Outcome = Literal["pass", "reject", "not_evaluated"]

#: What happened to one scenario iteration, in decreasing order of severity.
Status = Literal["rejected", "missed", "expired", "corrupt", "error", "unchecked", "toothless",
                 "passed"]

#: Statuses that fail a run (everything but ``passed``). The one definition: runs, reports,
#: JUnit and the pytest plugin all ask this set (or :data:`REPLAY_FAILURES`), never a copy.
FAILING_STATUSES: frozenset[str] = frozenset(get_args(Status)) - {"passed"}
#: Statuses of an iteration the cache could not replay (nothing after the failing call was read).
REPLAY_FAILURES: frozenset[str] = frozenset({"missed", "expired", "corrupt", "error"})
#: Failing statuses of an answer that was obtained and judged (a JUnit ``failure``, where a
#: replay failure is an ``error``).
ANSWER_FAILURES: frozenset[str] = FAILING_STATUSES - REPLAY_FAILURES
#: Scenario types whose reject is a blocking finding (a safety rule was broken).
BLOCKING_TYPES: tuple[str, ...] = ("negative", "adversarial")


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


@dataclass(frozen=True, slots=True)
class ChatCall:
    """One call to a chat client, with everything needed to key and explain it."""

    scenario_id: str
    iteration: int
    provider: str
    model: str
    request: JsonObject
    """The canonical request: ``{"messages": [...], "options": {...}, "tools": [...]}``."""
    purpose: str = ""
    """Why the call was made: empty for the agent, ``judge:<name>`` for a judge. Never keyed."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call requested by the model; ids are volatile and never stored."""

    name: str
    arguments: JsonObject


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by the provider (zero when unknown)."""

    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ChatResponse:
    """The provider-neutral response the harness stores and asserts on."""

    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    model: str | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    """The result of one hard assertion."""

    assertion: str
    """A short label such as ``json_path decision == 'ask'``."""
    outcome: Outcome
    reason: str
    origin: str = ""
    """The level of the item that gave it: ``agent`` or ``tenant`` (declared once for every
    scenario), ``scenario``; empty for implicit checks (``tool_schema``) and old records."""
    crashed: bool = False
    """The check raised instead of judging (its reason starts with ``assertion crashed:``): still
    a ``reject`` (a crash must not pass), but not a verdict on the answer; ``check`` reports it,
    and a counterexample it "rejects" is not caught."""


@dataclass(frozen=True, slots=True)
class JudgeScore:
    """One judge's score of one scenario iteration: reported, never gating."""

    name: str
    score: int | None
    """1 to 5; ``None`` when inconclusive or not evaluated."""
    interpretation: str
    """``poor`` (1-2), ``average`` (3), ``good`` (4), ``exceptional`` (5), ``inconclusive``
    (the judge's output could not be parsed) or ``not_evaluated`` (no judge answer)."""
    reason: str
    provider: str
    model: str
    warning: str = ""
    """Why the score is missing (a judge miss, a provider error); empty otherwise."""
    source: str = ""
    """Where the judge's answer came from: ``scripted``, ``provider`` or empty (unknown)."""


#: Outcome of one rubric item: ``inconclusive`` when the judge's answer cannot be read as
#: pass or fail, ``not_evaluated`` when there is no answer (a miss, a provider error).
RubricOutcome = Literal["pass", "fail", "inconclusive", "not_evaluated"]


@dataclass(frozen=True, slots=True)
class RubricResult:
    """The judge's pass/fail on one rubric item for one scenario iteration: reported, never gating."""

    name: str
    rule: str
    outcome: RubricOutcome
    reason: str
    provider: str
    model: str
    warning: str = ""
    """Why there is no outcome (a judge miss, a provider error); empty otherwise."""
    source: str = ""
    """Where the judge's answer came from: ``scripted``, ``provider`` or empty (unknown)."""


@dataclass(frozen=True, slots=True)
class AgentOutput:
    """What the agent produced for one scenario iteration, ready for assertions."""

    response: ChatResponse
    text: str
    """The user-visible text (``content`` or empty)."""
    parsed: Any
    """The decoded JSON output for ``output: json`` agents, else ``None``."""
    parse_error: str | None = None
    steps: tuple[ChatResponse, ...] = ()
    """Every response of a tool loop, in order (empty for a single call)."""
    loop_messages: tuple[JsonObject, ...] = ()
    """The assistant tool calls and scripted tool results the loop added to the conversation."""
    wire_tools: tuple[JsonObject, ...] | None = None
    """The tools an SDK agent declared in its own requests (``name``, ``description``,
    ``parameters``), which its tool calls are checked against; None for a declared agent."""

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        """Every tool call the agent made in the iteration, across tool-loop steps."""
        if not self.steps:
            return self.response.tool_calls
        return tuple(call for step in self.steps for call in step.tool_calls)


@dataclass(frozen=True, slots=True)
class ScenarioInput:
    """What a Python agent that takes just the scenario receives: plain values, no harness client.

    Its SDK calls are answered at the wire (:mod:`harness.wire`), so the agent is
    the team's production code, unchanged.
    """

    id: str
    agent: str
    tenant: str
    name: str
    iteration: int
    input: str | None
    """The text of the last user turn (``None`` when the scenario has none)."""
    messages: tuple[JsonObject, ...]
    """The conversation after the (declared, rendered) system prompt: ``{"role", "content"}`` turns."""
    params: JsonObject
    """Agent, tenant and scenario params merged (the scenario wins)."""
    tenant_params: JsonObject
    context: str | None = None
    type: str = ""
    tags: tuple[str, ...] = ()
