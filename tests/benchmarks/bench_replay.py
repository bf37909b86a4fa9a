"""Benchmark: offline replay at scale, against two floors and two peers, in one run.

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_replay.py                 # 1k and 10k scenarios, peers at 1k
    python tests/benchmarks/bench_replay.py --big           # also 50k (CLI and floor: memory check)
    python tests/benchmarks/bench_replay.py --peers 0       # without promptfoo and vcrpy

Synthetic projects (``synth.py``: one agent, N scenarios of one iteration and
three assertions, ~2 KB answers, cache seeded through the scripted provider)
are generated once into ``~/.cache/harness-bench/projects`` (``--work``) and
reused while the harness version and the generator are unchanged. Each command
runs in a process of its own; the time is the best of ``--repeat`` runs and the
memory the largest peak resident set seen (``measure.py``).

What is timed, on the same files:

* ``harness run``: ``python -m harness run -q`` (offline replay, records, report);
* ``pytest --evals`` (serial and ``-n 2``): the plugin, one item per scenario;
* ``harness check``: every guard (git, attributes, integrity, unused, secrets...);
* floor (a): ``floor_loop.py``, a plain loop that parses the scenario files, hashes
  the same canonical requests, reads and parses the entries, applies the checks;
* floor (b): the same loop as one trivial pytest item per scenario (serial, ``-n 2``);
* peers (``--peers N``): promptfoo replaying its cache and vcrpy replaying cassettes
  under pytest (``peers.py``), each proven to replay with the recording server stopped.

Marginal cost per scenario is the slope between N/10 and N scenarios
``(T(N) - T(N/10)) / (0.9 N)``, which removes start-up; start-up is the
intercept ``T(N) - N * slope``. Ratios compare marginal costs measured in the
same run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))

import measure  # noqa: E402
import peers  # noqa: E402
import synth  # noqa: E402
from floor_loop import floor_pytest_items  # noqa: E402

from harness import __version__  # noqa: E402

GENERATOR_VERSION = "1"
#: Targets of the issue, checked at the end.
TARGET_FLOOR_A = 3.0
TARGET_FLOOR_B = 1.5
TARGET_PEERS = 10.0
TARGET_WALL_10K = 5.0
TARGET_RSS_50K = 150.0
TARGET_HELP_MS = 200.0


@dataclass(frozen=True)
class Point:
    n: int
    wall: float
    rss_mb: float


@dataclass(frozen=True)
class Line:
    """One tool at one size, with its slope from N/10."""

    tool: str
    n: int
    wall: float
    rss_mb: float
    marginal_ms: float
    startup_s: float

    @property
    def per_second(self) -> float:
        return self.n / self.wall


def line(tool: str, small: Point, big: Point) -> Line:
    slope = (big.wall - small.wall) / (big.n - small.n)
    return Line(tool, big.n, big.wall, big.rss_mb, slope * 1000, big.wall - slope * big.n)


def project(work: Path, n: int, fresh: bool) -> Path:
    """The synthetic project of ``n`` scenarios, generated unless a current one exists."""
    root = work / f"p{n}"
    marker = root / ".bench-generated"
    stamp = f"{GENERATOR_VERSION} {__version__} {n}"
    if not fresh and marker.is_file() and marker.read_text(encoding="utf-8") == stamp:
        return root
    shutil.rmtree(root, ignore_errors=True)
    print(f"  generating {n} scenarios in {root} ...", flush=True)
    started = time.perf_counter()
    synth.generate(root, n)
    marker.write_text(stamp, encoding="utf-8")
    print(f"  generated in {time.perf_counter() - started:.0f} s", flush=True)
    return root


class Bench:
    def __init__(self, work: Path, repeat: int) -> None:
        self.work = work
        self.repeat = repeat
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.env = synth.bench_env()

    def time(self, name: str, n: int, cmd: list[str], *, cwd: Path | None = None,
             clean: Path | None = None, env: dict[str, str] | None = None,
             repeat: int | None = None) -> Point:
        def before() -> None:
            if clean is not None:
                shutil.rmtree(clean, ignore_errors=True)

        print(f"  {name} @ {n} ...", end=" ", flush=True)
        m = measure.best(cmd, repeat=repeat or self.repeat, log=self.logs / f"{name}-{n}.log",
                         cwd=cwd, env=env or self.env, before=before)
        print(f"{m.wall:.2f} s, {m.rss_mb:.0f} MB", flush=True)
        return Point(n, m.wall, m.rss_mb)

    def ours(self, root: Path, n: int, *, pytest_runs: bool, check: bool,
             mutants: bool = False) -> dict[str, Point]:
        py = sys.executable
        results = root / "eval-results"
        points = {
            "harness run": self.time("cli", n, [py, "-m", "harness", "--project", str(root), "run", "-q"],
                                     clean=results),
            "floor (a) loop": self.time("floor-a", n, [py, str(BENCHMARKS / "floor_loop.py"), str(root)]),
        }
        if mutants:  # opt-in: timed right after the plain run, on the same files
            points["harness run --mutants"] = self.time(
                "cli-mutants", n, [py, "-m", "harness", "--project", str(root), "run", "-q", "--mutants"],
                clean=results)
        if pytest_runs:
            floor_b = floor_pytest_items(self.work / f"floor-b-{n}", root)
            plugin = [py, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider"]
            trivial = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(floor_b)]
            points["pytest --evals"] = self.time("pytest", n, plugin, cwd=root, clean=results)
            points["floor (b) pytest"] = self.time("floor-b", n, trivial, cwd=floor_b.parent)
            points["pytest --evals -n 2"] = self.time("pytest-n2", n, [*plugin, "-n", "2"], cwd=root,
                                                      clean=results)
            points["floor (b) pytest -n 2"] = self.time("floor-b-n2", n, [*trivial, "-n", "2"],
                                                        cwd=floor_b.parent)
        if check:
            points["harness check"] = self.time(
                "check", n, [py, "-m", "harness", "--project", str(root), "check"])
        return points

    def peer_points(self, n: int, root: Path) -> dict[str, Point]:
        bin_dir = peers.ensure_promptfoo()
        folder = self.work / f"promptfoo-{n}"
        print(f"  recording promptfoo @ {n} (loopback server) ...", flush=True)
        command = peers.record_promptfoo(folder, n, bin_dir)
        points = {"promptfoo (cache)": self.time("promptfoo", n, command, cwd=folder,
                                                 env=peers.promptfoo_env(bin_dir, folder))}
        vcr_folder = self.work / f"vcrpy-{n}"
        print(f"  recording vcrpy cassettes @ {n} (loopback server) ...", flush=True)
        command = peers.record_vcr(vcr_folder, root, n)
        points["vcrpy + pytest"] = self.time("vcrpy", n, command, cwd=vcr_folder)
        return points


def help_overhead(repeat: int = 15) -> tuple[float, float]:
    """Best wall time of ``python -m harness --help`` and of ``python -c pass``, in ms."""
    def best(cmd: list[str]) -> float:
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - started)
        return min(times) * 1000

    return best([sys.executable, "-m", "harness", "--help"]), best([sys.executable, "-c", "pass"])


def table(lines: list[Line], floors: dict[str, Line]) -> str:
    rows = ["| tool | N | wall (s) | scenarios/s | marginal (ms/scenario) | start-up (s) | "
            "x floor (a) | x floor (b) | peak MB |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for ln in lines:
        ratio_a = ln.marginal_ms / floors["a"].marginal_ms if "a" in floors else float("nan")
        b = floors.get("b2" if "-n 2" in ln.tool else "b")
        ratio_b = f"{ln.marginal_ms / b.marginal_ms:.2f}" if b is not None else "-"
        rows.append(f"| {ln.tool} | {ln.n} | {ln.wall:.2f} | {ln.per_second:,.0f} | {ln.marginal_ms:.3f} | "
                    f"{ln.startup_s:.2f} | {ratio_a:.2f} | {ratio_b} | {ln.rss_mb:.0f} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--big", action="store_true", help="also 50k scenarios (harness run and floor)")
    parser.add_argument("--peers", type=int, default=1000, help="peer size (0: no peers)")
    parser.add_argument("--repeat", type=int, default=2, help="best of this many runs")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache/harness-bench/projects")
    parser.add_argument("--fresh", action="store_true", help="regenerate the projects")
    parser.add_argument("--no-pytest", action="store_true")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--mutants", action="store_true",
                        help="also time `run --mutants` (generated mutants are off by default; "
                        "the line says what they cost per scenario)")
    args = parser.parse_args()
    bench = Bench(args.work, args.repeat)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, harness {__version__}; "
          f"best of {args.repeat}\n", flush=True)

    sizes = sorted(set(args.sizes))
    results: dict[int, dict[str, Point]] = {}
    all_lines: list[tuple[int, list[Line], dict[str, Line]]] = []
    for n in sizes:
        for size in (n // 10, n):
            if size not in results:
                print(f"{size} scenarios:", flush=True)
                results[size] = bench.ours(project(args.work, size, args.fresh), size,
                                           pytest_runs=not args.no_pytest, check=not args.no_check,
                                           mutants=args.mutants)
    if args.big:
        for size in (5000, 50000):
            if size not in results:
                print(f"{size} scenarios (big):", flush=True)
                results[size] = bench.ours(project(args.work, size, args.fresh), size,
                                           pytest_runs=False, check=False)
        sizes.append(50000)
    for n in sizes:
        small, big = results[n // 10], results[n]
        lines = [line(tool, small[tool], big[tool]) for tool in big if tool in small]
        floors = {k: ln for ln in lines for k, name in (("a", "floor (a) loop"), ("b", "floor (b) pytest"),
                                                       ("b2", "floor (b) pytest -n 2")) if ln.tool == name}
        all_lines.append((n, lines, floors))

    peer_lines: list[Line] = []
    if args.peers:
        n = args.peers
        for size in (n // 10, n):
            if size not in results:
                results[size] = bench.ours(project(args.work, size, args.fresh), size,
                                           pytest_runs=False, check=False)
        print(f"peers @ {n // 10} and {n}:", flush=True)
        small = bench.peer_points(n // 10, project(args.work, n // 10, False))
        big = bench.peer_points(n, project(args.work, n, False))
        peer_lines = [line(tool, small[tool], big[tool]) for tool in big]
        peer_lines.append(line("harness run", results[n // 10]["harness run"], results[n]["harness run"]))
    help_ms, bare_ms = help_overhead()

    print("\n## Results\n")
    for n, lines, floors in all_lines:
        print(f"### {n} scenarios (slope from {n // 10})\n")
        print(table(lines, floors) + "\n")
        by_tool = {ln.tool: ln for ln in lines}
        if "harness run --mutants" in by_tool:
            plain, mutated = by_tool["harness run"], by_tool["harness run --mutants"]
            print(f"mutants (opt-in): +{mutated.marginal_ms - plain.marginal_ms:.2f} ms per scenario "
                  f"({mutated.marginal_ms:.2f} vs {plain.marginal_ms:.2f} ms marginal); the targets "
                  "below hold for `harness run` with mutants off, the default\n")
    if peer_lines:
        ours = peer_lines[-1]
        print(f"### peers at {args.peers} scenarios (slope from {args.peers // 10})\n")
        print("| tool | N | wall (s) | marginal (ms/scenario) | start-up (s) | peak MB | "
              "x harness run (marginal) |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for ln in peer_lines:
            print(f"| {ln.tool} | {ln.n} | {ln.wall:.2f} | {ln.marginal_ms:.3f} | {ln.startup_s:.2f} | "
                  f"{ln.rss_mb:.0f} | {ln.marginal_ms / ours.marginal_ms:.1f} |")
        print("\n(every peer replay passed every test with the recording server stopped)\n")
    print(f"`python -m harness --help`: {help_ms:.0f} ms; bare `python -c pass`: {bare_ms:.0f} ms; "
          f"overhead {help_ms - bare_ms:.0f} ms\n")

    print("## Targets\n")
    verdicts: list[tuple[str, bool]] = []
    by_n = {n: {ln.tool: ln for ln in lines} for n, lines, _ in all_lines}
    ten = by_n.get(10000)
    if ten:
        cli, floor_a = ten["harness run"], ten["floor (a) loop"]
        verdicts.append((f"harness run 10k within {TARGET_FLOOR_A:g}x of floor (a): "
                         f"{cli.marginal_ms / floor_a.marginal_ms:.2f}x",
                         cli.marginal_ms <= TARGET_FLOOR_A * floor_a.marginal_ms))
        verdicts.append((f"harness run 10k under {TARGET_WALL_10K:g} s wall: {cli.wall:.2f} s",
                         cli.wall < TARGET_WALL_10K))
        for tool, floor in (("pytest --evals", "floor (b) pytest"),
                            ("pytest --evals -n 2", "floor (b) pytest -n 2")):
            if tool in ten:
                ratio = ten[tool].marginal_ms / ten[floor].marginal_ms
                verdicts.append((f"{tool} 10k within {TARGET_FLOOR_B:g}x of {floor}: {ratio:.2f}x",
                                 ratio <= TARGET_FLOOR_B))
    if peer_lines:
        ours = peer_lines[-1]
        for peer in peer_lines[:-1]:
            ratio = peer.marginal_ms / ours.marginal_ms
            verdicts.append((f"harness run {ratio:.1f}x faster per scenario than {peer.tool} "
                             f"(target {TARGET_PEERS:g}x)", ratio >= TARGET_PEERS))
    if 50000 in by_n:
        rss = by_n[50000]["harness run"].rss_mb
        verdicts.append((f"harness run 50k peak memory {rss:.0f} MB (target < {TARGET_RSS_50K:g})",
                         rss < TARGET_RSS_50K))
    verdicts.append((f"--help overhead {help_ms - bare_ms:.0f} ms (target < {TARGET_HELP_MS:g})",
                     help_ms - bare_ms < TARGET_HELP_MS))
    for text, ok in verdicts:
        print(f"- [{'x' if ok else ' '}] {text}")
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
