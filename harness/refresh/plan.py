"""The plan of a recording run, before any paid call: calls, estimated tokens and cost.

How calls are counted. Every selected iteration is replayed against the
committed cache with a stand-in provider that answers nothing: each call that
would reach the provider is counted where it happens (in ``--refresh-cache``
every agent call; in ``--record-missing`` only what the cache lacks, judge
calls included). Once the agent's call misses, the rest of the iteration
cannot be known ahead, so it is counted as: the iteration's judge calls (one
per judge, certain: a new answer needs new grades) plus, for a scenario with
scripted tool results, up to ``max_tool_rounds`` tool-loop follow-ups (a bound:
the model decides whether it calls a tool again). A Python agent
(``entrypoint``) is counted at its first call; the calls it makes after that
cannot be known. Retries are not planned: they are counted as paid as they
happen (the run's ledger) and reported at the end.

Estimates. Input tokens are the characters of each call's canonical request
(messages, options and tool declarations as JSON) divided by four, the usual
rule of thumb for English text with OpenAI and Anthropic tokenisers; a judge
call whose case is not known yet is estimated from its prompt plus the agent's
request. Output tokens are bounded by the call's ``max_tokens`` (or
``max_completion_tokens``) option when it has one. The cost uses the optional
``[tool.harness.prices]`` table (US dollars per million tokens, per model id)::

    [tool.harness.prices]
    "gpt-4o-mini" = { input = 0.15, output = 0.60 }
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from harness.cache.store import CacheStore, utc_now
from harness.clients.caching import CachingClient
from harness.datasets import Dataset
from harness.entities import ChatCall, ChatResponse, JsonObject, Scenario
from harness.errors import CacheMiss, ConfigError, HarnessError
from harness.execution import run_agent
from harness.judges import evaluate_judges
from harness.key import canonical_json
from harness.wire.binding import WireRecorder

#: Characters per token of the estimate.
CHARS_PER_TOKEN = 4


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


@dataclass
class CallPlan:
    """What a recording run is about to call."""

    mode: str
    scripted: bool
    iterations: int
    models: dict[str, ModelPlan] = field(default_factory=dict)
    judge_calls: int = 0
    python_iterations: int = 0
    """Iterations of Python agents (counted at their first call)."""
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def calls(self) -> int:
        """Calls certain to be made (agent calls and judge calls)."""
        return sum(m.calls for m in self.models.values())

    @property
    def follow_ups(self) -> int:
        """Tool-loop follow-ups that may be made on top (bound from ``max_tool_rounds``)."""
        return sum(m.follow_ups for m in self.models.values())

    @property
    def at_most(self) -> int:
        """The most calls the run can make (before retries): what ``--max-calls`` checks."""
        return self.calls + self.follow_ups

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
        bound = (f", up to {self.at_most} with tool-loop follow-ups (max_tool_rounds)"
                 if self.follow_ups else "")
        judges = f" ({self.judge_calls} of them judge calls)" if self.judge_calls else ""
        lines.append(f"  calls to make: {self.calls}{judges}{bound}")
        for model, plan in sorted(self.models.items()):
            more = f" + up to {plan.follow_ups} follow-ups" if plan.follow_ups else ""
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
        detail = (f"{self.calls} certain + {self.follow_ups} possible tool-loop follow-ups"
                  if self.follow_ups else f"{self.calls} calls")
        raise PlanOverBudget(
            f"this run may need {self.at_most} calls ({detail}), more than --max-calls "
            f"{max_calls}: nothing was called. Narrow the selection (--agent, --tenant, --type, "
            "--scenario) or raise --max-calls; a run is never cut short, because a half-recorded "
            "measurement is worse than none")


class _WouldCall(CacheMiss):
    """Raised by the stand-in provider where the run would make a call."""


class _Counter:
    """A stand-in provider: notes each call that would reach the provider, answers none."""

    endpoint_kind = "plan"

    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.calls: list[ChatCall] = []

    def complete(self, call: ChatCall) -> ChatResponse:
        self.calls.append(call)
        raise _WouldCall(f"{call.scenario_id}: would be called")


def make_plan(dataset: Dataset, store: CacheStore, pairs: Sequence[tuple[Scenario, int]], *,
              mode: str, scripted: bool,
              prices: Mapping[str, tuple[float, float]] | None = None) -> CallPlan:
    """The plan of recording ``pairs`` (scenario, iteration) in ``mode``; calls nothing, writes
    nothing (the stand-in raises before any entry could be written)."""
    plan = CallPlan(mode, scripted, len(pairs), prices=dict(prices or {}))
    for scenario, iteration in pairs:
        agent = dataset.agents[scenario.agent]
        request = dataset.request_for(scenario)
        counter = _Counter(agent.provider, agent.model)
        client = CachingClient(counter, store, refresh=mode == "refresh").bind(scenario.id, iteration)
        wire = (WireRecorder("plan", store, refresh=mode == "refresh", clock=utc_now).bind(
            scenario.id, iteration, client.calls) if agent.at_the_wire else None)
        missed = False
        try:
            output = run_agent(agent, request, client, scenario, wire, iteration=iteration,
                               tenant_params=dataset.tenant_params(scenario))
        except _WouldCall:
            missed = True
        except HarnessError:
            pass  # expired, corrupt: the run reports it, it calls nothing
        except Exception:  # noqa: BLE001 - an SDK agent raises on the planner's refusal
            missed = wire is not None and bool(wire.would_call)
        else:
            evaluate_judges(scenario, request, output, client)  # counts the judges' misses
        if wire is not None and wire.would_call:  # an SDK agent's first wire call that would be paid
            missed = True
            counter.calls.append(wire.would_call[0])
        for call in counter.calls:
            _count(plan, call.model, call.request)
        plan.judge_calls += sum(1 for c in counter.calls if c.purpose)
        if not missed:
            continue
        if agent.entrypoint:
            plan.python_iterations += 1
        elif scenario.tool_results:
            model = plan.models.setdefault(agent.model, ModelPlan())
            model.follow_ups += agent.max_tool_rounds
            _count(plan, agent.model, request, follow_ups=agent.max_tool_rounds)
        agent_chars = len(canonical_json(request))
        for item in scenario.judge:
            judge_request: JsonObject = {"options": item.get("options") or {}}
            chars = len(str(item.get("prompt", ""))) + agent_chars
            _count(plan, str(item["model"]), judge_request, chars=chars)
            plan.judge_calls += 1
    return plan


def _count(plan: CallPlan, model: str, request: JsonObject, *, chars: int | None = None,
           follow_ups: int = 0) -> None:
    entry = plan.models.setdefault(model, ModelPlan())
    calls = follow_ups or 1
    if not follow_ups:
        entry.calls += 1
    size = chars if chars is not None else len(canonical_json(request))
    entry.input_tokens += calls * (size // CHARS_PER_TOKEN)
    options = request.get("options") or {}
    bound = options.get("max_tokens", options.get("max_completion_tokens"))
    if isinstance(bound, int) and not isinstance(bound, bool):
        entry.output_tokens_max += calls * bound
    else:
        entry.unbounded_output += calls
