"""Response headers without the ``email`` package: ``http.client``'s answer, parsed for less.

``http.client`` hands every response's header block to ``email.parser``, a
general MIME parser, which was about a third of the CPU of a recorded call's
HTTP exchange. Provider answers carry a dozen plain ``Name: value`` lines, so
:func:`parse_headers` builds the same :class:`http.client.HTTPMessage` from them
directly (``set_raw``: the name and value exactly as ``email``'s ``compat32``
policy stores them), and hands any block it does not recognise line by line (a
folded continuation line, a line without a name, a character ``str.splitlines``
would split on) to ``email.parser`` exactly as ``http.client`` does. The limits
are ``http.client``'s (line length, header count).

:class:`Response` is ``http.client.HTTPResponse`` with that parser in ``begin``
(the rest of ``begin`` follows the standard library's: 100-continue, version,
chunked, ``will_close``, ``Content-Length``); reading the body, chunked or not,
is the standard library's code. A request header line ``http.client`` has
validated once is not validated again (:func:`_put_checked`).

A request with a body leaves in one ``send`` (:class:`_OneSend`): ``http.client``
sends the header block and the body with two, and on loopback each ``send`` also
runs the receiving side of TCP in the sender's time (two sends were a third of an
exchange's CPU), and a second small segment can wait on Nagle and delayed ACK.
The bytes are the ones ``http.client`` builds, in the same order.
"""

from __future__ import annotations

import email.parser
import http.client
import re
from collections.abc import Callable
from typing import Any

__all__ = ["HTTPConnection", "HTTPSConnection", "Response", "parse_headers"]

#: http.client's bounds on a header block.
MAX_LINE = 65536
MAX_HEADERS = 100
#: One plain header line: a name as ``email.feedparser`` accepts it (printable, no colon, no
#: space), a colon, and a value without any character ``str.splitlines`` treats as a line end.
_PLAIN = re.compile(r"([\x21-\x39\x3b-\x7e]+):[ \t]*([^\r\n\x0b\x0c\x1c\x1d\x1e\x85]*)\r?\n")


def read_header_lines(fp: Any) -> list[bytes]:
    """The header lines up to and including the blank one (or the end of the stream)."""
    lines: list[bytes] = []
    while True:
        line = fp.readline(MAX_LINE + 1)
        if len(line) > MAX_LINE:
            raise http.client.LineTooLong("header line")
        lines.append(line)
        if len(lines) > MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {MAX_HEADERS} headers")
        if line in (b"\r\n", b"\n", b""):
            return lines


def parse_headers(fp: Any) -> http.client.HTTPMessage:
    """What ``http.client.parse_headers(fp)`` returns, for the same bytes read."""
    lines = read_header_lines(fp)
    message = http.client.HTTPMessage()
    for raw in lines[:-1]:
        line = raw.decode("iso-8859-1")
        plain = _PLAIN.fullmatch(line)
        if plain is None:  # not a plain line: the standard library's parser, on the whole block
            text = b"".join(lines).decode("iso-8859-1")
            parsed: http.client.HTTPMessage = email.parser.Parser(
                _class=http.client.HTTPMessage).parsestr(text)
            return parsed
        message.set_raw(plain.group(1), plain.group(2))
    return message


class Response(http.client.HTTPResponse):
    """``http.client.HTTPResponse`` whose headers are parsed by :func:`parse_headers`."""

    def begin(self) -> None:
        """The standard library's ``begin`` (Python 3.11-3.13), with the header parser above."""
        if self.headers is not None:
            return
        while True:  # read until a non-100 response
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            read_header_lines(self.fp)  # the headers of the 100 response
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = parse_headers(self.fp)
        encoding = self.headers.get("transfer-encoding")
        self.chunked = bool(encoding and encoding.lower() == "chunked")
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:  # a nonsensical negative length is ignored
                    self.length = None
        if status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or 100 <= status < 200 \
                or self._method == "HEAD":
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True  # no length and not chunked: the body ends when it closes


#: Header lines ``http.client`` has validated once: ``(name, value)`` -> the bytes it sent.
_CHECKED: dict[tuple[str, str], bytes] = {}
_CHECKED_MAX = 256


def _put_checked(conn: http.client.HTTPConnection, original: Callable[..., None], header: str | bytes,
                 values: tuple[Any, ...]) -> None:
    """``putheader`` that validates a ``(name, value)`` pair once per process, not per request.

    ``http.client`` runs two regular expressions over every header of every request (a
    provider call sends seven, the same seven each time): a pair it accepted once is sent
    again as the very bytes it sent then. Anything else goes through ``http.client``
    (which refuses a bad name or a value with a line break, as before). A cached line
    skips only ``http.client``'s check that headers come before the body, which the pool
    cannot break: it sends every request through ``request()``.
    """
    if len(values) == 1 and type(header) is str and type(values[0]) is str:
        pair = (header, values[0])
        line = _CHECKED.get(pair)
        if line is not None:
            conn._output(line)  # type: ignore[attr-defined]
            return
        original(header, *values)
        if len(_CHECKED) < _CHECKED_MAX:
            _CHECKED[pair] = header.encode("ascii") + b": " + values[0].encode("latin-1")
        return
    original(header, *values)


class _OneSend(http.client.HTTPConnection):
    """``request`` with a bytes body sends the header block and the body as one ``send``.

    ``http.client`` ends ``request`` with ``send(header block)`` then ``send(body)``; the
    first is held and joined to the second. If the request fails before its body is
    sent, the held header block is dropped with it (the pool closes such a connection).
    """

    _held: bytes | None = None
    _holding = False

    def request(self, method: str, url: str, body: Any = None, headers: Any = None, *,
                encode_chunked: bool = False) -> None:
        self._holding = type(body) is bytes and bool(body) and not encode_chunked
        try:
            super().request(method, url, body, {} if headers is None else headers,
                            encode_chunked=encode_chunked)
        except BaseException:
            self._held = None
            raise
        finally:
            self._holding = False
        if self._held is not None:  # no body followed (it cannot, for bytes): send the head alone
            held, self._held = self._held, None
            super().send(held)

    def send(self, data: Any) -> None:
        if self._holding:
            if self._held is None:
                self._held = bytes(data)  # the header block: wait for the body
                return
            data, self._held, self._holding = self._held + bytes(data), None, False
        super().send(data)


class HTTPConnection(_OneSend):
    """``http.client.HTTPConnection`` answering with :class:`Response`; headers checked once,
    a request sent in one piece."""

    response_class = Response

    def putheader(self, header: str | bytes, *values: Any) -> None:
        _put_checked(self, super().putheader, header, values)


class HTTPSConnection(_OneSend, http.client.HTTPSConnection):
    """``http.client.HTTPSConnection`` answering with :class:`Response`; headers checked once,
    a request sent in one piece."""

    response_class = Response

    def putheader(self, header: str | bytes, *values: Any) -> None:
        _put_checked(self, super().putheader, header, values)
