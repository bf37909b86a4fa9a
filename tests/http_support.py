"""Raw-socket HTTP/1.1 servers of the provider tests: reading one request off a kept connection."""

from __future__ import annotations

from typing import BinaryIO


def read_request(reader: BinaryIO) -> bytes | None:
    """Read one request (its head, then as many body bytes as its Content-Length says) and
    return the head; ``None`` when the client closed the connection first."""
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()
        if not line:
            return None
        head += line
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    reader.read(length)
    return head
