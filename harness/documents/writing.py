"""Writes that fail say why, where, and what to do: a full disk is not a traceback.

Every file the harness writes (cache entries and the stamp in a recording run,
the run records and ``run.json`` of every run, reports) goes through
:func:`named_write_errors`, which turns the ``OSError`` of a full disk
(``ENOSPC``, ``EDQUOT``), a read-only tree (``EROFS``) or a missing permission
(``EACCES``, ``EPERM``) into a :class:`~harness.core.errors.WriteFailed` naming the
path, the cause and the fix. The atomic writers leave nothing torn under the
final name, so the message can say so.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.core.errors import WriteFailed

__all__ = ["named_write_errors", "unwritable_reason", "write_failure"]

_CAUSES = {
    errno.ENOSPC: ("the disk is full (ENOSPC)", "free space on that disk and run again"),
    errno.EDQUOT: ("the disk quota is exhausted (EDQUOT)", "free space in the quota and run again"),
    errno.EROFS: ("the file system is read-only (EROFS)",
                  "run from a writable checkout, or point [tool.harness] at writable folders of "
                  "the project"),
    errno.EACCES: ("permission denied (EACCES)",
                   "give this user write permission on that folder, or run as its owner"),
    errno.EPERM: ("operation not permitted (EPERM)",
                  "give this user write permission on that folder, or run as its owner"),
    errno.EISDIR: ("it is a folder (EISDIR)", "give the path of a file, not of a folder"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder (ENOTDIR)",
                    "give a path whose parents are folders"),
}


def write_failure(path: Path, exc: OSError, what: str) -> WriteFailed:
    """The named error of one failed write of ``what`` at ``path``."""
    cause, fix = _CAUSES.get(exc.errno or 0, (f"{exc.strerror or exc}", "fix the cause and run again"))
    return WriteFailed(f"{path}: the {what} cannot be written: {cause}. Nothing incomplete was left "
                       f"under the final name. Fix: {fix}")


@contextmanager
def named_write_errors(path: Path, what: str) -> Iterator[None]:
    """Turn an ``OSError`` raised inside the block into :func:`write_failure`."""
    try:
        yield
    except WriteFailed:
        raise
    except OSError as exc:
        raise write_failure(path, exc, what) from None


def unwritable_reason(path: Path) -> str | None:
    """Why a file could not be created at ``path`` (checked before a run, so a report that
    cannot be written is refused before the work instead of after it), or ``None``."""
    if path.is_dir():
        return "is a folder; give the path of a file, such as report.html inside it"
    ancestor = path.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        return f"cannot be created: {ancestor} is a file, not a folder"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"cannot be created: {ancestor} is not writable (read-only or no permission)"
    return None
