"""Benchmark: what generated mutants cost, interleaved with the plain offline replay, in one run.

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_mutants.py                 # the committed examples, 3 rounds
    python tests/benchmarks/bench_mutants.py --project PATH --rounds 5

Each round runs ``python -m harness run -q`` (mutants off, the default) and then
``python -m harness run -q --mutants`` on the same project, each in a process of
its own, so the two are measured under the same load. Printed: wall and CPU
(user + system of the child) per command, the load average before and after,
the number of scenario iterations and of mutants judged, and the cost per
scenario and per mutant (the median difference between the two commands).
The replay with mutants off is the one the performance targets of
``bench_replay.py`` hold for; mutants are an opt-in.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """(wall s, child CPU s, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-500:]}")
    return wall, cpu, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", type=Path, default=ROOT)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    base = [sys.executable, "-m", "harness", "--project", str(args.project), "run", "-q"]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs; load average before "
          f"{os.getloadavg()}")
    plain: list[tuple[float, float]] = []
    mutated: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        wall, cpu, _ = timed(base)
        plain.append((wall, cpu))
        wall, cpu, _ = timed([*base, "--mutants"])
        mutated.append((wall, cpu))
    print(f"load average after {os.getloadavg()}")
    records = sorted((args.project / "eval-results" / "results").glob("*/records.jsonl"))[-1]
    lines = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
    iterations = len(lines)
    mutants = sum((r.get("mutants") or {}).get("total", 0) for r in lines)
    for name, found in (("run (mutants off)", plain), ("run --mutants", mutated)):
        walls, cpus = [w for w, _ in found], [c for _, c in found]
        print(f"{name}: wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}), "
              f"CPU median {statistics.median(cpus):.2f} s")
    extra_wall = statistics.median(m[0] - p[0] for m, p in zip(mutated, plain, strict=True))
    extra_cpu = statistics.median(m[1] - p[1] for m, p in zip(mutated, plain, strict=True))
    print(f"{iterations} iterations, {mutants} mutants ({mutants / max(iterations, 1):.0f} per "
          f"iteration)")
    print(f"mutants cost {extra_wall / iterations * 1000:.1f} ms wall, "
          f"{extra_cpu / iterations * 1000:.1f} ms CPU per scenario iteration; "
          f"{extra_cpu / max(mutants, 1) * 1e6:.0f} us CPU per mutant")
    by_agent: dict[str, list[int]] = {}
    for record in lines:
        found = record.get("mutants") or {}
        cell = by_agent.setdefault(record["agent"], [0, 0])
        cell[0] += found.get("killed", 0)
        cell[1] += found.get("total", 0) - len(found.get("equivalent") or ())
    for agent, (killed, counted) in sorted(by_agent.items()):
        print(f"  {agent}: {killed}/{counted} mutants killed ({killed / max(counted, 1):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
