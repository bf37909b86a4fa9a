"""``--batch`` for SDK agents: their own requests go out through the provider's batch API, in rounds.

A batch run answers each paid request of an unchanged SDK agent with an error
the SDK does not retry, queues the request, and stops the iteration; the
round's requests go out as one batch per route (the loopback fake serves the
OpenAI Batch API and Anthropic Message Batches, answering each body as its
synchronous endpoint would); the answers are journaled, and the iterations run
again, each getting one exchange further per round. A tool loop of two calls
takes two rounds. What the fake counts proves that nothing went out
synchronously, and the replay that follows proves the entries are the ones a
synchronous recording would have written (same keys, verdicts, offline).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sdk_support import PROVIDER_VARIABLES, SdkProject
from wire_fakes import WireFake

from harness.refresh import journal_dir
from harness.refresh.journal import Journal
from harness.report.load import load_records


def _last_calls(project: SdkProject) -> list[str]:
    runs = sorted((project.root / "eval-results" / "results").iterdir())
    return sorted(call["obtained"] for record in load_records(runs[-1]) for call in record["calls"])


@pytest.mark.parametrize(("module", "api"), [("openai_tools", "chat"), ("anthropic_tools", "messages")])
def test_an_sdk_tool_loop_records_through_batches_in_two_rounds_then_replays_offline(
        tmp_path: Path, module: str, api: str) -> None:
    project = SdkProject(tmp_path, module)
    with WireFake() as fake:
        recorded = project.harness("run", "--refresh-cache", "--batch", "--batch-poll", "0.01",
                                   env=fake.env())
        assert recorded.code == 0, recorded.out + recorded.err
        assert fake.requests_to(api) == []  # nothing was paid synchronously
        assert len(fake.batches.batches) == 2  # round 1: both first calls; round 2: both follow-ups
        assert [len(b.requests) for b in fake.batches.batches.values()] == [2, 2]
    text = recorded.out + recorded.err
    assert "batch round 1: 2 call(s) for 2 iteration(s)" in text
    assert "batch round 2: 2 call(s) for 2 iteration(s)" in text
    assert _last_calls(project) == ["batch"] * 4
    assert sorted(entry["provenance"]["obtained"] for entry in project.entries()) == ["batch"] * 4
    replay = project.harness("run", audited=True)  # the fake gone, no key
    assert replay.code == 0, replay.out + replay.err
    assert "SOCKET_EVENTS []" in replay.out and "2 passed, 0 failed" in replay.out


def test_batch_and_synchronous_recordings_write_the_same_keys(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "s").mkdir()
    batched = SdkProject(tmp_path / "b", "openai_tools")
    synchronous = SdkProject(tmp_path / "s", "openai_tools")
    with WireFake() as fake:
        assert batched.harness("run", "--refresh-cache", "--batch", "--batch-poll", "0.01",
                               env=fake.env()).code == 0
        assert synchronous.harness("run", "--refresh-cache", env=fake.env()).code == 0
    assert sorted(e["key"] for e in batched.entries()) == sorted(e["key"] for e in synchronous.entries())


def test_a_streamed_request_is_refused_by_batch_with_the_reason_and_nothing_is_paid(tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_stream", output="text", tools=False)
    with WireFake() as fake:
        refused = project.harness("run", "--refresh-cache", "--batch", "--batch-poll", "0.01",
                                  env=fake.env())
        assert not fake.requests and not fake.batches.batches
    assert refused.code != 0
    records = project.records()
    assert {r["status"] for r in records} == {"error"}
    assert all('asks for a stream ("stream": true)' in r["message"] for r in records)
    assert project.entries() == []


def test_a_batch_request_the_provider_answered_with_an_error_fails_only_its_iteration(
        tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    with WireFake(batch_expire_after=1) as fake:  # each batch answers its first request only
        ran = project.harness("run", "--refresh-cache", "--batch", "--batch-poll", "0.01", env=fake.env())
        assert fake.requests_to("chat") == []
    assert ran.code != 0
    statuses = sorted(r["status"] for r in project.records())
    assert statuses == ["error", "passed"], project.records()
    failed = next(r for r in project.records() if r["status"] == "error")
    assert "--batch-retry-errors pays for it synchronously instead" in failed["message"]


def test_batch_retry_errors_pays_synchronously_for_what_the_batch_did_not_answer(tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    with WireFake(batch_expire_after=1) as fake:
        ran = project.harness("run", "--refresh-cache", "--batch", "--batch-retry-errors",
                              "--batch-poll", "0.01", env=fake.env())
        assert ran.code == 0, ran.out + ran.err
        assert len(fake.requests_to("chat")) >= 1  # paid synchronously, as asked
    assert "paid" in _last_calls(project) and "batch" in _last_calls(project)


def test_a_killed_batch_run_resumes_by_polling_its_journaled_batch_instead_of_paying_again(
        tmp_path: Path) -> None:
    project = SdkProject(tmp_path, "openai_tools")
    with WireFake(batch_pending_polls=10_000) as fake:  # the batch never ends while the run lives
        env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES} | fake.env()
        process = subprocess.Popen(
            [sys.executable, "-m", "harness", "--project", str(project.root), "run", "--refresh-cache",
             "--batch", "--batch-poll", "0.05"], cwd=project.root, env=env, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while not fake.batches.batches and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.batches.batches, "the run never created its batch"
            time.sleep(0.3)  # it is journaled before the first poll
        finally:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
        journal = Journal(journal_dir(project.root / "eval-results"))
        try:
            pending = journal.pending_batches()
        finally:
            journal.close()
        assert len(pending) == 1 and "sk-" not in str(pending)
        assert "wirefake-openai-key" not in str(pending)  # the key is never journaled
        refused = project.harness("run", "--refresh-cache", "--batch", env=fake.env())
        assert refused.code == 2 and "--resume" in refused.err  # never paid twice by accident
        fake.batches.pending_polls = 0
        resumed = project.harness("run", "--refresh-cache", "--batch", "--resume", "--batch-poll", "0.01",
                                  env=fake.env())
        assert resumed.code == 0, resumed.out + resumed.err
        assert len(fake.batches.batches) == 2  # the first round's batch was collected, not re-created
        assert fake.requests_to("chat") == []
