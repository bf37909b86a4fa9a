"""The repository keeps the promises its README makes."""

from __future__ import annotations

import re
import tomllib

from conftest import REPO_ROOT


def _readme() -> str:
    return (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _quick_start() -> list[str]:
    block = _readme().split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.strip().splitlines()]


def test_readme_quick_start_is_exactly_two_commands() -> None:
    commands = _quick_start()
    assert commands == ['pip install -e ".[examples]" && python -m harness run',
                        'pip install -e ".[test]" && python -m pytest -n auto']


def test_ci_runs_both_quick_start_commands() -> None:
    ci = (REPO_ROOT / ".ci/run").read_text(encoding="utf-8")
    for command in _quick_start():
        assert command in ci


def test_pyproject_declares_the_design_card_packages_and_entry_points() -> None:
    data = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    project = data["project"]
    names = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["dependencies"]}
    assert {"pyyaml", "jsonschema", "diskcache", "tabulate"} <= names
    test_extra = {re.split(r"[<>=\[ ]", d)[0].lower() for d in project["optional-dependencies"]["test"]}
    assert "pytest" in test_extra
    assert project["scripts"]["harness"] == "harness.frontends.cli:main"


def test_gitattributes_keeps_cache_payloads_byte_exact() -> None:
    lines = (REPO_ROOT / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert "eval-cache/** -text" in lines


def test_gitignore_keeps_results_and_credentials_out() -> None:
    lines = (REPO_ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "eval-results/" in lines and ".env.evals" in lines
