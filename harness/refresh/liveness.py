"""Whether the process that left a claim or a pending log behind is known to be dead.

Claims (:mod:`harness.refresh.claims`) and the journal's pending logs
(:mod:`harness.refresh.pending`) both name their holder as ``<host> <pid>``; both
take over what a dead holder left, and both must never take what a live one holds.
Only a process on this host can be checked; one on another host is judged by age.
"""

from __future__ import annotations

import os
import sys


def known_dead(host: str, pid_text: str, this_host: str) -> bool:
    """True only when the holder ran on this host, is not this process, and its pid is gone.

    False whenever it cannot be told (another host, a pid that is not a number, Windows,
    where ``os.kill(pid, 0)`` would end the process, or a pid we may not signal).
    """
    if host != this_host or not pid_text.isdigit() or sys.platform == "win32":
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False
