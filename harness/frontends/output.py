"""Standard output that a reader may stop reading: ``harness run | head -1``.

When the reader exits, the next write raises BrokenPipeError; Python would print
a traceback, then complain again when it flushes stdout at exit. A command whose
output is cut short has still done its work (a run wrote its records, a
comparison has its verdict), so the output stops quietly and the command keeps
its exit status: stdout is pointed at the null device and the rest is dropped.

The same holds for a standard output that cannot be written at all: closed by
the caller (``harness run >&-``) or on a full device (``> /dev/full``). Both
were tracebacks; now one line on stderr names the problem (``eval-output-failed``)
and the command keeps its own exit status, so a CI gate still gates.
"""

from __future__ import annotations

import os
import sys


def emit(text: str = "") -> None:
    """Write one line (or block) to stdout and flush it; a closed pipe ends the output quietly."""
    if sys.stdout is None:  # closed before Python started and not yet replaced
        return
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        output_failed(exc)


def flush_stdout() -> None:
    """Flush what is buffered for stdout (at the end of a command), with :func:`emit`'s rules."""
    if sys.stdout is None:
        return
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()
    except OSError as exc:
        output_failed(exc)


def output_failed(exc: OSError) -> None:
    """Say once, on stderr, that stdout cannot be written, then drop the rest of the output."""
    _say(f"eval-output-failed: standard output cannot be written ({exc.strerror or exc}): the "
         "rest of the output is dropped; records and reports are written as usual and the exit "
         "status is the command's own. Fix: send stdout to a file or device with room")
    silence_stdout()


def ensure_stdout() -> None:
    """At the start of a command: a standard output closed by the caller (``>&-``) is replaced
    by the null device, with one line on stderr, so no later write fails and no file the
    command opens takes descriptor 1 by accident."""
    try:
        os.fstat(1)
        closed = sys.stdout is None
    except OSError:
        closed = True
    if not closed:
        return
    try:
        os.fstat(1)
    except OSError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        if devnull != 1:
            os.dup2(devnull, 1)
            os.close(devnull)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115 - lives as stdout
    _say("eval-output-failed: standard output is closed: the output is dropped; records and "
         "reports are written as usual and the exit status is the command's own. Fix: do not "
         "close stdout (>&-); send it to /dev/null or a file instead")


def _say(line: str) -> None:
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(line + "\n")
        stream.flush()
    except OSError:
        pass


def silence_stdout() -> None:
    """Send whatever is still to be written to stdout to the null device (the reader is gone)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno() if sys.stdout is not None else 1)
    finally:
        os.close(devnull)
