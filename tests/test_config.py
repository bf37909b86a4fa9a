"""[tool.harness] configuration: defaults, TTL floor, and clear refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.errors import ConfigError
from harness.loading.config import MAX_TTL_DAYS, MIN_TTL_DAYS, SCHEMA, load_config


def _pyproject(root: Path, section: str) -> None:
    (root / "pyproject.toml").write_text(f'[project]\nname = "x"\n\n[tool.harness]\n{section}\n')


def test_defaults_follow_the_committed_layout(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = load_config(tmp_path)
    assert config.datasets == tmp_path.resolve() / "eval-datasets"
    assert config.cache == tmp_path.resolve() / "eval-cache"
    assert config.results == tmp_path.resolve() / "eval-results"
    assert (config.ttl_days, config.path_budget) == (730, 160)
    assert config.credentials_file == tmp_path.resolve() / ".env.evals"


def test_paths_and_numbers_are_read(tmp_path: Path) -> None:
    _pyproject(tmp_path, 'datasets = "evals/data"\ncache = "evals/cache"\nresults = "out"\n'
                         'ttl_days = 400\npath_budget = 140\ncredentials_file = "secrets/.env"')
    config = load_config(tmp_path)
    assert config.datasets.relative_to(tmp_path.resolve()).as_posix() == "evals/data"
    assert config.relative(config.cache) == "evals/cache"
    assert (config.ttl_days, config.path_budget) == (400, 140)


def test_short_ttl_is_refused_with_the_reason(tmp_path: Path) -> None:
    _pyproject(tmp_path, "ttl_days = 14")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    message = str(info.value)
    assert "ttl_days = 14 is refused" in message
    assert "at least 365" in message
    assert "pyproject.toml" in message


def test_all_problems_are_reported_together(tmp_path: Path) -> None:
    _pyproject(tmp_path, 'ttl_days = "long"\npath_budget = 500\ncahce = "x"')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    message = str(info.value)
    assert "'ttl_days' must be an integer" in message
    assert "path_budget = 500" in message
    assert "unknown key 'cahce'" in message
    assert info.value.exit_code == 2


def test_results_inside_the_committed_cache_is_refused(tmp_path: Path) -> None:
    _pyproject(tmp_path, 'results = "eval-cache/results"')
    with pytest.raises(ConfigError, match="must not be inside the committed cache"):
        load_config(tmp_path)


def test_a_bad_allowlist_is_reported_once_and_the_section_is_known_without_a_second_read(
        tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\nallowlist = 3\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(caught.value).count("'allowlist' must be a non-empty path string") == 1
    (tmp_path / "pyproject.toml").write_text("[tool.harness]\n", encoding="utf-8")
    assert load_config(tmp_path).declared
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n', encoding="utf-8")
    assert not load_config(tmp_path).declared


def test_the_schema_collects_every_problem_each_worded_with_its_key_value_and_fix(tmp_path: Path) -> None:
    _pyproject(tmp_path, 'ttl_days = 730.0\nwatch = ["a", 3]\nrequire_provenance = "yes"\n'
                         'datasets = " "\n[tool.harness.prices]\nm = { input = -1 }\nn = 3\n'
                         'ok = { input = 1, output = 2 }')
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path)
    lines = str(info.value).splitlines()[1:]
    assert all(line.strip().startswith(f"{tmp_path / 'pyproject.toml'} [tool.harness]: ") for line in lines)
    said = [line.split("[tool.harness]: ", 1)[1] for line in lines]
    assert said == [
        "'datasets' must be a non-empty path string, got ' '. Fix: name the datasets folder, "
        'such as "eval-datasets"',
        "prices.m must be { input = <number>, output = <number> } in US$ per million tokens "
        "(both, not negative), got {'input': -1}",
        "prices.n must be { input = <number>, output = <number> } in US$ per million tokens "
        "(both, not negative), got 3",
        "'require_provenance' must be one of any, provider, got 'yes'. Fix: set "
        'require_provenance = "any" or "provider"',
        "'ttl_days' must be an integer, got 730.0. Fix: set ttl_days = 730",
        "'watch' must be a list of glob strings, got ['a', 3]. Fix: write it as watch = [\"prompts/**\"]",
    ]


def test_every_default_and_bound_is_the_schemas(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    config = load_config(tmp_path)
    keys = SCHEMA["properties"]
    assert (config.ttl_days, config.path_budget, config.requests_per_minute, config.watch, config.prices,
            config.require_provenance, config.allowlist) == (
        keys["ttl_days"]["default"], keys["path_budget"]["default"], keys["requests_per_minute"]["default"],
        tuple(keys["watch"]["default"]), keys["prices"]["default"], keys["require_provenance"]["default"],
        None)
    assert (MIN_TTL_DAYS, MAX_TTL_DAYS) == (keys["ttl_days"]["minimum"], keys["ttl_days"]["maximum"]) == (
        365, 36500)
    for name, spec in keys.items():
        assert {"x-expected", "x-fix"} <= set(spec), f"{name}: the schema words no error for it"
