"""Reading a small file whole, and its text as every checkout reads it.

Below the cache and the dataset loader alike: the cache verifier reads two files per
replayed call (the hot path), the loader reads every dataset document, and both must
refuse a folder or a symbolic link in the same words. Text gets its line endings
normalised here, so a Windows checkout hashes like a Linux one wherever text is read.
"""

from __future__ import annotations

import errno
import os

from harness.documents.links import RULE

_CHUNK = 1 << 16
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BINARY = getattr(os, "O_BINARY", 0)


class NotAFile(OSError):
    """A path of an entry exists but is no regular file: a folder, or a symbolic link."""


def read_file(path: str | os.PathLike[str], *, no_follow: bool = False) -> bytes:
    """A whole small file; a folder (and, with ``no_follow``, a symbolic link) raises :class:`NotAFile`.

    ``os.open``/``os.read`` skip the buffered-reader set-up of ``open()``: a replay
    reads two files per call, this is the hot path.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _BINARY | (_NOFOLLOW if no_follow else 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotAFile(RULE.format(root="the cache root")) from None
        if exc.errno in (errno.EISDIR, errno.EACCES) and os.path.isdir(path):
            raise NotAFile("is a folder, not a file") from None
        raise
    try:
        try:
            chunk = os.read(fd, _CHUNK)
        except IsADirectoryError:
            raise NotAFile("is a folder, not a file") from None
        if len(chunk) < _CHUNK:  # a short read of a regular file is its end
            return chunk
        chunks = [chunk]
        while chunk := os.read(fd, _CHUNK):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def normalise_newlines(text: str) -> str:
    """CRLF and lone CR become LF, so a Windows checkout hashes like a Linux one."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")
