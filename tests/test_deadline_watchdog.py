"""The deadlines of provider attempts are watched by one thread (issue 20 item 3).

Real sockets (a connected pair): an armed deadline shuts its socket down when it
passes, a cancelled one never does, and thousands of attempts that end early
neither start a thread each nor grow the watch list without bound.
"""

from __future__ import annotations

import socket
import threading
import time

from harness.providers import opener
from harness.providers.opener import Deadline


def test_a_passed_deadline_shuts_its_socket_down_and_says_so() -> None:
    left, right = socket.socketpair()
    with left, right:
        deadline = Deadline(0.2)
        deadline.arm(left)
        started = time.monotonic()
        left.settimeout(5)
        assert left.recv(10) == b""  # shut down: the blocked read returns at once
        assert 0.15 <= time.monotonic() - started < 3
        assert deadline.expired
        deadline.cancel()  # after firing: harmless


def test_a_cancelled_deadline_never_fires() -> None:
    left, right = socket.socketpair()
    with left, right:
        deadline = Deadline(0.1)
        deadline.arm(left)
        deadline.cancel()
        time.sleep(0.3)
        right.sendall(b"still open")
        left.settimeout(2)
        assert left.recv(10) == b"still open"
        assert not deadline.expired


def test_an_earlier_deadline_armed_later_still_fires_first() -> None:
    left, right = socket.socketpair()
    late_left, late_right = socket.socketpair()
    with left, right, late_left, late_right:
        late = Deadline(30)
        late.arm(late_left)  # the watcher now sleeps until this one...
        early = Deadline(0.2)
        early.arm(left)  # ...and must be woken for this one
        left.settimeout(5)
        assert left.recv(10) == b""
        assert early.expired and not late.expired
        late.cancel()


def test_attempts_that_end_early_start_no_thread_each_and_do_not_pile_up() -> None:
    left, right = socket.socketpair()
    with left, right:
        first = Deadline(60)
        first.arm(left)  # the watcher exists
        before = threading.active_count()
        for _ in range(5000):
            deadline = Deadline(60)
            deadline.arm(left)
            deadline.cancel()
        assert threading.active_count() == before
        assert len(opener._WATCHDOG._heap) < 200  # cancelled deadlines are dropped in bulk
        first.cancel()
