"""The journal's rows stay diskcache JSONDisk rows (issue 20 item 3), with cheaper encoding.

Keys are compressed once and remembered and small values with a small zlib
window: a key must be byte for byte what ``JSONDisk`` writes (rows are found by
it), and a folder written by the stock ``JSONDisk`` (an older harness) must read
the same, both ways, or a ``--resume`` after an upgrade would pay again.
"""

from __future__ import annotations

from pathlib import Path

import diskcache  # type: ignore[import-untyped]

from harness.refresh.jsondisk import FORMAT, FORMAT_KEY, JsonOnlyDisk, open_state

SMALL = {"run": "r1", "response": {"content": "{\"answer\": \"yes\"}", "usage": [12, 5]}}
LARGE = {"run": "r1", "response": {"content": "long answer " * 2000}}


def test_keys_are_the_bytes_jsondisk_writes(tmp_path: Path) -> None:
    ours, stock = JsonOnlyDisk(str(tmp_path / "a")), diskcache.JSONDisk(str(tmp_path / "b"))
    for key in ("answer:" + "0" * 64, "claim:é", FORMAT_KEY, ""):
        assert bytes(ours.put(key)[0]) == bytes(stock.put(key)[0])
        assert bytes(ours.put(key)[0]) == bytes(stock.put(key)[0])  # remembered: same bytes


def test_a_folder_written_by_stock_jsondisk_reads_the_same(tmp_path: Path) -> None:
    with diskcache.Cache(str(tmp_path), disk=diskcache.JSONDisk) as stock:
        stock.set(FORMAT_KEY, FORMAT)
        stock.set("answer:small", SMALL)
        stock.set("answer:large", LARGE)
    ours = open_state(tmp_path, "journal", "nothing")
    try:
        assert ours.get("answer:small") == SMALL and ours.get("answer:large") == LARGE
    finally:
        ours.close()


def test_rows_written_here_read_the_same_with_stock_jsondisk(tmp_path: Path) -> None:
    ours = open_state(tmp_path, "journal", "nothing")
    ours.set("answer:small", SMALL)
    ours.set("answer:large", LARGE)
    ours.close()
    with diskcache.Cache(str(tmp_path), disk=diskcache.JSONDisk) as stock:
        assert stock.get("answer:small") == SMALL and stock.get("answer:large") == LARGE
        assert stock.get(FORMAT_KEY) == FORMAT
