"""The three ways of the SDK replay benchmark: how each records once and replays (its child process).

Not a test. ``bench_sdk_replay.py`` runs these functions in processes of their own
(``--record canned|cassettes``, ``--child floor|vcrpy``) and writes the harness
project and the vcrpy pytest suite with them. The agent is
``tests/sdk_agents/openai_tools.py`` as the user wrote it; scenario ``i`` asks
about one of three orders and carries its ticket number.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
TESTS = BENCHMARKS.parent
AGENT_FILE = TESTS / "sdk_agents" / "openai_tools.py"
ORDER_IDS = ("A-1001", "A-1002", "B-2001")
STATUS = {"A-1001": "delayed", "A-1002": "delivered", "B-2001": "lost"}


@dataclass(frozen=True)
class Scenario:
    """The shape the harness hands an entrypoint (input, messages, params, tenant)."""

    input: str
    messages: list[dict[str, str]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    tenant: str = "acme"


def question(index: int) -> str:
    return f"Ticket {index}: where is my order {ORDER_IDS[index % 3]}? It has not arrived yet."


def expected(index: int) -> str:
    return STATUS[ORDER_IDS[index % 3]]


def _load_agent() -> Any:
    """Import the agent as the user wrote it (its client reads the environment at import)."""
    sys.path.insert(0, str(TESTS))
    from sdk_agents import openai_tools

    return openai_tools


def _check(index: int, decision: Any) -> None:
    if expected(index) not in json.dumps(decision):
        raise SystemExit(f"scenario {index}: expected {expected(index)!r} in {decision!r}")


# -- recording, once, against the fake ----------------------------------------------------------


def _digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def record_canned(n: int, path: Path) -> None:
    """Run the agent against the fake (env already pointing at it) and keep every answer's bytes."""
    import httpx2

    agent = _load_agent()
    canned: dict[str, dict[str, Any]] = {}
    real = httpx2.HTTPTransport()

    class Recording(httpx2.BaseTransport):
        def handle_request(self, request: httpx2.Request) -> httpx2.Response:
            response = real.handle_request(request)
            body = response.read()
            canned[_digest(request.content)] = {
                "status": response.status_code, "body": body.decode(),
                "headers": {k: v for k, v in response.headers.items()
                            if k.lower() in ("content-type", "x-request-id")}}
            return httpx2.Response(response.status_code, headers=response.headers, content=body)

    from openai import OpenAI

    agent.client = OpenAI(http_client=httpx2.Client(transport=Recording()))
    for index in range(n):
        _check(index, agent.triage(Scenario(question(index))))
    path.write_text(json.dumps(canned), encoding="utf-8")


def record_cassettes(n: int, folder: Path) -> None:
    """One json cassette per scenario, recorded by vcrpy against the fake."""
    import vcr

    agent = _load_agent()
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(n):
        with vcr.use_cassette(str(folder / f"s{index:05}.json"), serializer="json", record_mode="all"):
            _check(index, agent.triage(Scenario(question(index))))


def harness_project(root: Path, n: int) -> None:
    """The generated project of way (c): an empty [tool.harness], the agent, N scenario files."""
    shutil.rmtree(root, ignore_errors=True)
    tenant = root / "eval-datasets" / "triage" / "acme"
    tenant.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.harness]\n", encoding="utf-8")
    shutil.copy(AGENT_FILE, root / "triage_agent.py")
    (root / "eval-datasets" / "triage" / "agent.yaml").write_text(
        'entrypoint: "triage_agent:triage"\n', encoding="utf-8")
    for index in range(n):
        (tenant / f"s{index:05}.yaml").write_text(
            f"type: positive\ndescription: Order question {index}.\ninput: {json.dumps(question(index))}\n"
            f"expect:\n  - contains: {expected(index)}\n", encoding="utf-8")


# -- the timed children ------------------------------------------------------------------------


def child_floor(n: int, canned_path: Path) -> None:
    import httpx2
    from openai import OpenAI

    canned = json.loads(canned_path.read_text(encoding="utf-8"))

    def answer(request: httpx2.Request) -> httpx2.Response:
        found = canned[_digest(request.content)]
        return httpx2.Response(found["status"], headers=found["headers"], content=found["body"].encode())

    agent = _load_agent()
    agent.client = OpenAI(api_key="placeholder", base_url="http://replay.invalid/v1",
                          http_client=httpx2.Client(transport=httpx2.MockTransport(answer)))
    for index in range(n):
        _check(index, agent.triage(Scenario(question(index))))


def child_vcrpy(n: int, folder: Path) -> None:
    import vcr

    agent = _load_agent()
    for index in range(n):
        with vcr.use_cassette(str(folder / f"s{index:05}.json"), serializer="json", record_mode="none"):
            _check(index, agent.triage(Scenario(question(index))))


VCR_PYTEST = '''"""vcrpy as a pytest suite runs it: one item per scenario, one json cassette each."""
import json
import os
import sys
from pathlib import Path

import pytest
import vcr

sys.path.insert(0, {benchmarks!r})
import sdk_replay_ways as bench  # noqa: E402

AGENT = bench._load_agent()
CASSETTES = Path({cassettes!r})


@pytest.mark.parametrize("index", range(int(os.environ["BENCH_N"])))
def test_scenario(index):
    with vcr.use_cassette(str(CASSETTES / f"s{{index:05}}.json"), serializer="json", record_mode="none"):
        decision = AGENT.triage(bench.Scenario(bench.question(index)))
    assert bench.expected(index) in json.dumps(decision)
'''


def vcr_pytest_suite(folder: Path, cassettes: Path) -> Path:
    """Write way (b') (outside any project: its own pytest.ini); returns the test file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    test = folder / "test_vcr_replay.py"
    test.write_text(VCR_PYTEST.format(benchmarks=str(BENCHMARKS), cassettes=str(cassettes)), encoding="utf-8")
    return test
