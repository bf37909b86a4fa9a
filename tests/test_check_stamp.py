"""Stamp guard: present and current (distinct missing and stale findings), TTLs of at least a year."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from check_support import check, entry_folders, healthy, messages

from conftest import Project
from harness.cache.store import format_time
from harness.cache.verify import parse_time
from harness.check import run_checks
from harness.loading.config import load_config


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_current_stamp_passes(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("stamp")
    assert result.ok, messages(check(project), "stamp")
    assert result.summary == "stamp current; 3 entry TTL(s) checked"


def test_missing_stamp_fails_with_its_own_code(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    (project.cache / ".eval-cache.json").unlink()
    outcome = project.run("check")
    assert outcome.code == 1
    assert "[stamp] eval-cache/.eval-cache.json: eval-cache-missing-stamp" in outcome.out
    assert ("write it (records only what is missing, free with --scripted): "
            "python -m harness run --record-missing") in outcome.out
    assert "--refresh-cache" not in outcome.out  # a missing stamp alone never asks for a paid refresh
    assert "stale" not in outcome.out


def test_stale_stamp_fails_with_a_different_code_and_the_versions(project: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    _edit_json(project.cache / ".eval-cache.json", format_version=0)
    found = messages(check(project), "stamp")
    assert len(found) == 1
    assert "eval-cache-stale-pin: cache format: recorded 0 vs current 1" in found[0]
    assert "missing" not in found[0]


def test_stamp_ttl_under_a_year_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    _edit_json(project.cache / ".eval-cache.json", ttl_days=14)
    found = messages(check(project), "stamp")
    assert found == [found[0]] and "ttl_days: the stamp records ttl_days = 14" in found[0]


def test_entry_recorded_with_a_short_ttl_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    folder = entry_folders(project, "helper/acme/greeting")[0]
    created = json.loads((folder / "entry.json").read_text(encoding="utf-8"))["created"]
    _edit_json(folder / "entry.json", expires=format_time(parse_time(created) + timedelta(days=14)))
    found = messages(check(project), "stamp")
    assert len(found) == 1
    assert "helper/acme/greeting/0/" in found[0] and "TTL of 14 day(s), under 365" in found[0]


def test_expired_entry_fails_and_is_left_in_place(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    before = project.cache_digest()
    later = datetime(2100, 1, 1, tzinfo=UTC)
    report = run_checks(load_config(project.root), now=later)
    found = messages(report, "stamp")
    assert len(found) == 3 and all("expired on" in f for f in found)
    assert project.cache_digest() == before

