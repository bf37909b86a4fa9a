"""Benchmark: offline replay at scale, against two floors and two peers, in one interleaved run.

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_replay.py                  # 1k and 10k, peers at 1k
    python tests/benchmarks/bench_replay.py --big            # also 50k (harness run and floor: memory)
    python tests/benchmarks/bench_replay.py --peers 0        # without promptfoo and vcrpy
    python tests/benchmarks/bench_replay.py --against /old/checkout   # before/after in the same run

Synthetic projects (``synth.py``: one agent, N scenarios of one iteration and
three assertions, ~2 KB answers, cache seeded through the scripted provider)
are generated once into ``~/.cache/harness-bench/projects`` (``--work``) and
reused while the harness version and the generator are unchanged.

What is timed, on the same files, each command in a process of its own:

* ``harness run``: ``python -m harness run -q`` (offline replay, records, report);
  with ``--against TREE`` also the same command on another source tree of the
  harness (``PYTHONPATH=TREE``), e.g. the commit before a change;
* ``pytest --evals`` (serial and ``-n 2``): the plugin, one item per scenario;
* ``harness check``: every guard (git, attributes, integrity, unused, secrets...);
* ``harness run --jobs 2`` (``--jobs N``; 0: not timed): the same run forked after the load,
  one job per core; it buys wall time, not CPU (compare its wall column);
* floor (a): ``floor_loop.py``, a plain loop that parses the scenario files, hashes
  the same canonical requests, reads and parses the entries, applies the checks;
* floor (b): the same loop as one trivial pytest item per scenario (serial, ``-n 2``);
* peers (``--peers N``): promptfoo replaying its cache and vcrpy replaying cassettes
  under pytest (``peers.py``), each proven to replay with the recording server stopped.

Method (``measure.interleaved``): every (command, size) runs once per
repetition, in an order rotated by one each repetition, after one priming run
of each that is not kept, so that a neighbour's load or a cold page cache falls
on every command alike. Wall time and CPU time (user + system of the command
and its children) are recorded for every run, and the peak resident set. The
marginal cost per scenario of one repetition is the slope between N/10 and N
scenarios ``(T(N) - T(N/10)) / (0.9 N)``, which removes start-up; a ratio is
the median over repetitions of the ratio of two slopes measured in the same
repetition. Tables show medians. The load average is printed at the start,
after each repetition and at the end: on a shared machine absolute times are
noise; the ratios, measured side by side, are the result.
"""

from __future__ import annotations

import argparse
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
#: Targets of issue 20, checked at the end.
TARGET_FLOOR_A = 1.5
TARGET_FLOOR_B = 1.5
TARGET_PEERS = 10.0
TARGET_CPU_10K = 2.0
TARGET_RSS_50K = 100.0
TARGET_HELP_MS = 200.0


@dataclass(frozen=True)
class Command:
    """One measured command at one size."""

    tool: str
    n: int
    argv: list[str]
    cwd: Path | None = None
    clean: Path | None = None
    env: dict[str, str] | None = None

    @property
    def name(self) -> str:
        return f"{self.tool} @ {self.n}"


@dataclass(frozen=True)
class Line:
    """One tool at one size: medians over repetitions, slopes from N/10 per repetition."""

    tool: str
    n: int
    wall: float
    cpu: float
    rss_mb: float
    marginal_ms: float
    marginal_cpu_ms: float
    startup_s: float
    slopes: tuple[float, ...]
    """Per-repetition CPU slopes (s per scenario), for ratios within a repetition."""
    wall_slopes: tuple[float, ...] = ()


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


def commands(root: Path, n: int, args: argparse.Namespace, work: Path) -> list[Command]:
    """Every command of this size: the harness (and --against trees), the floors, the plugin."""
    py = sys.executable
    results = root / "eval-results"
    run = [py, "-m", "harness", "--project", str(root), "run", "-q"]
    # cwd: the project, never this checkout: ``python -m`` puts the working folder first on
    # sys.path, before PYTHONPATH, so started from a checkout every tree ran that checkout's code
    out = [Command("harness run", n, run, cwd=root, clean=results),
           Command("floor (a) loop", n, [py, str(BENCHMARKS / "floor_loop.py"), str(root)])]
    if args.jobs > 1:  # both cores: wall, not CPU, is what --jobs buys
        out.append(Command(f"harness run --jobs {args.jobs}", n, [*run, "--jobs", str(args.jobs)],
                           cwd=root, clean=results))
    for tree in args.against:
        env = dict(synth.bench_env(), PYTHONPATH=str(tree.resolve()))
        out.append(Command(f"harness run [{tree.name}]", n, run, cwd=root, clean=results, env=env))
        if args.jobs > 1:
            out.append(Command(f"harness run --jobs {args.jobs} [{tree.name}]", n,
                               [*run, "--jobs", str(args.jobs)], cwd=root, clean=results, env=env))
    if args.pytest:
        floor_b = floor_pytest_items(work / f"floor-b-{n}", root)
        plugin = [py, "-m", "pytest", "--evals", "-q", "-p", "no:cacheprovider"]
        trivial = [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(floor_b)]
        out += [Command("pytest --evals", n, plugin, cwd=root, clean=results),
                Command("floor (b) pytest", n, trivial, cwd=floor_b.parent),
                Command("pytest --evals -n 2", n, [*plugin, "-n", "2"], cwd=root, clean=results),
                Command("floor (b) pytest -n 2", n, [*trivial, "-n", "2"], cwd=floor_b.parent)]
        for tree in args.against:
            env = dict(synth.bench_env(), PYTHONPATH=str(tree.resolve()))
            out += [Command(f"pytest --evals [{tree.name}]", n, plugin, cwd=root, clean=results, env=env),
                    Command(f"pytest --evals -n 2 [{tree.name}]", n, [*plugin, "-n", "2"], cwd=root,
                            clean=results, env=env)]
    if args.check:
        out.append(Command("harness check", n, [py, "-m", "harness", "--project", str(root), "check"]))
    return out


def check_trees(root: Path, trees: list[Path]) -> None:
    """Each timed tree imports its own ``harness`` from where its commands run (exit otherwise)."""
    expected = [(BENCHMARKS.parents[1], synth.bench_env()),
                *((tree.resolve(), dict(synth.bench_env(), PYTHONPATH=str(tree.resolve())))
                  for tree in trees)]
    for tree, env in expected:
        found = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"],
                               cwd=root, env=env, capture_output=True, text=True, check=True)
        path = Path(found.stdout.strip()).resolve()
        if not path.is_relative_to(tree):
            raise SystemExit(f"the commands of {tree} would import {path}: not the tree to time")
        print(f"  {tree}: harness from {path.parent}", flush=True)


def peer_commands(n: int, root: Path, work: Path) -> list[Command]:
    """promptfoo and vcrpy at ``n``, each recorded first against a loopback server."""
    bin_dir = peers.ensure_promptfoo()
    folder = work / f"promptfoo-{n}"
    print(f"  recording promptfoo @ {n} (loopback server) ...", flush=True)
    command = peers.record_promptfoo(folder, n, bin_dir)
    vcr_folder = work / f"vcrpy-{n}"
    print(f"  recording vcrpy cassettes @ {n} (loopback server) ...", flush=True)
    vcr = peers.record_vcr(vcr_folder, root, n)
    return [Command("promptfoo (cache)", n, command, cwd=folder, env=peers.promptfoo_env(bin_dir, folder)),
            Command("vcrpy + pytest", n, vcr, cwd=vcr_folder)]


def measure_all(cmds: list[Command], repeat: int, logs: Path, *, prime: bool = True,
                ) -> dict[str, list[measure.Measured]]:
    """Every command once per repetition, rotated, primed (``measure.interleaved``)."""
    by_name = {c.name: c for c in cmds}
    env = synth.bench_env()

    def one(name: str) -> measure.Measured:
        c = by_name[name]
        if c.clean is not None:
            shutil.rmtree(c.clean, ignore_errors=True)
        log = logs / (name.replace(" ", "_").replace("/", "_") + ".log")
        for attempt in range(_PEER_RETRIES + 1):
            try:
                return measure.run(c.argv, log=log, cwd=c.cwd, env=c.env or env)
            except SystemExit:
                text = log.read_text(encoding="utf-8", errors="replace")
                if attempt == _PEER_RETRIES or not _known_exit_crash(c.tool, text):
                    raise
                print(f"  {name}: completed its eval, then crashed in its logger on exit "
                      "(a promptfoo flake): run again", flush=True)
        raise AssertionError("not reached")

    return measure.interleaved(list(by_name), repeat, one, prime=prime,
                               say=lambda text: print(text, flush=True))


#: Runs again of a peer command that finished its work and then crashed on its way out.
_PEER_RETRIES = 2


def _known_exit_crash(tool: str, log: str) -> bool:
    """promptfoo 0.12x sometimes exits 1 after "Eval complete", its file logger written after
    it was closed (``write after end``): the replay was done; the run is timed again, not kept."""
    return tool.startswith("promptfoo") and "Eval complete" in log and "write after end" in log


def lines_of(runs: dict[str, list[measure.Measured]], sizes: list[int]) -> dict[tuple[str, int], Line]:
    """Lines for every tool measured at both N/10 and N."""
    tools = {name.rsplit(" @ ", 1)[0] for name in runs}
    out: dict[tuple[str, int], Line] = {}
    for tool in tools:
        for n in sizes:
            small, big = runs.get(f"{tool} @ {n // 10}"), runs.get(f"{tool} @ {n}")
            if small is None or big is None:
                continue
            span = n - n // 10
            wall_slopes = [(b.wall - a.wall) / span for a, b in zip(small, big, strict=True)]
            cpu_slopes = [(b.cpu - a.cpu) / span for a, b in zip(small, big, strict=True)]
            wall = measure.median([b.wall for b in big])
            slope = measure.median(wall_slopes)
            out[(tool, n)] = Line(tool, n, wall, measure.median([b.cpu for b in big]),
                                  max(b.rss_mb for b in big), slope * 1000,
                                  measure.median(cpu_slopes) * 1000, wall - slope * n,
                                  tuple(cpu_slopes), tuple(wall_slopes))
    return out


def ratio(top: Line, bottom: Line) -> float:
    """Median over repetitions of the ratio of two CPU slopes measured in the same repetition."""
    return measure.median_ratio(top.slopes, bottom.slopes)


def help_overhead(repeat: int = 15) -> tuple[float, float]:
    """Best wall time of ``python -m harness --help`` and of ``python -c pass``, in ms (alternated)."""
    times: dict[str, list[float]] = {"help": [], "bare": []}
    cmds = {"help": [sys.executable, "-m", "harness", "--help"], "bare": [sys.executable, "-c", "pass"]}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            started = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - started)
    return min(times["help"]) * 1000, min(times["bare"]) * 1000


def table(lines: list[Line], floors: dict[str, Line]) -> str:
    rows = ["| tool | N | wall (s) | CPU (s) | marginal wall (ms/scenario) | marginal CPU (ms/scenario) | "
            "start-up (s) | CPU x floor (a) | CPU x floor (b) | peak MB |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for ln in lines:
        ratio_a = f"{ratio(ln, floors['a']):.2f}" if "a" in floors else "-"
        b = floors.get("b2" if "-n 2" in ln.tool else "b")
        ratio_b = f"{ratio(ln, b):.2f}" if b is not None and "pytest" in ln.tool else "-"
        rows.append(f"| {ln.tool} | {ln.n:,} | {ln.wall:.2f} | {ln.cpu:.2f} | {ln.marginal_ms:.3f} | "
                    f"{ln.marginal_cpu_ms:.3f} | {ln.startup_s:.2f} | {ratio_a} | {ratio_b} | "
                    f"{ln.rss_mb:.0f} |")
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--big", action="store_true", help="also 50k scenarios (harness run and floor)")
    parser.add_argument("--peers", type=int, default=1000, help="peer size (0: no peers)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another source tree of the harness to time beside this one (repeatable)")
    parser.add_argument("--work", type=Path, default=Path.home() / ".cache/harness-bench/projects")
    parser.add_argument("--fresh", action="store_true", help="regenerate the projects")
    parser.add_argument("--jobs", type=int, default=2,
                        help="also time `harness run --jobs N` (0 or 1: not timed)")
    parser.add_argument("--no-pytest", dest="pytest", action="store_false")
    parser.add_argument("--no-check", dest="check", action="store_false")
    parser.add_argument("--no-prime", dest="prime", action="store_false",
                        help="no priming run (e.g. --sizes 50000 --repeat 1 for peak memory alone)")
    args = parser.parse_args()
    logs = args.work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    measure.compile_trees([BENCHMARKS.parents[1], *args.against])
    print(f"python {sys.version.split()[0]}, harness {__version__}; {measure.load()}; "
          f"{args.repeat} repetitions, interleaved (rotated{', primed' if args.prime else ''})\n",
          flush=True)

    sizes = sorted(set(args.sizes))
    check_trees(args.work, args.against)
    cmds: list[Command] = []
    done: set[int] = set()
    for n in sizes:
        for size in (n // 10, n):
            if size not in done:
                done.add(size)
                cmds += commands(project(args.work, size, args.fresh), size, args, args.work)
    if args.big:
        for size in (5000, 50000):
            if size not in done:
                done.add(size)
                big_args = argparse.Namespace(**{**vars(args), "pytest": False, "check": False})
                cmds += commands(project(args.work, size, args.fresh), size, big_args, args.work)
        sizes.append(50000)
    if args.peers:
        for size in (args.peers // 10, args.peers):
            if size not in done:
                done.add(size)
                plain = argparse.Namespace(**{**vars(args), "pytest": False, "check": False})
                cmds += commands(project(args.work, size, args.fresh), size, plain, args.work)
            cmds += peer_commands(size, project(args.work, size, False), args.work)
    print(f"{len(cmds)} commands x {args.repeat} repetitions"
          f"{' (+1 priming run each)' if args.prime else ' (no priming run)'}", flush=True)
    runs = measure_all(cmds, args.repeat, logs, prime=args.prime)
    lines = lines_of(runs, sorted({*sizes, *([args.peers] if args.peers else [])}))
    help_ms, bare_ms = help_overhead()

    print(f"\n## Results ({measure.load()})\n")
    for n in sizes:
        these = sorted((ln for (tool, size), ln in lines.items() if size == n and tool not in
                        ("promptfoo (cache)", "vcrpy + pytest")), key=lambda ln: ln.tool)
        floors = {k: lines[(name, n)] for k, name in (("a", "floor (a) loop"), ("b", "floor (b) pytest"),
                                                      ("b2", "floor (b) pytest -n 2"))
                  if (name, n) in lines}
        print(f"### {n:,} scenarios (slopes from {n // 10:,})\n")
        print(table(these, floors) + "\n")
    ours_peer = lines.get(("harness run", args.peers)) if args.peers else None
    peer_lines = [lines[(t, args.peers)] for t in ("promptfoo (cache)", "vcrpy + pytest")
                  if args.peers and (t, args.peers) in lines]
    if ours_peer is not None and peer_lines:
        print(f"### peers at {args.peers:,} scenarios (slopes from {args.peers // 10:,})\n")
        print("| tool | N | wall (s) | marginal wall (ms/scenario) | marginal CPU (ms/scenario) | "
              "start-up (s) | peak MB | x harness run (marginal CPU) | x harness run (marginal wall) |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for ln in [*peer_lines, ours_peer]:
            wall_ratio = measure.median_ratio(ln.wall_slopes, ours_peer.wall_slopes)
            print(f"| {ln.tool} | {ln.n:,} | {ln.wall:.2f} | {ln.marginal_ms:.3f} | "
                  f"{ln.marginal_cpu_ms:.3f} | {ln.startup_s:.2f} | {ln.rss_mb:.0f} | "
                  f"{ratio(ln, ours_peer):.1f} | {wall_ratio:.1f} |")
        print("\n(every peer replay passed every test with the recording server stopped)\n")
    print(f"`python -m harness --help`: {help_ms:.0f} ms; bare `python -c pass`: {bare_ms:.0f} ms; "
          f"overhead {help_ms - bare_ms:.0f} ms\n")

    print("## Targets (issue 20)\n")
    verdicts: list[tuple[str, bool]] = []
    ten = {tool: ln for (tool, n), ln in lines.items() if n == 10000}
    if "harness run" in ten and "floor (a) loop" in ten:
        cli, floor_a = ten["harness run"], ten["floor (a) loop"]
        verdicts.append((f"harness run 10k marginal CPU within {TARGET_FLOOR_A:g}x of floor (a): "
                         f"{ratio(cli, floor_a):.2f}x", ratio(cli, floor_a) <= TARGET_FLOOR_A))
        verdicts.append((f"harness run 10k under {TARGET_CPU_10K:g} s CPU: {cli.cpu:.2f} s "
                         f"(wall {cli.wall:.2f} s)", cli.cpu <= TARGET_CPU_10K))
        for tool, floor in (("pytest --evals", "floor (b) pytest"),
                            ("pytest --evals -n 2", "floor (b) pytest -n 2")):
            if tool in ten and floor in ten:
                r = ratio(ten[tool], ten[floor])
                verdicts.append((f"{tool} 10k within {TARGET_FLOOR_B:g}x of {floor}: {r:.2f}x",
                                 r <= TARGET_FLOOR_B))
    if ours_peer is not None:
        for peer in peer_lines:
            r = ratio(peer, ours_peer)
            verdicts.append((f"harness run {r:.1f}x less CPU per scenario than {peer.tool} "
                             f"(target {TARGET_PEERS:g}x)", r >= TARGET_PEERS))
    if ("harness run", 50000) in lines:
        rss = lines[("harness run", 50000)].rss_mb
        verdicts.append((f"harness run 50k peak memory {rss:.0f} MB (target <= {TARGET_RSS_50K:g})",
                         rss <= TARGET_RSS_50K))
    verdicts.append((f"--help overhead {help_ms - bare_ms:.0f} ms (target < {TARGET_HELP_MS:g})",
                     help_ms - bare_ms < TARGET_HELP_MS))
    for text, ok in verdicts:
        print(f"- [{'x' if ok else ' '}] {text}")
    return 0 if all(ok for _, ok in verdicts) else 1


if __name__ == "__main__":
    raise SystemExit(main())
