"""The pytest entry point of the harness: options, and nothing else until ``--evals``.

Installing the harness registers this module (entry point ``pytest11``) in every
pytest run of the environment, including an adopter's plain ``pytest`` that never
asked for evals. So it only declares the options and, under ``--evals``, loads the
real plugin (:mod:`harness.frontends.pytest_plugin`, which imports the library). Without
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

from harness.running.optionspec import add_to_pytest, deprecated_given, evals_only_given


class HarnessDeprecationWarning(DeprecationWarning):
    """An option spelling of the plugin that will be removed."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """The ``--evals-*`` options: the rows of :mod:`harness.running.optionspec` that pytest has, the
    same table ``python -m harness run`` is built from; they read the same [tool.harness]."""
    add_to_pytest(parser.getgroup("evals", "offline LLM evals (harness)"))


def pytest_configure(config: pytest.Config) -> None:
    """Under ``--evals``, load the plugin; without it, do nothing (an option that needs it is
    a usage error rather than silently ignored)."""
    get = config.getoption
    for old, new in deprecated_given(get):
        config.issue_config_time_warning(HarnessDeprecationWarning(
            f"{old} is deprecated and will be removed: use {new}"), stacklevel=2)
    if not get("evals"):
        given = evals_only_given(get)
        if given:
            raise pytest.UsageError(f"{', '.join(given)} only apply with --evals: add --evals "
                                    "to run the eval scenarios")
        return
    # the plugin's pytest_configure refuses bad options (the library's rules) before it reads
    # anything; pytest_configure is a historic hook: the plugin's own runs as it is registered
    config.pluginmanager.import_plugin("harness.frontends.pytest_plugin")


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
    from harness.core.errors import HarnessError
    from harness.loading.config import find_root, load_config

    try:
        datasets = load_config(find_root(config.rootpath)).datasets
    except HarnessError:
        return
    if any(touches(arg, datasets) for arg in config.args):
        terminalreporter.write_line("harness: scenario files are collected only with --evals "
                                    f"(pytest --evals {' '.join(config.args)})")
