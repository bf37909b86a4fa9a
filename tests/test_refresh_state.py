"""The refresh state on disk: JSON only (never unpickled), named errors, Ctrl-C with one line.

- a journal or rate-limit folder holding a pickled row (an older harness, or a
  planted payload) is refused by name before anything is decoded;
- a corrupt journal database is a named error naming its path and the fix;
- Ctrl-C (a real SIGINT to a real subprocess) during a refresh prints one line
  saying what was kept and what ``--resume`` will do, exits 130, and leaves no
  half-written entry.
"""

from __future__ import annotations

import os
import pickle
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import diskcache  # type: ignore[import-untyped]
import pytest
from provider_server import TEST_KEY, ProviderServer, Received, Reply, default_answer, point_agent
from test_refresh_journal import temporaries, verified_entries, wait_for

from conftest import REPO_ROOT, Project
from harness.refresh import journal_dir
from harness.refresh.journal import Journal
from harness.refresh.jsondisk import RefreshStateError
from harness.refresh.ratelimit import RateLimiter

MARKER = "PICKLE-RAN"


class _Planted:
    """Unpickling this runs code (what diskcache's advisory warns about)."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, (MARKER,))


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)


def plant_pickle(folder: Path) -> None:
    """What a pickling diskcache (or an attacker with write access) leaves in the folder."""
    cache = diskcache.Cache(str(folder))
    cache.set("answer:" + "0" * 64, _Planted())
    cache.close()
    assert diskcache.core.MODE_PICKLE in {row[0] for row in sqlite3.connect(folder / "cache.db")
                                          .execute("SELECT mode FROM Cache")}


def test_values_are_stored_as_json_never_as_pickles(tmp_path: Path) -> None:
    from harness.core.entities import ChatCall, ChatResponse

    journal = Journal(tmp_path / "j", run="r1")
    journal.put("k" * 64, ChatCall("a/b/c", 0, "openai", "m", {}), ChatResponse("hello"))
    journal.add_batch({"id": "batch_1", "provider": "openai", "requests": {}})
    journal.close()
    limiter = RateLimiter(tmp_path / "r", "openai http://x", 600, clock=lambda: 100.0,
                          sleep=lambda s: None)
    limiter.acquire()
    limiter.close()
    for folder in (tmp_path / "j", tmp_path / "r"):
        rows = sqlite3.connect(folder / "cache.db").execute("SELECT raw, mode FROM Cache").fetchall()
        assert rows and all(raw == 1 and mode == diskcache.core.MODE_RAW for raw, mode in rows)


@pytest.mark.parametrize("kind", ["journal", "ratelimit"])
def test_a_pickled_row_is_refused_by_name_and_never_unpickled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    folder = tmp_path / kind
    plant_pickle(folder)
    with pytest.raises(RefreshStateError) as info:
        if kind == "journal":
            Journal(folder)
        else:
            RateLimiter(folder, "x", 60)
    message = str(info.value)
    assert message.startswith("eval-refresh-state-unreadable: ")
    assert str(folder) in message and "pickled" in message and f"delete the folder {folder}" in message
    assert MARKER not in capsys.readouterr().out


def test_an_old_pickled_journal_stops_a_refresh_before_any_call(
    project: Project, server: ProviderServer, capsys: pytest.CaptureFixture[str]
) -> None:
    point_agent(project, server)
    project.scenario("helper/acme/s0")
    plant_pickle(journal_dir(project.results))
    outcome = project.run("run", "--refresh-cache")
    assert outcome.code == 2 and server.requests == []
    assert "eval-refresh-state-unreadable" in outcome.err and "Traceback" not in outcome.err
    assert str(journal_dir(project.results)) in outcome.err and MARKER not in outcome.out


def test_a_row_planted_after_opening_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.core.entities import ChatCall, ChatResponse

    writer = Journal(tmp_path / "j", run="r1")
    writer.put("1" * 64, ChatCall("a/b/c", 0, "openai", "m", {}), ChatResponse("paid"))
    writer.close()  # its pending log folded into the database: the row to tamper with
    journal = Journal(tmp_path / "j", run="r1")
    database = sqlite3.connect(tmp_path / "j" / "cache.db")
    with database:  # the same key, its value swapped for a pickle that runs code when loaded
        database.execute("UPDATE Cache SET mode = ?, value = ? WHERE mode = ? AND value IS NOT NULL",
                         (diskcache.core.MODE_PICKLE, pickle.dumps(_Planted()), diskcache.core.MODE_RAW))
    database.close()
    with pytest.raises(RefreshStateError, match="pickled value"):
        journal.lookup("1" * 64)
    other = diskcache.Cache(str(tmp_path / "j"))
    other.set("answer:planted", _Planted())  # a key in diskcache's own (non-JSON) form
    other.close()
    with pytest.raises(RefreshStateError, match="not JSON|pickled"):
        len(journal)
    journal.close()
    assert MARKER not in capsys.readouterr().out


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_corrupt_journal_database_is_a_named_error_naming_its_path(
    project: Project, server: ProviderServer, damage: str
) -> None:
    point_agent(project, server)
    project.scenario("helper/acme/s0")
    assert project.run("run", "--refresh-cache").code == 0
    database = journal_dir(project.results) / "cache.db"
    if damage == "garbage":
        database.write_bytes(b"this is not a database" * 100)
    else:
        data = database.read_bytes()
        database.write_bytes(data[:100] + b"\0" * (len(data) - 100))
    outcome = cli_run(project, "--refresh-cache")
    assert outcome.returncode == 2, outcome.stdout + outcome.stderr
    assert "Traceback" not in outcome.stderr
    assert "eval-refresh-state-unreadable" in outcome.stderr
    assert str(journal_dir(project.results)) in outcome.stderr and "delete the folder" in outcome.stderr
    assert len(server.requests) == 1  # nothing was paid for by the refused run


def cli_run(project: Project, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO_ROOT)}
    return subprocess.run([sys.executable, "-m", "harness", "--project", str(project.root), "run",
                           *args], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("concurrency", ["1", "3"])
def test_ctrl_c_during_a_refresh_prints_one_line_exits_130_and_resume_pays_only_the_rest(
    project: Project, server: ProviderServer, concurrency: str
) -> None:
    point_agent(project, server)
    for index in range(5):
        project.scenario(f"helper/acme/s{index}")
    release = threading.Event()
    answered_first = 2
    counter = {"n": 0}
    lock = threading.Lock()

    def answer(received: Received) -> Reply:
        with lock:
            counter["n"] += 1
            number = counter["n"]
        if number > answered_first:
            return Reply(hold=release)  # in flight at the interrupt: never answered
        return Reply(body=default_answer(received).body)

    server.answer = answer
    env = {**os.environ, "OPENAI_API_KEY": TEST_KEY, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "harness", "--project", str(project.root), "run", "--refresh-cache",
         "--concurrency", concurrency], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        wait_for(lambda: server.answered == answered_first and len(server.requests) > answered_first)
        time.sleep(0.3)  # the answered calls are journaled and written meanwhile
        process.send_signal(signal.SIGINT)
        if concurrency != "1":
            time.sleep(0.3)
            release.set()  # the calls in flight on other threads end (answered without a body)
        out, err = process.communicate(timeout=60)
    finally:
        release.set()
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, out + err
    assert "Traceback" not in err + out
    lines = [line for line in err.splitlines()  # the plan and progress lines aside
             if line.strip() and not line.startswith(("recording", "plan:", "  "))]
    assert len(lines) == 1 and lines[0].startswith("eval-interrupted: "), err
    assert f"{answered_first} cache entries written and kept" in lines[0]
    assert "--resume" in lines[0] and "without paying again" in lines[0]
    assert verified_entries(project) == answered_first and temporaries(project) == []

    server.answer = default_answer
    before = len(server.requests)
    resumed = project.run("run", "--refresh-cache", "--resume")
    assert resumed.code == 0, resumed.out + resumed.err
    assert len(server.requests) - before == 5 - answered_first  # the first two are not paid again
    assert verified_entries(project) == 5
