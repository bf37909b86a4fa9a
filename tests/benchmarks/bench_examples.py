"""Benchmark: the project's own examples (``python -m harness run`` in this repository).

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_examples.py                    # this tree, 7 repetitions
    python tests/benchmarks/bench_examples.py --against /old/tree   # before/after, interleaved
    python tests/benchmarks/bench_examples.py --profile          # top functions by cumulative time
    python tests/benchmarks/bench_examples.py --profile --profiler pyinstrument   # sampled tree
    BENCH_SORT=tottime BENCH_PSTATS=/tmp/run.pstats python tests/benchmarks/bench_examples.py --profile
    python tests/benchmarks/bench_examples.py --agent open-question --agent ...   # a subset

The committed examples (``pyproject.toml``, ``eval-datasets/``, ``eval-cache/``)
are copied once into a temporary project, so the runs write their records
there and never into the checkout. Each variant (this tree, and every
``--against`` source tree of another harness version) runs the same offline
``run -q`` in a process of its own.

*Run work* is the CPU time (``time.process_time``) of ``harness.frontends.cli.main`` in
that process after every module the run imports has been imported (the list
is taken from one probe run of each variant; numpy through the harness's own loader
when the tree has one, as the run would load it): loading and validating the
datasets, the replay, the assertions, judges, rubric and counterexamples, the
records and the report, without Python's start-up and the imports, which
``--help`` measures. The process's whole CPU (user + system) is shown beside
it, and the wall time. ``--agent NAME`` (repeatable) runs only those agents,
as ``run --agent`` does: with the declared agents alone (no ``sdk-*``), the
figure is the harness's own work, without the SDK agents' code and imports.

Variants run interleaved (``measure.interleaved``: one priming run each, then
each repetition in an order rotated by one); the ratio is the median of
per-repetition ratios. The load average is printed: absolute times on a shared
machine are noise, the ratios measured side by side are the result.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))

import measure  # noqa: E402

REPO = BENCHMARKS.parents[1]

CHILD = r"""
import importlib, io, json, os, resource, sys, time
tree, project, modules, mode, agents = sys.argv[1:6]
if tree:
    sys.path.insert(0, tree)
if modules:
    try:  # numpy as the run loads it (a tree that has the loader): its BLAS on one thread
        importlib.import_module("harness.assertions.langmodel")._load_numpy()
    except (ImportError, AttributeError):
        pass
    for name in json.loads(open(modules).read()):
        try:
            importlib.import_module(name)
        except Exception:
            pass
from harness.frontends import cli
argv = ["--project", project, "run", "-q"] + [a for n in json.loads(agents) for a in ("--agent", n)]
real = sys.stdout
sys.stdout = io.StringIO()
if mode == "profile":
    import cProfile, pstats
    profiler = cProfile.Profile()
    code = profiler.runcall(cli.main, argv)
    sys.stdout = real
    if os.environ.get("BENCH_PSTATS"):  # for print_callers and friends
        profiler.dump_stats(os.environ["BENCH_PSTATS"])
    order = os.environ.get("BENCH_SORT", "cumulative")  # or tottime
    pstats.Stats(profiler, stream=real).sort_stats(order).print_stats(int(sys.argv[6]))
    raise SystemExit(0)
if mode == "pyinstrument":
    from pyinstrument import Profiler
    profiler = Profiler(interval=0.0005)
    profiler.start()
    code = cli.main(argv)
    profiler.stop()
    sys.stdout = real
    print(profiler.output_text(unicode=True, color=False, show_all=False,
                               time="percent_of_total"))
    raise SystemExit(0)
wall0, cpu0 = time.perf_counter(), time.process_time()
code = cli.main(argv)
cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
sys.stdout = real
if mode == "probe":
    print(json.dumps(sorted(n for n in sys.modules if not n.startswith("__"))))
else:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"code": code, "cpu": cpu, "wall": wall,
                      "process_cpu": usage.ru_utime + usage.ru_stime}))
"""


def example_project(folder: Path, source: Path) -> Path:
    """A copy of the committed examples (config, datasets, cache) to run against."""
    root = folder / "examples"
    root.mkdir()
    shutil.copy2(source / "pyproject.toml", root / "pyproject.toml")
    for name in ("eval-datasets", "eval-cache"):
        shutil.copytree(source / name, root / name, symlinks=True)
    if (source / ".gitattributes").exists():
        shutil.copy2(source / ".gitattributes", root / ".gitattributes")
    return root


def child(tree: str, project: Path, modules: str, mode: str, extra: tuple[str, ...] = (),
          agents: tuple[str, ...] = ()) -> str:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("GITHUB_STEP_SUMMARY", None)
    done = subprocess.run([sys.executable, "-c", CHILD, tree, str(project), modules, mode,
                           json.dumps(list(agents)), *extra],
                          capture_output=True, text=True, env=env, check=False, cwd=project)
    if done.returncode != 0:
        raise SystemExit(f"{mode} run of {tree or 'this tree'} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="a source tree of another harness version (repeatable)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--profile", action="store_true", help="print the top functions and stop")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--profiler", choices=("cprofile", "pyinstrument"), default="cprofile",
                        help="--profile with cProfile (exact counts, inflates Python-heavy code) "
                             "or pyinstrument (sampling, proportions closer to the real run)")
    parser.add_argument("--agent", action="append", default=[],
                        help="run only this agent, as run --agent (repeatable)")
    args = parser.parse_args()
    measure.compile_trees([REPO, *args.against])
    with tempfile.TemporaryDirectory() as folder:
        project = example_project(Path(folder), REPO)
        agents = tuple(args.agent)
        trees = {"this tree": ""} | {f"against {t}": str(t.resolve()) for t in args.against}
        lists: dict[str, str] = {}
        for name, tree in trees.items():
            path = Path(folder) / f"modules-{len(lists)}.json"
            path.write_text(child(tree, project, "", "probe", agents=agents), encoding="utf-8")
            lists[name] = str(path)
        if args.profile:
            mode = "profile" if args.profiler == "cprofile" else "pyinstrument"
            print(f"{args.profiler} of the run work (imports done first), {measure.load()}\n")
            print(child("", project, lists["this tree"], mode, (str(args.top),), agents))
            return 0
        print(f"python {sys.version.split()[0]}; {measure.load()}; {args.repeat} repetitions, "
              "interleaved, rotated, primed; agents: "
              f"{', '.join(agents) or 'all'}\n", flush=True)

        def one(name: str) -> dict[str, float]:
            result: dict[str, float] = json.loads(child(trees[name], project, lists[name], "time",
                                                        agents=agents))
            if result["code"] != 0:
                raise SystemExit(f"{name}: the examples did not pass (exit {result['code']})")
            return result

        runs = measure.interleaved(list(trees), args.repeat, one, say=print)
    print(f"\n{measure.load()}\n")
    print("| variant | run work CPU (s) | process CPU (s) | run wall (s) | run work CPU vs this tree |")
    print("|---|---:|---:|---:|---:|")
    ours = [r["cpu"] for r in runs["this tree"]]
    for name, results in runs.items():
        cpu = [r["cpu"] for r in results]
        print(f"| {name} | {measure.median(cpu):.3f} | "
              f"{measure.median([r['process_cpu'] for r in results]):.3f} | "
              f"{measure.median([r['wall'] for r in results]):.3f} | "
              f"{measure.median_ratio(cpu, ours):.2f}x |")
    print("\n(medians; the ratio is the median of per-repetition ratios)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
