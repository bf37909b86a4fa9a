"""Dataset loading: every problem of every file at once, with file, field and fix."""

from __future__ import annotations

import pytest

from conftest import Project
from harness.core.errors import DatasetError
from harness.loading.config import load_config
from harness.loading.datasets import load_dataset
from harness.loading.selecting import Selection


def _problems(project: Project) -> list[str]:
    with pytest.raises(DatasetError) as info:
        load_dataset(load_config(project.root))
    return [p.render(project.root) for p in info.value.problems]


def test_a_valid_tree_loads_agents_tenants_and_scenarios(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    project.scenario("helper/globex/greeting", type="negative")
    project.write("eval-datasets/helper/globex/tenant.yaml", {"params": {"company": "Globex"}})
    dataset = load_dataset(load_config(project.root))
    assert [s.id for s in dataset.scenarios] == ["helper/acme/greeting", "helper/globex/greeting"]
    assert dataset.tenants[("helper", "globex")].params == {"company": "Globex"}
    assert dataset.agents["helper"].model == "gpt-test-1"


def test_errors_of_every_file_are_collected(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/one", typo_key=1)
    project.scenario("helper/acme/two", type="Positive!")
    project.write("eval-datasets/helper/acme/three.yaml", "type: edge\ndescription: [unclosed\n")
    project.scenario("helper/acme/four", expect=[{"contain": "x"}])
    problems = _problems(project)
    joined = "\n".join(problems)
    assert "one.yaml: (top level): Additional properties are not allowed ('typo_key'" in joined
    assert "remove it or fix its spelling" in joined
    assert "two.yaml: type:" in joined
    assert "three.yaml: line" in joined and "invalid YAML" in joined
    assert "four.yaml: expect[0]" in joined
    assert len(problems) == 4


def test_input_and_messages_are_exclusive(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/both", messages=[{"role": "user", "content": "hi"}])
    path = project.write("eval-datasets/helper/acme/neither.yaml",
                         {"type": "edge", "description": "d", "expect": []})
    problems = "\n".join(_problems(project))
    assert "both.yaml: input: and messages are both given" in problems
    assert f"{path.name}: input: is missing (and so is messages)" in problems


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("CON", "reserved device name"),
        ("nul.backup", "reserved device name"),
        ("com1", "reserved device name"),
        ("what?", "illegal"),
        ("a:b", "illegal"),
        ("trailing.", "ends with a dot"),
    ],
)
def test_names_unsafe_on_some_os_are_refused(project: Project, name: str, reason: str) -> None:
    project.agent()
    project.scenario(f"helper/acme/{name}")
    problems = "\n".join(_problems(project))
    assert reason in problems
    assert "rename it" in problems


def test_names_differing_only_by_case_are_refused(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/Greeting")
    project.scenario("helper/acme/greeting")
    project.scenario("helper/ACME/greeting")
    problems = "\n".join(_problems(project))
    assert "'Greeting' and 'greeting' differ only by case" in problems
    assert "'ACME' and 'acme' differ only by case" in problems


def test_one_scenario_with_two_extensions_is_refused(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    project.write("eval-datasets/helper/acme/greeting.json",
                  {"type": "edge", "description": "d", "input": "x", "expect": []})
    assert any("'greeting' exists with two extensions" in p for p in _problems(project))


def test_prompt_path_escaping_the_project_is_refused(project: Project) -> None:
    project.agent(system_prompt="../../../../etc/hostname")
    project.scenario("helper/acme/greeting")
    problems = "\n".join(_problems(project))
    assert "agent.yaml: system_prompt: '" in problems and "points outside the project" in problems


def test_connection_settings_in_options_are_refused(project: Project) -> None:
    project.agent(options={"temperature": 0, "base_url": "http://127.0.0.1:1/v1"})
    project.scenario("helper/acme/greeting")
    problems = "\n".join(_problems(project))
    assert "options.base_url: is a connection setting" in problems
    assert "move it under endpoint" in problems


def test_path_budget_is_enforced_at_load_with_the_numbers(project: Project) -> None:
    project.agent()
    long_name = "a-very-long-scenario-name-" + "x" * 80
    project.scenario(f"helper/acme/{long_name}")
    problems = "\n".join(_problems(project))
    expected = len(f"eval-cache/cache/helper/acme/{long_name}/0/{'0' * 16}/contents.data")
    assert f"would need a {expected}-character path" in problems
    assert "over the budget of 160" in problems


def test_many_iterations_count_toward_the_budget(project: Project) -> None:
    project.agent()
    name = "n" * 98  # exactly 160 characters with iteration 0, 161 with iteration 10
    project.scenario(f"helper/acme/{name}", iterations=1)
    load_dataset(load_config(project.root))
    project.scenario(f"helper/acme/{name}", iterations=11)
    assert any("over the budget of 160" in p for p in _problems(project))


def test_undefined_template_parameters_are_named(project: Project) -> None:
    project.agent()
    project.write("eval-datasets/helper/system.md", "You serve {{company}} on {{channel}}.")
    project.write("eval-datasets/helper/acme/tenant.yaml", {"params": {"company": "Acme"}})
    project.scenario("helper/acme/greeting", input="Hello {{nickname}}")
    problems = "\n".join(_problems(project))
    assert "{{channel}} of the system prompt is not defined" in problems
    assert "messages[0]: template parameter {{nickname}} is not defined" in problems
    assert "{{company}}" not in problems


def test_missing_agent_file_and_prompt(project: Project) -> None:
    project.write("eval-datasets/orphan/acme/greeting.yaml",
                  {"type": "edge", "description": "d", "input": "x", "expect": []})
    project.write("eval-datasets/helper/agent.yaml",
                  {"provider": "openai", "model": "m", "system_prompt": "nope.md"})
    project.scenario("helper/acme/greeting")
    problems = "\n".join(_problems(project))
    assert "orphan: agent.yaml: is missing" in problems
    assert "system_prompt: file eval-datasets/helper/nope.md not found" in problems


def test_selection_filters(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    project.scenario("helper/acme/refusal", type="negative")
    project.scenario("helper/globex/greeting")
    scenarios = load_dataset(load_config(project.root)).scenarios

    def ids(selection: Selection) -> list[str]:
        return [s.id for s in selection.apply(scenarios)]

    assert ids(Selection(tenants=("globex",))) == ["helper/globex/greeting"]
    assert ids(Selection(types=("negative",))) == ["helper/acme/refusal"]
    assert ids(Selection(scenarios=("*/greeting",))) == ["helper/acme/greeting",
                                                         "helper/globex/greeting"]
    assert ids(Selection(scenarios=("greet*",), tenants=("acme",))) == ["helper/acme/greeting"]
    assert ids(Selection(agents=("other",))) == []


def test_bad_regex_and_bad_json_path_are_caught_at_load(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", expect=[{"regex": "(unclosed"},
                                                     {"json_path": {"path": "a..b", "exists": True}}])
    problems = "\n".join(_problems(project))
    assert "greeting.yaml: expect[0]:" in problems and "greeting.yaml: expect[1]:" in problems


def test_absolute_prompt_path_is_refused(project: Project) -> None:
    project.agent(system_prompt="/etc/hostname")
    project.scenario("helper/acme/greeting")
    assert any("points outside the project" in p for p in _problems(project))


def test_prompt_checked_out_with_crlf_gives_the_same_request(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting")
    prompt = project.datasets / "helper/system.md"
    prompt.write_bytes(b"Line one for {{tenant}}.\nLine two.\n")
    lf = load_dataset(load_config(project.root))
    prompt.write_bytes(b"Line one for {{tenant}}.\r\nLine two.\r\n")
    crlf = load_dataset(load_config(project.root))
    assert lf.request_for(lf.scenarios[0]) == crlf.request_for(crlf.scenarios[0])


def test_an_agent_filter_reads_only_those_agents_folders(project: Project) -> None:
    project.agent()
    project.agent("other")
    project.scenario("helper/acme/greeting")
    project.write("eval-datasets/other/acme/broken.yaml", "type: edge\ndescription: [unclosed\n")
    config = load_config(project.root)
    dataset = load_dataset(config, agents=("helper",))
    assert [s.id for s in dataset.scenarios] == ["helper/acme/greeting"]
    assert set(dataset.agents) == {"helper"}
    # the whole tree still holds the broken file, and a name that is no agent folder reads it
    # all, so the run's filter error could list every agent
    for agents in ((), ("helper", "typo")):
        with pytest.raises(DatasetError, match="broken.yaml"):
            load_dataset(config, agents=agents)
