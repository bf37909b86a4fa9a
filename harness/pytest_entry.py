"""The pytest entry point of the harness: options, and nothing else until ``--evals``.

Installing the harness registers this module (entry point ``pytest11``) in every
pytest run of the environment, including an adopter's plain ``pytest`` that never
asked for evals. So it only declares the options and, under ``--evals``, loads the
real plugin (:mod:`harness.pytest_plugin`, which imports the library). Without
``--evals`` no scenario file is collected, not even one named on the command
line, nothing is written and nothing heavy is imported: the module is small
because pytest also reads, parses and assertion-rewrites every module of a plugin
distribution it imports. tests/test_plugin_inert.py holds it to that;
tests/benchmarks/bench_plugin_overhead.py measures what is left.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

#: Options that mean nothing without ``--evals`` (dest, spelling).
_EVALS_ONLY = (("evals_refresh_cache", "--evals-refresh-cache"),
               ("evals_record_missing", "--evals-record-missing"),
               ("refresh_cache", "--refresh-cache"), ("record_missing", "--record-missing"),
               ("evals_resume", "--evals-resume"), ("evals_scripted", "--evals-scripted"),
               ("evals_agent", "--evals-agent"),
               ("evals_tenant", "--evals-tenant"), ("evals_type", "--evals-type"),
               ("evals_scenario", "--evals-scenario"), ("evals_iterations", "--evals-iterations"),
               ("evals_max_calls", "--evals-max-calls"), ("evals_shard", "--evals-shard"),
               ("evals_shard_durations", "--evals-shard-durations"))
#: Old spellings, kept working with a warning: unprefixed, they could clash with another plugin.
_DEPRECATED = {"refresh_cache": ("--refresh-cache", "--evals-refresh-cache"),
               "record_missing": ("--record-missing", "--evals-record-missing")}


class HarnessDeprecationWarning(DeprecationWarning):
    """An option spelling of the plugin that will be removed."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """Options mirroring ``python -m harness run``; they read the same [tool.harness]."""
    group = parser.getgroup("evals", "offline LLM evals (harness)")
    group.addoption("--evals", action="store_true",
                    help="collect the scenarios of the datasets folder as test items (without "
                    "it the harness plugin does nothing)")
    group.addoption("--evals-refresh-cache", action="store_true",
                    help="re-record the selected scenarios against the provider (PAID calls)")
    group.addoption("--evals-record-missing", action="store_true",
                    help="record only the selected scenarios that miss (PAID calls)")
    group.addoption("--refresh-cache", action="store_true",
                    help="deprecated spelling of --evals-refresh-cache")
    group.addoption("--record-missing", action="store_true",
                    help="deprecated spelling of --evals-record-missing")
    group.addoption("--evals-resume", action="store_true",
                    help="with a recording option: reuse the answers an earlier interrupted or "
                    "failed run paid for instead of paying again (as run --resume)")
    group.addoption("--evals-scripted", action="store_true",
                    help="record from each agent's script file (the scripted fake provider)")
    group.addoption("--evals-agent", action="append", default=[], help="only this agent")
    group.addoption("--evals-tenant", action="append", default=[], help="only this tenant")
    group.addoption("--evals-type", action="append", default=[], help="only this test type")
    group.addoption("--evals-scenario", action="append", default=[], metavar="GLOB",
                    help="only scenarios whose id or name matches")
    group.addoption("--evals-iterations", type=int, default=None,
                    help="override every scenario's iteration count")
    group.addoption("--evals-max-calls", type=int, default=None, metavar="N",
                    help="with --evals-refresh-cache/--evals-record-missing: refuse to start (exit "
                    "2) a recording that may need more than N calls; never cuts a run short")
    group.addoption("--evals-shard", type=_shard, default=None, metavar="K/N",
                    help="run only shard K of N of the selection (as run --shard); merge the N "
                    "runs with `python -m harness report --merge`")
    group.addoption("--evals-shard-durations", type=Path, default=None, metavar="RUN_DIR",
                    help="with --evals-shard: balance by the durations of this earlier run "
                    "(eval-results/results/<run-id>)")


def _shard(value: str) -> tuple[int, int]:
    """``--evals-shard K/N``; a bad value is a usage error that says the form."""
    import argparse

    from harness.shards import parse_shard  # imported only when the option is given

    try:
        return parse_shard(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def pytest_configure(config: pytest.Config) -> None:
    """Under ``--evals``, load the plugin; without it, do nothing (an option that needs it is
    a usage error rather than silently ignored)."""
    get = config.getoption
    for dest, (old, new) in _DEPRECATED.items():
        if get(dest):
            config.issue_config_time_warning(HarnessDeprecationWarning(
                f"{old} is deprecated and will be removed: use {new}"), stacklevel=2)
    if not get("evals"):
        given = [flag for dest, flag in _EVALS_ONLY if get(dest) not in (None, False, [])]
        if given:
            raise pytest.UsageError(f"{', '.join(given)} only apply with --evals: add --evals "
                                    "to run the eval scenarios")
        return
    if (get("evals_refresh_cache") or get("refresh_cache")) and (
            get("evals_record_missing") or get("record_missing")):
        raise pytest.UsageError("--evals-refresh-cache and --evals-record-missing exclude each "
                                "other: choose one")
    # pytest_configure is a historic hook: the plugin's own runs as it is registered
    config.pluginmanager.import_plugin("harness.pytest_plugin")


def touches(arg: str, datasets: Path) -> bool:
    """Whether a command-line path (or node id) contains the datasets folder or lies inside it:
    then pytest collects from it what the user named, and adding the whole folder would run
    scenarios they left out."""
    path = Path(arg.split("::", 1)[0])
    if not path.exists():
        return False
    path = path.resolve()
    return datasets.is_relative_to(path) or path.is_relative_to(datasets)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """``pytest eval-datasets/`` without ``--evals`` collects nothing: say why. Only then is the
    configuration read, so a run that collected something pays nothing for this."""
    if (exitstatus != pytest.ExitCode.NO_TESTS_COLLECTED or config.getoption("evals")
            or config.args_source != pytest.Config.ArgsSource.ARGS):
        return
    from harness.config import find_root, load_config
    from harness.errors import HarnessError

    try:
        datasets = load_config(find_root(config.rootpath)).datasets
    except HarnessError:
        return
    if any(touches(arg, datasets) for arg in config.args):
        terminalreporter.write_line("harness: scenario files are collected only with --evals "
                                    f"(pytest --evals {' '.join(config.args)})")
