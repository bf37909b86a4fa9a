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
import json
import os
import secrets
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from harness.writing import named_write_errors

#: Prefix of every temporary name (readers and guards ignore it; prune removes leftovers).
TEMP_PREFIX = ".tmp-"
#: Steps reported to ``on_step``, in order (``moved-aside`` only when replacing a folder).
STEPS = ("temp-created", "file-written", "moved-aside", "renamed", "old-removed")

StepHook = Callable[[str, Path], None]


def _nothing(step: str, path: Path) -> None:
    del step, path


def write_folder(final: Path, files: Mapping[str, bytes], *, on_step: StepHook | None = None) -> Path:
    """Create (or replace) the folder ``final`` holding exactly ``files``, atomically."""
    hook = on_step or _nothing
    parent = final.parent
    with named_write_errors(final, "cache entry"):
        parent.mkdir(parents=True, exist_ok=True)
        temp = parent / f"{TEMP_PREFIX}{final.name}-{secrets.token_hex(3)}"
        temp.mkdir()
    try:
        with named_write_errors(final, "cache entry"):
            hook("temp-created", temp)
            for name, data in files.items():
                _write_bytes(temp / name, data)
                hook("file-written", temp / name)
            _replace_folder(temp, final, hook)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return final


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
    """Pretty, sorted JSON with a final newline: stable bytes and a readable git diff."""
    return (json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _write_bytes(path: Path, data: bytes) -> None:
    with open(path, "xb") as handle:  # a fresh temporary name: never follows or reuses anything
        handle.write(data)


def _replace_folder(temp: Path, final: Path, hook: StepHook) -> None:
    """Rename ``temp`` to ``final``; an old ``final`` is moved aside first, then removed."""
    if not final.exists():
        os.replace(temp, final)
        hook("renamed", final)
        return
    old = final.parent / f"{TEMP_PREFIX}old-{final.name}-{secrets.token_hex(3)}"
    os.replace(final, old)
    hook("moved-aside", old)
    os.replace(temp, final)
    hook("renamed", final)
    shutil.rmtree(old, ignore_errors=True)
    hook("old-removed", old)
