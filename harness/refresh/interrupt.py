"""Ctrl-C during a recording run: one line that says what was kept and what ``--resume`` does.

Entries are written atomically (complete or absent) and every paid answer is
journaled before its entry is written, so an interrupt loses only the calls in
flight. The run ends with :class:`RunInterrupted` (exit code 130, the shell's
code for SIGINT), which the CLI prints like any named error: no traceback.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.errors import HarnessError

#: The exit code of a run stopped by SIGINT (128 + 2), as shells report it.
EXIT_INTERRUPTED = 130


class RunInterrupted(HarnessError):
    """A recording run was interrupted (Ctrl-C); what it paid for is kept."""

    code = "eval-interrupted"
    exit_code = EXIT_INTERRUPTED


def interrupted(*, written: int, journal: Path | str | None, pending_batches: int) -> RunInterrupted:
    """The one-line message of an interrupted recording run."""
    if journal is None:  # scripted: nothing was paid for
        return RunInterrupted(f"interrupted: {written} cache entries written and kept (each complete "
                              "or absent); re-run the same command to record the rest")
    batches = (f" and {pending_batches} batch(es) still at the provider" if pending_batches else "")
    return RunInterrupted(
        f"interrupted: {written} cache entries written and kept (each complete or absent); every "
        f"answer already paid for is in the journal {journal}{batches}. Re-run the same command "
        "with --resume to reuse them without paying again"
        + (" and to collect the batches" if pending_batches else "")
        + "; calls in flight at the interrupt got no answer and are paid then")
