"""The stamp: a missing stamp and a stale pin are different failures; only the format can be stale.

A recording leaves the stamp alone unless its meaning changes, so upgrades and
ordinary re-recordings never rewrite it (no merge conflicts, no paid re-record).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import __version__
from harness.cache.stamp import check_stamp, write_stamp


def test_written_stamp_is_current_and_has_no_recording_time(tmp_path: Path) -> None:
    assert write_stamp(tmp_path, ttl_days=730)
    path = tmp_path / ".eval-cache.json"
    assert json.loads(path.read_text()) == {
        "format_version": 1, "harness_version": __version__, "ttl_days": 730}
    assert check_stamp(tmp_path).ok


def test_a_second_recording_leaves_the_stamp_byte_for_byte(tmp_path: Path) -> None:
    write_stamp(tmp_path, ttl_days=730)
    before = (tmp_path / ".eval-cache.json").read_bytes()
    assert write_stamp(tmp_path, ttl_days=730) is False
    assert (tmp_path / ".eval-cache.json").read_bytes() == before


def test_missing_stamp_has_its_own_code_and_sentence(tmp_path: Path) -> None:
    status = check_stamp(tmp_path)
    assert not status.ok and status.code == "eval-cache-missing-stamp"
    assert "\n" not in str(status) and "never recorded" in str(status)


def test_stale_format_pin(tmp_path: Path) -> None:
    write_stamp(tmp_path, ttl_days=730)
    path = tmp_path / ".eval-cache.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "format_version": 0}))
    status = check_stamp(tmp_path)
    assert status.code == "eval-cache-stale-pin"
    assert str(status).startswith("eval-cache-stale-pin: cache format: recorded 0 vs current 1")
    assert "\n" not in str(status)


def test_another_harness_version_is_not_stale(tmp_path: Path) -> None:
    (tmp_path / ".eval-cache.json").write_text(json.dumps(
        {"format_version": 1, "harness_version": "0.0.1", "ttl_days": 730}))
    assert check_stamp(tmp_path).ok


def test_recording_after_an_upgrade_keeps_the_writer_version(tmp_path: Path) -> None:
    path = tmp_path / ".eval-cache.json"
    path.write_text(json.dumps({"format_version": 1, "harness_version": "0.0.1", "ttl_days": 730},
                               indent=2, sort_keys=True) + "\n")
    before = path.read_bytes()
    assert write_stamp(tmp_path, ttl_days=730) is False
    assert path.read_bytes() == before


def test_a_format_change_or_a_new_ttl_rewrites_the_stamp(tmp_path: Path) -> None:
    path = tmp_path / ".eval-cache.json"
    path.write_text(json.dumps({"format_version": 0, "harness_version": "0.0.1", "ttl_days": 730}))
    assert write_stamp(tmp_path, ttl_days=730)
    assert json.loads(path.read_text()) == {
        "format_version": 1, "harness_version": __version__, "ttl_days": 730}
    assert write_stamp(tmp_path, ttl_days=1000)
    assert json.loads(path.read_text())["ttl_days"] == 1000


def test_an_old_stamp_with_recorded_at_is_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / ".eval-cache.json"
    path.write_text(json.dumps({"format_version": 1, "harness_version": "0.0.1",
                                "recorded_at": "2026-11-30T00:50:17Z", "ttl_days": 730}))
    assert check_stamp(tmp_path).ok  # an old stamp stays valid as it is
    assert write_stamp(tmp_path, ttl_days=730)
    assert json.loads(path.read_text()) == {
        "format_version": 1, "harness_version": "0.0.1", "ttl_days": 730}
    assert write_stamp(tmp_path, ttl_days=730) is False


def test_unreadable_stamp(tmp_path: Path) -> None:
    (tmp_path / ".eval-cache.json").write_text("{")
    assert check_stamp(tmp_path).code == "eval-cache-stamp-invalid"
    (tmp_path / ".eval-cache.json").write_text("[1]")
    assert check_stamp(tmp_path).code == "eval-cache-stamp-invalid"
    (tmp_path / ".eval-cache.json").write_text("{}")
    assert check_stamp(tmp_path).code == "eval-cache-stamp-invalid"
