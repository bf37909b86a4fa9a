"""Where an offline replay's CPU goes, stage by stage (a profile without a profiler's distortion).

Not a test. Run it in a project whose cache holds every answer:

    python tests/benchmarks/replay_stages.py PROJECT            # one `harness run -q` there
    python tests/benchmarks/replay_stages.py PROJECT --repeat 3 # the median of 3 runs

cProfile charges every Python call, so it inflates code made of many small calls
(the SDKs' request building, the harness's verifier) against code that runs in C;
its shares mislead. Here the stages of one iteration are wrapped with a pair of
``time.thread_time()`` reads each (~1 us), the run goes as usual in this process,
and each stage's CPU is printed per scenario, inclusive of the stages it calls
(indented under it). "the agent and its SDK" is the agent's own call minus the
harness stages it reaches through the transport. Absolute microseconds move
with the machine's load; the shares within one run are what to read.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

#: (depth, defining module, function or Class.method, label): the stages, nested as they call each other.
STAGES: tuple[tuple[int, str, str, str], ...] = (
    (0, "harness.loading.datasets", "load_dataset", "load the dataset (YAML, schemas)"),
    (0, "harness.running.session", "EvalSession.run_one", "one iteration, all of it"),
    (1, "harness.loading.datasets", "Dataset.request_for", "build the request (declared agents)"),
    (1, "harness.requests.key", "canonical_json", "canonical JSON (request, key)"),
    (1, "harness.execute.execution", "call_agent", "the agent's call (SDK + wire answers)"),
    (2, "harness.wire.intercept", "_wire_request", "read the SDK's request"),
    (2, "harness.wire.binding", "WireBinding.begin", "answer it from the cache"),
    (3, "harness.wire.canonical", "canonical_request", "canonical request"),
    (3, "harness.requests.key", "compute_key", "key"),
    (3, "harness.cache.store", "CacheStore.read", "read and verify the entry"),
    (4, "harness.cache.verify", "_read_meta", "entry.json (strict JSON)"),
    (4, "harness.cache.verify", "_wire_response", "decode the recorded body"),
    (3, "harness.wire.binding", "WireBinding._hit", "count the exchange"),
    (2, "harness.wire.intercept", "_response", "the httpx response"),
    (1, "harness.assertions.answer", "answer_verdicts", "assertions"),
    (1, "harness.running.scoring", "score_iteration", "scoring (judges, metrics)"),
    (1, "harness.results.recordwriter", "ResultWriter.write", "write the record"),
    (2, "harness.results.record", "IterationResult.to_json", "the record's fields (both projections)"),
    (1, "harness.results.totals", "RunTotals.add", "fold into the run's totals"),
    (1, "harness.requests.key", "request_digest", "request digest"),
)


def _wrap(fn: Callable[..., Any], label: str, spent: collections.Counter[str],
          calls: collections.Counter[str]) -> Callable[..., Any]:
    clock = time.thread_time

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[label] += clock() - started
            calls[label] += 1
    return timed


def _install(spent: collections.Counter[str], calls: collections.Counter[str]) -> list[str]:
    """Wrap each stage where its callers look it up; returns the stages that were not found."""
    missing = []
    for _depth, module_name, name, label in STAGES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            missing.append(label)
            continue
        owner_name, _, method = name.rpartition(".")
        if owner_name:  # a method: found through its class, wherever it is called from
            owner = getattr(module, owner_name, None)
            if owner is None or not hasattr(owner, method):
                missing.append(label)
                continue
            setattr(owner, method, _wrap(getattr(owner, method), label, spent, calls))
            continue
        original = getattr(module, name, None)
        if original is None:
            missing.append(label)
            continue
        wrapped = _wrap(original, label, spent, calls)
        for loaded in list(sys.modules.values()):  # every module that imported it by name
            if getattr(loaded, "__name__", "").startswith("harness") and \
                    getattr(loaded, name, None) is original:
                setattr(loaded, name, wrapped)
    return missing


def _child(project: str, out: str) -> None:
    """One run in this process; writes ``label<TAB>seconds<TAB>calls`` lines to ``out``."""
    os.chdir(project)
    import harness.frontends.cli
    import harness.results.recordwriter  # noqa: F401
    import harness.running.session  # noqa: F401 - the modules the stages live in, loaded before wrapping
    import harness.wire.binding  # noqa: F401
    import harness.wire.intercept  # noqa: F401

    spent: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    missing = _install(spent, calls)
    started = time.process_time()
    with contextlib.suppress(SystemExit):
        harness.frontends.cli.main(["run", "-q"])
    total = time.process_time() - started
    lines = [f"whole run\t{total}\t1"]
    lines += [f"{label}\t{seconds}\t{calls[label]}" for label, seconds in spent.items()]
    lines += [f"{label}\tnan\t0" for label in missing]
    with open(out, "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.project, args.child)
        return 0
    import subprocess
    import tempfile

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    runs: dict[str, list[float]] = collections.defaultdict(list)
    counts: dict[str, int] = {}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for _ in range(args.repeat):
        with tempfile.NamedTemporaryFile("r", suffix=".tsv", encoding="utf-8") as out:
            subprocess.run([sys.executable, __file__, args.project, "--child", out.name], env=env,
                           capture_output=True, check=True)
            found = out.read()
        for line in found.splitlines():
            label, seconds, n = line.rsplit("\t", 2)
            runs[label].append(float(seconds))
            counts[label] = int(n)
    scenarios = counts.get("one iteration, all of it", 0) or 1
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n{scenarios} iterations, median of {args.repeat} run(s); CPU per iteration, inclusive\n")
    print("| stage | us per iteration | calls per iteration |")
    print("|---|---:|---:|")
    median = {label: statistics.median(values) for label, values in runs.items()}
    print(f"| whole process (start-up included) | {median['whole run'] / scenarios * 1e6:.0f} | |")
    for depth, _module, _name, label in STAGES:
        value = median.get(label, float("nan"))
        per = "not found" if value != value else f"{value / scenarios * 1e6:.0f}"  # noqa: PLR0124
        print(f"| {'· ' * depth}{label} | {per} | {counts.get(label, 0) / scenarios:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
