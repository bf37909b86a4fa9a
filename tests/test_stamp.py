"""The stamp: a missing stamp and a stale pin are different failures with different words."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from harness import __version__
from harness.cache.stamp import check_stamp, write_stamp

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def test_written_stamp_is_current(tmp_path: Path) -> None:
    path = write_stamp(tmp_path, ttl_days=730, now=NOW)
    assert json.loads(path.read_text()) == {
        "format_version": 1, "harness_version": __version__,
        "recorded_at": "2026-11-30T00:00:00Z", "ttl_days": 730}
    assert check_stamp(tmp_path).ok


def test_missing_stamp_has_its_own_code_and_sentence(tmp_path: Path) -> None:
    status = check_stamp(tmp_path)
    assert not status.ok and status.code == "eval-cache-missing-stamp"
    assert "\n" not in str(status) and "never recorded" in str(status)


def test_stale_format_pin(tmp_path: Path) -> None:
    path = write_stamp(tmp_path, ttl_days=730, now=NOW)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "format_version": 0}))
    status = check_stamp(tmp_path)
    assert status.code == "eval-cache-stale-pin"
    assert str(status).startswith("eval-cache-stale-pin: cache format: recorded 0 vs current 1")
    assert "\n" not in str(status)


def test_stale_harness_pin(tmp_path: Path) -> None:
    path = write_stamp(tmp_path, ttl_days=730, now=NOW)
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "harness_version": "0.0.1"}))
    status = check_stamp(tmp_path)
    assert str(status).startswith(
        f"eval-cache-stale-pin: harness: recorded 0.0.1 vs current {__version__}")


def test_unreadable_stamp(tmp_path: Path) -> None:
    (tmp_path / ".eval-cache.json").write_text("{")
    assert check_stamp(tmp_path).code == "eval-cache-stamp-invalid"
