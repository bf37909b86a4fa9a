"""The loader's item pool (harness/loading/itempool.py): equal expect items share one
CheckedItem; a rule without params is found by identity, and nothing else is kept for it."""

from __future__ import annotations

from pathlib import Path

from conftest import Project
from harness.assertions.rules import check_rules
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset
from harness.loading.itempool import ItemPool


def test_equal_items_share_one_checked_item_and_a_plain_rule_is_found_by_identity() -> None:
    rules, problems = check_rules(
        [{"name": "plain", "when": {"actual": ["ask"]}, "contains": "hi"},
         {"name": "templated", "json_path": {"path": "items", "max_items": "{{n}}"}}],
        Path("agent.yaml"), "agent", {"n": "2"}, [])
    assert not problems and [r.templated for r in rules] == [False, True]
    pool = ItemPool()
    pool.register(rules)
    plain, templated = rules
    first = pool.shared(plain.item, "agent", plain.runtime)
    assert pool.shared(plain.item, "agent", plain.runtime) is first  # by identity
    assert pool.shared(dict(plain.item), "agent", dict(plain.runtime)) is first  # by value
    assert first == plain.item and first.origin == "agent" and first.when == {"actual": ["ask"]}
    assert pool.shared(plain.item, "tenant", plain.runtime) is not first  # another level
    two = {"name": "templated", "json_path": {"path": "items", "max_items": 2}}
    three = {"name": "templated", "json_path": {"path": "items", "max_items": 3}}
    assert pool.shared(two, "agent", templated.runtime) is pool.shared(dict(two), "agent",
                                                                       templated.runtime)
    assert pool.shared(three, "agent", templated.runtime) != pool.shared(two, "agent",
                                                                         templated.runtime)
    assert len(pool._by_identity) == 2  # the plain rule at its two levels; no templated item kept


def test_every_scenario_of_an_agent_gets_the_one_item_of_its_plain_rule(project: Project) -> None:
    plain = {"name": "never says secret", "not_contains": {"any": ["secret"]}}
    templated = {"name": "at most n items", "json_path": {"path": "items", "max_items": "{{n}}"}}
    project.agent(params={"n": "2"}, expect=[plain, templated])
    for name, params in (("a", None), ("b", None), ("c", {"n": "3"})):
        project.scenario(f"helper/acme/{name}", expect=[{"contains": "x"}],
                         **({"params": params} if params else {}))
    dataset = load_dataset(load_config(project.root))
    by_name = {s.name: {item.get("name"): item for item in s.expect} for s in dataset.scenarios}
    assert by_name["a"]["never says secret"] is by_name["b"]["never says secret"] is (
        by_name["c"]["never says secret"])
    assert by_name["a"]["at most n items"] is by_name["b"]["at most n items"]
    assert by_name["c"]["at most n items"]["json_path"]["max_items"] == 3
    assert by_name["a"]["at most n items"]["json_path"]["max_items"] == 2
