"""Journal claims against real processes and real files: byte-range locks, and claim files.

A claim keeps two processes (or two threads) from paying for one call. Where
``fcntl`` exists it is a lock of one byte of ``journal/claims.lock``; claim
files stay for Windows and for older harness processes, and are honoured by
the lock path too. Every test of a claim file runs in both modes.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO_ROOT
from harness.core.errors import ProviderError
from harness.refresh.claims import LOCK_FILE
from harness.refresh.journal import CLAIM_TTL_S, Journal

MODES = pytest.mark.parametrize("locks", [True, False], ids=["locks", "files"])
needs_fcntl = pytest.mark.skipif(sys.platform == "win32", reason="byte-range locks need fcntl")

HOLDER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from harness.refresh.journal import Journal
    journal = Journal(Path(sys.argv[2]), claim_locks=sys.argv[3] == "locks")
    with journal.claim("k"):
        print("held", flush=True)
        sys.stdin.read()  # until the test closes stdin (or kills this process)
    journal.close()
""")


@contextmanager
def holder_process(folder: Path, mode: str) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the claim of ``k`` on the journal at ``folder`` until it ends."""
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(REPO_ROOT), str(folder), mode],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "held"
        yield process
    finally:
        if process.poll() is None:
            assert process.stdin is not None
            process.stdin.close()
            process.wait(timeout=20)


@MODES
def test_a_claim_file_left_by_a_dead_process_is_taken_over(tmp_path: Path, locks: bool) -> None:
    journal = Journal(tmp_path / "journal", claim_locks=locks)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = f"{socket.gethostname()} {dead.stdout.strip()} abcd"
    claim = Path(journal._claims.path("k"))
    claim.parent.mkdir(parents=True, exist_ok=True)
    claim.write_text(stale, encoding="utf-8")
    started = time.monotonic()
    with journal.claim("k"):
        if locks:  # the dead holder's file is removed, and a lock leaves none
            assert not claim.exists()
        else:
            assert claim.read_text(encoding="utf-8") not in ("", stale)
    assert time.monotonic() - started < 1.0
    assert not claim.exists() and list(journal._claims.held()) == []
    journal.close()


@MODES
def test_a_claim_file_of_another_host_waits_until_it_lapses(tmp_path: Path, locks: bool) -> None:
    journal = Journal(tmp_path / "journal", claim_locks=locks)
    claim = Path(journal._claims.path("k"))
    claim.parent.mkdir(parents=True, exist_ok=True)
    claim.write_text("another-host 1 abcd", encoding="utf-8")
    with pytest.raises(ProviderError, match="another process has been recording"), \
            journal.claim("k", wait_s=0.1):
        pass
    assert claim.read_text(encoding="utf-8") == "another-host 1 abcd"  # never removed while live
    lapsed = time.time() - CLAIM_TTL_S - 10
    os.utime(claim, (lapsed, lapsed))
    with journal.claim("k", wait_s=0.1):
        if locks:
            assert not claim.exists()
        else:
            assert claim.read_text(encoding="utf-8").startswith(socket.gethostname())
    assert not claim.exists()
    journal.close()


@MODES
def test_a_released_claim_that_was_taken_over_is_left_to_its_new_holder(tmp_path: Path, locks: bool) -> None:
    journal = Journal(tmp_path / "journal", claim_locks=locks)
    claim = Path(journal._claims.path("k"))
    with journal.claim("k"):
        claim.write_text("another-host 1 efgh", encoding="utf-8")  # as a takeover or an old process leaves it
    assert claim.read_text(encoding="utf-8") == "another-host 1 efgh"
    journal.close()


@MODES
def test_threads_taking_their_first_claims_at_once_all_get_them(tmp_path: Path, locks: bool) -> None:
    journal = Journal(tmp_path / "journal", claim_locks=locks)
    shutil.rmtree(journal._claims.directory)  # as if deleted under a running journal
    taken: list[str] = []
    start = threading.Barrier(16)

    def take(index: int) -> None:
        start.wait()
        with journal.claim(f"k{index}", wait_s=2):
            taken.append(f"k{index}")

    threads = [threading.Thread(target=take, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(taken) == sorted(f"k{i}" for i in range(16))
    assert list(journal._claims.held()) == []
    journal.close()


@MODES
def test_a_claim_another_live_process_holds_makes_this_one_wait(tmp_path: Path, locks: bool) -> None:
    folder = tmp_path / "journal"
    journal = Journal(folder, claim_locks=locks)
    with holder_process(folder, "locks" if locks else "files"):
        with pytest.raises(ProviderError, match="another process has been recording"), \
                journal.claim("k", wait_s=0.2):
            pass
        with journal.claim("other", wait_s=0.2):  # another key is free
            pass
    with journal.claim("k", wait_s=2):  # the holder released it as it ended
        pass
    journal.close()


@needs_fcntl
def test_a_sigkilled_holders_lock_is_free_at_once_and_leaves_no_file(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    journal = Journal(folder, claim_locks=True)
    with holder_process(folder, "locks") as process:
        assert list(journal._claims.held()) == []  # a lock is no claim file
        assert (folder / LOCK_FILE).is_file()
        with pytest.raises(ProviderError), journal.claim("k", wait_s=0.1):
            pass
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=20)
    started = time.monotonic()
    with journal.claim("k", wait_s=2):  # the kernel dropped the dead holder's lock: no takeover
        pass
    assert time.monotonic() - started < 0.5
    journal.close()


@needs_fcntl
def test_two_journals_of_one_process_exclude_each_other_and_closing_one_keeps_the_others_claims(
        tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    first, second = Journal(folder, claim_locks=True), Journal(folder, claim_locks=True)
    with second.claim("k"):
        with pytest.raises(ProviderError), first.claim("k", wait_s=0.1):
            pass  # POSIX locks are the process's: the shared table keeps the two apart
        first.close()  # closing a descriptor of the file would drop every lock of the process
        probe = subprocess.run(
            [sys.executable, "-c", textwrap.dedent("""
                import sys
                sys.path.insert(0, sys.argv[1])
                from pathlib import Path
                from harness.core.errors import ProviderError
                from harness.refresh.journal import Journal
                journal = Journal(Path(sys.argv[2]), claim_locks=True)
                try:
                    with journal.claim("k", wait_s=0.1):
                        print("taken")
                except ProviderError:
                    print("waited")
                journal.close()
            """), str(REPO_ROOT), str(folder)], capture_output=True, text=True, check=True, timeout=60)
        assert probe.stdout.strip() == "waited"
    with first_again(folder) as third, third.claim("k", wait_s=0.1):
        pass
    second.close()


@contextmanager
def first_again(folder: Path) -> Iterator[Journal]:
    journal = Journal(folder, claim_locks=True)
    try:
        yield journal
    finally:
        journal.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_takes_a_claim_its_parent_held_once_the_parent_released_it(tmp_path: Path) -> None:
    folder = tmp_path / "journal"
    journal = Journal(folder, claim_locks=True)
    read_end, write_end = os.pipe()
    with journal.claim("k"):
        child = os.fork()
        if child == 0:  # the child: its parent's lock is not its own, and the kernel still has it
            code = 1
            try:
                os.close(write_end)
                os.read(read_end, 1)  # the parent released the claim
                with journal.claim("k", wait_s=2):
                    code = 0
            finally:
                os._exit(code)
    os.close(read_end)
    os.write(write_end, b"x")
    os.close(write_end)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    journal.close()
