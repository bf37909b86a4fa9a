"""The journal's pending log: an answer is journaled by one appended line, and no kill loses it.

- a process SIGKILLed after ``put`` returned (its answers only in its log, no
  database row) loses none: the next journal finds them, folds them in and
  deletes the dead log;
- an answer another live journal holds unfolded is found by a lookup;
- a torn last line is an answer whose ``put`` never returned (ignored); any other
  line that is not a journaled answer is refused by name;
- ``forget`` writes no row for the answers it forgets and folds the others;
  a log past its size bound is folded during the run; an answer older than the
  journal's TTL is not revived by a fold.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from harness.core.entities import ChatCall, ChatResponse
from harness.refresh import pending
from harness.refresh.journal import JOURNAL_TTL_S, Journal
from harness.refresh.jsondisk import RefreshStateError

CALL = ChatCall("a/b/c", 0, "openai", "m", {"messages": []})


def answer_rows(folder: Path) -> int:
    """Answer rows in the journal's database (the pending logs not counted)."""
    database = sqlite3.connect(folder / "cache.db")
    try:
        return sum(1 for (key,) in database.execute("SELECT key FROM Cache")
                   if zlib.decompress(key).startswith(b'"answer:'))
    finally:
        database.close()


def logs(folder: Path) -> list[Path]:
    return sorted((folder / "pending").glob("*.jsonl")) if (folder / "pending").is_dir() else []


KILLED_AFTER_PUT = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from harness.core.entities import ChatCall, ChatResponse
    from harness.refresh.journal import Journal
    journal = Journal(Path(sys.argv[1]), run="killed-run")
    call = ChatCall("a/b/c", 0, "openai", "m", {"messages": []})
    for index in range(5):
        journal.put(f"k{index}", call, ChatResponse(f"paid {index}"))
    os.kill(os.getpid(), signal.SIGKILL)  # no close, no fold: the answers are only in the log
""")


def test_a_process_killed_after_put_loses_no_answer(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    done = subprocess.run([sys.executable, "-c", KILLED_AFTER_PUT, str(folder)],
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert answer_rows(folder) == 0 and len(logs(folder)) == 1  # nothing reached the database
    resumed = Journal(folder, run="next-run", resume=True)
    try:
        assert logs(folder) == []  # the dead process's log was folded in and deleted
        assert answer_rows(folder) == 5 and len(resumed) == 5
        for index in range(5):
            found = resumed.lookup(f"k{index}")
            assert found is not None and found.response == ChatResponse(f"paid {index}")
            assert not found.this_run
    finally:
        resumed.close()


def test_an_unfolded_answer_of_another_live_journal_is_found(tmp_path: Path) -> None:
    first, second = Journal(tmp_path / "j", run="r1"), Journal(tmp_path / "j", run="r1")
    try:
        first.put("k", CALL, ChatResponse("paid once"))
        assert answer_rows(tmp_path / "j") == 0  # only in first's log
        assert second.get("k") == ChatResponse("paid once") and len(second) == 1
        first.close()  # folded into the database, the log deleted
        assert answer_rows(tmp_path / "j") == 1 and logs(tmp_path / "j") == []
        assert second.get("k") == ChatResponse("paid once")
    finally:
        second.close()


def dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def plant_log(folder: Path, lines: list[bytes]) -> Path:
    """A pending log left by a process of this host that is gone."""
    path = folder / "pending" / f"{pending.host_name()}-{dead_pid()}-abcd1234.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(lines))
    return path


def line(name: str, text: str, at: float | None = None) -> bytes:
    value = {"run": "old", "obtained": "paid", "response": {"content": text, "tool_calls": [],
                                                            "finish_reason": "stop", "model": "m",
                                                            "usage": {"input_tokens": 1,
                                                                      "output_tokens": 1}}}
    record = {"name": name, "at": time.time() if at is None else at, "value": value}
    return (json.dumps(record) + "\n").encode()


def test_a_torn_last_line_is_ignored(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    Journal(folder).close()
    plant_log(folder, [line("answer:k1", "kept"), line("answer:k2", "torn")[:-20]])
    journal = Journal(folder, resume=True)
    try:
        kept = journal.get("k1")
        assert kept is not None and kept.content == "kept"
        assert journal.get("k2") is None and len(journal) == 1 and logs(folder) == []
    finally:
        journal.close()


def test_a_line_that_is_no_journaled_answer_is_refused_by_name(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    Journal(folder).close()
    planted = plant_log(folder, [b'{"name": "answer:k1", "value": "not an object"}\n',
                                 line("answer:k2", "fine")])
    with pytest.raises(RefreshStateError) as info:
        Journal(folder)
    message = str(info.value)
    assert str(planted) in message and "line 1" in message and f"delete the folder {folder}" in message
    assert planted.exists()  # refused, never half folded or deleted


def test_forget_writes_no_row_for_what_it_forgets_and_folds_the_rest(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    journal = Journal(folder, run="r1")
    try:
        for key in ("a", "b", "c"):
            journal.put(key, CALL, ChatResponse(f"paid {key}"))
        journal.forget(["a", "c"])
        assert answer_rows(folder) == 1 and journal.get("b") == ChatResponse("paid b")
        assert journal.get("a") is None and journal.get("c") is None
        (log,) = logs(folder)
        assert log.stat().st_size == 0  # folded: emptied only after the database took "b"
        journal.forget(["b"])
        assert answer_rows(folder) == 0 and len(journal) == 0
    finally:
        journal.close()
    assert logs(folder) == []


def test_a_log_past_its_size_bound_is_folded_during_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pending, "FOLD_BYTES", 1500)
    folder = tmp_path / "journal"
    journal = Journal(folder, run="r1")
    try:
        for index in range(10):
            journal.put(f"k{index}", CALL, ChatResponse("x" * 100))
        (log,) = logs(folder)
        assert 0 < answer_rows(folder) < 10 and log.stat().st_size < 1500
        assert len(journal) == 10 and all(journal.get(f"k{i}") is not None for i in range(10))
    finally:
        journal.close()
    assert answer_rows(folder) == 10


def test_a_fold_does_not_revive_an_answer_older_than_the_ttl(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    Journal(folder).close()
    plant_log(folder, [line("answer:old", "expired", at=time.time() - JOURNAL_TTL_S - 60),
                       line("answer:new", "fresh")])
    journal = Journal(folder, resume=True)
    try:
        assert journal.get("old") is None and journal.get("new") is not None
        assert answer_rows(folder) == 1
    finally:
        journal.close()


def test_a_log_of_another_host_is_read_but_left_until_it_lapses(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    Journal(folder).close()
    other = folder / "pending" / "another_host-1-abcd1234.jsonl"
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_bytes(line("answer:k", "theirs"))
    journal = Journal(folder, resume=True)
    try:
        assert other.exists() and answer_rows(folder) == 0  # its holder may be alive
        assert journal.get("k") is not None
    finally:
        journal.close()
    lapsed = time.time() - 2 * 3600
    os.utime(other, (lapsed, lapsed))
    Journal(folder).close()
    assert not other.exists() and answer_rows(folder) == 1
