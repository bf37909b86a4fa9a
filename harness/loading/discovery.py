"""What the dataset walk may list, and what it must refuse instead of skipping.

The rule (docs/hostile-inputs.md, "Nothing is skipped in silence"): every name
under the datasets that could hold a dataset is either loaded or refused with
an error; none is passed over. The loader used to skip, without a word, files
and folders whose names start with ``.`` or ``_`` (``_wip.yaml``,
``.staging/``, ``..helper/``) and scenario files with an upper-case extension
(``smoke.YAML``): ``run`` exited 0 and ``check`` counted only the others. Such
names are now refused with the fix (rename it, or move it out of the datasets
folder). Names that cannot hold a dataset stay out of the way: ``.gitkeep``,
``.DS_Store``, ``__pycache__/``, a prompt file, a README.

Special files (a FIFO, a socket, a device) are refused from the listing's entry
type, without being opened: opening a FIFO named ``greeting.yaml`` for reading
blocks until someone writes to it, which hung the run forever.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from harness.core.errors import Problem

__all__ = ["DATASET_SUFFIXES", "Listing", "list_folder", "special_kind"]

#: Suffixes of the files the loader reads as datasets (exact, lower case).
DATASET_SUFFIXES = (".yaml", ".yml", ".json")
_HIDDEN = (".", "_")
#: Version-control internals: never walked (a ``__pycache__`` holding only .pyc files is no
#: problem anyway; one holding a .yaml is refused like any other folder).
_TOOL_FOLDERS = frozenset({".git"})


@dataclass(frozen=True)
class Listing:
    """One folder's loadable entries, sorted, and the problems of every other entry."""

    folders: tuple[Path, ...]
    files: tuple[Path, ...]
    problems: tuple[Problem, ...]


def special_kind(mode: int) -> str | None:
    """``'a FIFO'``, ``'a socket'``, ``'a device'``... for a file that is neither a regular file,
    a folder nor a link; ``None`` for those three."""
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _dataset_shaped(name: str) -> bool:
    """A file name the loader would read if it were spelled the loaded way."""
    return name.lower().endswith(DATASET_SUFFIXES)


def _holds_datasets(folder: Path) -> bool:
    """Whether a folder holds a dataset-shaped file anywhere below it (links are not followed)."""
    for _, dirs, files in os.walk(folder):
        if any(_dataset_shaped(f) for f in files):
            return True
        dirs[:] = [d for d in dirs if d not in _TOOL_FOLDERS]
    return False


def list_folder(folder: Path, *, scenarios: bool) -> Listing:
    """The loadable sub-folders and files of ``folder``; links are left to the link walk (they
    are reported there, never read), every skipped dataset name and special file is a problem.

    ``scenarios``: the folder is a tenant folder, whose dataset files are scenarios (a file
    name that would not load is refused, and so is a sub-folder holding dataset files, which
    no walk reaches); otherwise (the datasets root, an agent folder) only its folders matter.
    """
    folders: list[Path] = []
    files: list[Path] = []
    problems: list[Problem] = []
    with os.scandir(folder) as scan:  # entry types come with the listing: nothing is opened
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        path = folder / entry.name
        if entry.is_symlink():
            continue
        if entry.is_file(follow_symlinks=False) or entry.is_dir(follow_symlinks=False):
            kind = None  # the type came with the listing: no stat of every scenario file
        else:  # no type in the listing, or a special file: ask the file system which
            try:
                kind = special_kind(entry.stat(follow_symlinks=False).st_mode)
            except OSError:  # gone since the listing
                continue
        if kind is not None:
            problems.append(Problem(path, "", f"is {kind}; only regular files and folders may be "
                                    "under the datasets, and it is not opened (reading one can "
                                    "block the run forever)", "remove it"))
            continue
        hidden = entry.name.startswith(_HIDDEN)
        if entry.is_dir(follow_symlinks=False):
            if scenarios:
                if entry.name not in _TOOL_FOLDERS and _holds_datasets(path):
                    problems.append(Problem(
                        path, "", "is a folder inside a tenant folder and holds dataset files, "
                        "which would never be loaded (scenarios are the files of the tenant "
                        "folder itself)", "move its scenario files up into the tenant folder, or "
                        "out of the datasets folder"))
            elif not hidden:
                folders.append(path)
            elif entry.name not in _TOOL_FOLDERS and _holds_datasets(path):
                problems.append(Problem(
                    path, "name", f"'{entry.name}/' starts with '{entry.name[0]}' and holds dataset "
                    "files, which would never be loaded", f"rename it to "
                    f"'{entry.name.lstrip('._') or 'a name'}' to load it, or move it out of the "
                    "datasets folder"))
            continue
        if not scenarios or not _dataset_shaped(entry.name):
            if not hidden:
                files.append(path)  # a prompt, a README: the caller decides
            continue
        if hidden:
            problems.append(Problem(
                path, "name", f"'{entry.name}' starts with '{entry.name[0]}', so it would never be "
                "loaded", f"rename it to '{entry.name.lstrip('._') or 'a name'}' to load it, or "
                "move it out of the datasets folder"))
        elif not entry.name.endswith(DATASET_SUFFIXES):
            suffix = Path(entry.name).suffix
            problems.append(Problem(
                path, "name", f"the extension '{suffix}' is not loaded (only .yaml, .yml and "
                ".json, in lower case)", f"rename it to '{Path(entry.name).stem}{suffix.lower()}'"))
        else:
            files.append(path)
    return Listing(tuple(folders), tuple(files), tuple(problems))
