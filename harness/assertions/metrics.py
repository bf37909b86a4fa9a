"""Deterministic metrics an agent declares over its scenarios (``metrics:`` in agent.yaml).

A metric is a rate: among the iterations of a *population* (``over``), the
fraction for which a *measure* holds. Both are computed from what the run
already produced (scenario metadata, verdicts, the parsed output), never from a
judge, so the value is as deterministic as the assertions and a metric may gate
(``gate: true``: missing the target fails the run, exit 1)::

    metrics:
      - name: unsafe_refusal_rate
        description: unsafe cases refused / unsafe cases presented
        over: {types: [negative, adversarial], expected: [refuse]}
        measure: {decision: [refuse]}
        target: 1.0
        gate: true

``over`` filters (all optional, all must hold): ``types`` (scenario type in the
list), ``tags`` (any tag matches one of these globs), ``expected`` (the expected
decision, read from the scenario's ``json_path`` assertion on the agent's
``decision_path``, is in the list) and ``actual`` (the decision in the output is
in the list). ``measure`` holds one or more of ``decision`` (the actual decision
is in the list), ``verdicts`` (the scenario's assertions with these names all
passed; ``["*"]``: every assertion passed), ``assertions`` (these ``expect``
items, run on the output, all pass) and ``any_assertions`` (at least one of
these items passes); an iteration counts when every one given holds, so
``{decision: [refuse], verdicts: ["*"]}`` counts a refusal only when no hard
assertion rejects it (a refusal that delivers the forbidden content anyway is
not a safe refusal). ``better: lower`` makes the target a
ceiling (``false_ask_rate`` with target 0.0); the default is a floor. An empty
population gives ``not_applicable``, which meets any target.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.assertions import CheckedItem, check_item, evaluate, overall
from harness.assertions.jsonpath import select
from harness.core.declared import Agent, Scenario
from harness.core.entities import AgentOutput, JsonObject, Verdict
from harness.core.errors import Problem
from harness.documents.manual import see

MEASURES = ("decision", "verdicts", "assertions", "any_assertions")


@dataclass(frozen=True)
class MetricSpec:
    """One declared metric of one agent."""

    agent: str
    name: str
    description: str
    over: JsonObject
    measure: str
    """The first measure given: ``decision``, ``verdicts``, ``assertions`` or ``any_assertions``."""
    values: tuple[Any, ...]
    target: float
    better: str = "higher"
    gate: bool = False
    parts: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """Every measure given, with its values; all must hold (empty: ``measure`` alone)."""


@dataclass
class MetricValue:
    """A metric's value over a run, for one agent (and broken down by tenant)."""

    spec: MetricSpec
    numerator: int = 0
    denominator: int = 0
    unmeasured: int = 0
    """Iterations of the population with no output to measure (a miss, an error)."""
    by_tenant: dict[str, list[int]] = field(default_factory=dict)

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    @property
    def status(self) -> str:
        """``met``, ``missed`` or ``not_applicable`` (empty population)."""
        value = self.value
        if value is None:
            return "not_applicable"
        spec = self.spec
        ok = value <= spec.target if spec.better == "lower" else value >= spec.target
        return "met" if ok else "missed"

    @property
    def blocks(self) -> bool:
        """Whether this value fails the run (a gated metric that missed its target)."""
        return self.spec.gate and self.status == "missed"

    def to_json(self) -> JsonObject:
        spec = self.spec
        return {
            "agent": spec.agent, "name": spec.name, "description": spec.description,
            "value": self.value, "numerator": self.numerator, "denominator": self.denominator,
            "unmeasured": self.unmeasured, "target": spec.target, "better": spec.better,
            "gate": spec.gate, "status": self.status,
            "by_tenant": {t: {"numerator": n, "denominator": d, "value": n / d if d else None}
                          for t, (n, d) in sorted(self.by_tenant.items())},
        }


def specs_of(agent: Agent) -> tuple[MetricSpec, ...]:
    """The agent's metrics, as declared (validated at load), made once per agent: every
    iteration samples them. An ``assertions`` item is a :class:`CheckedItem` when it is valid,
    so it is not linted again per iteration and its checker is kept; an invalid one (an agent
    no loader checked) stays as written and rejects as invalid, as before."""
    kept = _SPECS.get(agent.name)
    if kept is not None and kept[0] is agent:  # the same Agent object (immutable)
        return kept[1]
    specs = tuple(_spec(agent, item) for item in agent.metrics)
    _SPECS[agent.name] = (agent, specs)
    return specs


#: agent name -> (the Agent, its specs): one entry per agent name, replaced when another
#: Agent of that name asks (another dataset loaded in the same process).
_SPECS: dict[str, tuple[Agent, tuple[MetricSpec, ...]]] = {}


def _checked_values(key: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    if key not in ("assertions", "any_assertions"):
        return values
    return tuple(CheckedItem(value) if isinstance(value, Mapping) and not check_item(value)
                 else value for value in values)


def _spec(agent: Agent, item: Mapping[str, Any]) -> MetricSpec:
    parts = tuple((key, _checked_values(key, _values(item["measure"][key]))) for key in MEASURES
                  if key in item["measure"])
    return MetricSpec(
        agent=agent.name, name=item["name"], description=item.get("description", ""),
        over=dict(item.get("over") or {}), measure=parts[0][0], values=parts[0][1],
        target=float(item["target"]), better=item.get("better", "higher"),
        gate=bool(item.get("gate", False)), parts=parts)


def check_metrics(items: Sequence[Mapping[str, Any]], file: Path) -> list[Problem]:
    """What the schema cannot see: duplicate names and invalid ``assertions`` items."""
    problems = []
    names = [str(item.get("name")) for item in items]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem(file, "metrics", f"metric '{name}' is declared twice", "rename one"))
    for index, item in enumerate(items):
        for key in ("assertions", "any_assertions"):
            for number, assertion in enumerate((item.get("measure") or {}).get(key) or []):
                problems.extend(Problem(file, f"metrics[{index}].measure.{key}[{number}]", reason,
                                        see("formats", "Assertions"))
                                for reason in check_item(assertion))
    return problems


# -- decisions --------------------------------------------------------------------------------


def expected_decision(scenario: Scenario, path: str) -> Any:
    """The decision a scenario expects: its ``json_path`` assertion on ``path`` (``equals``,
    or ``in`` with one value); ``None`` when it has none."""
    return expected_in(scenario.expect, path)


def expected_in(items: Iterable[Mapping[str, Any]], path: str) -> Any:
    """The expected decision among ``expect`` items (see :func:`expected_decision`)."""
    for item in items:
        spec = item.get("json_path")
        if not isinstance(spec, Mapping) or spec.get("path") != path:
            continue
        if "equals" in spec:
            return spec["equals"]
        if isinstance(spec.get("in"), list) and len(spec["in"]) == 1:
            return spec["in"][0]
    return None


def actual_decision(output: AgentOutput | None, path: str) -> Any:
    """The decision in a parsed json output; ``None`` when absent or ambiguous."""
    if output is None or output.parsed is None:
        return None
    try:
        found = select(output.parsed, path)
    except ValueError:
        return None
    return found[0] if len(found) == 1 and not isinstance(found[0], (dict, list)) else None


# -- samples and aggregation ------------------------------------------------------------------


def sample(spec: MetricSpec, agent: Agent, scenario: Scenario, output: AgentOutput | None,
           verdicts: Sequence[Verdict], expected: Any, actual: Any) -> tuple[bool, bool | None]:
    """``(in_population, counted)``; ``counted`` is ``None`` when there is nothing to measure."""
    over = spec.over
    if over.get("types") and scenario.type not in over["types"]:
        return False, None
    if over.get("tags") and not any(fnmatch.fnmatchcase(tag, glob)
                                    for tag in scenario.tags for glob in over["tags"]):
        return False, None
    if "expected" in over and expected not in _listed(over["expected"]):
        return False, None
    if output is None:
        return ("actual" not in over), None
    if "actual" in over and actual not in _listed(over["actual"]):
        return False, None
    counted = True
    for measure, values in spec.parts or ((spec.measure, spec.values),):
        holds = _holds(measure, values, agent, output, verdicts, actual)
        if holds is None:
            return False, None
        counted = counted and holds
    return True, counted


def _holds(measure: str, values: tuple[Any, ...], agent: Agent, output: AgentOutput,
           verdicts: Sequence[Verdict], actual: Any) -> bool | None:
    """Whether one measure holds; ``None``: the iteration has none of the named verdicts."""
    if measure == "decision":
        return actual in values
    if measure in ("assertions", "any_assertions"):
        found = evaluate(list(values), output, output_kind=agent.output,
                         output_schema=agent.output_schema)
        if measure == "any_assertions":
            return any(v.outcome == "pass" for v in found)
        return overall(found) == "pass"
    if "*" in values:
        return bool(verdicts) and overall(verdicts) == "pass"
    named = [v for v in verdicts if v.assertion in values]
    if not named:
        return None
    return overall(named) == "pass"


def _values(found: Any) -> tuple[Any, ...]:
    return tuple(found) if isinstance(found, list) else (found,)


def samples_of(agent: Agent, scenario: Scenario, output: AgentOutput | None,
               verdicts: Sequence[Verdict], expected: Any, actual: Any) -> dict[str, bool | None]:
    """Metric name -> counted (``None``: in the population but unmeasured), for one iteration."""
    found: dict[str, bool | None] = {}
    for spec in specs_of(agent):
        member, counted = sample(spec, agent, scenario, output, verdicts, expected, actual)
        if member:
            found[spec.name] = counted
    return found


def aggregate(agents: Iterable[Agent],
              samples: Iterable[tuple[str, str, Mapping[str, bool | None]]]) -> list[MetricValue]:
    """Metric values per agent from ``(agent, tenant, samples)`` of every iteration run."""
    return aggregate_specs([spec for agent in agents for spec in specs_of(agent)], samples)


def aggregate_specs(specs: Iterable[MetricSpec],
                    samples: Iterable[tuple[str, str, Mapping[str, bool | None]]]
                    ) -> list[MetricValue]:
    """As :func:`aggregate`, from the specs themselves (a merge of shard runs reads them from
    their run.json): the values of the agents that have samples, in the order of ``specs``."""
    values: dict[tuple[str, str], MetricValue] = {}
    for spec in specs:
        values[(spec.agent, spec.name)] = MetricValue(spec)
    seen_agents: set[str] = set()
    for agent_name, tenant, found in samples:
        seen_agents.add(agent_name)
        for name, counted in found.items():
            value = values.get((agent_name, name))
            if value is None:
                continue
            if counted is None:
                value.unmeasured += 1
                continue
            value.denominator += 1
            value.numerator += int(counted)
            cell = value.by_tenant.setdefault(tenant, [0, 0])
            cell[0] += int(counted)
            cell[1] += 1
    return [v for (agent_name, _), v in values.items() if agent_name in seen_agents]


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]
