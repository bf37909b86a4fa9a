"""The verifier's verdict is a status, not a sentence: callers never compare message wording.

``run`` treats an absent entry as a miss and an untrusted one as corrupt; that
choice is made on :class:`EntryStatus`. Each case here is a real folder on disk.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Project
from harness.cache.verify import EntryStatus, verify_entry


def _recorded(project: Project) -> Path:
    project.agent()
    project.scenario("helper/acme/greeting", [{"content": "Hello"}], expect=[{"contains": "Hello"}])
    assert project.record().code == 0
    (folder,) = [p.parent for p in (project.cache / "cache").rglob("entry.json")]
    return folder


def _verify(folder: Path) -> EntryStatus:
    return verify_entry(str(folder), "helper/acme/greeting", 0, folder.name).status


def test_a_recorded_entry_is_intact(project: Project) -> None:
    assert _verify(_recorded(project)) is EntryStatus.INTACT


def test_no_entry_json_is_absent_even_beside_a_payload(project: Project) -> None:
    folder = _recorded(project)
    (folder / "entry.json").unlink()
    found = verify_entry(str(folder), "helper/acme/greeting", 0, folder.name)
    assert found.status is EntryStatus.ABSENT and found.absent


def test_an_entry_json_that_is_a_folder_is_untrusted_not_absent(project: Project) -> None:
    folder = _recorded(project)
    (folder / "entry.json").unlink()
    (folder / "entry.json").mkdir()
    found = verify_entry(str(folder), "helper/acme/greeting", 0, folder.name)
    assert found.status is EntryStatus.UNTRUSTED and not found.absent
    assert any("folder" in problem for problem in found.problems)


def test_a_missing_payload_is_untrusted(project: Project) -> None:
    folder = _recorded(project)
    (folder / "contents.data").unlink()
    assert _verify(folder) is EntryStatus.UNTRUSTED


def test_an_empty_folder_is_absent(tmp_path: Path) -> None:
    folder = tmp_path / "0123456789abcdef"
    folder.mkdir()
    assert _verify(folder) is EntryStatus.ABSENT
    shutil.rmtree(folder)
    assert _verify(folder) is EntryStatus.ABSENT  # no folder at all: the same miss
