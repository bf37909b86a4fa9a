"""Fuzzing the stamp ``eval-cache/.eval-cache.json``, through everything run and check read.

Mutated stamps, random bytes, any JSON value and a folder in its place: the
stamp check must give its status (current, or a code with a message), the
replay and the guards a verdict, never an exception, and nothing may change
a byte under ``eval-cache/``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzz_project import AGENT, FUZZ, SCENARIOS, TENANT, digest
from fuzz_readers import read_everything, recorded_project
from fuzz_strategies import VALUES, malformed_document
from fuzz_support import count, timed
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.cache.stamp import check_stamp, stamp_path
from harness.loading.config import HarnessConfig


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> HarnessConfig:
    return recorded_project(tmp_path_factory, "fuzz-stamps")


STAMP = {"format_version": 1, "harness_version": "0.1.0", "recorded_at": "2026-11-30T00:50:17Z",
         "ttl_days": 730}
STAMP_HOSTILE: dict[str, list[Any]] = {
    "format_version": [0, 2, "1", None, 1.0, True, [1]],
    "harness_version": [None, 0, "", "9.9.9", {"v": 1}],
    "ttl_days": [0, 364, -1, "730", None, 10**20, 730.5, True],
    "recorded_at": ["yesterday", None, 5, "2030-01-01T00:00:00"],
}


@settings(FUZZ, max_examples=120)
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
        before = digest(recorded.cache)
        with timed("stamp"):
            status = check_stamp(recorded.cache)
            assert status.ok or (status.code.startswith("eval-cache-") and status.message)
            outcome = read_everything(recorded, f"{AGENT}/{TENANT}/{SCENARIOS[0]}", None)
        count("stamp", "valid" if status.ok and outcome == "valid" else "error")
        assert digest(recorded.cache) == before
    finally:
        if path.is_dir():
            path.rmdir()
        path.write_bytes(original)
