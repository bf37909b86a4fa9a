"""Atomic writes, proven by killing the writer at EVERY step (not by a timed kill that rarely lands).

The seam is :func:`harness.documents.atomic.write_folder`'s ``on_step`` callback, exposed
as ``CacheStore(on_write_step=...)``: a writer process calls ``os._exit`` right
after the chosen step, exactly what a SIGKILL there would leave. Whatever the
step, the entry's final folder holds the old entry, the new one, or nothing;
never a torn entry. When a replacement dies between its two renames, the old
entry is parked complete under ``.tmp-old-`` (prune restores it: tests/test_prune_parked.py).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from harness.cache.store import CacheStore, EntryAbsent
from harness.cache.verify import verify_entry
from harness.core.entities import ChatCall, ChatResponse
from harness.documents.atomic import STEPS, write_file
from harness.requests.key import compute_key

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
CALL = ChatCall("a/t/s", 0, "p", "m", {"messages": [{"role": "user", "content": "q"}]})
KEY = compute_key(CALL)
WRITER = textwrap.dedent("""
    import os, sys
    from datetime import UTC, datetime
    from pathlib import Path
    from harness.cache.store import CacheStore
    from harness.core.entities import ChatCall, ChatResponse
    from harness.requests.key import compute_key

    root, step, nth = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    seen = {"n": 0}

    def die(name, path):
        if name == step:
            seen["n"] += 1
            if seen["n"] == nth:
                os._exit(9)  # no cleanup, no finally: what a SIGKILL here leaves

    store = CacheStore(root, ttl_days=730, on_write_step=die)
    call = ChatCall("a/t/s", 0, "p", "m", {"messages": [{"role": "user", "content": "q"}]})
    store.write(call, compute_key(call), ChatResponse("new " * 1000), datetime(2026, 11, 30, tzinfo=UTC))
""")
#: Every (step, occurrence) a write of one entry goes through (two files are written).
POINTS = [("temp-created", 1), ("file-written", 1), ("file-written", 2), ("moved-aside", 1),
          ("renamed", 1), ("old-removed", 1)]


def test_the_points_cover_every_documented_step() -> None:
    assert {step for step, _ in POINTS} == set(STEPS)


def _kill_writer_at(root: Path, step: str, nth: int) -> int:
    return subprocess.run([sys.executable, "-c", WRITER, str(root), step, str(nth)],
                          capture_output=True, text=True, timeout=60).returncode


def _final_content(store: CacheStore) -> str | None:
    """The verified content under the final name (None when absent); a torn entry fails here."""
    try:
        return store.read(CALL, KEY, NOW).response.content
    except EntryAbsent:
        folder = store.path_for(CALL, KEY)
        assert not folder.exists(), f"a torn folder under the final name: {list(folder.iterdir())}"
        return None


@pytest.mark.parametrize(("step", "nth"), POINTS)
def test_a_new_entry_killed_at_any_step_is_complete_or_absent(tmp_path: Path, step: str, nth: int) -> None:
    code = _kill_writer_at(tmp_path, step, nth)
    store = CacheStore(tmp_path, ttl_days=730)
    content = _final_content(store)  # raises CacheCorrupt on a torn entry
    if code == 9 and step in ("temp-created", "file-written"):
        assert content is None
    else:
        assert content == "new " * 1000


@pytest.mark.parametrize(("step", "nth"), POINTS)
def test_a_replaced_entry_killed_at_any_step_is_never_lost_nor_torn(tmp_path: Path, step: str,
                                                                    nth: int) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    store.write(CALL, KEY, ChatResponse("old"), NOW)
    code = _kill_writer_at(tmp_path, step, nth)
    assert code in (0, 9)
    content = _final_content(store)
    if content is None:  # only between the two renames: the old entry is parked, complete
        assert (code, step) == (9, "moved-aside")
        parked = [p for p in store.path_for(CALL, KEY).parent.iterdir() if p.name.startswith(".tmp-old-")]
        assert len(parked) == 1
        found = verify_entry(str(parked[0]), "a/t/s", 0, KEY[:16])
        assert not found.problems and found.response is not None and found.response.content == "old"
    elif code == 9 and step in ("temp-created", "file-written"):
        assert content == "old"
    else:
        assert content == "new " * 1000


def test_a_file_write_failing_at_any_step_leaves_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "stamp.json"
    target.write_bytes(b"old")
    for failing in ("temp-created", "file-written"):
        def fail(step: str, path: Path, failing: str = failing) -> None:
            if step == failing:
                raise OSError("disk full")
        with pytest.raises(OSError, match="disk full"):
            write_file(target, b"new", on_step=fail)
        assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["stamp.json"]
    write_file(target, b"new")
    assert target.read_bytes() == b"new"


def test_the_final_folder_is_the_temporary_folder_renamed_not_a_copy(tmp_path: Path) -> None:
    """A copy into place has a window a kill can tear; a rename has none. The final folder must
    be the very folder (same inode) the write built under its temporary name."""
    built: dict[str, int] = {}

    def note(step: str, path: Path) -> None:
        if step == "temp-created":
            built["inode"] = path.stat().st_ino

    store = CacheStore(tmp_path, ttl_days=730, on_write_step=note)
    for answer in ("first", "second"):  # a new entry, then a replacement
        final = store.write(CALL, KEY, ChatResponse(answer), NOW)
        assert final.stat().st_ino == built["inode"]
        assert [p.name for p in final.parent.iterdir()] == [KEY[:16]]  # nothing left beside it
        assert store.read(CALL, KEY, NOW).response.content == answer
