"""Benchmark: offline replay of N SDK-agent scenarios, three ways, in one run.

Not a test (pytest does not collect tests/benchmarks). Run it by hand:

    python tests/benchmarks/bench_sdk_replay.py                  # N = 100 and 1000, 5 repetitions
    python tests/benchmarks/bench_sdk_replay.py --sizes 50 500 --repeat 5
    python tests/benchmarks/bench_sdk_replay.py --no-harness     # floor and vcrpy only
    python tests/benchmarks/bench_sdk_replay.py --against /old/checkout   # also that tree's harness

The agent is ``tests/sdk_agents/openai_tools.py`` unchanged (Chat Completions,
the client built at import time, a tool loop: two requests per scenario).
Scenario i asks about one of three orders and carries its ticket number, so
every scenario's requests differ. Everything is recorded ONCE against the
loopback :class:`wire_fakes.WireFake`; the fake is then stopped and every
timed run replays offline:

(a) floor: the agent with ``client = OpenAI(http_client=httpx2.Client(transport=
    MockTransport(...)))`` answering each request body with the bytes recorded
    for it (a dict lookup): the least an in-process replay can cost;
(b) vcrpy: the agent as imported, each scenario inside ``vcr.use_cassette`` of its
    own json cassette, ``record_mode="none"``, in a plain loop (vcrpy's own cost, the
    strict reference the target is checked against);
(b') vcrpy+pytest: the same as a pytest suite, one item per scenario (how teams run
    vcrpy, pytest-recording style; ``-p no:harness``), shown for comparison;
(c) the harness: a generated project (empty ``[tool.harness]``, ``agent.yaml`` with
    only ``entrypoint: "triage_agent:triage"``, the agent copied in as
    ``triage_agent.py``, N scenario files of one ``contains`` each), recorded with
    ``python -m harness run --record-missing`` against the fake, replayed with
    ``python -m harness run -q`` with no key and no base URL in the environment;
(c') with ``--against TREE``: the same replay of the same project with ``PYTHONPATH=TREE``
    (another checkout's harness, e.g. the tree before a change), interleaved with the rest.

Each way at each N is one fresh process (start-up included in its wall time;
CPU is user + system of the process and its children, from getrusage). Every
way is run once untimed first (primed: bytecode compiled, files cached); then
``--repeat`` repetitions, each running the ways in a rotated order, so a drift
of the machine's load spreads over all ways. Marginal cost per scenario is the
slope between the two sizes, ``(T(N2) - T(N1)) / (N2 - N1)``, which removes
start-up. "Cost over the floor" is paired: in each repetition a way's slope
minus the floor's slope of the same repetition, then the median over the
repetitions (min..max printed beside it). The eval-cache/ trees are hashed
before and after all replays (an offline run writes nothing there). The load
average is printed before and during, since 2 shared cores make wall time
noisy; CPU time moves much less with the load.

Targets (issue 17): harness cost over the floor <= 0.2 x vcrpy's cost over the
floor, and the harness's whole replay at N2 <= 1.5 x the floor's; each is
checked on wall and on CPU time. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
TESTS = BENCHMARKS.parent
sys.path.insert(0, str(BENCHMARKS))

from sdk_replay_ways import (  # noqa: E402
    child_floor,
    child_vcrpy,
    harness_project,
    record_canned,
    record_cassettes,
    vcr_pytest_suite,
)

TARGET_COST_RATIO = 0.2
TARGET_WHOLE_RATIO = 1.5
WAYS = ("floor", "vcrpy", "vcrpy+pytest", "harness")

# -- timing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    wall: float
    cpu: float


def timed(cmd: list[str], env: dict[str, str], cwd: Path | None = None) -> Timing:
    """Wall and CPU (user + system of the child and its descendants) of one process, in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout[-3000:]}\n"
                         f"{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Timing(wall, cpu)


def tree_digest(root: Path) -> str:
    """sha256 over the relative paths and bytes of every file under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def offline_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "ANTHROPIC_")) and k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


class Bench:
    """Records every way once, then times them."""

    def __init__(self, work: Path, sizes: tuple[int, int], ways: tuple[str, ...],
                 against: tuple[Path, ...] = ()) -> None:
        self.work = work
        self.sizes = sizes
        self.against = against
        self.ways = ways + tuple(harness_way(tree) for tree in against if "harness" in ways)
        self.commands: dict[tuple[str, int], tuple[list[str], dict[str, str], Path | None]] = {}

    def record(self) -> None:
        sys.path.insert(0, str(TESTS))
        from wire_fakes import WireFake

        me = [sys.executable, str(Path(__file__).resolve())]
        biggest = max(self.sizes)
        canned, cassettes = self.work / "canned.json", self.work / "cassettes"
        with WireFake() as fake:
            env = offline_env(fake.env())
            started = time.perf_counter()
            for what, target in (("canned", canned), ("cassettes", cassettes)):
                print(f"  recording {what} for {biggest} scenarios against the fake ...", flush=True)
                timed([*me, "--record", what, "--n", str(biggest), "--path", str(target)], env)
            if "harness" in self.ways:
                for n in self.sizes:
                    root = self.work / f"harness-{n}"
                    harness_project(root, n)
                    print(f"  recording the harness project of {n} scenarios (--record-missing) ...",
                          flush=True)
                    before = fake.count
                    timed([sys.executable, "-m", "harness", "run", "--record-missing", "-q"], env, root)
                    sent = fake.count - before
                    note = "" if sent == 2 * n else f" (the agent needs {2 * n}: the harness sent some twice)"
                    print(f"    the harness sent {sent} requests to the fake{note}", flush=True)
            recorded = fake.count
            print(f"  recorded in {time.perf_counter() - started:.0f} s; the fake answered {recorded} "
                  f"requests and is now stopped", flush=True)
        # from here on nothing listens: every way replays offline or fails
        for n in self.sizes:
            self.commands[("floor", n)] = ([*me, "--child", "floor", "--n", str(n), "--path", str(canned)],
                                           offline_env({"OPENAI_API_KEY": "placeholder",
                                                        "OPENAI_BASE_URL": fake.openai_base_url}), None)
            self.commands[("vcrpy", n)] = ([*me, "--child", "vcrpy", "--n", str(n), "--path",
                                            str(cassettes)], offline_env(fake.env()), None)
            if "vcrpy+pytest" in self.ways:
                suite = vcr_pytest_suite(self.work / "vcr-pytest", cassettes)
                pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:harness"]
                self.commands[("vcrpy+pytest", n)] = ([*pytest, str(suite)],
                                                      offline_env({**fake.env(), "BENCH_N": str(n)}),
                                                      suite.parent)
            if "harness" in self.ways:
                self.commands[("harness", n)] = ([sys.executable, "-m", "harness", "run", "-q"],
                                                 offline_env({}), self.work / f"harness-{n}")
                for tree in self.against:  # cwd is the project: ``-m`` puts it first, not a checkout
                    self.commands[(harness_way(tree), n)] = (
                        [sys.executable, "-m", "harness", "run", "-q"],
                        offline_env({"PYTHONPATH": str(tree.resolve())}), self.work / f"harness-{n}")
        self.check_trees()

    def check_trees(self) -> None:
        """Each harness way imports the ``harness`` of its own tree (exit otherwise)."""
        for way, tree in (("harness", BENCHMARKS.parents[1]),
                          *((harness_way(t), t.resolve()) for t in self.against)):
            if (way, self.sizes[0]) not in self.commands:
                continue
            _, env, cwd = self.commands[(way, self.sizes[0])]
            found = subprocess.run([sys.executable, "-c", "import harness; print(harness.__file__)"],
                                   env=env, cwd=cwd, capture_output=True, text=True, check=True)
            if not Path(found.stdout.strip()).resolve().is_relative_to(tree):
                raise SystemExit(f"{way} would import {found.stdout.strip()}, not the tree {tree}")

    def timed(self, way: str, n: int) -> Timing:
        cmd, env, cwd = self.commands[(way, n)]
        if cwd is not None:  # the harness's records of earlier runs: removed, untimed
            shutil.rmtree(cwd / "eval-results", ignore_errors=True)
        return timed(cmd, env, cwd)

    def run(self, repeat: int) -> dict[tuple[str, int], list[Timing]]:
        results: dict[tuple[str, int], list[Timing]] = {key: [] for key in self.commands}
        caches = {n: tree_digest(self.work / f"harness-{n}" / "eval-cache") for n in self.sizes}
        print("  priming (one untimed run of each way) ...", flush=True)
        for way in self.ways:
            self.timed(way, min(self.sizes))
        for rep in range(repeat):
            order = self.ways[rep % len(self.ways):] + self.ways[:rep % len(self.ways)]
            print(f"  repetition {rep + 1}/{repeat}: {', '.join(order)} (load {load()})", flush=True)
            for way in order:
                for n in self.sizes:
                    results[(way, n)].append(self.timed(way, n))
        if "harness" in self.ways:
            same = all(tree_digest(self.work / f"harness-{n}" / "eval-cache") == caches[n]
                       for n in self.sizes)
            print(f"  eval-cache/ byte-identical after every offline replay: {same}", flush=True)
            if not same:
                raise SystemExit("an offline replay wrote under eval-cache/")
        return results


def harness_way(tree: Path) -> str:
    """The name of the way that replays with another tree's harness."""
    return f"harness [{tree.name}]"


def report(results: dict[tuple[str, int], list[Timing]], sizes: tuple[int, int],
           ways: tuple[str, ...]) -> bool:
    """Print the table and the targets; True when every target is met.

    Costs over the floor are paired: each repetition's slope of a way minus the floor's slope
    of the same repetition (they ran minutes apart at most), then the median over repetitions,
    so a load drift between repetitions cancels; min..max of the pairs shows the spread.
    """
    small, big = sizes
    picks: dict[str, Callable[[Timing], float]] = {"wall": lambda t: t.wall, "cpu": lambda t: t.cpu}

    def median(way: str, n: int, kind: str) -> float:
        return statistics.median(picks[kind](t) for t in results[(way, n)])

    def slopes(way: str, kind: str) -> list[float]:
        return [(picks[kind](b) - picks[kind](a)) / (big - small) * 1000
                for a, b in zip(results[(way, small)], results[(way, big)], strict=True)]

    def cost(way: str, kind: str) -> list[float]:
        return [w - f for w, f in zip(slopes(way, kind), slopes("floor", kind), strict=True)]

    def spread(values: list[float]) -> str:
        return f"{statistics.median(values):.3f} [{min(values):.3f}..{max(values):.3f}]"

    print(f"\n| way | wall @{small} (s) | wall @{big} (s) | CPU @{big} (s) | marginal wall (ms/scenario) | "
          "marginal CPU (ms/scenario) | start-up wall (s) | cost over floor, wall (ms) | "
          "cost over floor, CPU (ms) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for way in ways:
        marginal, marginal_cpu = statistics.median(slopes(way, "wall")), statistics.median(slopes(way, "cpu"))
        startup = median(way, big, "wall") - marginal / 1000 * big
        print(f"| {way} | {median(way, small, 'wall'):.2f} | {median(way, big, 'wall'):.2f} | "
              f"{median(way, big, 'cpu'):.2f} | {marginal:.3f} | {marginal_cpu:.3f} | "
              f"{startup:.2f} | {spread(cost(way, 'wall'))} | {spread(cost(way, 'cpu'))} |")
    print("\n(marginal: median over repetitions of (T(N2) - T(N1)) / (N2 - N1); cost over floor: median "
          "[min..max] of the per-repetition differences with the floor)\n")
    verdicts: list[tuple[str, bool]] = []
    for mine in (w for w in ways if w.startswith("harness")):
        checked = mine == "harness"  # the targets are this tree's; another tree's lines are shown
        for peer in (w for w in ways if w.startswith("vcrpy")):
            for kind in ("wall", "cpu"):
                theirs, ours = statistics.median(cost(peer, kind)), statistics.median(cost(mine, kind))
                ratio = f"{ours / theirs:.2f}" if theirs > 0 else "n/a (the peer's cost is within the noise)"
                line = (f"{mine} cost over floor / {peer} cost over floor ({kind}): {ours:.3f} / "
                        f"{theirs:.3f} ms = {ratio} (target <= {TARGET_COST_RATIO})")
                if peer == "vcrpy" and checked:  # the target is against plain vcrpy
                    verdicts.append((line, theirs > 0 and ours / theirs <= TARGET_COST_RATIO))
                else:
                    print(line)
        for kind in ("wall", "cpu"):
            whole = statistics.median(picks[kind](h) / picks[kind](f) for h, f in zip(
                results[(mine, big)], results[("floor", big)], strict=True))
            line = (f"{mine} whole replay @{big} / floor ({kind}, median of the repetitions' ratios): "
                    f"{whole:.2f} (target <= {TARGET_WHOLE_RATIO})")
            if checked:
                verdicts.append((line, whole <= TARGET_WHOLE_RATIO))
            else:
                print(line)
    for old in (w for w in ways if w.startswith("harness [")):
        for kind in ("wall", "cpu"):
            pairs = [o / h for o, h in zip(cost(old, kind), cost("harness", kind), strict=True) if h > 0]
            if pairs:
                print(f"{old} cost over floor / harness cost over floor ({kind}, median of the "
                      f"repetitions' ratios): {statistics.median(pairs):.2f}")
    print()
    for text, ok in verdicts:
        print(f"- [{'x' if ok else ' '}] {text}")
    return all(ok for _, ok in verdicts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[100, 1000], metavar=("N1", "N2"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, help="keep the recordings here (default: a temp folder)")
    parser.add_argument("--no-harness", action="store_true", help="without the harness")
    parser.add_argument("--no-vcr-pytest", action="store_true", help="without vcrpy under pytest")
    parser.add_argument("--against", type=Path, action="append", default=[], metavar="OLD_TREE",
                        help="also replay with the harness of this source tree (repeatable)")
    parser.add_argument("--child", choices=("floor", "vcrpy"), help=argparse.SUPPRESS)
    parser.add_argument("--record", choices=("canned", "cassettes"), help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--path", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        (child_floor if args.child == "floor" else child_vcrpy)(args.n, args.path)
        return 0
    if args.record:
        (record_canned if args.record == "canned" else record_cassettes)(args.n, args.path)
        return 0
    sizes = (min(args.sizes), max(args.sizes))
    if sizes[0] == sizes[1]:
        parser.error("two different sizes are needed for a slope")
    with tempfile.TemporaryDirectory(prefix="bench-sdk-") as temp:
        work = args.work or Path(temp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load average {load()}; "
              f"sizes {sizes[0]} and {sizes[1]}, median of {args.repeat} rotated repetitions", flush=True)
        ways = tuple(w for w in WAYS if not (args.no_harness and w == "harness")
                     and not (args.no_vcr_pytest and w == "vcrpy+pytest"))
        from measure import compile_trees

        compile_trees([BENCHMARKS.parents[1], *args.against])
        bench = Bench(work, sizes, ways, tuple(args.against))
        bench.record()
        results = bench.run(args.repeat)
        ok = report(results, sizes, bench.ways)
        print(f"\nload average after: {load()}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
