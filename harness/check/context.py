"""What every guard observes, gathered once: configuration, datasets, the file trees, git.

Guards are pure functions of a :class:`CheckContext`, so each can be tested
alone and all of them see the same snapshot of the project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.check.entries import CacheTree, scan_tree
from harness.check.findings import Finding, GuardResult
from harness.check.gitrepo import NOT_A_REPO, NOT_A_REPO_FIX, GitRepo, find_repo
from harness.core.clock import utc_now
from harness.core.errors import DatasetError, Problem
from harness.core.rerecord import rerecord_command
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset, load_dataset
from harness.loading.selecting import Selection


@dataclass(frozen=True)
class CheckContext:
    """One snapshot of the project, read-only."""

    config: HarnessConfig
    selection: Selection
    dataset: Dataset | None
    """``None`` when the datasets do not load; ``dataset_problems`` says why."""
    dataset_problems: tuple[Problem, ...]
    tree: CacheTree
    cache_files: tuple[Path, ...]
    dataset_files: tuple[Path, ...]
    repo: GitRepo | None
    since: str | None
    now: datetime

    def rel(self, path: Path) -> str:
        """``path`` relative to the project root, ``/``-separated."""
        return self.config.relative(path)

    @property
    def cache_rel(self) -> str:
        return self.rel(self.config.cache)

    @property
    def datasets_rel(self) -> str:
        return self.rel(self.config.datasets)


def build_context(config: HarnessConfig, selection: Selection, since: str | None = None,
                  now: datetime | None = None) -> CheckContext:
    """Load the datasets (keeping their problems instead of raising), survey the trees, find git."""
    dataset: Dataset | None = None
    problems: tuple[Problem, ...] = ()
    try:
        dataset = load_dataset(config)
    except DatasetError as exc:
        problems = tuple(exc.problems)
    return CheckContext(
        config=config,
        selection=selection,
        dataset=dataset,
        dataset_problems=problems,
        tree=scan_tree(config.cache),
        cache_files=files_under(config.cache),
        dataset_files=files_under(config.datasets),
        repo=find_repo(config.root),
        since=since,
        now=now or utc_now(),
    )


#: The folder Python writes its bytecode cache into, beside a module it imports.
BYTECODE_FOLDER = "__pycache__"


def files_under(folder: Path) -> tuple[Path, ...]:
    """Every file below ``folder`` (hidden ones too: git would commit them), sorted; special
    files (a FIFO, a device) are left out (the dataset loader reports them), and so is the
    bytecode Python caches for an agent's module (``__pycache__/*.pyc``): a build product every
    ``.gitignore`` ignores, written by the very run that imported the module. Any other file
    in a ``__pycache__`` folder is listed (and the dataset loader refuses a scenario there)."""
    if not folder.is_dir():
        return ()
    found: list[Path] = []
    pending = [str(folder)]
    while pending:  # one listing per folder, no stat per file; links are files, never followed
        listed = pending.pop()
        bytecode = os.path.basename(listed) == BYTECODE_FOLDER
        with os.scandir(listed) as scan:
            for entry in scan:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
                elif bytecode and entry.name.endswith(".pyc") and entry.is_file(follow_symlinks=False):
                    continue
                elif entry.is_file(follow_symlinks=False) or entry.is_symlink():
                    found.append(Path(entry.path))  # a FIFO is never read: it would block
    return tuple(sorted(found))


def cannot_observe(ctx: CheckContext, guard: str, what: str) -> GuardResult | None:
    """The failing result of a git guard that would be blind (no repository, no cache file).

    A guard that cannot observe the tree must fail rather than pass: ``None`` means it can.
    """
    if ctx.repo is None:
        return GuardResult(guard, "blind: no git repository",
                           (Finding(guard, "", NOT_A_REPO, NOT_A_REPO_FIX),))
    if not ctx.cache_files:
        return GuardResult(guard, "no cache file to check", (Finding(
            guard, ctx.cache_rel, f"holds no file: {what} cannot be checked over an empty set",
            "record the cache (" + rerecord_command(fix="missing") + "), or fix [tool.harness] cache"),))
    return None
