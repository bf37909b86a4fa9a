"""``python -m harness prune [--dry-run] [--force]``: remove the entries no offline replay reads.

It removes exactly what the unused guard of ``check`` lists as unused (the same
replay, :mod:`harness.running.replay`), the parents those removals leave empty, and the
leftover ``.tmp-*`` folders of killed writes (moved to the trash too; an old entry
parked by a killed replacement is restored under its name); nothing else. A paid answer is
the most expensive thing in the tree, so:

- corrupt entries are never removed (what cannot be read cannot be proven unused);
- datasets that do not load stop the prune before anything is touched;
- while a selected scenario iteration does not replay (miss, expired, corrupt,
  error) the prune refuses to remove anything, since what that iteration would
  read after its failing call is unknown; ``--force`` prunes the rest and still
  keeps every entry of such an iteration;
- removed entries are MOVED to ``<results>/pruned/<time>/`` (never committed), and
  the report prints the command that puts them back.

Do not prune while a refresh is running: its in-flight ``.tmp-*`` folder would
count as a leftover.
"""

from __future__ import annotations

import shlex
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.cache.layout import ENTRIES_DIR
from harness.check.entries import scan_tree
from harness.check.unused import Failure, Orphan, classify, in_scope
from harness.core.clock import utc_now
from harness.documents.atomic import TEMP_PREFIX
from harness.loading.config import HarnessConfig
from harness.loading.datasets import Dataset, load_dataset
from harness.loading.selecting import Selection

#: Where removed entries go, under the (never committed) results root.
PRUNED_DIR = "pruned"


@dataclass(frozen=True)
class PruneReport:
    """What was (or, with ``dry_run`` or a refusal, would be) removed."""

    orphans: tuple[Orphan, ...]
    temps: tuple[Path, ...]
    dry_run: bool
    failures: tuple[Failure, ...] = ()
    refused: bool = False
    """Nothing was removed because a selected iteration does not replay (no ``--force``)."""
    trash: Path | None = None
    """Where the removed entries were moved (``None`` when nothing was removed)."""
    restored: tuple[Path, ...] = ()
    """Entries parked by a replacement that was killed, put back under their final names."""

    @property
    def exit_code(self) -> int:
        """1 when the prune refused, else 0."""
        return 1 if self.refused else 0

    def render(self, config: HarnessConfig) -> str:
        if self.refused:
            lines = [f"prune refused: {len(self.failures)} selected scenario iteration(s) do not "
                     "replay, so what they would read cannot be known; nothing was removed"]
            lines += [f"  {f.scenario_id} iteration {f.iteration} ({f.status}): fix with {f.hint}"
                      for f in self.failures]
            lines.append(f"fix them first, or prune everything else with --force (which keeps every "
                         f"entry of those iterations); {len(self.orphans)} entr"
                         f"{'y' if len(self.orphans) == 1 else 'ies'} would be removed")
            return "\n".join(lines)
        verb = "would remove" if self.dry_run else "removed"
        lines = [f"{verb} {len(self.orphans)} unused entr{'y' if len(self.orphans) == 1 else 'ies'} "
                 f"and {len(self.temps)} temporary leftover(s)"]
        lines += [f"  {config.relative(o.folder)}: {o.reason}" for o in self.orphans]
        lines += [f"  {config.relative(t)}: leftover of a killed write" for t in self.temps
                  if parked_entry_target(t) not in self.restored]
        lines += [f"  {config.relative(r)}: restored (its replacement was killed before it landed)"
                  for r in self.restored]
        if self.failures:
            lines.append(f"kept every entry of {len(self.failures)} iteration(s) that do not replay:")
            lines += [f"  {f.scenario_id} iteration {f.iteration} ({f.status}): fix with {f.hint}"
                      for f in self.failures]
        if self.dry_run and (self.orphans or self.temps):
            lines.append("nothing was deleted; run python -m harness prune to delete them")
        if self.trash is not None:
            cache = shlex.quote(config.relative(config.cache))
            lines.append(f"the removed entries were moved to {config.relative(self.trash)}/; to put "
                         f"them back: cp -R {shlex.quote(config.relative(self.trash))}/. {cache}/ "
                         f"(or, if they were committed: git restore -- {cache})")
        return "\n".join(lines)


def prune_cache(config: HarnessConfig, selection: Selection | None = None, *,
                dry_run: bool = False, force: bool = False, now: datetime | None = None) -> PruneReport:
    """Move unused entry folders to the trash; remove their emptied parents and ``.tmp-*`` leftovers.

    Raises :class:`~harness.core.errors.DatasetError` (before touching anything)
    when the datasets do not load.
    """
    selection = selection or Selection()
    moment = now or utc_now()
    dataset = load_dataset(config)
    tree = scan_tree(config.cache)
    usage = classify(config, dataset, selection, tree, moment)
    temps = tuple(t for t in tree.temps if _temp_in_scope(config, t, dataset, selection))
    if usage.failures and not force:
        return PruneReport(usage.orphans, temps, dry_run, usage.failures, refused=True)
    if dry_run or not (usage.orphans or temps):
        return PruneReport(usage.orphans, temps, dry_run, usage.failures)
    stop = config.cache / ENTRIES_DIR
    trash = config.results / PRUNED_DIR / moment.strftime("%Y%m%dT%H%M%SZ")
    suffix = 1
    while trash.exists():  # a second prune within the same second never mixes into the first
        trash, suffix = trash.with_name(f"{trash.name.split('-')[0]}-{suffix}"), suffix + 1
    for orphan in usage.orphans:
        target = trash / orphan.folder.relative_to(config.cache)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(orphan.folder, target)
        _remove_empty_parents(orphan.folder.parent, stop)
    restored: list[Path] = []
    for temp in temps:
        final = parked_entry_target(temp)
        if final is not None and temp.is_dir() and not temp.is_symlink() and not final.exists():
            temp.rename(final)  # a complete old entry whose replacement died: put it back, never delete
            restored.append(final)
            continue
        target = trash / temp.relative_to(config.cache)  # even a leftover is moved, not deleted
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(temp, target)
        _remove_empty_parents(temp.parent, stop)
    moved = bool(usage.orphans) or len(restored) < len(temps)
    return PruneReport(usage.orphans, temps, dry_run, usage.failures,
                       trash=trash if moved else None, restored=tuple(restored))


def parked_entry_target(temp: Path) -> Path | None:
    """The final folder of an entry parked by a replacement that died between its two renames.

    :func:`harness.documents.atomic.write_folder` moves an old entry aside as
    ``.tmp-old-<name>-<6 hex>`` before renaming the new one into place; a kill
    between the two leaves the old, complete entry there and nothing under
    ``<name>``. That is a paid answer: prune restores it instead of sweeping it.
    """
    name = temp.name
    prefix = f"{TEMP_PREFIX}old-"
    if not name.startswith(prefix):
        return None
    stem, _, tag = name[len(prefix):].rpartition("-")
    if not stem or len(tag) != 6:
        return None
    return temp.parent / stem


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
