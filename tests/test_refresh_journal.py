"""The crash-safe journal: SIGKILL mid-refresh leaves no torn entry, and the re-run pays nothing twice."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from provider_server import (
    TEST_KEY,
    ProviderServer,
    Received,
    Reply,
    default_answer,
    openai_answer,
    point_agent,
)

from conftest import REPO_ROOT, Project
from harness.cache.store import CacheStore
from harness.core.clock import utc_now
from harness.core.entities import ChatCall, ChatResponse
from harness.refresh import journal_dir
from harness.refresh.journal import Journal
from harness.requests.key import compute_key


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)


def scenarios(project: Project, server: ProviderServer, count: int) -> None:
    point_agent(project, server)
    for index in range(count):
        project.scenario(f"helper/acme/s{index}")


def verified_entries(project: Project) -> int:
    """Every entry folder verifies (full key, payload sha256, decodable); returns how many."""
    store = CacheStore(project.cache, ttl_days=730)
    count = 0
    for meta_file in project.cache.rglob("entry.json"):
        if any(part.startswith(".tmp-") for part in meta_file.parts):
            continue  # a temporary a killed writer left: never read as an entry
        meta = json.loads(meta_file.read_text())
        call = ChatCall(meta["scenario"], meta["iteration"], meta["provider"], meta["model"],
                        meta["request"], meta.get("purpose", ""))
        assert compute_key(call) == meta["key"]
        assert store.read(call, meta["key"], utc_now()).path == meta_file.parent
        count += 1
    return count


def temporaries(project: Project) -> list[Path]:
    return [p for p in project.cache.rglob(".tmp-*")] if project.cache.exists() else []


def cli(project: Project, *args: str, script: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO_ROOT)}
    command = ([sys.executable, "-c", script, str(project.root)] if script else
               [sys.executable, "-m", "harness", "--project", str(project.root), *args])
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for(condition: object, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_sigkill_mid_refresh_then_resume_pays_only_for_the_calls_not_made(
    project: Project, server: ProviderServer
) -> None:
    scenarios(project, server, 6)
    answered_before_kill = 3
    release = threading.Event()
    started = {"n": 0}
    lock = threading.Lock()

    def answer(received: Received) -> Reply:
        with lock:
            started["n"] += 1
            number = started["n"]
        if number > answered_before_kill:
            return Reply(hold=release)  # in flight when the process dies: never answered
        return Reply(body=default_answer(received).body, delay_s=0.05)

    server.answer = answer
    process = cli(project, "run", "--refresh-cache", "--concurrency", "2")
    try:
        wait_for(lambda: server.answered == answered_before_kill and len(server.requests) >= 4)
        time.sleep(0.5)  # the answered calls are journaled and materialised meanwhile
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == -signal.SIGKILL
    held = len(server.requests) - answered_before_kill
    assert verified_entries(project) == answered_before_kill and temporaries(project) == []

    server.answer = default_answer
    rerun = cli(project, "run", "--refresh-cache", "--resume", "--concurrency", "2")
    out, err = rerun.communicate(timeout=30)
    assert rerun.returncode == 0, out + err
    assert "paid 3 (3 answered), journal 3, cache 0" in err
    assert server.answered == 6  # every scenario paid for exactly once
    assert len(server.requests) == 6 + held  # plus the calls cut off in flight, never answered
    assert verified_entries(project) == 6
    assert project.run("run").code == 0


CRASH_WHILE_MATERIALISING = textwrap.dedent("""
    import os, signal, sys
    import harness.documents.atomic as atomic
    original = atomic._replace_folder
    count = {"n": 0}
    def crash(temp, final, hook):
        count["n"] += 1
        if count["n"] == 2:  # the answer is journaled, its entry folder is only a temporary
            os.kill(os.getpid(), signal.SIGKILL)
        original(temp, final, hook)
    atomic._replace_folder = crash
    from harness.frontends.cli import main
    sys.exit(main(["--project", sys.argv[1], "run", "--refresh-cache", "--concurrency", "1"]))
""")


def test_sigkill_between_journal_and_entry_leaves_no_torn_entry_and_no_second_payment(
    project: Project, server: ProviderServer
) -> None:
    scenarios(project, server, 3)
    process = cli(project, script=CRASH_WHILE_MATERIALISING)
    process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert len(server.requests) == 2
    assert verified_entries(project) == 1 and len(temporaries(project)) == 1
    outcome = project.run("run", "--refresh-cache", "--resume")
    assert outcome.code == 0, outcome.out
    assert "paid 1 (1 answered), journal 2, cache 0" in outcome.err
    assert len(server.requests) == 3
    assert verified_entries(project) == 3 and temporaries(project) == []
    assert project.run("run").code == 0


def test_after_failed_calls_resume_pays_only_for_those(project: Project, server: ProviderServer) -> None:
    scenarios(project, server, 3)
    server.answer = lambda r: (Reply(500, "down") if "s1" in json.dumps(r.body) else default_answer(r))
    first = project.run("run", "--refresh-cache")
    assert first.code == 1 and "[error] helper/acme/s1" in first.out
    server.answer = default_answer
    second = project.run("run", "--refresh-cache", "--resume")
    assert second.code == 0, second.out
    assert "paid 1 (1 answered), journal 2, cache 0" in second.err
    assert len(server.requests) == 4  # s0, s1 (failed), s2, then s1 again: nothing paid twice
    third = project.run("run", "--refresh-cache")  # the complete run forgot: a new refresh pays
    assert "paid 3 (3 answered), journal 0" in third.err


def test_refresh_means_fresh_an_earlier_runs_journal_answers_are_not_reused_without_resume(
    project: Project, server: ProviderServer
) -> None:
    """An earlier run that ended with errors left answers; a plain refresh pays again for all."""
    scenarios(project, server, 3)
    server.answer = lambda r: (Reply(500, "down") if "s1" in json.dumps(r.body) else default_answer(r))
    assert project.run("run", "--refresh-cache").code == 1
    assert journal_answers(project) == 2  # s0 and s2 stay journaled: the run was not complete
    server.answer = lambda r: Reply(body=openai_answer({"answer": "yes", "fresh": True}))
    second = project.run("run", "--refresh-cache")
    assert second.code == 0, second.out
    assert "paid 3 (3 answered), journal 0, cache 0" in second.err
    assert "2 answer(s) journaled by an earlier run are not reused" in second.err
    assert len(server.requests) == 3 + 3
    for name in ("s0", "s1", "s2"):  # every entry holds the fresh answer, not the journaled one
        (payload,) = project.cache.glob(f"cache/helper/acme/{name}/0/*/contents.data")
        assert json.loads(json.loads(payload.read_text())["content"])["fresh"] is True
    assert journal_answers(project) == 0


def test_record_missing_follows_the_same_rule(project: Project, server: ProviderServer) -> None:
    """--record-missing reuses an earlier run's journal answer only with --resume, like a refresh."""
    scenarios(project, server, 2)
    server.answer = lambda r: (Reply(500, "down") if "s1" in json.dumps(r.body) else default_answer(r))
    assert project.run("run", "--refresh-cache").code == 1
    for entry in project.cache.glob("cache/helper/acme/s0/*"):
        shutil.rmtree(entry)  # s0 misses now, and its answer is still journaled
    server.answer = default_answer
    plain = project.run("run", "--record-missing")
    assert plain.code == 0 and "paid 2 (2 answered), journal 0, cache 0" in plain.err
    server.answer = lambda r: (Reply(500, "down") if "s1" in json.dumps(r.body) else default_answer(r))
    assert project.run("run", "--refresh-cache").code == 1
    for entry in project.cache.glob("cache/helper/acme/s0/*"):
        shutil.rmtree(entry)
    server.answer = default_answer
    before = len(server.requests)
    resumed = project.run("run", "--record-missing", "--resume")
    assert resumed.code == 0 and "paid 0 (0 answered), journal 1, cache 1" in resumed.err
    assert len(server.requests) == before  # s0 from the journal, s1 kept its earlier entry


def journal_answers(project: Project) -> int:
    journal = Journal(journal_dir(project.results))
    try:
        return len(journal)
    finally:
        journal.close()


def test_a_live_claim_makes_another_process_wait_then_reuse_the_answer(tmp_path: Path) -> None:
    first, second = Journal(tmp_path / "j", run="r1"), Journal(tmp_path / "j", run="r1")
    call = ChatCall("a/b/c", 0, "openai", "m", {"messages": []})
    order: list[str] = []

    def other() -> None:
        with second.claim("k"):
            order.append("second claimed")
            assert second.get("k") == ChatResponse("paid once")

    with first.claim("k"):
        thread = threading.Thread(target=other)
        thread.start()
        time.sleep(0.2)
        order.append("first pays")
        first.put("k", call, ChatResponse("paid once"))
    thread.join(5)
    assert order == ["first pays", "second claimed"]
    first.forget(["k"])
    assert first.get("k") is None and len(first) == 0
    first.close()
    second.close()


def test_the_journal_lives_outside_the_committed_cache(project: Project, server: ProviderServer) -> None:
    scenarios(project, server, 1)
    assert project.run("run", "--refresh-cache").code == 0
    folder = journal_dir(project.results)
    assert folder.is_dir() and project.results in folder.parents
    assert not any(p.suffix in (".db", ".db-wal") for p in project.cache.rglob("*"))
    gitignore = (REPO_ROOT / ".gitignore").read_text()
    assert "eval-results/" in gitignore
