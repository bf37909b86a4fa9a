"""Equal expect items of many scenarios are checked once and held once, and still reported per file."""

from __future__ import annotations

import pytest

from conftest import Project
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset


def test_an_invalid_item_repeated_in_three_scenarios_is_reported_in_each(project: Project) -> None:
    project.agent()
    for name in ("one", "two", "three"):
        project.scenario(f"helper/acme/{name}", expect=[{"contains": "hi"}, {"regex": "(unclosed"}])
    with pytest.raises(DatasetError) as info:
        load_dataset(load_config(project.root))
    shown = [p.render(project.root) for p in info.value.problems]
    assert len(shown) == 3
    for name in ("one", "two", "three"):
        assert sum(f"{name}.yaml: expect[1]" in line for line in shown) == 1


def test_equal_items_share_one_checked_object_and_different_ones_do_not(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/one", expect=[{"contains": "hi"}, {"contains": "one"}])
    project.scenario("helper/acme/two", expect=[{"contains": "hi"}, {"contains": "two"}])
    one, two = load_dataset(load_config(project.root)).scenarios
    assert one.expect[0] is two.expect[0]
    assert one.expect[1] is not two.expect[1]
    assert (dict(one.expect[1]), dict(two.expect[1])) == ({"contains": "one"}, {"contains": "two"})
