"""One set of rules for both front ends: ``harness run`` and ``pytest --evals`` refuse the same
options, through :func:`harness.running.api.validate_options`, as real subprocesses on a temp project.

``harness run`` exits 2 on a bad option; ``pytest --evals`` exits with pytest's usage error
(4), the code pytest gives any misused option. Neither reads a dataset file or calls anything.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import Project
from harness.loading.selecting import Selection
from harness.running.api import RunOptions
from harness.running.options import OptionsInvalid, validate_options

USAGE = int(pytest.ExitCode.USAGE_ERROR)


@pytest.fixture
def recorded(project: Project) -> Project:
    """Two scenarios of one agent, recorded from the script."""
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/farewell", {"answer": "yes"})
    assert project.record().code == 0
    return project


def _env() -> dict[str, str]:
    return {**os.environ, "OPENAI_API_KEY": "local", "GITHUB_STEP_SUMMARY": ""}


def harness_run(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(project.root), "run",
                           *args], capture_output=True, text=True, timeout=120, env=_env())


def pytest_evals(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "--evals", "-p", "no:cacheprovider",
                           "-q", *args], cwd=project.root, capture_output=True, text=True,
                          timeout=120, env=_env())


def test_scripted_without_a_recording_mode_is_refused_by_both(recorded: Project) -> None:
    before = recorded.cache_digest()
    cli = harness_run(recorded, "--scripted")
    assert cli.returncode == 2, cli.stdout + cli.stderr
    assert "eval-options-invalid: --scripted only applies with --refresh-cache or " \
           "--record-missing" in cli.stderr
    plugin = pytest_evals(recorded, "--evals-scripted")
    assert plugin.returncode == USAGE, plugin.stdout + plugin.stderr
    assert "eval-options-invalid: --evals-scripted only applies with --evals-refresh-cache or " \
           "--evals-record-missing" in plugin.stderr
    assert "passed" not in plugin.stdout  # refused before any item ran
    assert recorded.cache_digest() == before


def test_a_negative_max_calls_is_a_bad_value_not_a_plan_over_budget(recorded: Project) -> None:
    cli = harness_run(recorded, "--refresh-cache", "--scripted", "--max-calls", "-1")
    assert cli.returncode == 2
    assert "--max-calls must be 0 or more, got -1" in cli.stderr
    plugin = pytest_evals(recorded, "--evals-refresh-cache", "--evals-scripted",
                          "--evals-max-calls", "-1")
    assert plugin.returncode == USAGE, plugin.stdout + plugin.stderr
    assert "--evals-max-calls must be 0 or more, got -1" in plugin.stderr
    for output in (cli.stdout + cli.stderr, plugin.stdout + plugin.stderr):
        assert "plan:" not in output and "more than --max-calls" not in output


def test_max_calls_zero_is_a_valid_budget(recorded: Project) -> None:
    """0 is a budget (of a run that may call nothing), not a bad value: a paid record-missing
    over a complete cache plans 0 calls and runs."""
    done = pytest_evals(recorded, "--evals-record-missing", "--evals-max-calls", "0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "calls to make: 0" in done.stdout


def test_iterations_below_one_is_refused_by_both(recorded: Project) -> None:
    cli = harness_run(recorded, "--iterations", "0")
    assert cli.returncode == 2 and "--iterations must be at least 1, got 0" in cli.stderr
    plugin = pytest_evals(recorded, "--evals-iterations", "0")
    assert plugin.returncode == USAGE, plugin.stdout + plugin.stderr
    assert "--evals-iterations must be at least 1, got 0" in plugin.stderr


def test_resume_with_scripted_is_refused_by_both(recorded: Project) -> None:
    cli = harness_run(recorded, "--refresh-cache", "--scripted", "--resume")
    assert cli.returncode == 2 and "--resume applies only to a paid recording run" in cli.stderr
    plugin = pytest_evals(recorded, "--evals-refresh-cache", "--evals-scripted", "--evals-resume")
    assert plugin.returncode == USAGE, plugin.stdout + plugin.stderr
    assert "--evals-resume applies only to a paid recording run" in plugin.stderr


def test_every_bad_option_is_named_at_once(recorded: Project) -> None:
    cli = harness_run(recorded, "--scripted", "--iterations", "0", "--concurrency", "0")
    assert cli.returncode == 2
    assert "3 options are invalid" in cli.stderr
    for part in ("--scripted only applies", "--iterations must be at least 1",
                 "--concurrency must be at least 1"):
        assert part in cli.stderr


def test_dry_run_selects_through_the_run_path(recorded: Project) -> None:
    """A typo in a filter is exit 2 with the valid values, with and without --dry-run."""
    ran = harness_run(recorded, "--refresh-cache", "--scripted", "--agent", "typo")
    dry = harness_run(recorded, "--refresh-cache", "--scripted", "--dry-run", "--agent", "typo")
    for outcome in (ran, dry):
        assert outcome.returncode == 2, outcome.stdout + outcome.stderr
        assert "--agent 'typo' matches nothing; valid values: helper" in outcome.stderr
    assert "0 iteration(s)" not in dry.stdout
    plugin = pytest_evals(recorded, "--evals-refresh-cache", "--evals-scripted",
                          "--evals-agent", "typo")
    assert plugin.returncode != 0
    assert "--agent 'typo' matches nothing" in plugin.stdout + plugin.stderr


def test_dry_run_refuses_what_the_run_refuses(recorded: Project) -> None:
    dry = harness_run(recorded, "--refresh-cache", "--scripted", "--dry-run", "--resume")
    assert dry.returncode == 2 and "--resume applies only to a paid recording run" in dry.stderr
    dry = harness_run(recorded, "--refresh-cache", "--dry-run", "--iterations", "0")
    assert dry.returncode == 2 and "--iterations must be at least 1" in dry.stderr


def test_the_library_refuses_options_a_script_builds() -> None:
    """A script calling the API gets the same refusals (no front end in between)."""
    with pytest.raises(OptionsInvalid, match="--scripted only applies"):
        validate_options(RunOptions(scripted=True))
    with pytest.raises(OptionsInvalid, match="got -1"):
        validate_options(RunOptions(mode="refresh", max_calls=-1))
    with pytest.raises(OptionsInvalid, match="mode must be one of"):
        validate_options(RunOptions(mode="paid"))  # type: ignore[arg-type]
    with pytest.raises(OptionsInvalid, match="--max-calls must be 0 or more, got True"):
        validate_options(RunOptions(mode="refresh", max_calls=True))
    validate_options(RunOptions(Selection(), mode="refresh", scripted=True, max_calls=0))
    validate_options(RunOptions(mode="refresh", resume=True, batch=True))
