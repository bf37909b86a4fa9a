"""A batch run killed (SIGKILL) or interrupted (SIGINT) after creating its batch never pays twice.

Real subprocesses of the CLI against the loopback batch fakes: the batch id is
journaled before the run waits, so ``--resume`` polls it; a run without
``--resume`` is refused rather than paying again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest
from batch_server import BatchServer, batch_serving
from provider_server import TEST_KEY

from conftest import REPO_ROOT, Project
from harness.refresh import journal_dir
from harness.refresh.journal import Journal


@pytest.fixture
def fake() -> Iterator[BatchServer]:
    with batch_serving(completion_s=3600.0) as running:  # nothing ends until the test says so
        yield running


def declare(project: Project, fake: BatchServer, provider: str, count: int = 3) -> None:
    base = fake.url + ("/v1" if provider == "openai" else "")
    project.agent("helper", provider=provider, model="m-test-1",
                  endpoint={"base_url": base, "max_retries": 0})
    for index in range(count):
        project.scenario(f"helper/acme/s{index}")


def cli(project: Project, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "ANTHROPIC_API_KEY": TEST_KEY,
           "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.Popen([sys.executable, "-m", "harness", "--project", str(project.root), "run",
                             *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for(condition: Callable[[], bool], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def polls(fake: BatchServer) -> int:
    return sum(1 for method, path in fake.requests if method == "GET" and "batches/" in path)


def entries(project: Project) -> int:
    return len(list(project.cache.rglob("contents.data"))) if project.cache.exists() else 0


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_sigkill_after_batch_creation_then_resume_polls_it_and_never_creates_a_second(
    project: Project, fake: BatchServer, provider: str
) -> None:
    declare(project, fake, provider)
    process = cli(project, "--refresh-cache", "--batch", "--batch-poll", "0.05")
    try:
        wait_for(lambda: polls(fake) >= 1)  # created, journaled, now waiting for it
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    assert fake.batches_created == 1 and entries(project) == 0
    journal = Journal(journal_dir(project.results))
    try:  # the batch id and its custom_id -> key map were journaled before the wait
        (pending,) = journal.pending_batches()
    finally:
        journal.close()
    created = next(iter(fake.batches.values()))
    assert pending["id"] == created.id and pending["provider"] == provider
    assert sorted(pending["requests"]) == sorted(cid for cid, _ in created.requests)
    assert all(len(r["key"]) == 64 for r in pending["requests"].values())
    fake.completion_s = 0.0  # the provider finishes the batch meanwhile

    plain = cli(project, "--refresh-cache", "--batch", "--batch-poll", "0.05")
    out, err = plain.communicate(timeout=60)
    assert plain.returncode == 2, out + err
    assert "eval-batch-pending" in err and "--resume" in err and "Traceback" not in err
    assert fake.batches_created == 1

    resumed = cli(project, "--refresh-cache", "--batch", "--resume", "--batch-poll", "0.05")
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, out + err
    assert "resuming" in err and "polling it instead of paying again" in err
    assert fake.batches_created == 1 and fake.sync_calls == 0  # no second batch, no sync call
    assert "paid 0 (0 answered), journal 3, cache 0" in err  # the killed run paid; this one reused
    assert entries(project) == 3
    replay = cli(project)
    out, err = replay.communicate(timeout=60)
    assert replay.returncode == 0, out + err


def test_ctrl_c_while_polling_says_what_resume_will_do_and_exits_130(
    project: Project, fake: BatchServer
) -> None:
    declare(project, fake, "openai")
    process = cli(project, "--refresh-cache", "--batch", "--batch-poll", "0.05")
    wait_for(lambda: polls(fake) >= 1)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130, out + err
    assert "Traceback" not in err + out
    (line,) = [text for text in err.splitlines() if text.startswith("eval-interrupted")]
    assert "0 cache entries written and kept" in line
    assert "1 batch(es) still at the provider" in line and "--resume" in line
    fake.completion_s = 0.0
    resumed = cli(project, "--refresh-cache", "--batch", "--resume", "--batch-poll", "0.05")
    out, err = resumed.communicate(timeout=60)
    assert resumed.returncode == 0, out + err
    assert fake.batches_created == 1 and entries(project) == 3
