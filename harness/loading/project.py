"""Finding the project a command works on, and saying so when there is none.

Run outside a harness project (a home folder, a repository that has not adopted
it), ``run`` used to report a missing datasets folder and ``check`` five failed
guards: true, and no help. A project is the nearest folder at or above the
current one with a ``pyproject.toml``; it is a *harness* project when that file
has a ``[tool.harness]`` section or its datasets, cache or results folder exists
(the defaults need no section). Otherwise the one useful sentence is: none was found from here
upward, and ``init`` adopts the harness.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import ProjectNotFound
from harness.loading.config import HarnessConfig, load_config


def load_project(project: Path | None) -> HarnessConfig:
    """The configuration of the harness project at ``project`` (default: found from the current
    folder upward); :class:`ProjectNotFound` (exit 2) when there is none."""
    start = (project or Path.cwd()).resolve()
    config = load_config(project)
    # report and compare read only eval-results/: a checkout with results and no datasets counts
    if (any(folder.is_dir() for folder in (config.datasets, config.cache, config.results))
            or config.declared):
        return config
    nearest = config.root / "pyproject.toml"
    looked = (f"the nearest pyproject.toml ({nearest}) has no [tool.harness] section"
              if nearest.is_file() else "no pyproject.toml")
    where = f"at {start}" if project is not None else f"from {start} upward"
    raise ProjectNotFound(
        f"no harness project found {where}: {looked}, and there is no "
        f"{config.relative(config.datasets)}/, {config.relative(config.cache)}/ or "
        f"{config.relative(config.results)}/ folder. To adopt the harness in this repository, "
        "run `python -m harness init` at its root; to work on another project, run the command "
        "there or pass --project PATH")

