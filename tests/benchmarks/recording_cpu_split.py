"""Where a recorded call's CPU goes: user against system time, by provider latency and folder.

Not a test. ``bench_refresh_concurrency.py`` gives CPU per recorded call (all threads);
this splits it, in one process, into user and system time (``getrusage``) at each
latency and in each folder (the file system's kernel work is system time):

    python tests/benchmarks/recording_cpu_split.py [--latency 0 0.05] [--folder /tmp --folder /dev/shm]

Each cell is the slope between refreshes of 25 and 100 scenarios at ``--concurrency 1``
(start-up and loading removed), the median of ``--repeat`` repetitions, each size run once
per repetition. The server is the one of ``bench_refresh_concurrency.py`` (its own
process). The load average is printed: absolute times on a shared machine are noise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_refresh_concurrency as bench  # noqa: E402
from provider_server import TEST_KEY  # noqa: E402

from harness.frontends.cli import main as harness_main  # noqa: E402

SMALL, LARGE = 25, 100


def refresh(url: str, scenarios: int, folder: str) -> tuple[float, float]:
    """User and system seconds of one ``--refresh-cache`` of a fresh project under ``folder``."""
    root = Path(tempfile.mkdtemp(dir=folder))
    bench.make_project(root, url, scenarios)
    before = resource.getrusage(resource.RUSAGE_SELF)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = harness_main(["--project", str(root), "run", "--refresh-cache", "-q",
                             "--concurrency", "1"])
    after = resource.getrusage(resource.RUSAGE_SELF)
    if code != 0:
        raise SystemExit(f"the refresh of {scenarios} scenarios exited {code}")
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.0, 0.05])
    parser.add_argument("--folder", action="append", default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folders = args.folder or [tempfile.gettempdir()]
    os.environ["OPENAI_API_KEY"] = TEST_KEY
    print(f"python {sys.version.split()[0]}, load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("\n| provider latency | folder | user per call (ms) | system per call (ms) |\n|---|---|---:|---:|")
    for latency in args.latency:
        with bench.server_process(latency) as url:
            for folder in folders:
                refresh(url, 10, folder)  # primed
                runs: dict[int, list[tuple[float, float]]] = {SMALL: [], LARGE: []}
                for _ in range(args.repeat):
                    for size in (SMALL, LARGE):
                        runs[size].append(refresh(url, size, folder))
                per_call = [(statistics.median(r[k] for r in runs[LARGE])
                             - statistics.median(r[k] for r in runs[SMALL])) / (LARGE - SMALL) * 1000
                            for k in (0, 1)]
                print(f"| {latency * 1000:.0f} ms | {folder} ({bench.filesystem(folder)}) | "
                      f"{per_call[0]:.2f} | {per_call[1]:.2f} |")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
