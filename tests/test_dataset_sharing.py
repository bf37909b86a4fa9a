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


def test_a_compact_scenario_reads_back_every_field_it_was_loaded_with(project: Project) -> None:
    """A scenario keeps one user turn as its text, its file as a tail and its unset fields as
    one None (memory at 50,000 scenarios); every field still reads as the file says."""
    project.agent()
    plain = project.scenario("helper/acme/plain")
    rich = project.scenario(
        "helper/acme/rich.v2", context="Ctx", params={"who": "x"}, tags=["T-1"],
        messages=[{"content": "first", "role": "user"}, {"role": "assistant", "content": "ok"},
                  {"role": "user", "content": "again"}],
        input=None, review={"reviewer": "ann", "reviewed_at": "2026-01-01"})
    rich.write_text(rich.read_text(encoding="utf-8").replace("input: null\n", ""), encoding="utf-8")
    one, two = sorted(load_dataset(load_config(project.root)).scenarios, key=lambda s: s.name)
    assert (one.name, one.file, one.file_name) == ("plain", plain, "plain.yaml")
    assert one.messages == ({"role": "user", "content": "Question for plain?"},)
    assert one.messages is not one.messages and one.messages[0] is not one.messages[0]
    assert (one.context, one.params, one.tags, one.tool_results, one.review) == (None, {}, (), {}, {})
    assert (one.judge, one.counterexamples, one.rubric, one.equivalent_mutants) == ((), (), (), ())
    assert (two.name, two.file, two.file_name) == ("rich.v2", rich, "rich.v2.yaml")
    assert [list(m) for m in two.messages] == [["content", "role"], ["role", "content"],
                                               ["role", "content"]]  # key order kept as written
    assert (two.context, two.params, two.tags) == ("Ctx", {"who": "x"}, ("T-1",))
    assert two.review == {"reviewer": "ann", "reviewed_at": "2026-01-01"}
