"""The one atomic-write helper: a file or a folder is complete under its final name, or absent.

Cache entries (a folder of two files), the stamp and ``run.json`` are all built
under a temporary name in the same folder and renamed into place, so a process
killed at any instant leaves the old version, the new version, or (for a folder
being replaced, between its two renames) the old version parked under a
``.tmp-old-`` name, never a torn file under the final name.

``on_step`` is the documented test seam: it is called after each step with the
step's name (:data:`STEPS`) and the path it touched, so a test can kill the
writing process at every step and prove the claim above, instead of hoping a
timed kill lands inside the window.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.documents.jsonlayout import pretty_json
from harness.documents.writing import named_write_errors

#: Prefix of every temporary name (readers and guards ignore it; prune removes leftovers).
TEMP_PREFIX = ".tmp-"
#: Steps reported to ``on_step``, in order (``moved-aside`` only when replacing a folder).
STEPS = ("temp-created", "file-written", "moved-aside", "renamed", "old-removed")

StepHook = Callable[[str, Path], None]


def _nothing(step: str, path: Path) -> None:
    del step, path


def write_folder(final: Path, files: Mapping[str, bytes], *, on_step: StepHook | None = None) -> Path:
    """Create (or replace) the folder ``final`` holding exactly ``files``, atomically.

    Plain ``os`` calls on strings: every recorded call writes one of these, and
    ``pathlib`` built a dozen path objects per entry on top of the system calls.
    """
    hook = on_step or _nothing
    target = os.fspath(final)
    parent, name = os.path.split(target)
    with named_write_errors(final, "cache entry"):
        _make_parents(parent)
        temp = f"{parent}/{TEMP_PREFIX}{name}-{secrets.token_hex(3)}"
        os.mkdir(temp)
    try:
        with named_write_errors(final, "cache entry"):
            if on_step is not None:
                hook("temp-created", Path(temp))
            for file_name, data in files.items():
                _write_bytes(f"{temp}/{file_name}", data)
                if on_step is not None:
                    hook("file-written", Path(temp, file_name))
            _replace_folder(temp, target, hook)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final


def _make_parents(folder: str) -> None:
    """``folder`` and its missing parents (one ``mkdir`` when only the last one is missing)."""
    try:
        os.mkdir(folder)
    except FileExistsError:
        if not os.path.isdir(folder):
            raise
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)


def write_file(final: Path, data: bytes, *, on_step: StepHook | None = None) -> Path:
    """Create (or replace) the file ``final`` with ``data``, atomically."""
    hook = on_step or _nothing
    temp = final.with_name(f"{TEMP_PREFIX}{final.name}-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        with named_write_errors(final, "file"):
            final.parent.mkdir(parents=True, exist_ok=True)
            hook("temp-created", temp)
            _write_bytes(temp, data)
            hook("file-written", temp)
            os.replace(temp, final)
            hook("renamed", final)
    except BaseException:
        with contextlib.suppress(OSError):  # a read-only tree: there is nothing to remove
            temp.unlink(missing_ok=True)
        raise
    return final


def json_bytes(value: Any) -> bytes:
    """Pretty, sorted JSON with a final newline: stable bytes and a readable git diff.

    The bytes are exactly ``json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2)``
    and a newline, laid out at the C encoder's speed (:mod:`harness.documents.jsonlayout`):
    every recorded call writes two of these files.
    """
    return (pretty_json(value, sort_keys=True) + "\n").encode("utf-8")


def _write_bytes(path: str | Path, data: bytes) -> None:
    # a fresh temporary name (O_EXCL): never follows or reuses anything
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(handle, view):]
    finally:
        os.close(handle)


def _replace_folder(temp: str, final: str, hook: StepHook) -> None:
    """Rename ``temp`` to ``final``; an old ``final`` is moved aside first, then removed."""
    if not os.path.exists(final):
        os.replace(temp, final)
        if hook is not _nothing:
            hook("renamed", Path(final))
        return
    parent, name = os.path.split(final)
    old = f"{parent}/{TEMP_PREFIX}old-{name}-{secrets.token_hex(3)}"
    os.replace(final, old)
    hook("moved-aside", Path(old))
    os.replace(temp, final)
    hook("renamed", Path(final))
    shutil.rmtree(old, ignore_errors=True)
    hook("old-removed", Path(old))
