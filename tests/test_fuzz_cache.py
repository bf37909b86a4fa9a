"""Fuzzing the committed cache: malformed stamps and entries, through run and check.

Each generated stamp or entry is written into a copy of a real example's
recorded cache, then read by everything that reads it in ``run`` and
``check``: the entry verifier of the replay (``CacheStore.read``), a whole
offline replay of the scenario (assertions over whatever decoded), the check
context's survey of the tree and every guard that does not need git. Every
outcome must be a verdict (a named error, a status, a finding), never an
exception; and nothing may change a byte under ``eval-cache/`` (the content
digest after the fuzzer's own write must equal the digest after the readers).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from fuzz_strategies import VALUES, damaged, malformed_document, mutated
from fuzz_support import count, timed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO_ROOT
from harness.api import RunOptions, run_evals
from harness.cache.layout import CONTENTS_FILE, ENTRY_FILE
from harness.cache.stamp import check_stamp, stamp_path
from harness.cache.store import CacheStore, EntryAbsent
from harness.check import budget, integrity, secrets, stamp, unused
from harness.check.context import build_context
from harness.check.entries import inspect_entry
from harness.config import HarnessConfig, load_config
from harness.datasets import Selection
from harness.entities import ChatCall
from harness.errors import HarnessError
from harness.key import compute_key

AGENT = "operator-approval"
TENANT = "inkwell-print"
SCENARIOS = ("proof-question-lookup", "just-send-it")
NOW = datetime(2027, 6, 1, tzinfo=UTC)
FUZZ = settings(max_examples=300, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
STATUSES = {"passed", "failed", "missed", "expired", "corrupt", "error"}
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


def _digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        digest.update(path.relative_to(folder).as_posix().encode())
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> HarnessConfig:
    """Two scenarios of a real example agent with their recorded entries (tool loops included)."""
    root = tmp_path_factory.mktemp("fuzz-cache")
    (root / "pyproject.toml").write_text('[project]\nname = "fuzz"\n', encoding="utf-8")
    source, target = REPO_ROOT / "eval-datasets" / AGENT, root / "eval-datasets" / AGENT
    (target / TENANT).mkdir(parents=True)
    for name in ("agent.yaml", "system.md", "script.yaml"):
        shutil.copy2(source / name, target / name)
    shutil.copy2(source / TENANT / "tenant.yaml", target / TENANT / "tenant.yaml")
    for name in SCENARIOS:
        shutil.copy2(source / TENANT / f"{name}.yaml", target / TENANT / f"{name}.yaml")
        shutil.copytree(REPO_ROOT / "eval-cache" / "cache" / AGENT / TENANT / name,
                        root / "eval-cache" / "cache" / AGENT / TENANT / name)
    shutil.copy2(REPO_ROOT / "eval-cache" / ".eval-cache.json", root / "eval-cache" / ".eval-cache.json")
    config = load_config(root)
    summary = run_evals(config, RunOptions(), clock=lambda: NOW)
    assert summary.exit_code == 0, summary.counts  # the untouched copy replays green
    return config


def _entries(config: HarnessConfig) -> list[Path]:
    return sorted(p.parent for p in (config.cache / "cache").rglob(ENTRY_FILE))


def _read_everything(config: HarnessConfig, scenario_id: str, call: ChatCall | None) -> str:
    """Every reader of run and check over the tree; returns ``error`` when any gave a verdict
    against the damaged input, ``valid`` when all of them accepted it."""
    verdicts: list[bool] = []
    if call is not None:
        try:
            CacheStore(config.cache, ttl_days=config.ttl_days).read(call, compute_key(call), NOW)
            verdicts.append(False)
        except (HarnessError, EntryAbsent) as exc:
            assert str(exc)
            verdicts.append(True)
    summary = run_evals(config, RunOptions(selection=Selection(scenarios=(scenario_id,))),
                        clock=lambda: NOW)
    assert all(r.status in STATUSES for r in summary.results)
    assert all(r.status in {"passed", "failed"} or r.message for r in summary.results)
    verdicts.append(summary.exit_code != 0 or bool(summary.stamp_problem))
    context = build_context(config, Selection(), now=NOW)
    for guard in (stamp.check, budget.check, integrity.check, unused.check, secrets.check):
        result = guard(context)
        for finding in result.findings:
            finding.render().encode("utf-8")
        verdicts.append(not result.ok)
    return "error" if any(verdicts) else "valid"


@st.composite
def damaged_entry(draw: st.DrawFn, meta: dict[str, Any], payload: dict[str, Any]
                  ) -> tuple[str, bytes | None, bytes | None]:
    """``(structure, entry.json bytes, contents.data bytes)`` of one damaged entry."""
    target = draw(st.sampled_from(("meta", "payload", "payload", "structure")))
    if target == "structure":
        return draw(st.sampled_from(STRUCTURE)), None, None
    if target == "meta":
        new_meta = draw(mutated(meta, tuple(meta), META_HOSTILE))
        data = json.dumps(new_meta, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
        return "meta", draw(damaged(data)), None
    new_payload = draw(mutated(payload, tuple(payload), RESPONSE_HOSTILE))
    data = json.dumps(new_payload, ensure_ascii=False, indent=2).encode("utf-8", "surrogatepass")
    data = draw(damaged(data))
    if draw(st.booleans()):  # a consistent hash: the decoder, not the checksum, must refuse
        meta = {**meta, "contents_sha256": hashlib.sha256(data).hexdigest()}
    return "payload", json.dumps(meta, indent=2).encode("utf-8"), data


@FUZZ
@given(index=st.integers(min_value=0, max_value=10**6), data=st.data())
def test_fuzz_malformed_entries_end_in_a_verdict_and_change_nothing(
        recorded: HarnessConfig, index: int, data: st.DataObject) -> None:
    folders = _entries(recorded)
    folder = folders[index % len(folders)]
    backup = folder.with_name(f"backup-{folder.name}")
    shutil.copytree(folder, backup)
    try:
        meta = json.loads((folder / ENTRY_FILE).read_bytes())
        payload = json.loads((folder / CONTENTS_FILE).read_bytes())
        call = ChatCall(meta["scenario"], meta["iteration"], meta["provider"], meta["model"],
                        meta["request"], meta.get("purpose", ""))
        structure, entry_bytes, contents_bytes = data.draw(damaged_entry(meta, payload))
        if structure in STRUCTURE:
            _break_structure(folder, structure)
        else:
            if entry_bytes is not None:
                (folder / ENTRY_FILE).write_bytes(entry_bytes)
            if contents_bytes is not None:
                (folder / CONTENTS_FILE).write_bytes(contents_bytes)
        shutil.move(backup, recorded.root / "backup")  # outside the cache while it is read
        before = _digest(recorded.cache)
        with timed("entry"):
            outcome = _read_everything(recorded, meta["scenario"], call)
            location = folder.relative_to(recorded.cache / "cache")
            record = inspect_entry(folder, location)
            outcome = "error" if record.problems else outcome
        count("entry", outcome)
        assert _digest(recorded.cache) == before
    finally:
        if (recorded.root / "backup").exists():
            shutil.move(recorded.root / "backup", backup)
        shutil.rmtree(folder, ignore_errors=True)
        if folder.exists():
            folder.unlink()
        backup.rename(folder)


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


STAMP = {"format_version": 1, "harness_version": "0.1.0", "recorded_at": "2026-11-30T00:50:17Z",
         "ttl_days": 730}
STAMP_HOSTILE: dict[str, list[Any]] = {
    "format_version": [0, 2, "1", None, 1.0, True, [1]],
    "harness_version": [None, 0, "", "9.9.9", {"v": 1}],
    "ttl_days": [0, 364, -1, "730", None, 10**20, 730.5, True],
    "recorded_at": ["yesterday", None, 5, "2030-01-01T00:00:00"],
}


@settings(FUZZ, max_examples=150)
@given(generated=st.one_of(
    malformed_document(STAMP, tuple(STAMP), STAMP_HOSTILE, formats=("json",)),
    st.tuples(st.just("raw"), st.binary(max_size=64)),
    st.tuples(st.just("value"), VALUES.map(lambda v: json.dumps(v).encode())),
    st.just(("folder", b"")),
))
def test_fuzz_malformed_stamps_end_in_a_verdict_and_change_nothing(
        recorded: HarnessConfig, generated: tuple[str, bytes]) -> None:
    kind, data = generated
    path = stamp_path(recorded.cache)
    original = path.read_bytes()
    path.unlink()
    if kind == "folder":
        path.mkdir()
    else:
        path.write_bytes(data)
    try:
        before = _digest(recorded.cache)
        with timed("stamp"):
            status = check_stamp(recorded.cache)
            assert status.ok or (status.code.startswith("eval-cache-") and status.message)
            outcome = _read_everything(recorded, f"{AGENT}/{TENANT}/{SCENARIOS[0]}", None)
        count("stamp", "valid" if status.ok and outcome == "valid" else "error")
        assert _digest(recorded.cache) == before
    finally:
        if path.is_dir():
            path.rmdir()
        path.write_bytes(original)
