"""Response headers parsed without the email package: the same message as http.client's, and
answers (chunked, kept alive, closed, 100-continue, folded headers) read whole from a real socket."""

from __future__ import annotations

import http.client
import io
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from http_support import read_request

from harness.providers.headers import parse_headers
from harness.providers.http import _read
from harness.providers.opener import Deadline
from harness.providers.pool import Connections

BLOCKS = [
    b"Content-Type: application/json\r\nContent-Length: 12\r\n\r\nbody",
    b"x-a: 1\r\nX-A: 2\r\nSet-Cookie: a=b\r\nset-cookie: c=d\r\n\r\n",
    b"Name:value-without-space\r\nTabbed:\t\tv \r\nEmpty:\r\nSpaces:   \r\n\r\n",
    b"Latin: caf\xe9 \xa0 \xff\r\n\r\n",
    b"Bare: newline\nOther: one\n\n",
    b"Folded: first\r\n  second line\r\n\tthird\r\nNext: x\r\n\r\n",
    b"no colon here\r\nAfter: x\r\n\r\n",
    b"From someone\r\nAfter: x\r\n\r\n",
    b"Odd: a\x85b\r\nVt: a\x0bb\r\nFs: a\x1cb\r\n\r\n",
    b"Cr: a\rb\r\n\r\n",
    b": no name\r\n\r\n",
    b"Ends: without a blank line\r\n",
    b"\r\n",
    b"",
]


@pytest.mark.parametrize("block", BLOCKS)
def test_the_message_is_the_one_http_client_builds_from_the_same_bytes(block: bytes) -> None:
    ours, theirs = io.BytesIO(block), io.BytesIO(block)
    mine, stdlib = parse_headers(ours), http.client.parse_headers(theirs)
    assert type(mine) is type(stdlib)
    assert mine.items() == stdlib.items()
    assert mine.keys() == stdlib.keys()
    for name in {k.lower() for k in stdlib} | {"content-length", "missing"}:
        assert mine.get(name) == stdlib.get(name)
        assert mine.get_all(name) == stdlib.get_all(name)
    assert ours.tell() == theirs.tell()  # the same bytes were taken from the stream


def test_header_blocks_past_http_clients_limits_are_refused_as_it_refuses_them() -> None:
    with pytest.raises(http.client.LineTooLong):
        parse_headers(io.BytesIO(b"Long: " + b"x" * 70000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException, match="more than 100 headers"):
        parse_headers(io.BytesIO(b"".join(b"H%d: v\r\n" % i for i in range(101)) + b"\r\n"))


@contextmanager
def raw_server(answers: list[bytes]) -> Iterator[tuple[str, list[int]]]:
    """A server on 127.0.0.1 answering each request (read up to its blank line and its body)
    with the next raw answer, on whatever connection it came; yields its netloc and the list of
    connection numbers each request arrived on."""
    listener = socket.create_server(("127.0.0.1", 0))
    seen: list[int] = []
    queue = list(answers)
    lock = threading.Lock()

    def serve(conn: socket.socket, number: int) -> None:
        reader = conn.makefile("rb")
        with conn, reader:
            while True:
                if read_request(reader) is None:
                    return
                with lock:
                    seen.append(number)
                    answer = queue.pop(0)
                conn.sendall(answer)
                if b"Connection: close" in answer or b"HTTP/1.0" in answer[:8] \
                        or b"X-Then-Close: 1" in answer:
                    return

    def accept() -> None:
        number = 0
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            number += 1
            threading.Thread(target=serve, args=(conn, number), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}", seen
    finally:
        listener.close()


def exchange(connections: Connections) -> tuple[int, bytes, http.client.HTTPMessage]:
    deadline = Deadline(5.0)
    try:
        status, body, headers = connections.exchange("POST", "/v1/x", b"{}", {"Host": "h"}, deadline,
                                                     _read)
    finally:
        deadline.cancel()
    return status, body, headers


def test_answers_are_read_whole_and_the_connection_is_kept_only_when_it_may_be() -> None:
    answers = [
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Folded: a\r\n b\r\n\r\n"
        b"5\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: t\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\nX-Ignored: 1\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext",
        b"HTTP/1.1 429 Too Many\r\nRetry-After: 2\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
        b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ]
    with raw_server(answers) as (netloc, seen):
        connections = Connections("http", netloc, 5.0)
        status, body, headers = exchange(connections)
        assert (status, body, headers.get("x-folded")) == (200, b"hello world", "a\r\n b")
        status, body, headers = exchange(connections)
        assert (status, body, headers.get("x-ignored")) == (200, b"next", None)
        status, body, headers = exchange(connections)
        assert (status, body, headers.get("retry-after")) == (429, b"{}", "2")
        status, body, headers = exchange(connections)
        assert (status, body) == (200, b"until the end")
        assert exchange(connections)[1] == b"ok"
        connections.close()
    # kept alive across the chunked and the 100-continue answers; closed when the server said
    # so, and when an HTTP/1.0 body ran to the end of the connection
    assert seen == [1, 1, 1, 2, 3]


def test_a_truncated_chunked_answer_is_a_transient_failure_and_the_connection_is_dropped() -> None:
    from harness.providers.retries import Transient

    answers = [b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Then-Close: 1\r\n\r\n5\r\nhel",
               b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"]
    with raw_server(answers) as (netloc, seen):
        connections = Connections("http", netloc, 5.0)
        with pytest.raises(Transient, match="truncated body"):
            exchange(connections)
        assert exchange(connections)[1] == b"ok"
        connections.close()
    assert seen == [1, 2]


def _request_bytes(factory: type[http.client.HTTPConnection], headers: dict[str, str]) -> bytes:
    """The bytes a connection of ``factory`` sends for one POST, as a server receives them."""
    listener = socket.create_server(("127.0.0.1", 0))
    got: list[bytes] = []

    def take() -> None:
        conn, _ = listener.accept()
        with conn:
            data = b""
            while not data.endswith(b"{}"):
                more = conn.recv(65536)
                if not more:
                    return  # the client gave up before its body (a refused header)
                data += more
            got.append(data)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    thread = threading.Thread(target=take, daemon=True)
    thread.start()
    connection = factory("127.0.0.1", listener.getsockname()[1], timeout=5)
    try:
        connection.connect()  # before any header, so the server thread always ends
        connection.request("POST", "/v1/chat/completions", b"{}", headers)
        assert connection.getresponse().read() == b"ok"
    finally:
        connection.close()
        thread.join(5)
        port = listener.getsockname()[1]
        listener.close()
    return got[0].replace(b":%d\r\n" % port, b":PORT\r\n", 1)  # the Host line names the port


def test_a_request_is_sent_byte_for_byte_as_http_client_sends_it_each_time() -> None:
    from harness.providers.headers import HTTPConnection

    headers = {"Content-Type": "application/json", "Authorization": "Bearer t0ken", "X-Caf": "caf\xe9"}
    stdlib = _request_bytes(http.client.HTTPConnection, headers)
    assert _request_bytes(HTTPConnection, headers) == stdlib  # first: validated by http.client
    assert _request_bytes(HTTPConnection, headers) == stdlib  # then: the lines it accepted


@pytest.mark.parametrize("name, value", [("X-Key", "a\r\nInjected: 1"), ("X-Key", "a\nb"),
                                          (" Leading", "v"), ("X-Key:", "v")])
def test_a_bad_header_is_refused_even_after_a_good_one_of_the_same_name_was_sent(
        name: str, value: str) -> None:
    from harness.providers.headers import HTTPConnection

    _request_bytes(HTTPConnection, {"X-Key": "good"})
    with pytest.raises(ValueError, match="Invalid header"):
        _request_bytes(HTTPConnection, {name: value})



def _sends(factory: type[http.client.HTTPConnection]) -> list[bytes]:
    """The ``send`` calls of one POST with a body: its connection writes to one end of a
    SOCK_SEQPACKET pair, which keeps each send a record of its own."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    connection = factory("127.0.0.1", 1, timeout=5)
    connection.sock = ours  # connected: nothing is dialled
    try:
        connection.request("POST", "/v1/chat/completions", b"x" * 1000, {"X-A": "1"})
        records = []
        theirs.setblocking(False)
        while True:
            try:
                records.append(theirs.recv(1 << 20))
            except BlockingIOError:
                return records
    finally:
        connection.close()
        theirs.close()


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX") or not hasattr(socket, "SOCK_SEQPACKET"),
                    reason="needs SOCK_SEQPACKET socket pairs")
def test_a_request_with_a_body_leaves_in_one_send() -> None:
    from harness.providers.headers import HTTPConnection

    stdlib = _sends(http.client.HTTPConnection)
    assert len(stdlib) == 2 and stdlib[1] == b"x" * 1000  # the header block, then the body
    assert _sends(HTTPConnection) == [b"".join(stdlib)]  # the same bytes, in one piece
