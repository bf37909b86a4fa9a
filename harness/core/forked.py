"""One function computed in a forked helper while the parent goes on: the load's second core.

``run --jobs N`` replays on N cores, but before this its load (YAML, schemas, the
scenario objects) and its walk of the cache for symbolic links ran on one: at 10,000
scenarios they were 1.1 of its 2.9 seconds. :class:`ForkedCall` forks a helper that
computes one pure function of what the parent already holds (a share of the scenario
files, the cache walk) and ships its value back as one pickle through a pipe; the parent
computes its own share meanwhile and then reads the helper's.

A helper is an optimisation, never a second source of truth: when it cannot give its value
(no ``os.fork``, the value does not pickle, the function raised, the helper was killed),
:meth:`ForkedCall.result` says so with ``None`` and the caller computes the value itself,
so every error is raised by the parent with the message a serial run gives.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class ForkedCall(Generic[T]):
    """``function()`` computed in a forked helper; :meth:`result` waits for its value.

    Start it only where the parent has no thread of its own running (a fork copies only
    the forking thread, so a lock another thread holds would stay held in the helper).
    """

    def __init__(self, function: Callable[[], T]) -> None:
        self._pid = 0
        self._fd = -1
        if not hasattr(os, "fork"):
            return
        sys.stdout.flush()  # nothing buffered before the fork is printed twice
        sys.stderr.flush()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the helper: never returns
            os.close(read_end)
            _helper_main(function, write_end)
        os.close(write_end)
        self._pid, self._fd = pid, read_end

    def result(self) -> T | None:
        """The helper's value, or ``None`` when it could not give one (compute it yourself)."""
        if self._fd < 0:
            return None
        chunks: list[bytes] = []
        try:
            with os.fdopen(self._fd, "rb", buffering=0) as pipe:
                self._fd = -1
                while chunk := pipe.read(1 << 20):
                    chunks.append(chunk)
        finally:
            status = self._reap()
        if status != 0 or not chunks:
            return None
        try:
            ok, value = pickle.loads(b"".join(chunks))
        except Exception:  # noqa: BLE001 - a torn or unreadable value: the caller computes it
            return None
        return value if ok else None

    def cancel(self) -> None:
        """Stop the helper and forget its value (the parent failed before it needed it)."""
        if self._pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGKILL)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._reap()

    def _reap(self) -> int:
        pid, self._pid = self._pid, 0
        if not pid:
            return -1
        _, status = os.waitpid(pid, 0)
        return status


def _helper_main(function: Callable[[], T], fd: int) -> None:
    """Compute, ship ``(True, value)`` (or ``(False, None)``), exit without Python's teardown."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent handles it
        try:
            data = pickle.dumps((True, function()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # noqa: BLE001 - the parent computes it and raises what it raises
            data = pickle.dumps((False, None))
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)
    except BaseException:  # noqa: BLE001 - a closed pipe: the parent no longer waits
        code = 1
    finally:
        os._exit(code)
