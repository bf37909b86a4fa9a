"""``python -m harness prune [--dry-run]``: remove the entries nothing references.

It removes exactly what the unused guard of ``check`` lists as unused (the
same computation), the parents those removals leave empty, and the leftover
``.tmp-*`` folders of killed writes; nothing else. Corrupt entries are never
removed (what cannot be read cannot be proven unused), and datasets that do
not load stop the prune before anything is touched, since every entry would
look unused. Do not prune while a refresh is running: its in-flight ``.tmp-*``
folder would count as a leftover.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from harness.cache.layout import ENTRIES_DIR
from harness.check.entries import scan_tree
from harness.check.unused import Orphan, classify, in_scope
from harness.config import HarnessConfig
from harness.datasets import Dataset, Selection, load_dataset


@dataclass(frozen=True)
class PruneReport:
    """What was (or, with ``dry_run``, would be) removed."""

    orphans: tuple[Orphan, ...]
    temps: tuple[Path, ...]
    dry_run: bool

    def render(self, config: HarnessConfig) -> str:
        verb = "would remove" if self.dry_run else "removed"
        lines = [f"{verb} {len(self.orphans)} unused entr{'y' if len(self.orphans) == 1 else 'ies'} "
                 f"and {len(self.temps)} temporary leftover(s)"]
        lines += [f"  {config.relative(o.folder)}: {o.reason}" for o in self.orphans]
        lines += [f"  {config.relative(t)}: leftover of a killed write" for t in self.temps]
        if self.dry_run and (self.orphans or self.temps):
            lines.append("nothing was deleted; run python -m harness prune to delete them")
        return "\n".join(lines)


def prune_cache(config: HarnessConfig, selection: Selection | None = None, *,
                dry_run: bool = False) -> PruneReport:
    """Remove unused entry folders, their emptied parents and ``.tmp-*`` leftovers.

    Raises :class:`~harness.errors.DatasetError` (before touching anything)
    when the datasets do not load.
    """
    selection = selection or Selection()
    dataset = load_dataset(config)
    tree = scan_tree(config.cache)
    usage = classify(config.cache, dataset, selection, tree)
    temps = tuple(t for t in tree.temps if _temp_in_scope(config, t, dataset, selection))
    report = PruneReport(usage.orphans, temps, dry_run)
    if dry_run:
        return report
    stop = config.cache / ENTRIES_DIR
    for path in (*(o.folder for o in usage.orphans), *temps):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
        _remove_empty_parents(path.parent, stop)
    return report


def _temp_in_scope(config: HarnessConfig, temp: Path, dataset: Dataset, selection: Selection) -> bool:
    """A filtered prune only removes the leftovers of the scenarios it selects."""
    if selection == Selection():
        return True
    parts = temp.relative_to(config.cache).parts
    if len(parts) < 5 or parts[0] != ENTRIES_DIR:
        return False  # a stamp leftover belongs to the whole tree: only an unfiltered prune removes it
    return in_scope("/".join(parts[1:4]), {s.id: s for s in dataset.scenarios}, selection)


def _remove_empty_parents(folder: Path, stop: Path) -> None:
    """Remove ``folder`` and its ancestors while they are empty, never ``stop`` or above."""
    while folder != stop and folder.is_relative_to(stop) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
