"""Benchmark: how close ``--concurrency N`` comes to the ideal speed-up of a paid refresh.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_refresh_concurrency.py [--scenarios 64] [--latency 0.05]

It starts an OpenAI-compatible server on 127.0.0.1, in a process of its own (a
real provider does not share our interpreter lock), that answers every request
after a fixed latency (asyncio: the latency is a wait, and the server's own work
per request stays far below it, so it does not cap the throughput it measures),
then refreshes the same synthetic project (one agent,
``--scenarios`` scenarios) at each concurrency level through the real path:
credentials, provider, transport, journal, atomic entry writes, records. The
ideal time at concurrency c is ``ceil(N / c) * latency``; the speed-up is
``T(1) / T(c)``; efficiency is the speed-up divided by the ideal speed-up
``ceil(N / 1) / ceil(N / c)``.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provider_server import TEST_KEY  # noqa: E402

from harness.api import RunOptions, run_evals  # noqa: E402
from harness.config import load_config  # noqa: E402


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
HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: " + str(len(BODY)).encode() + b"\r\n\r\n")

async def handle(reader, writer):
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":", 1)[1])
        await reader.readexactly(length)
        await asyncio.sleep(LATENCY)  # the fixed latency: a wait, not work
        writer.write(HEAD + BODY)
        await writer.drain()
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


def refresh_seconds(url: str, scenarios: int, concurrency: int) -> float:
    """Wall time of one ``--refresh-cache`` of a fresh project at ``concurrency``."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        make_project(root, url + "/v1", scenarios)
        config = load_config(root)
        started = time.perf_counter()
        summary = run_evals(config, RunOptions(mode="refresh", concurrency=concurrency))
        elapsed = time.perf_counter() - started
        if summary.exit_code != 0 or summary.counts["passed"] != scenarios:
            raise SystemExit(f"refresh failed at concurrency {concurrency}: {summary.counts}")
        return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=int, default=64)
    parser.add_argument("--latency", type=float, default=0.05, help="server latency in seconds")
    parser.add_argument("--levels", type=int, nargs="+", default=[1, 4, 16, 64])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs per level")
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = TEST_KEY
    n = args.scenarios
    print(f"{n} scenarios, server latency {args.latency * 1000:.0f} ms, best of {args.repeat}\n")
    print("| concurrency | time (s) | ideal (s) | speed-up | ideal speed-up | efficiency |")
    print("|---:|---:|---:|---:|---:|---:|")
    base = 0.0
    with server_process(args.latency) as url:
        timings = {level: min(refresh_seconds(url, n, level) for _ in range(args.repeat))
                   for level in args.levels}
    for level, seconds in timings.items():
        base = base or seconds
        ideal_time = math.ceil(n / level) * args.latency
        ideal_speedup = math.ceil(n / args.levels[0]) / math.ceil(n / level)
        speedup = base / seconds
        print(f"| {level} | {seconds:.2f} | {ideal_time:.2f} | {speedup:.1f}x | {ideal_speedup:.0f}x "
              f"| {speedup / ideal_speedup:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
