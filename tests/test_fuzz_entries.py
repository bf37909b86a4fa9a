"""Fuzzing the committed cache entries, through everything run and check read.

Each generated entry is a damaged copy of a recorded one (either file
mutated or its text damaged, with or without a matching ``contents_sha256``
so the decoder is reached, not only the checksum; or its structure broken:
a file replaced by a folder, missing, an extra file). Every reader must give
a verdict (a named error, a non-passing status with a message, a finding),
never an exception, and nothing may change a byte under ``eval-cache/``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fuzz_project import FUZZ, digest
from fuzz_readers import read_everything, recorded_project
from fuzz_strategies import damaged, mutated
from fuzz_support import count, timed
from hypothesis import given
from hypothesis import strategies as st

from harness.cache.layout import CONTENTS_FILE, ENTRY_FILE
from harness.check.entries import inspect_entry
from harness.core.entities import ChatCall
from harness.loading.config import HarnessConfig

META_HOSTILE: dict[str, list[Any]] = {
    "key": [12345, None, "", "0" * 64, "g" * 64, ["a"], {"k": 1}],
    "expires": ["2030-01-01T00:00:00", "2030-01-01", "tomorrow", 0, None, "9999-12-31T23:59:59Z",
                "2020-01-01T00:00:00Z", "2030-01-01T00:00:00+25:00", "+275760-09-13T00:00:00Z"],
    "created": ["2026-01-01T00:00:00", "", 1.5, [], "2026-13-45T00:00:00Z"],
    "contents_sha256": [None, 0, "", "x" * 64, {"a": 1}],
    "scenario": ["../../etc", 7, "operator-approval/inkwell-print/other", None],
    "iteration": ["0", -1, 1.5, None, 10**20, True],
    "format_version": [0, 2, "1", None],
    "request": [None, [], "text", {"messages": "x"}],
}
RESPONSE_HOSTILE: dict[str, list[Any]] = {
    "content": [None, 3, ["a"], {"text": "x"}, "", "x" * 5000],
    "tool_calls": [None, {}, [None], [{"name": None}], [{"name": "file_draft", "arguments": [1, 2]}],
                   [{"name": "lookup_baseline", "arguments": {"counterparty": None}}], [{}], "x"],
    "usage": [None, [], {"input_tokens": "many"}, {"output_tokens": 10**30}, {"input_tokens": -1}],
    "finish_reason": [None, 0, "", "tool_calls", "length"],
    "model": [None, 5, {"id": 1}],
}
STRUCTURE = ("entry.json is a folder", "contents.data is a folder", "no entry.json", "no contents.data",
             "an extra file", "an empty entry.json")


def _entries(config: HarnessConfig) -> list[Path]:
    return sorted(p.parent for p in (config.cache / "cache").rglob(ENTRY_FILE))


@st.composite
def damaged_entry(draw: st.DrawFn, meta: dict[str, Any], payload: dict[str, Any]
                  ) -> tuple[str, bytes | None, bytes | None]:
    """``(structure, entry.json bytes, contents.data bytes)`` of one damaged entry."""
    target = draw(st.sampled_from(("meta", "payload", "payload", "structure")))
    if target == "structure":
        return draw(st.sampled_from(STRUCTURE)), None, None
    if target == "meta":
        new_meta = draw(mutated(meta, tuple(meta), META_HOSTILE, depth=2))  # the request: whole
        data = json.dumps(new_meta, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
        return "meta", draw(damaged(data)), None
    new_payload = draw(mutated(payload, tuple(payload), RESPONSE_HOSTILE))
    data = json.dumps(new_payload, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
    data = draw(damaged(data))
    if draw(st.booleans()):  # a consistent hash: the decoder, not the checksum, must refuse
        meta = {**meta, "contents_sha256": hashlib.sha256(data).hexdigest()}
    return "payload", json.dumps(meta, indent=2).encode("utf-8"), data


@dataclass(frozen=True)
class Recorded:
    """The fuzz project and the bytes of every entry as recorded (restored after each input)."""

    config: HarnessConfig
    entries: tuple[tuple[Path, bytes, bytes], ...]


@pytest.fixture(scope="module")
def entries(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    config = recorded_project(tmp_path_factory, "fuzz-entries")
    return Recorded(config, tuple((folder, (folder / ENTRY_FILE).read_bytes(),
                                   (folder / CONTENTS_FILE).read_bytes())
                                  for folder in _entries(config)))


def _restore(folder: Path, entry_bytes: bytes, contents_bytes: bytes) -> None:
    shutil.rmtree(folder)
    folder.mkdir()
    (folder / ENTRY_FILE).write_bytes(entry_bytes)
    (folder / CONTENTS_FILE).write_bytes(contents_bytes)


@FUZZ
@given(data=st.data())
def test_fuzz_malformed_entries_end_in_a_verdict_and_change_nothing(
        entries: Recorded, data: st.DataObject) -> None:
    config = entries.config
    folder, entry_bytes, contents_bytes = data.draw(st.sampled_from(entries.entries))
    meta, payload = json.loads(entry_bytes), json.loads(contents_bytes)
    call = ChatCall(meta["scenario"], meta["iteration"], meta["provider"], meta["model"],
                    meta["request"], meta.get("purpose", ""))
    structure, new_entry, new_contents = data.draw(damaged_entry(meta, payload))
    try:
        if structure in STRUCTURE:
            _break_structure(folder, structure)
        else:
            if new_entry is not None:
                (folder / ENTRY_FILE).write_bytes(new_entry)
            if new_contents is not None:
                (folder / CONTENTS_FILE).write_bytes(new_contents)
        before = digest(config.cache)
        with timed("entry"):
            outcome = read_everything(config, meta["scenario"], call)
            record = inspect_entry(folder, folder.relative_to(config.cache / "cache"))
            outcome = "error" if record.problems else outcome
        count("entry", outcome)
        assert digest(config.cache) == before
    finally:
        _restore(folder, entry_bytes, contents_bytes)


def _break_structure(folder: Path, structure: str) -> None:
    if structure == "entry.json is a folder":
        (folder / ENTRY_FILE).unlink()
        (folder / ENTRY_FILE).mkdir()
    elif structure == "contents.data is a folder":
        (folder / CONTENTS_FILE).unlink()
        (folder / CONTENTS_FILE / "inner").mkdir(parents=True)
    elif structure == "no entry.json":
        (folder / ENTRY_FILE).unlink()
    elif structure == "no contents.data":
        (folder / CONTENTS_FILE).unlink()
    elif structure == "an extra file":
        (folder / "notes.txt").write_text("hello\n", encoding="utf-8")
    else:
        (folder / ENTRY_FILE).write_bytes(b"")


