"""``[tool.harness]`` paths stay inside the project and apart, and ttl_days has a ceiling
(issue 19, items 5 and 6): each refusal names pyproject.toml, the key and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import Project
from harness.core.errors import ConfigError
from harness.loading.config import MAX_TTL_DAYS, load_config


def _refusal(root: Path, body: str) -> str:
    (root / "pyproject.toml").write_text(f"[tool.harness]\n{body}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(root)
    assert info.value.code == "eval-config-invalid" and info.value.exit_code == 2
    return str(info.value)


@pytest.mark.parametrize(("body", "expected"), [
    ('results = "eval-datasets"', "datasets and results are the same folder (eval-datasets)"),
    ('results = "eval-datasets/runs"',
     "results (eval-datasets/runs) must not be inside the datasets (eval-datasets): run records "
     "would be loaded as datasets and fail the next run. Fix: use a separate root such as "
     "'eval-results'"),
    ('results = "../../x"', "results = '../../x' is a path outside the project"),
    ('cache = "/var/tmp/elsewhere"', "cache = '/var/tmp/elsewhere' is an absolute path outside "
     "the project"),
    ('cache = "eval-datasets/cache"', "cache (eval-datasets/cache) must not be inside the datasets"),
    ('datasets = "eval-cache/data"', "datasets (eval-cache/data) must not be inside the committed "
     "cache"),
    ('cache = "."', "cache = '.' is the project root itself"),
    ('results = "eval-cache/results"', "must not be inside the committed cache"),
])
def test_trees_outside_the_project_or_inside_each_other_are_refused(
        tmp_path: Path, body: str, expected: str) -> None:
    message = _refusal(tmp_path, body)
    assert expected in message, message
    assert "pyproject.toml [tool.harness]" in message and "Fix:" in message


def test_an_absolute_path_inside_the_project_is_accepted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        f'[tool.harness]\nresults = "{tmp_path / "out" / "runs"}"\n', encoding="utf-8")
    assert load_config(tmp_path).results == (tmp_path / "out" / "runs").resolve()


@pytest.mark.parametrize("ttl", [MAX_TTL_DAYS + 1, 3_000_000, 10**30])
def test_a_huge_ttl_is_refused_with_the_reason(tmp_path: Path, ttl: int) -> None:
    message = _refusal(tmp_path, f"ttl_days = {ttl}")
    assert f"ttl_days = {ttl} is refused: it must be at most 36500" in message
    assert "Set ttl_days = 730" in message


def test_the_ceiling_itself_records_and_replays(project: Project) -> None:
    (project.root / "pyproject.toml").write_text(
        f'[project]\nname = "demo"\n[tool.harness]\nttl_days = {MAX_TTL_DAYS}\n', encoding="utf-8")
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    assert project.record().code == 0
    assert project.run("run").code == 0


def test_a_results_tree_in_the_datasets_is_refused_by_run_before_any_record(
        project: Project) -> None:
    (project.root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\n[tool.harness]\nresults = "eval-datasets/runs"\n',
        encoding="utf-8")
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    outcome = project.run("run")
    assert outcome.code == 2 and "must not be inside the datasets" in outcome.err
    assert not (project.datasets / "runs").exists()
