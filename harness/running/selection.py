"""The scenarios a run covers: the one selection path of ``run``, ``pytest --evals`` and ``--dry-run``.

A filter that selects nothing is refused, a cache tree holding symbolic links is
refused (a clone would not hold what the run read), and an ``--iterations``
override must keep every cache path of every selected scenario within the path
budget, before any call is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness.cache.layout import worst_relative_path
from harness.core.declared import Scenario
from harness.core.errors import ConfigError
from harness.documents.links import refuse_symlinks
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset
from harness.loading.selecting import require_selected

if TYPE_CHECKING:
    from harness.running.options import RunOptions


def select_scenarios(config: HarnessConfig, dataset: Dataset, options: RunOptions,
                     cache_links: list[Path] | None = None) -> list[Scenario]:
    """The scenarios a run (or its ``--dry-run`` plan) covers: the one selection path.

    A filter that selects nothing is refused (:func:`~harness.loading.selecting.require_selected`),
    a cache tree with symbolic links is refused, and an ``--iterations`` override
    must keep every cache path within the budget. ``cache_links``: the links under the
    cache when a helper walked it during the load (else it is walked here).
    """
    refuse_symlinks(config.cache, config.relative(config.cache), config.relative,  # not in a clone
                    cache_links)
    scenarios = require_selected(options.selection, dataset.scenarios)
    check_iteration_override(config, scenarios, options.iterations)
    return scenarios


#: The most iterations a run may ask for (the scenario schema's own maximum).
MAX_ITERATIONS = 100


def check_iteration_override(
    config: HarnessConfig, scenarios: list[Scenario], iterations: int | None
) -> None:
    if iterations is None:
        return
    if iterations < 1:
        raise ConfigError(f"--iterations must be at least 1, got {iterations}")
    if iterations > MAX_ITERATIONS:  # 10**9 planned a billion iterations and ran out of memory
        raise ConfigError(f"--iterations {iterations} is over the limit of {MAX_ITERATIONS}, the "
                          "most a scenario may declare: every iteration is a cache entry to commit "
                          f"and replay. Fix: give --iterations {MAX_ITERATIONS} or less")
    cache_rel = config.relative(config.cache)
    for scenario in scenarios:
        worst = worst_relative_path(cache_rel, scenario.id, iterations)
        if len(worst) > config.path_budget:
            raise ConfigError(
                f"--iterations {iterations}: {scenario.id} would need a {len(worst)}-character "
                f"cache path, over the budget of {config.path_budget}")
