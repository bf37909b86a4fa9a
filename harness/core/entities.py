"""Plain records passed between the stages of the data flow.

Every arrow of ``datasets -> request -> key -> client -> assertions -> records``
carries one of these frozen dataclasses, so a reader can follow a single
scenario from its file to its result without jumping back and forth.
JSON-shaped payloads (messages, options, tool schemas, parsed outputs) stay
plain ``dict``/``list`` values because they are hashed and stored as JSON.
What the datasets declare (``Agent``, ``Scenario``) is :mod:`harness.core.declared`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
