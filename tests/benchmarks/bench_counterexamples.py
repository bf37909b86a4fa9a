"""Benchmark: what counterexamples cost an offline run.

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_counterexamples.py                # 2,000 scenarios
    python tests/benchmarks/bench_counterexamples.py --scenarios 500 --repeat 5

One synthetic project (``synth.py``: N scenarios, three assertions each, ~2 KB
answers, cache seeded through the scripted provider) is replayed with
``python -m harness run -q`` twice: as generated, and after two counterexamples
were added to every scenario (a wrong reference, a leaked internal marker).
Counterexamples are not keyed, so both runs replay the same entries; the
difference is the cost of judging 2N known-wrong answers with the scenarios'
hard assertions, plus reading them: each counterexample is a ~2 KB answer the
YAML loader parses with every scenario file. To tell the two apart, the judging
alone is also timed in this process (``check_counterexamples`` over the loaded
dataset). Each timing is the best of ``--repeat`` runs, all measured in this
one run so the ratios compare like with like.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS))

import measure  # noqa: E402
import synth  # noqa: E402


def add_counterexamples(root: Path, specs: list[synth.ScenarioSpec]) -> None:
    """Two known-wrong answers per scenario, both caught by its assertions."""
    for s in specs:
        wrong_ref = {**s.answer, "reference": "REF-999999",
                     "summary": "Order REF-999999 is on its way."}
        wrong_ref["details"] = ["No details."]
        leak = {**s.answer, "summary": f"{s.answer['summary']} {synth.FORBIDDEN}"}
        items = [{"why": "answers about another order", "answer": {"json": wrong_ref}},
                 {"why": "leaks an internal marker", "answer": {"json": leak}}]
        path = root / "eval-datasets" / synth.AGENT / s.tenant / f"{s.name}.yaml"
        with path.open("a", encoding="utf-8") as handle:
            handle.write("counterexamples: " + json.dumps(items, ensure_ascii=False) + "\n")


def best(root: Path, repeat: int, work: Path) -> float:
    cmd = [sys.executable, "-m", "harness", "--project", str(root), "run", "-q"]
    return min(measure.run(cmd, log=work / "run.log", env=synth.bench_env()).wall
               for _ in range(repeat))


def judging_only(root: Path, repeat: int) -> tuple[float, int]:
    """Seconds to judge every counterexample of the loaded dataset, and how many there are."""
    import time

    from harness.assertions.counterexamples import check_counterexamples
    from harness.loading.config import load_config
    from harness.loading.datasets import load_dataset

    dataset = load_dataset(load_config(root))
    count = sum(len(s.counterexamples) for s in dataset.scenarios)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        for scenario in dataset.scenarios:
            found = check_counterexamples(dataset.agents[scenario.agent], scenario)
            assert all(c.caught for c in found), scenario.id
        times.append(time.perf_counter() - started)
    return min(times), count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="harness-bench-cx-"))
    try:
        root = work / "project"
        specs = synth.generate(root, args.scenarios)
        plain = best(root, args.repeat, work)
        add_counterexamples(root, specs)
        with_cx = best(root, args.repeat, work)
        judging, count = judging_only(root, args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    n = args.scenarios
    extra = (with_cx - plain) / (2 * n) * 1e6
    print(f"{n} scenarios, offline replay (best of {args.repeat}):")
    print(f"  without counterexamples      {plain:7.2f} s")
    print(f"  with 2 per scenario ({2 * n})  {with_cx:7.2f} s   ratio {with_cx / plain:.2f}")
    print(f"  cost per counterexample      {extra:7.0f} us (reading its YAML included)")
    print(f"  judging alone, in process    {judging / count * 1e6:7.0f} us per counterexample "
          f"({count} judged in {judging:.2f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
