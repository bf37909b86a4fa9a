"""Benchmark: the cost of an iteration record, written, shipped, kept and read back.

Not a test (pytest does not collect this folder): run it by hand.

    python tests/benchmarks/bench_records.py                        # this tree
    python tests/benchmarks/bench_records.py --against /old/checkout   # and another, side by side

Per record of a typical passed iteration (one agent call, one judge call, a judge score,
a rubric item, a two-turn transcript, a ~2 KB answer): microseconds to write its line
(``to_json`` + ``json.dumps``), to build the summary an xdist worker ships, to slim it,
and to read a run of N such lines back as the reports do (``load_records``). With
``--against TREE`` the same is measured on another source tree of the harness (its own
process, ``PYTHONPATH=TREE``; a tree from before ``harness/results/record.py`` is driven through
``harness.results``). Medians of ``--repeat`` rounds; on a shared machine compare the
two trees of one run, not absolute numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _api() -> tuple[Any, Callable[[Any], dict[str, Any]], Callable[[Any], dict[str, Any]]]:
    """(IterationResult, write, summary) of whichever tree is on the path."""
    try:
        from harness.results.record import IterationResult

        return IterationResult, lambda r: r.to_json(), lambda r: r.to_json("summary")
    except ImportError:  # a tree from before the one record
        from harness import results  # type: ignore[attr-defined,unused-ignore]

        return results.IterationResult, results.record_of, results.summary_record_of


def _result(index: int) -> Any:
    from harness.clients.caching import CallRecord
    from harness.core.declared import Scenario
    from harness.core.entities import ChatResponse, JudgeScore, RubricResult, Usage, Verdict

    result_type, _, _ = _api()
    name = f"case-{index:05d}"
    scenario = Scenario("helper", "acme", name, Path(f"eval-datasets/helper/acme/{name}.yaml"),
                        "positive", "Answers yes.", ({"role": "user", "content": "Question?"},),
                        None, {}, 1, (), (), tags=(f"tc_{index:05d}",))
    answer = json.dumps({"answer": "yes", "text": "x" * 2000})
    provenance = {"source": "scripted", "obtained": "scripted", "attempts": 0}
    return result_type(
        scenario, 0, "passed", (Verdict("json_path answer == 'yes'", "pass", "ok", "scenario"),), "",
        (CallRecord("a" * 64, True, 0.1, "cache/helper/acme/x/0/aaaa", provenance=provenance),
         CallRecord("b" * 64, True, 0.1, "cache/helper/acme/x/0/bbbb", purpose="judge:relevance",
                    provenance=provenance)),
        ChatResponse(answer, usage=Usage(120, 40), model="gpt-test-1"), "0123456789abcdef",
        (JudgeScore("relevance", 4, "good", "On topic.", "openai", "gpt-judge-1", "", "scripted"),),
        (RubricResult("polite", "The answer is polite.", "pass", "Courteous.", "openai", "gpt-judge-1"),),
        answer_source="scripted", expected_decision="yes", actual_decision="yes",
        metric_samples=(("yes_rate", True),), environment={"provider": "openai", "model": "gpt-test-1"},
        transcript=({"role": "user", "content": "Question?"}, {"role": "assistant", "content": answer}),
        duration_ms=1.234)


def _per_record(action: Callable[[], object], count: int) -> float:
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) / count * 1e6


def measure(count: int, repeat: int) -> dict[str, float]:
    """Median microseconds per record of each step, in this process."""
    from harness.report.load import load_records

    _, write, summary = _api()
    results = [_result(i) for i in range(count)]
    rounds: dict[str, list[float]] = {"write": [], "summary": [], "slim": [], "read back": []}
    with tempfile.TemporaryDirectory() as folder:
        run_dir = Path(folder)
        lines = "".join(json.dumps(write(r), ensure_ascii=False) + "\n" for r in results)
        (run_dir / "records.jsonl").write_text(lines, encoding="utf-8")
        for _ in range(repeat):
            rounds["write"].append(_per_record(
                lambda: [json.dumps(write(r), ensure_ascii=False) for r in results], count))
            rounds["summary"].append(_per_record(lambda: [summary(r) for r in results], count))
            rounds["slim"].append(_per_record(lambda: [r.slim() for r in results], count))
            rounds["read back"].append(_per_record(lambda: load_records(run_dir), count))
    return {step: statistics.median(values) for step, values in rounds.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="records per round")
    parser.add_argument("--repeat", type=int, default=5, help="rounds (the median is shown)")
    parser.add_argument("--against", type=Path, default=None, metavar="TREE",
                        help="also measure another source tree of the harness")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # child mode
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.count, args.repeat)))
        return
    trees = {"this tree": Path(__file__).resolve().parents[2]}
    if args.against is not None:
        trees[str(args.against)] = args.against.resolve()
    found = {}
    for label, tree in trees.items():
        env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1"}
        done = subprocess.run([sys.executable, __file__, "--json", "--count", str(args.count),
                               "--repeat", str(args.repeat)], env=env, capture_output=True,
                              text=True, check=True, cwd=tempfile.gettempdir())
        found[label] = json.loads(done.stdout)
    print(f"us per record, median of {args.repeat} rounds of {args.count} records:")
    steps = list(next(iter(found.values())))
    print(f"{'tree':<40}" + "".join(f"{s:>12}" for s in steps))
    for label, numbers in found.items():
        print(f"{label:<40}" + "".join(f"{numbers[s]:>12.1f}" for s in steps))


if __name__ == "__main__":
    main()
