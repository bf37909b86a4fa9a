"""The plan of a recording run, before any paid call: calls, estimated tokens and cost.

How calls are counted. Every selected iteration is replayed against the
committed cache with a stand-in provider: each call that would reach the
provider is counted where it happens (in ``--refresh-cache`` every call of the
iteration; in ``--record-missing`` only what the cache lacks), the agent's
calls, the judges' and the rubric items' alike, through the code a run uses
(:func:`~harness.judges.evaluate_judges`, :func:`~harness.rubric.grade_rubric`
with its ``when`` filters).

With ``--scripted`` the stand-in answers from the agent's script, as the run
will, so the plan is exact: every call the run makes is planned, no more.
Against a real provider it answers nothing, and once the agent's call misses
the rest of the iteration cannot be known ahead, so it is counted as: one call
per judge (certain: a new answer needs new grades); one call per rubric item
whose ``when`` holds on what is known before the answer (test types, tags,
expected decision: certain); up to one per item whose ``when`` depends on the
answer (``actual``, ``tools``: a bound); and, for a scenario with scripted
tool results, up to ``max_tool_rounds`` tool-loop follow-ups (a bound: the
model decides whether it calls a tool again). ``--max-calls`` checks the
certain calls plus every bound. A Python agent (``entrypoint``) is counted at
its first call; the calls it makes after that cannot be known, so the run holds
``--max-calls`` as it goes too (:mod:`harness.refresh.budget`). Retries are not
planned: they are counted as paid as they happen (the run's ledger) and
reported at the end.

Estimates. Input tokens are the characters of each call's canonical request
(messages, options and tool declarations as JSON) divided by four, the usual
rule of thumb for English text with OpenAI and Anthropic tokenisers; a judge
or rubric call whose case is not known yet is estimated from its prompt plus the
expected behaviour and the conversation it will read. Output tokens are bounded
by the call's ``max_tokens`` (or ``max_completion_tokens``) option when it has one. The cost uses the optional
``[tool.harness.prices]`` table (US dollars per million tokens, per model id)::

    [tool.harness.prices]
    "gpt-4o-mini" = { input = 0.15, output = 0.60 }
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from harness.assertions.metrics import actual_decision, expected_decision
from harness.cache.store import CacheStore, EntryAbsent
from harness.clients.caching import BoundClient, CachingClient
from harness.clients.scripted import ScriptedClient
from harness.core.clock import utc_now
from harness.core.declared import Agent, Scenario
from harness.core.entities import ChatCall, ChatResponse, JsonObject
from harness.core.errors import CacheMiss, ConfigError, HarnessError
from harness.execute.execution import run_agent
from harness.judges import evaluate_judges
from harness.loading.datasets import Dataset
from harness.requests.key import canonical_json, compute_key
from harness.rubric import PURPOSE_PREFIX, grade_rubric
from harness.rubric.grade import RUBRIC_PROMPT, applies
from harness.wire.binding import WireBinding
from harness.wire.exchange import AUXILIARY, EMBEDDINGS
from harness.wire.recorder import WireRecorder

#: Characters per token of the estimate.
CHARS_PER_TOKEN = 4
#: Wire APIs whose answers are no generated text: their calls bound the output at zero tokens.
_NO_OUTPUT = AUXILIARY | {EMBEDDINGS}


class PlanOverBudget(ConfigError):
    """``--max-calls`` is lower than what the run may need: nothing was called (exit 2)."""

    code = "eval-plan-over-budget"


@dataclass
class ModelPlan:
    """The calls one model would answer."""

    calls: int = 0
    follow_ups: int = 0
    """Tool-loop follow-ups that may come (bound)."""
    input_tokens: int = 0
    """Estimated input tokens of ``calls`` and ``follow_ups``."""
    output_tokens_max: int = 0
    """Sum of the ``max_tokens`` bounds of the calls that have one."""
    unbounded_output: int = 0
    """Calls with no ``max_tokens`` option (their output cannot be bounded)."""
    conditional: int = 0
    """Rubric calls that may come (bound): items whose ``when`` depends on the answer."""


@dataclass
class CallPlan:
    """What a recording run is about to call."""

    mode: str
    scripted: bool
    iterations: int
    models: dict[str, ModelPlan] = field(default_factory=dict)
    judge_calls: int = 0
    rubric_calls: int = 0
    """Rubric calls among :attr:`calls` (certain ones; the possible ones are :attr:`conditional`)."""
    python_iterations: int = 0
    """Iterations of Python agents (counted at their first call)."""
    unplanned: list[str] = field(default_factory=list)
    """Iterations the harness failed while planning (``id iteration n: reason``): their calls
    past the fault are not counted, and the plan says so rather than look exact."""
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        """Calls certain to be made (agent, judge and rubric calls)."""
        return sum(m.calls for m in self.models.values())

    @property
    def conditional(self) -> int:
        """Rubric calls that may be made on top (items whose ``when`` depends on the answer)."""
        return sum(m.conditional for m in self.models.values())

    @property
    def follow_ups(self) -> int:
        """Tool-loop follow-ups that may be made on top (bound from ``max_tool_rounds``)."""
        return sum(m.follow_ups for m in self.models.values())

    @property
    def at_most(self) -> int:
        """The most calls the run can make (before retries): what ``--max-calls`` checks."""
        return self.calls + self.follow_ups + self.conditional

    @property
    def input_tokens(self) -> int:
        return sum(m.input_tokens for m in self.models.values())

    def cost(self) -> tuple[float, float, list[str]]:
        """Estimated input cost, output cost bound, and the models with no price."""
        cost_in = cost_out = 0.0
        unpriced = []
        for model, plan in sorted(self.models.items()):
            price = self.prices.get(model)
            if price is None:
                unpriced.append(model)
                continue
            cost_in += plan.input_tokens * price[0] / 1e6
            cost_out += plan.output_tokens_max * price[1] / 1e6
        return cost_in, cost_out, unpriced

    def render(self) -> str:
        """The plan as printed before the first call (and by ``--dry-run``)."""
        kind = "scripted, no cost" if self.scripted else "paid"
        lines = [f"plan: {self.iterations} iteration(s) selected, {self.mode} ({kind})"]
        reasons = [text for count, text in (
            (self.follow_ups, "tool-loop follow-ups (max_tool_rounds)"),
            (self.conditional, "rubric items whose `when` depends on the answer")) if count]
        bound = f", up to {self.at_most} with {' and '.join(reasons)}" if reasons else ""
        kinds: list[str] = []
        for count, kind in ((self.judge_calls, "judge"), (self.rubric_calls, "rubric")):
            if count:
                kinds.append(f"{count} {'' if kinds else 'of them '}{kind} calls")
        of_them = f" ({', '.join(kinds)})" if kinds else ""
        lines.append(f"  calls to make: {self.calls}{of_them}{bound}")
        for model, plan in sorted(self.models.items()):
            more = f" + up to {plan.follow_ups} follow-ups" if plan.follow_ups else ""
            if plan.conditional:
                more += f" + up to {plan.conditional} rubric call(s) depending on the answer"
            out = (f", output up to {plan.output_tokens_max:,} tokens (max_tokens)"
                   if plan.output_tokens_max else "")
            if plan.unbounded_output:
                out += f", {plan.unbounded_output} call(s) with no max_tokens bound"
            lines.append(f"    {model}: {plan.calls} call(s){more}, "
                         f"~{plan.input_tokens:,} input tokens{out}")
        lines.append(f"  estimated input tokens: ~{self.input_tokens:,} (characters of the "
                     f"canonical requests / {CHARS_PER_TOKEN})")
        if self.python_iterations:
            lines.append(f"  {self.python_iterations} iteration(s) of Python agents are counted at "
                         "their first call; any further call they make cannot be known ahead")
        if self.unplanned:
            lines.append(f"  {len(self.unplanned)} iteration(s) could not be planned: the harness "
                         f"failed while answering them, so their calls are not all counted "
                         f"(the run reports each as an error); first: {self.unplanned[0]}")
        if not self.scripted and self.models:
            cost_in, cost_out, unpriced = self.cost()
            priced = len(unpriced) < len(self.models)
            if priced:
                lines.append(f"  estimated cost: ~${cost_in:.4f} input + up to ${cost_out:.4f} "
                             "output ([tool.harness.prices], US$ per million tokens)")
            if unpriced:
                lines.append(f"  no [tool.harness.prices] entry for {', '.join(unpriced)}: "
                             "cost not estimated" + (" for those" if priced else ""))
        if not self.scripted and self.calls:
            lines.append("  retries are not planned: every attempt that reaches the provider is "
                         "counted as paid as it happens")
        return "\n".join(lines)

    def check_budget(self, max_calls: int | None) -> None:
        """Refuse (before any call) a paid run that may need more than ``max_calls`` calls."""
        if max_calls is None or self.scripted or self.at_most <= max_calls:
            return
        possible = [f"{count} possible {kind}" for count, kind in (
            (self.follow_ups, "tool-loop follow-ups"),
            (self.conditional, "rubric calls whose `when` depends on the answer")) if count]
        detail = (" + ".join([f"{self.calls} certain", *possible]) if possible
                  else f"{self.calls} calls")
        raise PlanOverBudget(
            f"this run may need {self.at_most} calls ({detail}), more than --max-calls "
            f"{max_calls}: nothing was called. Narrow the selection (--agent, --tenant, --type, "
            "--scenario) or raise --max-calls; a run the plan can count is never cut short, "
            "because a half-recorded measurement is worse than none")


class _WouldCall(CacheMiss):
    """Raised by the stand-in provider where the run would make a call it cannot foresee."""


class _Counter:
    """The inner client of the planning cache client (never asked: :class:`_PlanClient` counts)."""

    endpoint_kind = "plan"

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model

    def complete(self, call: ChatCall) -> ChatResponse:
        raise _WouldCall(f"{call.scenario_id}: would be called")


class _PlanClient(BoundClient):
    """One iteration's client while planning: it reads the committed cache as the run's would,
    notes every call that would reach the provider, and answers it from the agent's script (a
    scripted plan) or not at all. It never writes."""

    def __init__(self, parent: CachingClient, scenario_id: str, iteration: int, *,
                 script: ScriptedClient | None, now: datetime) -> None:
        super().__init__(parent, scenario_id, iteration)
        self.would_call: list[ChatCall] = []
        self._script = script
        self._now = now

    def complete(self, request: JsonObject, *, provider: str | None = None,
                 model: str | None = None, purpose: str = "") -> ChatResponse:
        call = ChatCall(scenario_id=self.scenario_id, iteration=self.iteration,
                        provider=provider or self.parent.provider, model=model or self.parent.model,
                        request=request, purpose=purpose)
        store = self.parent.store
        if not self.parent.refresh:
            try:
                return store.read(call, compute_key(call), self._now).response
            except EntryAbsent:
                pass  # expired or corrupt raise: the run reports them and calls nothing
        self.would_call.append(call)
        if self._script is None:
            raise _WouldCall(f"{call.scenario_id}: would be called")
        return self._script.complete(call)  # a ScriptError is a failed call, as in the run


def _scripts(dataset: Dataset, scripted: bool) -> dict[str, ScriptedClient | None]:
    """Per agent, a fresh scripted stand-in (its own call counters) for a scripted plan."""
    found: dict[str, ScriptedClient | None] = {}
    for agent in dataset.agents.values():
        script = None
        if scripted and agent.script_file is not None:
            try:
                script = ScriptedClient.from_file(agent.provider, agent.model, agent.script_file)
            except HarnessError:
                script = None  # the run refuses it; the plan counts as if paid
        found[agent.name] = script
    return found


def make_plan(dataset: Dataset, store: CacheStore, pairs: Sequence[tuple[Scenario, int]], *,
              mode: str, scripted: bool,
              prices: Mapping[str, tuple[float, float]] | None = None,
              now: datetime | None = None) -> CallPlan:
    """The plan of recording ``pairs`` (scenario, iteration) in ``mode``; calls nothing, writes
    nothing (the planning client has no write path)."""
    plan = CallPlan(mode, scripted, len(pairs), prices=dict(prices or {}))
    scripts = _scripts(dataset, scripted)
    moment = now or utc_now()
    for scenario, iteration in pairs:
        agent = dataset.agents[scenario.agent]
        request = dataset.request_for(scenario)
        parent = CachingClient(_Counter(agent.provider, agent.model), store,
                               refresh=mode == "refresh")
        client = _PlanClient(parent, scenario.id, iteration, script=scripts[agent.name], now=moment)
        script = scripts[agent.name]
        wire = (WireBinding(WireRecorder("plan", store, refresh=mode == "refresh", clock=lambda: moment,
                                         script=script), scenario.id, iteration, client.calls)
                if agent.at_the_wire else None)
        missed = _replay(agent, scenario, request, client, wire, iteration,
                         dataset.tenant_params(scenario))
        if wire is not None and wire.would_call:
            if script is None:  # paid: only the first wire call is known ahead
                missed = True
                client.would_call.append(wire.would_call[0])
            else:  # scripted: the script answers every call, so each is counted exactly
                client.would_call.extend(wire.would_call)
        for call in client.would_call:
            _count(plan, call.model, call.request)
        plan.judge_calls += sum(1 for c in client.would_call if c.purpose.startswith("judge:"))
        plan.rubric_calls += sum(1 for c in client.would_call if c.purpose.startswith(PURPOSE_PREFIX))
        if missed:
            _count_unknown(plan, agent, scenario, request)
        if wire is not None and wire.faults:
            plan.unplanned.append(f"{scenario.id} iteration {iteration}: {wire.faults[0]}")
    return plan


def _replay(agent: Agent, scenario: Scenario, request: JsonObject, client: _PlanClient,
            wire: WireBinding | None = None, iteration: int = 0,
            tenant_params: JsonObject | None = None) -> bool:
    """Run the iteration through the planning client as the run would (agent, judges, rubric);
    True when the agent's answer cannot be known ahead (a paid call). An SDK agent's wire
    calls go to ``wire``, which answers none of them and counts the first that would be paid."""
    try:
        output = run_agent(agent, request, client, scenario, wire, iteration=iteration,
                           tenant_params=tenant_params)
    except _WouldCall:
        return True
    except HarnessError:
        return False  # expired, corrupt, a failed scripted call: the run reports it, nothing more
    except Exception:  # noqa: BLE001 - an SDK agent raises on the planner's refusal
        if wire is None:
            raise
        return bool(wire.would_call)
    evaluate_judges(scenario, request, output, client)  # each judge's miss is counted
    actual = actual_decision(output, agent.decision_path) if agent.output == "json" else None
    grade_rubric(scenario, request, output, client,
                 expected=expected_decision(scenario, agent.decision_path), actual=actual)
    return False


def _count_unknown(plan: CallPlan, agent: Agent, scenario: Scenario, request: JsonObject) -> None:
    """What follows an agent call whose answer is not known: follow-ups, judges, rubric items."""
    if agent.at_the_wire:
        plan.python_iterations += 1
    elif scenario.tool_results:
        model = plan.models.setdefault(agent.model, ModelPlan())
        model.follow_ups += agent.max_tool_rounds
        _count(plan, agent.model, request, follow_ups=agent.max_tool_rounds)
    case_chars = _case_chars(scenario, request)
    for item in scenario.judge:
        judge_request: JsonObject = {"options": item.get("options") or {}}
        chars = len(str(item.get("prompt", ""))) + case_chars
        _count(plan, str(item["model"]), judge_request, chars=chars)
        plan.judge_calls += 1
    expected = expected_decision(scenario, agent.decision_path)
    for item in scenario.rubric:
        holds = applies(item, scenario, None, expected, None)
        if holds is False:
            continue
        rubric_request: JsonObject = {"options": item.get("options") or {}}
        chars = len(RUBRIC_PROMPT) + len(str(item.get("rule", ""))) + case_chars
        if holds is None:  # depends on the answer: a bound, like the tool-loop follow-ups
            plan.models.setdefault(str(item["model"]), ModelPlan()).conditional += 1
            _count(plan, str(item["model"]), rubric_request, chars=chars, follow_ups=1)
        else:
            _count(plan, str(item["model"]), rubric_request, chars=chars)
            plan.rubric_calls += 1


def _case_chars(scenario: Scenario, request: JsonObject) -> int:
    """Characters of the case a judge reads before the answer is known: the expected behaviour
    and the conversation (the agent's system prompt and tool declarations are not sent)."""
    messages = [m for m in request.get("messages") or [] if m.get("role") != "system"]
    return len(scenario.description) + len(canonical_json(messages))


def _count(plan: CallPlan, model: str, request: JsonObject, *, chars: int | None = None,
           follow_ups: int = 0) -> None:
    """Add a call (or ``follow_ups`` possible calls, counted by the caller) and its tokens."""
    entry = plan.models.setdefault(model, ModelPlan())
    calls = follow_ups or 1
    if not follow_ups:
        entry.calls += 1
    size = chars if chars is not None else len(canonical_json(request))
    entry.input_tokens += calls * (size // CHARS_PER_TOKEN)
    options = request.get("options") or {}
    bound = options.get("max_tokens", options.get("max_completion_tokens",
                                                  options.get("max_output_tokens")))  # Responses
    if request.get("api") in _NO_OUTPUT:  # token counts, moderations, embeddings: no output
        bound = 0
    if isinstance(bound, int) and not isinstance(bound, bool):
        entry.output_tokens_max += calls * bound
    else:
        entry.unbounded_output += calls
