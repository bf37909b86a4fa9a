"""Timing, CPU and peak memory of one command, measured from a process of its own.

Not a test. ``run(cmd)`` starts a small Python wrapper that starts ``cmd``,
waits for it and reports its wall time, its CPU time (user + system of every
process it waited for) and the peak resident memory of the largest of them
(``getrusage(RUSAGE_CHILDREN)``: for pytest-xdist that is the largest worker,
not the sum).

``interleaved(variants, repeat)`` is how every benchmark here compares: each
repetition runs every variant once, in an order rotated by one per repetition,
after one priming run of each that is not kept, so that a neighbour's load or
a cold disk cache falls on every variant alike. Ratios are taken within a
repetition and the median is reported. ``load()`` is the load average, which
every benchmark prints: on a shared machine absolute times are noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

_WRAPPER = """
import json, resource, subprocess, sys, time
log = open(sys.argv[1], "wb")
started = time.perf_counter()
code = subprocess.call(sys.argv[3:], stdout=log, stderr=subprocess.STDOUT, cwd=sys.argv[2] or None)
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024}))
"""


@dataclass(frozen=True)
class Measured:
    """One run of a command."""

    wall: float
    rss_mb: float
    code: int
    log: Path
    cpu: float = 0.0
    """User + system seconds of the command and its children."""


def run(cmd: list[str], *, log: Path, cwd: Path | None = None, env: dict[str, str] | None = None,
        ok_codes: tuple[int, ...] = (0,)) -> Measured:
    """Run ``cmd`` once; raise SystemExit with the end of its log when it fails."""
    done = subprocess.run([sys.executable, "-c", _WRAPPER, str(log), str(cwd or ""), *cmd],
                          capture_output=True, text=True, env=env, check=True)
    data = json.loads(done.stdout.strip().splitlines()[-1])
    measured = Measured(data["wall"], data["rss_mb"], data["code"], log, data["cpu"])
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
    return Measured(fastest.wall, max(m.rss_mb for m in runs), fastest.code, log,
                    min(m.cpu for m in runs))


def compile_trees(trees: Sequence[Path]) -> None:
    """Byte-compile the ``harness`` package of each source tree, as pip does on install: the
    measured commands run with ``PYTHONDONTWRITEBYTECODE``, and a tree whose ``.pyc`` files
    are stale would otherwise recompile its changed modules in every run."""
    import compileall

    for tree in trees:
        compileall.compile_dir(str(tree / "harness"), quiet=1)


def load() -> str:
    """The 1, 5 and 15 minute load averages and the core count, for the record of a run."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


T = TypeVar("T")


def interleaved(variants: Sequence[str], repeat: int, run_one: Callable[[str], T], *,
                prime: bool = True, say: Callable[[str], None] | None = None) -> dict[str, list[T]]:
    """``run_one(variant)`` for every variant once per repetition, in rotated order.

    Repetition ``r`` starts at variant ``r mod len(variants)``; one priming run
    of each variant comes first and is dropped. Returns every kept result per
    variant, in repetition order (so ``results[a][r]`` and ``results[b][r]``
    were measured side by side).
    """
    results: dict[str, list[T]] = {v: [] for v in variants}
    if prime:
        for variant in variants:
            run_one(variant)
    for r in range(repeat):
        order = [variants[(r + i) % len(variants)] for i in range(len(variants))]
        for variant in order:
            results[variant].append(run_one(variant))
        if say is not None:
            say(f"  repetition {r + 1}/{repeat} done ({load()})")
    return results


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def median_ratio(top: Sequence[float], bottom: Sequence[float]) -> float:
    """The median of per-repetition ratios ``top[r] / bottom[r]``."""
    return statistics.median(t / b for t, b in zip(top, bottom, strict=True))
