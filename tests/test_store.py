"""The entry tree: verified reads, forced collisions, expiry, corruption, atomic writes."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from harness.cache.store import CacheStore, EntryAbsent
from harness.core.entities import ChatCall, ChatResponse, ToolCall, Usage
from harness.core.errors import CacheCorrupt, CacheExpired
from harness.requests.key import compute_key

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _call(scenario: str = "agent/tenant/name", text: str = "hello") -> ChatCall:
    return ChatCall(scenario, 0, "openai", "m1",
                    {"messages": [{"role": "user", "content": text}], "options": {}})


RESPONSE = ChatResponse("answer", (ToolCall("file_draft", {"body": "x"}),), "tool_calls",
                        Usage(12, 3), "m1")


def test_write_then_read_round_trips_and_records_the_request(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call()
    key = compute_key(call)
    folder = store.write(call, key, RESPONSE, NOW)
    assert folder == tmp_path / "cache/agent/tenant/name/0" / key[:16]
    assert sorted(p.name for p in folder.iterdir()) == ["contents.data", "entry.json"]
    meta = json.loads((folder / "entry.json").read_text())
    assert meta["key"] == key and meta["request"] == call.request
    assert meta["created"] == "2026-11-30T12:00:00Z" and meta["expires"] == "2028-11-29T12:00:00Z"
    assert (meta["provider"], meta["model"], meta["format_version"]) == ("openai", "m1", 1)
    entry = store.read(call, key, NOW)
    assert entry.response == RESPONSE


def _forge_key(key: str, position: int) -> str:
    """``key`` with the hex digit at ``position`` changed: a true same-prefix key when position >= 16."""
    return key[:position] + ("0" if key[position] != "0" else "1") + key[position + 1:]


@pytest.mark.parametrize("position", [16, 40, 63])
def test_a_forged_same_prefix_key_reads_as_a_miss_never_the_wrong_answer(tmp_path: Path,
                                                                         position: int) -> None:
    """Only the FULL key proves an entry: an entry.json holding another key that shares the
    folder's 16-character prefix (and more: up to the last digit) is not this call's answer."""
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call()
    key = compute_key(call)
    folder = store.write(call, key, RESPONSE, NOW)
    meta = json.loads((folder / "entry.json").read_text())
    meta["key"] = _forge_key(key, position)  # every other byte (payload, sha256) stays valid
    (folder / "entry.json").write_text(json.dumps(meta))
    with pytest.raises(EntryAbsent, match="shares the 16-character prefix"):
        store.read(call, key, NOW)
    forged = ChatCall(call.scenario_id, 0, "openai", "m1", call.request)
    assert store.read(forged, meta["key"], NOW).response == RESPONSE  # the entry itself is intact


def test_an_entry_moved_under_another_key_folder_is_corrupt_not_an_answer(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    first, second = _call(text="first"), _call(text="second")
    first_folder = store.write(first, compute_key(first), RESPONSE, NOW)
    shutil.move(first_folder, store.path_for(second))  # its full key does not match the folder
    with pytest.raises(CacheCorrupt, match="does not match its folder prefix"):
        store.read(second, compute_key(second), NOW)


def test_expired_entry_fails_and_is_left_untouched(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=365)
    call = _call()
    folder = store.write(call, compute_key(call), RESPONSE, NOW)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(CacheExpired, match="expired on 2027-11-30T12:00:00Z"):
        store.read(call, compute_key(call), NOW + timedelta(days=366))
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


@pytest.mark.parametrize("damage", ["edit_payload", "drop_payload", "garble_entry"])
def test_corrupt_entries_are_reported_not_trusted(tmp_path: Path, damage: str) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call()
    folder = store.write(call, compute_key(call), RESPONSE, NOW)
    if damage == "edit_payload":
        data = (folder / "contents.data").read_bytes().replace(b"answer", b"ANSWER")
        (folder / "contents.data").write_bytes(data)
    elif damage == "drop_payload":
        (folder / "contents.data").unlink()
    else:
        (folder / "entry.json").write_text("{not json")
    with pytest.raises(CacheCorrupt):
        store.read(call, compute_key(call), NOW)


def test_crlf_converted_payload_is_detected(tmp_path: Path) -> None:
    """What a missing ``-text`` attribute would do to a payload on a Windows clone."""
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call()
    folder = store.write(call, compute_key(call), RESPONSE, NOW)
    payload = folder / "contents.data"
    payload.write_bytes(payload.read_bytes().replace(b"\n", b"\r\n"))
    with pytest.raises(CacheCorrupt, match="gitattributes"):
        store.read(call, compute_key(call), NOW)


def test_rewrite_of_the_same_key_replaces_the_entry(tmp_path: Path) -> None:
    store = CacheStore(tmp_path, ttl_days=730)
    call = _call()
    key = compute_key(call)
    store.write(call, key, RESPONSE, NOW)
    store.write(call, key, ChatResponse("second"), NOW)
    assert store.read(call, key, NOW).response.content == "second"
    assert [p.name for p in store.path_for(call).parent.iterdir()] == [key[:16]]


WRITER = textwrap.dedent("""
    import sys
    from datetime import UTC, datetime
    from pathlib import Path
    from harness.cache.store import CacheStore
    from harness.core.entities import ChatCall, ChatResponse
    from harness.requests.key import compute_key

    store = CacheStore(Path(sys.argv[1]), ttl_days=730)
    big = "x" * 200_000
    print("ready", flush=True)
    for i in range(100_000):
        call = ChatCall(f"a/t/s{i % 50}", 0, "p", "m",
                        {"messages": [{"role": "user", "content": str(i)}]})
        store.write(call, compute_key(call), ChatResponse(big + str(i)), datetime.now(UTC))
""")


def test_a_process_killed_mid_write_leaves_entries_complete_or_absent(tmp_path: Path) -> None:
    process = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    time.sleep(0.8)
    process.send_signal(signal.SIGKILL)
    process.wait()
    store = CacheStore(tmp_path, ttl_days=730)
    folders = [p for p in (tmp_path / "cache").rglob("*") if p.is_dir() and p.parent.name == "0"]
    complete = [p for p in folders if not p.name.startswith(".")]
    assert len(complete) > 10, "the writer should have finished some entries before the kill"
    for folder in complete:
        meta = json.loads((folder / "entry.json").read_text())
        call = ChatCall(meta["scenario"], 0, "p", "m", meta["request"])
        assert store.read(call, meta["key"], datetime.now(UTC)).response.content
    # Anything unfinished is only ever under a temporary name that readers ignore.
    assert all(p.name.startswith(".tmp-") for p in folders if p not in complete)
