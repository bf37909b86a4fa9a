"""Benchmark: how close ``--concurrency N`` comes to the ideal speed-up of a paid refresh,
and what a recorded call costs in CPU.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_refresh_concurrency.py [--scenarios 128] [--latency 0.05 0]
    python tests/benchmarks/bench_refresh_concurrency.py --against /old/checkout   # before/after
    python tests/benchmarks/bench_refresh_concurrency.py --folder /tmp --folder /dev/shm  # disk vs tmpfs

It starts an OpenAI-compatible server on 127.0.0.1, in a process of its own (a
real provider does not share our interpreter lock), that answers every request
after a fixed latency (asyncio: the latency is a wait, and the server's own work
per request stays far below it, so it does not cap the throughput it measures)
and keeps each connection open for the next request as providers do, unless
the client asks to close it (urllib, the "before" trees, does on every call),
then refreshes a fresh synthetic project (one agent, ``--scenarios`` scenarios)
at each concurrency level through the real path: credentials, provider,
transport, journal, atomic entry writes, records. Each refresh runs in a
process of its own (``--against`` trees run on their own code), and reports
the wall and CPU time (``time.process_time``: every thread) of ``run_evals``.

Method: every (tree, level, size) runs once per repetition, in an order rotated
by one each repetition, after one priming run each (``measure.interleaved``).
The ideal time at concurrency c is ``ceil(N / c) * latency``; the speed-up is
``T(1) / T(c)`` within one repetition; efficiency is the speed-up divided by
the ideal speed-up ``N / ceil(N / c)``. CPU per recorded call is the slope of
CPU time between N/4 and N scenarios at concurrency 1, which removes the fixed
cost of loading and of opening the journal. Medians over repetitions are
shown; the load average is printed, because absolute times on a shared machine
are noise.

The first table's efficiency is taken from whole runs of N scenarios, so it
includes the fixed part of a run (loading the dataset, creating the journal,
``sync()`` and the end of the run), which no concurrency shortens. The second
table shows the same runs as marginal throughput: at each concurrency the wall
and CPU slope between N/4 and N scenarios (each level also runs N/4), its
speed-up over the slope at the first level, and that speed-up over the ideal
marginal speed-up ``(N - N/4) / (ceil(N / c) - ceil(N/4 / c))``. Both are
printed; neither replaces the other.

CPU per recorded call rises with the provider's latency for any client: a thread
that waits 50 ms for its answer wakes up on cold CPU caches. So every latency
given with ``--latency`` (default 50 ms and 0 ms; each its own server, and at
0 ms only concurrency 1, there being no wait to overlap) is also measured by a
no-harness control (``--no-control`` skips it): the same requests, one at a
time, on one kept-alive ``http.client`` connection (the harness's own
transport), each answer parsed, nothing written. The last table shows CPU per
call at concurrency 1 by latency for every tree and the control, and each
tree minus the control, paired per repetition: the harness's own work per
recorded call, with what waiting costs the machine taken out.

Where the projects are written matters as much as the code: a recorded call
creates two folders and a temporary one and two files (the atomic entry
write), and on the ext4 disk of a shared virtual machine each of those costs
0.1-1 ms of kernel CPU, against a few microseconds on tmpfs. ``--folder DIR``
(repeatable; default the system's temporary folder) runs every variant with
its projects under DIR, and the filesystem type is printed beside it: the
CPU per call on tmpfs is the harness's own work, the difference on the disk
is the filesystem's.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import measure  # noqa: E402


def make_project(root: Path, base_url: str, scenarios: int) -> None:
    (root / "pyproject.toml").write_text('[project]\nname = "bench"\n', encoding="utf-8")
    agent = root / "eval-datasets" / "bench"
    (agent / "acme").mkdir(parents=True)
    (agent / "system.md").write_text("You answer in JSON with a field answer.\n", encoding="utf-8")
    (agent / "agent.yaml").write_text(
        "provider: openai\nmodel: gpt-bench\nsystem_prompt: system.md\noutput: json\n"
        f"options: {{temperature: 0, max_tokens: 50}}\nendpoint: {{base_url: '{base_url}'}}\n",
        encoding="utf-8")
    for index in range(scenarios):
        (agent / "acme" / f"s{index:03d}.yaml").write_text(
            f"type: positive\ndescription: Scenario {index}.\ninput: Question {index}?\n"
            "expect: [{json_path: {path: answer, equals: 'yes'}}]\n", encoding="utf-8")


SERVER = r"""
import asyncio, json, sys
LATENCY = float(sys.argv[2])
BODY = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-bench",
                   "choices": [{"index": 0, "finish_reason": "stop", "message": {
                       "role": "assistant", "content": json.dumps({"answer": "yes"})}}],
                   "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}}).encode()
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + str(len(BODY)).encode()
KEEP, CLOSE = HEAD + b"\r\n\r\n", HEAD + b"\r\nConnection: close\r\n\r\n"

async def handle(reader, writer):
    # HTTP/1.1 as providers speak it: the connection stays open for the next request
    # unless the client asks to close it (urllib does, on every request)
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
                return  # the client closed (or the server stops with a connection kept open)
            length, close = 0, False
            for line in head.lower().split(b"\r\n"):
                if line.startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                elif line.startswith(b"connection:") and b"close" in line:
                    close = True
            await reader.readexactly(length)
            await asyncio.sleep(LATENCY)  # the fixed latency: a wait, not work
            writer.write((CLOSE if close else KEEP) + BODY)
            await writer.drain()
            if close:
                return
    finally:
        writer.close()

async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
    print(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)  # until stdin closes

asyncio.run(main())
"""


@contextmanager
def server_process(latency: float) -> Iterator[str]:
    """An OpenAI-compatible server with a fixed latency, in its own process; yields its URL."""
    tests = str(Path(__file__).resolve().parent.parent)
    process = subprocess.Popen([sys.executable, "-c", SERVER, tests, str(latency)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield process.stdout.readline().strip()
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(timeout=10)


CHILD = r"""
import json, os, sys, tempfile, time
tree, tests, url, scenarios, concurrency = sys.argv[1:6]
if tree:
    sys.path.insert(0, tree)
sys.path.insert(0, tests + "/benchmarks")
from pathlib import Path
from bench_refresh_concurrency import make_project
from harness.running.api import RunOptions, run_evals
from harness.loading.config import load_config
with tempfile.TemporaryDirectory(dir=sys.argv[6] or None) as folder:
    root = Path(folder)
    make_project(root, url + "/v1", int(scenarios))
    config = load_config(root)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    summary = run_evals(config, RunOptions(mode="refresh", concurrency=int(concurrency)))
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(json.dumps({"wall": wall, "cpu": cpu, "passed": summary.counts["passed"]}))
"""


def filesystem(folder: str) -> str:
    """The filesystem type ``folder`` is on (the longest mount point above it, /proc/self/mounts)."""
    path = os.path.realpath(folder or tempfile.gettempdir())
    best, kind = "", "?"
    try:
        with open("/proc/self/mounts", encoding="utf-8") as mounts:
            for line in mounts:
                parts = line.split()
                point = parts[1]
                inside = path == point or path.startswith(point.rstrip("/") + "/")
                if len(parts) > 2 and inside and len(point) > len(best):
                    best, kind = point, parts[2]
    except OSError:
        pass
    return kind


def refresh(tree: str, url: str, scenarios: int, concurrency: int,
            folder: str = "") -> dict[str, float]:
    """Wall and CPU time of one ``--refresh-cache`` of a fresh project, in a process of its own."""
    # imported here, in the parent: the child imports this module (make_project) on the tree
    # it measures, and provider_server imports the harness of this checkout
    from provider_server import TEST_KEY

    tests = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, OPENAI_API_KEY=TEST_KEY, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", CHILD, tree, tests, url, str(scenarios),
                           str(concurrency), folder], capture_output=True, text=True, env=env,
                          check=False)
    if done.returncode != 0:
        raise SystemExit(f"refresh failed ({tree or 'this tree'}, c={concurrency}):\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["passed"] != scenarios:
        raise SystemExit(f"refresh at concurrency {concurrency} passed {result['passed']} of {scenarios}")
    return result


CONTROL = r"""
import http.client, json, sys, time, urllib.parse
url, scenarios = sys.argv[1], int(sys.argv[2])
parts = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
wall0, cpu0 = time.perf_counter(), time.process_time()
for index in range(scenarios):
    body = json.dumps({"model": "gpt-bench", "temperature": 0, "max_tokens": 50, "messages": [
        {"role": "system", "content": "You answer in JSON with a field answer."},
        {"role": "user", "content": f"Question {index}?"}]}).encode()
    connection.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
    answer = json.loads(connection.getresponse().read())
    assert json.loads(answer["choices"][0]["message"]["content"]) == {"answer": "yes"}
wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
print(json.dumps({"wall": wall, "cpu": cpu, "passed": scenarios}))
"""


def control(url: str, scenarios: int) -> dict[str, float]:
    """The no-harness control: the same requests, one at a time, on one kept-alive
    ``http.client`` connection (the harness's own transport), each answer parsed, nothing
    written. Its CPU per call is what waiting for a provider costs this machine whatever
    the client does (a thread that sleeps 50 ms wakes up on cold caches)."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", CONTROL, url, str(scenarios)], capture_output=True,
                          text=True, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the control failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


CONTROL_TREE = "no harness (control)"


def slopes(runs: dict[str, list[dict[str, float]]], variant: str, n: int, small: int,
           measure_of: str) -> list[float]:
    """Per repetition, ``(T(n) - T(small)) / (n - small)`` of ``measure_of`` (wall or cpu);
    ``variant`` is ``tree|latency|level`` (the size is appended)."""
    return [(b[measure_of] - a[measure_of]) / (n - small) for a, b in
            zip(runs[f"{variant}|{small}"], runs[f"{variant}|{n}"], strict=True)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=128)
    parser.add_argument("--latency", type=float, nargs="+", default=[0.05, 0.0],
                        help="server latencies in seconds (each its own server; at 0 only "
                        "concurrency 1 runs: there is no wait to overlap)")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repetitions")
    parser.add_argument("--against", type=Path, action="append", default=[],
                        help="another source tree of the harness to time beside this one (repeatable)")
    parser.add_argument("--folder", action="append", default=[],
                        help="write the projects under this folder (repeatable: each is a variant; "
                        "default the system's temporary folder)")
    parser.add_argument("--no-control", action="store_true",
                        help="skip the no-harness control (plain http.client, concurrency 1)")
    args = parser.parse_args()
    measure.compile_trees([Path(__file__).resolve().parents[2], *args.against])
    n, small = args.scenarios, max(args.scenarios // 4, 1)
    sources = {"this tree": ""} | {t.name: str(t.resolve()) for t in args.against}
    folders = args.folder or [""]
    trees: dict[str, tuple[str, str]] = {}
    for name, source in sources.items():
        for folder in folders:
            where = folder or tempfile.gettempdir()
            label = f"{name} on {where} ({filesystem(folder)})" if len(folders) > 1 else name
            trees[label] = (source, folder)
    if len(folders) == 1:
        print(f"projects under {folders[0] or tempfile.gettempdir()} ({filesystem(folders[0])})")
    latencies = args.latency
    print(f"{n} scenarios, server latencies {', '.join(f'{x * 1000:.0f} ms' for x in latencies)}, "
          f"{args.repeat} repetitions interleaved (rotated, primed); {measure.load()}\n", flush=True)

    def levels_at(latency: float) -> list[int]:
        return args.levels if latency > 0 else [1]

    groups = [f"{name}|{latency}|{level}" for name in trees for latency in latencies
              for level in levels_at(latency)]
    if not args.no_control:
        groups += [f"{CONTROL_TREE}|{latency}|1" for latency in latencies]
    variants = [f"{group}|{size}" for group in groups for size in (n, small)]
    with ExitStack() as stack:
        urls = {latency: stack.enter_context(server_process(latency)) for latency in latencies}

        def one(variant: str) -> dict[str, float]:
            name, latency, level, size = variant.split("|")
            if name == CONTROL_TREE:
                return control(urls[float(latency)], int(size))
            source, folder = trees[name]
            return refresh(source, urls[float(latency)], int(size), int(level), folder)

        runs = measure.interleaved(variants, args.repeat, one, say=lambda t: print(t, flush=True))
    print(f"\n{measure.load()}\n")
    for latency in (x for x in latencies if x > 0):
        _concurrency_tables(runs, trees, latency, args.levels, n, small)
    _cpu_table(runs, [*trees, *([] if args.no_control else [CONTROL_TREE])], latencies, n, small)
    if len(trees) > 1:
        names = list(trees)
        print()
        for latency in latencies:
            for other in names[1:]:
                ratio = measure.median_ratio(slopes(runs, f"{names[0]}|{latency}|1", n, small, "cpu"),
                                             slopes(runs, f"{other}|{latency}|1", n, small, "cpu"))
                print(f"CPU per recorded call at concurrency 1, {latency * 1000:.0f} ms provider, "
                      f"{names[0]} / {other}: {ratio:.2f} (median of the per-repetition ratios)")
    return 0


def _concurrency_tables(runs: dict[str, list[dict[str, float]]], trees: dict[str, tuple[str, str]],
                        latency: float, levels: list[int], n: int, small: int) -> None:
    """Whole-run and marginal speed-up and efficiency at each concurrency, one provider latency."""
    print(f"Whole runs of {n} scenarios, {latency * 1000:.0f} ms provider (the fixed part of a run "
          "included):\n")
    print("| tree | concurrency | time (s) | ideal (s) | calls/s | speed-up | ideal speed-up | efficiency | "
          "CPU (s) | CPU per recorded call (ms, slope) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    first = levels[0]
    for name in trees:
        base = [r["wall"] for r in runs[f"{name}|{latency}|{first}|{n}"]]
        per_call = measure.median(slopes(runs, f"{name}|{latency}|{first}", n, small, "cpu"))
        for level in levels:
            these = runs[f"{name}|{latency}|{level}|{n}"]
            walls = [r["wall"] for r in these]
            ideal_speedup = math.ceil(n / first) / math.ceil(n / level)
            speedup = measure.median_ratio(base, walls)
            seconds = measure.median(walls)
            shown = f"{per_call * 1000:.2f}" if level == first else "-"
            print(f"| {name} | {level} | {seconds:.2f} | {math.ceil(n / level) * latency:.2f} | "
                  f"{n / seconds:.0f} | {speedup:.1f}x | {ideal_speedup:.0f}x | "
                  f"{speedup / ideal_speedup:.2f} | {measure.median([r['cpu'] for r in these]):.2f} | "
                  f"{shown} |")
    print(f"\nMarginal throughput, {latency * 1000:.0f} ms provider: slope between {small} and {n} "
          "scenarios at each concurrency (the fixed part of a run removed):\n")
    print("| tree | concurrency | wall per call (ms, slope) | ideal (ms) | calls/s | speed-up | "
          "ideal speed-up | efficiency | CPU per call (ms, slope) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in trees:
        base_slopes = slopes(runs, f"{name}|{latency}|{first}", n, small, "wall")
        for level in levels:
            walls = slopes(runs, f"{name}|{latency}|{level}", n, small, "wall")
            rounds = math.ceil(n / level) - math.ceil(small / level)
            ideal = rounds * latency / (n - small)
            ideal_speedup = (math.ceil(n / first) - math.ceil(small / first)) / rounds
            speedup = measure.median_ratio(base_slopes, walls)
            seconds = measure.median(walls)
            cpu = measure.median(slopes(runs, f"{name}|{latency}|{level}", n, small, "cpu"))
            print(f"| {name} | {level} | {seconds * 1000:.2f} | {ideal * 1000:.2f} | {1 / seconds:.0f} | "
                  f"{speedup:.1f}x | {ideal_speedup:.0f}x | {speedup / ideal_speedup:.2f} | "
                  f"{cpu * 1000:.2f} |")
    print()


def _cpu_table(runs: dict[str, list[dict[str, float]]], names: list[str], latencies: list[float],
               n: int, small: int) -> None:
    """CPU per call at concurrency 1 by provider latency, each tree beside the no-harness
    control: the difference is the harness's own work; the control's rise with the latency
    is the machine's cost of waiting."""
    print(f"CPU per call at concurrency 1 (slope between {small} and {n} calls, ms; median, "
          "min..max over repetitions):\n")
    print("| tree | " + " | ".join(f"{x * 1000:.0f} ms provider" for x in latencies) + " |")
    print("|---|" + "---:|" * len(latencies))
    for name in names:
        cells = []
        for latency in latencies:
            values = slopes(runs, f"{name}|{latency}|1", n, small, "cpu")
            cells.append(f"{measure.median(values) * 1000:.2f} [{min(values) * 1000:.2f}.."
                         f"{max(values) * 1000:.2f}]")
        print(f"| {name} | " + " | ".join(cells) + " |")
    if CONTROL_TREE in names:
        print()
        for name in (x for x in names if x != CONTROL_TREE):
            cells = []
            for latency in latencies:
                own = [a - b for a, b in zip(slopes(runs, f"{name}|{latency}|1", n, small, "cpu"),
                                             slopes(runs, f"{CONTROL_TREE}|{latency}|1", n, small, "cpu"),
                                             strict=True)]
                cells.append(f"{latency * 1000:.0f} ms: {measure.median(own) * 1000:.2f}")
            print(f"{name} minus the control (the harness's own CPU per recorded call, paired per "
                  f"repetition): " + ", ".join(cells) + " ms")


if __name__ == "__main__":
    raise SystemExit(main())
