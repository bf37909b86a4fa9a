"""Benchmark: SDK request bodies through harness.wire.batch, against the loopback wire fake.

Not a test (pytest does not collect it): run it by hand.

    python tests/benchmarks/bench_wire_batch.py [--requests 1000] [--polls 2]

One chat body and one Anthropic messages body are sent by the real SDKs to the
wire fake (``tests/wire_fakes``) and taken from its log as the interceptor sees
them; ``--requests`` copies of each (a different question each) go out as one
batch per provider. It prints, per provider: the HTTP requests of the batch
client (constant in the batch size: upload, create, polls, downloads), the
bytes submitted, the wall time of create, of the polls (the fake answers every
request when the batch ends, so that is where the answering happens) and of
reading the results into wire answers, and the per-request cost of the
harness's own side (create + results).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import anthropic  # noqa: E402
import openai  # noqa: E402
from wire_fakes import WireFake  # noqa: E402

from harness.wire.batch import WireBatchAPI  # noqa: E402
from harness.wire.batch_routes import WireBatchItem  # noqa: E402
from harness.wire.exchange import CHAT, MESSAGES, WireRequest  # noqa: E402

KEY = "sk-bench-wirebatch-0123456789abcdef"


def captured(fake: WireFake, provider: str) -> WireRequest:
    if provider == "openai":
        openai.OpenAI(base_url=fake.openai_base_url, api_key=KEY, max_retries=0).chat.completions.create(
            model="gpt-bench", messages=[{"role": "user", "content": "QUESTION"}])
    else:
        anthropic.Anthropic(base_url=fake.anthropic_base_url, api_key=KEY, max_retries=0).messages.create(
            model="claude-bench", max_tokens=100, messages=[{"role": "user", "content": "QUESTION"}])
    logged = fake.requests[-1]
    return WireRequest(logged.method, fake.url + logged.path, logged.path, "127.0.0.1",
                       tuple(logged.headers.items()), logged.raw)


def run(provider: str, count: int, polls: int) -> None:
    with WireFake(openai_key=KEY, anthropic_key=KEY, batch_pending_polls=polls) as fake:
        template = captured(fake, provider)
        api_name = CHAT if provider == "openai" else MESSAGES
        items = [WireBatchItem(f"r{n}", api_name, WireRequest(
            template.method, template.url, template.path, template.host, template.headers,
            template.body.replace(b"QUESTION", f"Where is order A-{1000 + n}? It is late.".encode())))
            for n in range(count)]
        fake.clear()
        api = WireBatchAPI(items)
        started = time.perf_counter()
        batch_id = api.create(items)
        created = time.perf_counter()
        while not (status := api.status(batch_id)).ended:
            pass
        ended = time.perf_counter()
        answers, failures = api.results(batch_id, status, [item.custom_id for item in items])
        done = time.perf_counter()
        submitted = sum(len(r.raw) for r in fake.requests[:2])
    assert len(answers) == count and not failures, failures
    own_ms = ((created - started) + (done - ended)) * 1000
    print(f"{provider:9} requests {count:6}  http {api.http_requests:2} (fake saw {fake.count})  "
          f"submitted {submitted / 1e6:6.2f} MB  create {(created - started) * 1000:8.1f} ms  "
          f"polls {(ended - created) * 1000:8.1f} ms  results {(done - ended) * 1000:8.1f} ms  "
          f"harness side {own_ms / count * 1000:7.1f} us/request  "
          f"answer {len(next(iter(answers.values())).body)} bytes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--polls", type=int, default=2)
    args = parser.parse_args()
    for provider in ("openai", "anthropic"):
        run(provider, args.requests, args.polls)


if __name__ == "__main__":
    main()
