"""Benchmark: one offline run against N shard processes plus their merge, interleaved.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_shards.py [--scenarios 2000] [--shards 4] [--repeat 3]
        [--examples]

On a synthetic project (``synth.py``: one agent, ~2 KB answers) or, with
``--examples``, a copy of this repository's own examples, each repetition runs,
in rotated order, (a) ``harness run`` unsharded and (b) the N shards
``harness run --shard K/N`` one after another, then ``report --merge`` of them.
Every command is its own process; wall and CPU (user + system, from
``RUSAGE_CHILDREN``) are taken per process. Printed per repetition, then the
median: the unsharded run; the slowest shard and the merge (the CI critical
path when the shards run on N machines at once); the CPU of all shards plus
the merge over the unsharded CPU (what sharding costs in total: every shard
still loads and validates the whole dataset); and the balance, the largest
shard's summed ``duration_ms`` over the mean shard's, by count and by the
durations of the previous merged run (``--shard-durations``). The load
average is printed before and after: on a shared machine absolute times are
noise, compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from synth import bench_env, generate  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RUN_ID = re.compile(r"\d{8}T\d{9}Z-[0-9a-f]{6}")


def timed(cmd: list[str], ok: tuple[int, ...] = (0, 1)) -> tuple[float, float, str]:
    """Wall and CPU seconds of one child process, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=bench_env(), check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout + done.stderr


def harness(root: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "harness", "--project", str(root), *args]


def shard_loads(root: Path, run_ids: list[str]) -> list[float]:
    """Summed ``duration_ms`` of each shard's records."""
    from harness.report.load import load_records

    return [sum(float(r.get("duration_ms") or 0) for r in
                load_records(root / "eval-results" / "results" / run_id)) for run_id in run_ids]


def sharded(root: Path, shards: int, durations: Path | None) -> dict[str, object]:
    walls, cpus, ids = [], [], []
    extra = ["--shard-durations", str(durations)] if durations is not None else []
    for index in range(1, shards + 1):
        wall, cpu, out = timed(harness(root, "run", "-q", "--shard", f"{index}/{shards}", *extra))
        found = RUN_ID.search(out)
        assert found is not None, out
        walls.append(wall)
        cpus.append(cpu)
        ids.append(found[0])
    merge_wall, merge_cpu, out = timed(harness(root, "report", "--merge", *ids, "--format", "json"))
    merged = RUN_ID.search(out.split("merged ", 1)[1])
    assert merged is not None, out
    loads = shard_loads(root, ids)
    return {"max_wall": max(walls), "cpu": sum(cpus), "merge_wall": merge_wall,
            "merge_cpu": merge_cpu, "balance": max(loads) / statistics.mean(loads),
            "merged": root / "eval-results" / "results" / merged[0]}


def examples_project(root: Path) -> None:
    root.mkdir(parents=True)
    for folder in ("eval-datasets", "eval-cache"):
        shutil.copytree(REPO / folder, root / folder)
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    section = text[text.index("[tool.harness]"):].split("\n[", 1)[0]
    (root / "pyproject.toml").write_text(f'[project]\nname = "examples"\n\n{section}\n')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=2000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--examples", action="store_true", help="the repository's own examples")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-shards-") as tmp:
        root = Path(tmp) / "project"
        if args.examples:
            examples_project(root)
            what = "the repository's examples"
        else:
            generate(root, args.scenarios)
            what = f"{args.scenarios} synthetic scenarios"
        print(f"{what}, {args.shards} shards, {args.repeat} repetitions (rotated order)")
        rows: list[dict[str, float]] = []
        previous: Path | None = None
        for rep in range(args.repeat):
            row: dict[str, float] = {}
            steps = ["whole", "count", "durations"]
            steps = steps[rep % 3:] + steps[:rep % 3]
            for step in steps:
                if step == "whole":
                    row["whole_wall"], row["whole_cpu"], _ = timed(harness(root, "run", "-q"))
                    continue
                durations = previous if step == "durations" else None
                if step == "durations" and previous is None:
                    durations = sharded(root, args.shards, None)["merged"]  # type: ignore[assignment]
                found = sharded(root, args.shards, durations)
                previous = found["merged"]  # type: ignore[assignment]
                for key in ("max_wall", "cpu", "merge_wall", "merge_cpu", "balance"):
                    row[f"{step}_{key}"] = float(found[key])  # type: ignore[arg-type]
            rows.append(row)
            print(f"rep {rep + 1}: whole {row['whole_wall']:.3f} s wall / {row['whole_cpu']:.3f} s "
                  f"CPU; slowest shard {row['count_max_wall']:.3f} s + merge "
                  f"{row['count_merge_wall']:.3f} s wall; all shards + merge CPU "
                  f"{row['count_cpu'] + row['count_merge_cpu']:.3f} s; balance by count "
                  f"{row['count_balance']:.3f}, by durations {row['durations_balance']:.3f}")
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        path = med["count_max_wall"] + med["count_merge_wall"]
        print(f"median: whole run {med['whole_wall']:.3f} s wall, {med['whole_cpu']:.3f} s CPU")
        print(f"median: critical path (slowest shard + merge) {path:.3f} s = "
              f"{path / med['whole_wall']:.2f}x the whole run's wall")
        print(f"median: total CPU (all shards + merge) {med['count_cpu'] + med['count_merge_cpu']:.3f}"
              f" s = {(med['count_cpu'] + med['count_merge_cpu']) / med['whole_cpu']:.2f}x the whole "
              f"run's CPU; merge alone {med['count_merge_cpu']:.3f} s CPU")
        print(f"median: balance (largest shard's duration_ms / mean) by count "
              f"{med['count_balance']:.3f}, by durations {med['durations_balance']:.3f}")
        print(json.dumps({k: round(v, 4) for k, v in med.items()}))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
