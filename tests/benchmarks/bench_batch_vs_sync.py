"""Benchmark: recording the same scenarios synchronously and through a provider batch API.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_batch_vs_sync.py [--scenarios 64] [--latency 0.2]
        [--completion 2.0] [--poll 0.25] [--concurrency 8] [--judge]

Both recordings go through the real path (credentials, provider, transport,
journal, atomic entries, records) against the loopback fakes of
``tests/batch_server.py``: each synchronous call is answered after
``--latency`` seconds; a batch ends ``--completion`` seconds after it is
created and is polled every ``--poll`` seconds. ``--judge`` adds one judge per
scenario, a dependent call (a second batch round). For each provider and mode
it prints the paid calls, the HTTP requests the fake received, the batches,
the wall time, and checks that both recordings wrote the same entries
(same keys, same bytes). The wall times are the fakes' settings played out, so
compare the ratios within one run; real batch APIs take minutes to hours, and
cost half as much.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from batch_server import BatchServer, batch_serving  # noqa: E402
from provider_server import TEST_KEY  # noqa: E402

from harness.loading.config import load_config  # noqa: E402
from harness.results.record import IterationResult  # noqa: E402
from harness.running.api import RunOptions, run_evals  # noqa: E402


def make_project(root: Path, provider: str, base_url: str, scenarios: int, judge: bool) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    agent = root / "eval-datasets" / "bench"
    (agent / "acme").mkdir(parents=True)
    (agent / "system.md").write_text("You answer in JSON with a field answer.\n", encoding="utf-8")
    judged = (f"judge: {{provider: {provider}, model: judge-bench, evaluators: [relevance]}}\n"
              if judge else "")
    (agent / "agent.yaml").write_text(
        f"provider: {provider}\nmodel: m-bench\nsystem_prompt: system.md\noutput: json\n"
        f"options: {{temperature: 0, max_tokens: 50}}\n"
        f"endpoint: {{base_url: '{base_url}', max_retries: 0}}\n{judged}", encoding="utf-8")
    for index in range(scenarios):
        (agent / "acme" / f"s{index:03d}.yaml").write_text(
            f"type: positive\ndescription: Scenario {index}.\ninput: Question {index}?\n"
            "expect: [{json_path: {path: answer, equals: 'yes'}}]\n", encoding="utf-8")


def digest(cache: Path) -> str:
    """Names and bytes of every contents.data (the key prefix is in the path)."""
    hashed = hashlib.sha256()
    for path in sorted(cache.rglob("contents.data")):
        hashed.update(path.relative_to(cache).as_posix().encode() + path.read_bytes())
    return hashed.hexdigest()


def record(provider: str, batch: bool, args: argparse.Namespace) -> tuple[dict[str, object], str]:
    with tempfile.TemporaryDirectory() as folder, \
            batch_serving(latency_s=args.latency, completion_s=args.completion) as fake:
        root = Path(folder)
        base = fake.url + ("/v1" if provider == "openai" else "")
        make_project(root, provider, base, args.scenarios, args.judge)
        options = RunOptions(mode="refresh", concurrency=args.concurrency, batch=batch,
                             batch_poll_s=args.poll)
        results: list[IterationResult] = []
        started = time.perf_counter()
        summary = run_evals(load_config(root), options, on_result=results.append)
        wall = time.perf_counter() - started
        assert summary.exit_code == 0, [r.message for r in results if r.message][:3]
        return measured(fake, results, wall), digest(root / "eval-cache")


def measured(fake: BatchServer, results: list[IterationResult], wall: float) -> dict[str, object]:
    paid = sum(1 for r in results for c in r.calls if c.source in ("provider", "batch"))
    return {"paid calls": paid, "HTTP requests": len(fake.requests), "batches": fake.batches_created,
            "wall s": round(wall, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per synchronous call")
    parser.add_argument("--completion", type=float, default=2.0, help="seconds until a batch ends")
    parser.add_argument("--poll", type=float, default=0.25, help="seconds between polls")
    parser.add_argument("--concurrency", type=int, default=8, help="synchronous calls in parallel")
    parser.add_argument("--judge", action="store_true", help="one judge per scenario (2 rounds)")
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = os.environ["ANTHROPIC_API_KEY"] = TEST_KEY
    print(f"{args.scenarios} scenarios{' + 1 judge each' if args.judge else ''}; sync: "
          f"{args.latency}s per call, concurrency {args.concurrency}; batch: ends {args.completion}s "
          f"after creation, polled every {args.poll}s")
    header = (f"{'provider':<10} {'mode':<6} {'paid calls':>10} {'HTTP requests':>14} "
              f"{'batches':>8} {'wall s':>8}")
    print(header)
    print("-" * len(header))
    for provider in ("openai", "anthropic"):
        digests = {}
        for mode in ("sync", "batch"):
            row, digests[mode] = record(provider, mode == "batch", args)
            print(f"{provider:<10} {mode:<6} {row['paid calls']:>10} {row['HTTP requests']:>14} "
                  f"{row['batches']:>8} {row['wall s']:>8}")
        same = "identical" if digests["sync"] == digests["batch"] else "DIFFERENT"
        print(f"{provider:<10} entries written both ways: {same}")


if __name__ == "__main__":
    main()
