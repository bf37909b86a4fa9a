"""A journal lookup reads the database only when it may hold the row, and never misses a new one.

The lookup of a key skips the database while ``PRAGMA data_version`` says no
other connection committed since the journal read its row keys
(:mod:`harness.refresh.rownames`). Each test first looks a key up (the keys are
read), then has the answer committed into the database by another process or
another journal, and checks that the next lookup finds it there.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

from conftest import REPO_ROOT
from harness.core.entities import ChatCall, ChatResponse
from harness.refresh.journal import Journal
from harness.refresh.rownames import RowNames

CALL = ChatCall("a/b/c", 0, "openai", "m", {"messages": []})

FOLDS_AND_ENDS = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from harness.core.entities import ChatCall, ChatResponse
    from harness.refresh.journal import Journal
    journal = Journal(Path(sys.argv[2]), run="shared-run")
    journal.put("k", ChatCall("a/b/c", 0, "openai", "m", {"messages": []}), ChatResponse("paid by the other"))
    journal.close()  # folds its log into the database and deletes the log
""")


def answer_rows(folder: Path) -> list[bytes]:
    database = sqlite3.connect(folder / "cache.db")
    try:
        return [zlib.decompress(key) for (key,) in database.execute("SELECT key FROM Cache")
                if zlib.decompress(key).startswith(b'"answer:')]
    finally:
        database.close()


def test_an_answer_another_process_folded_after_a_lookup_is_found_in_the_database(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    journal = Journal(folder, run="shared-run")
    assert journal.get("k") is None and journal.get("other") is None  # the row keys are read
    subprocess.run([sys.executable, "-c", FOLDS_AND_ENDS, str(REPO_ROOT), str(folder)],
                   check=True, timeout=60)
    assert answer_rows(folder) == [b'"answer:k"']
    assert not list((folder / "pending").glob("*.jsonl"))  # only the database holds it now
    assert journal.get("k") == ChatResponse("paid by the other")
    assert journal.get("other") is None
    journal.close()


def test_an_answer_another_journal_of_this_process_folded_is_found(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    first, second = Journal(folder, run="r"), Journal(folder, run="r")
    assert first.get("k") is None
    second.put("k", CALL, ChatResponse("paid by the second"))
    second.close()  # committed through diskcache's connection: another connection to RowNames
    assert first.get("k") == ChatResponse("paid by the second")
    first.forget(["k"])
    assert first.get("k") is None and answer_rows(folder) == []
    first.close()


def test_row_names_see_a_commit_of_any_other_connection(tmp_path: Path) -> None:
    db = tmp_path / "cache.db"
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("PRAGMA journal_mode=wal")
    writer.execute("CREATE TABLE Cache (key BLOB, raw INTEGER)")
    names = RowNames(db)
    try:
        assert not names.may_hold(b"a") and not names.may_hold(b"a")
        writer.execute("INSERT INTO Cache VALUES (?, 1)", (b"a",))
        assert names.may_hold(b"a") and not names.may_hold(b"b")
        writer.execute("DELETE FROM Cache")
        assert not names.may_hold(b"a")
    finally:
        names.close()
        writer.close()


def test_a_table_laid_out_otherwise_makes_every_key_possible(tmp_path: Path) -> None:
    """diskcache's table is not its public API: a layout the query does not fit must not crash
    a lookup, nor skip a row; every key may then be held (each lookup reads through diskcache)."""
    from harness.refresh.rownames import RowNames

    db = tmp_path / "other.db"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE Cache (name BLOB)")  # no key, no raw column
    rows = RowNames(db)
    try:
        assert rows.may_hold(b"answer:anything")
        assert rows.may_hold(b"answer:anything-else")
    finally:
        rows.close()
