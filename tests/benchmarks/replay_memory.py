"""Where an offline replay's memory goes, stage by stage: peak RSS after each, tracemalloc sites.

Not a test. Run it on a project whose cache holds every answer (``bench_replay.py``
generates them under ``~/.cache/harness-bench/projects/p<N>``):

    python tests/benchmarks/replay_memory.py PROJECT            # peak RSS after each stage
    python tests/benchmarks/replay_memory.py PROJECT --trace 15 # and the 15 largest live sites

The stages are those of ``harness run -q`` (load the dataset, run, render the terminal
summary, publish), called in this process so that the peak resident set can be read
between them (``ru_maxrss`` only grows: each line is the peak so far). ``--trace``
starts tracemalloc first (several times slower) and prints, after the dataset and after
the run, the bytes still allocated per source line: what the run keeps, not what it
churns through. The RSS is above the traced bytes by the interpreter, the imports and
the holes that freed objects leave in the allocator's pools.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import time
import tracemalloc
from pathlib import Path


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--trace", type=int, default=0, metavar="N", help="show the N largest sites")
    args = parser.parse_args()
    shutil.rmtree(args.project / "eval-results", ignore_errors=True)
    from harness.loading.datasets import load_dataset
    from harness.loading.project import load_project
    from harness.report.github import publish_run
    from harness.report.terminal import render_summary
    from harness.running.api import RunOptions, run_evals

    if args.trace:
        tracemalloc.start(1)
    started = time.process_time()
    snapshots: list[tuple[str, tracemalloc.Snapshot]] = []

    def mark(stage: str) -> None:
        traced = (f"  traced {tracemalloc.get_traced_memory()[0] / 1e6:7.1f} MB"
                  if args.trace else "")
        cpu = time.process_time() - started
        print(f"{stage:10s} peak RSS {_peak_mb():6.1f} MB{traced}  CPU {cpu:6.2f} s", flush=True)

    mark("imports")
    config = load_project(args.project)
    dataset = load_dataset(config)
    mark("dataset")
    if args.trace:
        snapshots.append(("after the dataset", tracemalloc.take_snapshot()))
    summary = run_evals(config, RunOptions(), dataset=dataset)
    mark("run")
    if args.trace:
        snapshots.append(("after the run", tracemalloc.take_snapshot()))
    render_summary(summary, quiet=True)
    mark("render")
    publish_run(summary, config.results, config.root, config.cache)
    mark("publish")
    for title, snapshot in snapshots:
        print(f"-- {title}: the {args.trace} largest sites of live memory")
        for stat in snapshot.statistics("lineno")[:args.trace]:
            print(f"  {stat.size / 1e6:6.2f} MB {stat.count:8d} blocks  {stat.traceback[0]}")


if __name__ == "__main__":
    main()
