"""Rules declared once: agent.yaml and tenant.yaml ``expect`` items reach every scenario.

A limit from params is written once and enforced in every scenario it applies
to; ``when`` narrows it; a scenario opts out only by name and with a reason;
and each verdict says the level it came from.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Project
from harness.assertions.answer import answer_status, answer_verdicts
from harness.core.entities import AgentOutput, ChatResponse
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import Dataset, load_dataset

MAX_ITEMS = {"name": "at most max_items items", "when": {"expected": ["ask"]},
             "json_path": {"path": "items", "max_items": "{{max_items}}"}}
NO_QUESTION = {"name": "the note never asks", "when": {"actual": ["answer"]},
               "questions": {"path": "note", "max": 0}}


def _project(project: Project, **agent: Any) -> None:
    project.agent(params={"max_items": "2", "tenant": "x"}, expect=[MAX_ITEMS, NO_QUESTION], **agent)
    ask = [{"json_path": {"path": "decision", "equals": "ask"}}]
    project.scenario("helper/acme/first", expect=ask)
    project.scenario("helper/acme/second", expect=ask, params={"max_items": "3"})
    project.scenario("helper/acme/direct",
                     expect=[{"json_path": {"path": "decision", "equals": "answer"}}])


def _load(project: Project) -> Dataset:
    return load_dataset(load_config(project.root))


def _problems(project: Project) -> list[str]:
    with pytest.raises(DatasetError) as info:
        _load(project)
    return [p.render(project.root) for p in info.value.problems]


def _output(doc: Any) -> AgentOutput:
    raw = json.dumps(doc)
    return AgentOutput(ChatResponse(raw), raw, doc)


def _verdicts(dataset: Dataset, name: str, doc: Any) -> list[Any]:
    scenario = next(s for s in dataset.scenarios if s.name == name)
    found = answer_verdicts(dataset.agents["helper"], scenario, _output(doc))
    assert not any("crashed" in v.reason for v in found)
    return found


def test_an_agent_rule_reaches_every_scenario_it_applies_to_with_its_params(project: Project) -> None:
    _project(project)
    dataset = _load(project)
    three = {"decision": "ask", "items": [1, 2, 3]}
    first = _verdicts(dataset, "first", three)
    assert [(v.assertion, v.outcome, v.origin) for v in first] == [
        ("json_path decision == 'ask'", "pass", "scenario"),
        ("at most max_items items", "reject", "agent"),
        ("the note never asks", "not_evaluated", "agent"),
    ]
    assert "expected at most 2 items, found 3" in first[1].reason
    second = _verdicts(dataset, "second", three)  # its own params raise the limit to 3
    assert second[1].outcome == "pass"
    scenario = next(s for s in dataset.scenarios if s.name == "first")
    status, message = answer_status(scenario, first)
    assert status == "rejected" and "at most max_items items (agent rule): " in message


def test_when_expected_filters_at_load_and_actual_per_answer(project: Project) -> None:
    _project(project)
    dataset = _load(project)
    direct = next(s for s in dataset.scenarios if s.name == "direct")
    assert [item.get("name") for item in direct.expect] == [None, "the note never asks"]
    asked = _verdicts(dataset, "direct", {"decision": "answer", "note": "Please confirm the date."})
    assert asked[1].outcome == "reject" and "please" in asked[1].reason.casefold()
    fine = _verdicts(dataset, "direct", {"decision": "answer", "note": "Filed for Monday."})
    assert fine[1].outcome == "pass"


def test_a_tenant_rule_applies_to_its_tenant_only_and_replaces_an_agent_namesake(
        project: Project) -> None:
    _project(project)
    project.scenario("helper/globex/first",
                     expect=[{"json_path": {"path": "decision", "equals": "ask"}}])
    project.write("eval-datasets/helper/globex/tenant.yaml", {
        "params": {"cap": "10"},
        "expect": [{"name": "note fits one line", "max_chars": {"value": "{{cap}}", "path": "note"}},
                   {"name": "at most max_items items",
                    "json_path": {"path": "items", "max_items": 1}}]})
    dataset = _load(project)
    globex = next(s for s in dataset.scenarios if s.tenant == "globex")
    verdicts = answer_verdicts(dataset.agents["helper"], globex,
                               _output({"decision": "ask", "items": [1, 2], "note": "x" * 11}))
    by_name = {v.assertion: v for v in verdicts}
    assert by_name["note fits one line"].origin == "tenant"
    assert by_name["note fits one line"].outcome == "reject"
    assert by_name["at most max_items items"].origin == "tenant"  # replaced: limit 1, not 2
    assert "expected at most 1 items, found 2" in by_name["at most max_items items"].reason
    acme = next(s for s in dataset.scenarios if s.id == "helper/acme/first")
    assert "note fits one line" not in {item.get("name") for item in acme.expect}


def test_an_opt_out_needs_a_reason_and_must_name_a_rule_that_applies(project: Project) -> None:
    _project(project)
    project.scenario("helper/acme/exempt", expect=[{"json_path": {"path": "decision", "equals": "ask"}}],
                     opt_out=[{"rule": "at most max_items items",
                               "reason": "this scenario checks the clamp of an out-of-range limit"}])
    dataset = _load(project)
    exempt = next(s for s in dataset.scenarios if s.name == "exempt")
    assert "at most max_items items" not in {item.get("name") for item in exempt.expect}
    project.scenario("helper/acme/exempt", expect=[{"json_path": {"path": "decision", "equals": "ask"}}],
                     opt_out=[{"rule": "no such rule", "reason": "a reason long enough"},
                              {"rule": "at most max_items items", "reason": "because"}])
    joined = "\n".join(_problems(project))
    assert "exempt.yaml: opt_out[0].rule: 'no such rule' is not an agent or tenant rule" in joined
    assert "exempt.yaml: opt_out[1].reason" in joined


def test_a_scenario_item_cannot_silently_replace_an_inherited_rule(project: Project) -> None:
    _project(project)
    project.scenario("helper/acme/clash", expect=[
        {"json_path": {"path": "decision", "equals": "ask"}},
        {"name": "at most max_items items", "json_path": {"path": "items", "max_items": 9}}])
    joined = "\n".join(_problems(project))
    assert "clash.yaml: expect: an item reuses the name of the agent rule" in joined


def test_rule_problems_are_reported_once_at_the_declaring_file(project: Project) -> None:
    project.agent(params={"tenant": "x"}, expect=[
        {"json_path": {"path": "items", "max_items": "{{max_items}}"}},  # no name
        {"name": "a", "when": {"colour": ["red"]}, "json_path": {"path": "x"}},
        {"name": "b", "json_path": {"path": "items", "max_items": "{{missing}}"}},
        {"name": "c", "when": {"tools": ["nope"]}, "tool_called": "nope"},
    ])
    project.scenario("helper/acme/one")
    project.scenario("helper/acme/two")
    joined = "\n".join(_problems(project))
    assert "agent.yaml: expect[0].name: is required" in joined
    assert "agent.yaml: expect[1]: when.colour is not a condition" in joined
    assert "agent.yaml: expect[2]: {{missing}} is not a parameter" in joined
    assert "agent.yaml: expect[3]: when.tools names tool(s) the agent does not declare: nope" in joined
    assert "one.yaml" not in joined and "two.yaml" not in joined


def test_the_run_records_the_level_and_fails_with_it(project: Project) -> None:
    _project(project)
    project.script("helper", "acme/first", {"decision": "ask", "items": [1, 2, 3]})
    project.script("helper", "acme/second", {"decision": "ask", "items": [1, 2, 3]})
    project.script("helper", "acme/direct", {"decision": "answer", "note": "Filed."})
    project.record()
    outcome = project.run("run")
    assert outcome.code == 1
    assert "at most max_items items (agent rule)" in outcome.out
    records = [json.loads(line) for line in
               next(project.results.glob("results/*/records.jsonl")).read_text().splitlines()]
    first = next(r for r in records if r["scenario"] == "helper/acme/first")
    assert [v.get("origin") for v in first["verdicts"]] == ["scenario", "agent", "agent"]


def test_a_rule_without_params_is_the_declared_item_and_a_nested_param_is_still_resolved(
        project: Project) -> None:
    """A rule with no ``{{param}}`` anywhere is taken as declared (not copied per scenario);
    one whose reference sits deep in a list is still resolved with each scenario's params."""
    nested = {"name": "never leaks the tenant's codename",
              "not_contains": {"any": ["plain term", "{{tenant}}-codename"], "path": "note"}}
    _project(project)
    project.agent(params={"max_items": "2", "tenant": "x"},
                  expect=[MAX_ITEMS, NO_QUESTION, nested])
    project.scenario("helper/acme/third", expect=[{"json_path": {"path": "decision",
                                                                 "equals": "ask"}}],
                     params={"tenant": "acme"})
    dataset = _load(project)
    by_name = {s.name: {item.get("name"): dict(item) for item in s.expect}
               for s in dataset.scenarios}
    plain = {key: value for key, value in NO_QUESTION.items() if key != "when"}
    assert all(items["the note never asks"] == plain for items in by_name.values())
    assert by_name["first"]["never leaks the tenant's codename"]["not_contains"]["any"] == [
        "plain term", "x-codename"]
    assert by_name["third"]["never leaks the tenant's codename"]["not_contains"]["any"] == [
        "plain term", "acme-codename"]
    leaked = _verdicts(dataset, "third", {"decision": "ask", "items": [], "note": "ACME codename"})
    assert [v.outcome for v in leaked if v.assertion == "never leaks the tenant's codename"] == [
        "reject"]
