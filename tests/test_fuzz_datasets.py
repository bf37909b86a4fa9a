"""Fuzzing the dataset loader: malformed scenario, agent and tenant files.

Each generated file is written into a copy of a real example agent and the
datasets are loaded through the library API, as ``run`` and ``check`` load
them. Every input must end either loaded (the mutation happened to stay valid;
then its requests and keys are built, as a run would) or in a
:class:`~harness.core.errors.DatasetError` whose problems name the file; never in
another exception, and never with a byte changed under ``eval-cache/``.
Hypothesis runs derandomized and without an example database, so CI sees the
same inputs every time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzz_project import AGENT, FUZZ, TENANT, build_project, digest
from fuzz_strategies import malformed_document
from fuzz_support import count, timed
from hypothesis import given, settings

from conftest import REPO_ROOT
from harness.core.entities import ChatCall
from harness.core.errors import DatasetError
from harness.loading.config import HarnessConfig, load_config
from harness.loading.datasets import load_dataset
from harness.requests.key import compute_key

pytestmark = pytest.mark.slow(seconds=40)

SCENARIO_KEYS = ("type", "description", "input", "messages", "expect", "judge", "params", "tags",
                 "iterations", "context", "tool_results", "counterexamples", "rubric")
AGENT_KEYS = ("provider", "model", "system_prompt", "options", "output", "output_schema", "script",
              "tools", "judge", "metrics", "endpoint", "params", "decision_path", "max_tool_rounds",
              "description")
HOSTILE_PATHS = ["../../../../etc/passwd", "/etc/hostname", "missing.md", ".", "inkwell-print",
                 "system.md/", "x" * 300, "", "script.yaml", "caf\u0065\u0301.md"]
SCENARIO_HOSTILE: dict[str, list[Any]] = {
    "iterations": [0, -1, 10**9, 3.5, True, "2"],
    "type": ["Positive!", "", "negative", "x" * 200, None],
    "params": [{"company": None}, {"": 1}, {"a": {"b": {"c": [1]}}}],
    "expect": [[{"contains": None}], [{"json_path": {"path": "$[", "equals": 1}}], [{}], [[]],
               [{"name": "x", "tool_args": {"name": 3}}], [{"matches": "("}], [{"max_chars": -1}]],
    "judge": [[{"name": "q", "rubric": "missing.md"}], "yes", [{"prompt": "../../x"}], [None]],
    "messages": [[{"role": "robot", "content": "x"}], [], [{"role": "user"}], "hi"],
    "tool_results": [{"lookup_baseline": None}, {"": []}, {"x": {"y": float("nan")}}],
}
AGENT_HOSTILE: dict[str, list[Any]] = {
    "system_prompt": HOSTILE_PATHS,
    "output_schema": HOSTILE_PATHS,
    "script": HOSTILE_PATHS,
    "provider": ["openai", "anthropic", "azure", "", "OpenAI"],
    "options": [{"base_url": "http://x"}, {"temperature": "hot"}, {"max_tokens": -5}, []],
    "tools": [[{"name": ""}], [{"name": "a"}, {"name": "a"}], [{"parameters": {"type": "nope"}}], {}],
    "endpoint": [{"base_url": 3}, {"api_key_env": ""}, {"max_retries": -1}, {"timeout_s": "x"}],
    "metrics": [[{"name": "m", "gate": {"min": "x"}}], [{}], "m"],
    "max_tool_rounds": [0, -1, 10**12, "4"],
    "judge": [{"provider": 1}, {"model": None}, []],
}


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> HarnessConfig:
    """A project holding one real example agent and its recorded entries."""
    return load_config(build_project(tmp_path_factory.mktemp("fuzz-datasets")))


def _base(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _load_and_key(config: HarnessConfig, file: Path, kind: str) -> None:
    """Load the datasets; a valid result is keyed like a run would; an error must name ``file``."""
    cache_before = digest(config.cache)
    try:
        dataset = load_dataset(config)
    except DatasetError as error:
        rendered = [problem.render(config.root) for problem in error.problems]
        text = "\n".join(rendered)
        assert error.code == "eval-dataset-invalid" and error.exit_code == 2
        assert rendered and all(line.strip() for line in rendered)
        text.encode("utf-8")  # printable: a log or a report can hold it
        shown = file.relative_to(config.root).as_posix()
        assert shown in text or kind != "scenario file", text
        count(kind, "error")
    else:
        for scenario in dataset.scenarios:
            agent = dataset.agents[scenario.agent]
            for iteration in range(min(scenario.iterations, 3)):
                compute_key(ChatCall(scenario.id, iteration, agent.provider, agent.model,
                                     dataset.request_for(scenario)))
        count(kind, "valid")
    assert digest(config.cache) == cache_before


@settings(FUZZ, max_examples=420)
@given(generated=malformed_document(
    _base(REPO_ROOT / "eval-datasets" / AGENT / TENANT / "proof-question-lookup.yaml"),
    SCENARIO_KEYS, SCENARIO_HOSTILE, formats=("yaml", "json")))
def test_fuzz_malformed_scenario_files_end_in_a_named_problem(
        example: HarnessConfig, generated: tuple[str, bytes]) -> None:
    fmt, data = generated
    file = example.datasets / AGENT / TENANT / f"fuzzed.{fmt}"
    file.write_bytes(data)
    try:
        with timed("scenario file"):
            _load_and_key(example, file, "scenario file")
    finally:
        file.unlink()


@settings(FUZZ, max_examples=330)
@given(generated=malformed_document(_base(REPO_ROOT / "eval-datasets" / AGENT / "agent.yaml"),
                                    AGENT_KEYS, AGENT_HOSTILE))
def test_fuzz_malformed_agent_files_end_in_a_named_problem(
        example: HarnessConfig, generated: tuple[str, bytes]) -> None:
    _, data = generated
    file = example.datasets / AGENT / "agent.yaml"
    original = file.read_bytes()
    file.write_bytes(data)
    try:
        with timed("agent file"):
            _load_and_key(example, file, "agent file")
    finally:
        file.write_bytes(original)


@settings(FUZZ, max_examples=80)
@given(generated=malformed_document({"description": "A tenant.", "params": {"company": "Inkwell"}},
                                    ("description", "params", "rubric"),
                                    {"params": [None, [], {"company": {"nested": True}}, "x"]}))
def test_fuzz_malformed_tenant_files_end_in_a_named_problem(
        example: HarnessConfig, generated: tuple[str, bytes]) -> None:
    _, data = generated
    file = example.datasets / AGENT / TENANT / "tenant.yaml"
    original = file.read_bytes() if file.exists() else None
    file.write_bytes(data)
    try:
        with timed("tenant file"):
            _load_and_key(example, file, "tenant file")
    finally:
        if original is None:
            file.unlink()
        else:
            file.write_bytes(original)
