"""Standard output that a reader may stop reading: ``harness run | head -1``.

When the reader exits, the next write raises BrokenPipeError; Python would print
a traceback, then complain again when it flushes stdout at exit. A command whose
output is cut short has still done its work (a run wrote its records, a
comparison has its verdict), so the output stops quietly and the command keeps
its exit status: stdout is pointed at the null device and the rest is dropped.
"""

from __future__ import annotations

import os
import sys


def emit(text: str = "") -> None:
    """Write one line (or block) to stdout and flush it; a closed pipe ends the output quietly."""
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout()


def silence_stdout() -> None:
    """Send whatever is still to be written to stdout to the null device (the reader is gone)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
