"""Timing and peak memory of one command, measured from a process of its own.

Not a test. ``run(cmd)`` starts a small Python wrapper that starts ``cmd``,
waits for it and reports its wall time and the peak resident memory of the
largest process it waited for (``getrusage(RUSAGE_CHILDREN).ru_maxrss``: for
pytest-xdist that is the largest worker, not the sum).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_WRAPPER = """
import json, resource, subprocess, sys, time
log = open(sys.argv[1], "wb")
started = time.perf_counter()
code = subprocess.call(sys.argv[3:], stdout=log, stderr=subprocess.STDOUT, cwd=sys.argv[2] or None)
wall = time.perf_counter() - started
print(json.dumps({"code": code, "wall": wall,
                  "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


@dataclass(frozen=True)
class Measured:
    """One run of a command."""

    wall: float
    rss_mb: float
    code: int
    log: Path


def run(cmd: list[str], *, log: Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        ok_codes: tuple[int, ...] = (0,)) -> Measured:
    """Run ``cmd`` once; raise SystemExit with the end of its log when it fails."""
    done = subprocess.run([sys.executable, "-c", _WRAPPER, str(log), str(cwd or ""), *cmd],
                          capture_output=True, text=True, env=env, check=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    measured = Measured(data["wall"], data["rss_mb"], data["code"], log)
    if measured.code not in ok_codes:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        raise SystemExit(f"{' '.join(cmd)} exited {measured.code} (log {log}):\n{tail}")
    return measured


def best(cmd: list[str], *, repeat: int, log: Path, cwd: Path | None = None,
         env: dict[str, str] | None = None, before: object = None) -> Measured:
    """The fastest of ``repeat`` runs (its peak memory is the largest seen)."""
    runs = []
    for _ in range(repeat):
        if callable(before):
            before()
        runs.append(run(cmd, log=log, cwd=cwd, env=env))
    fastest = min(runs, key=lambda m: m.wall)
    return Measured(fastest.wall, max(m.rss_mb for m in runs), fastest.code, log)
