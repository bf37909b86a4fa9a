"""A replacement killed between its two renames parks the old, paid entry under ``.tmp-old-``:
prune puts it back under its name (it used to sweep it away with the leftovers), and any other
leftover goes to the trash folder, not away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from check_support import entry_folders, healthy

from conftest import Project
from harness.check.prune import parked_entry_target


def _tree(folder: Path) -> dict[str, bytes]:
    return {f.relative_to(folder).as_posix(): f.read_bytes() for f in folder.rglob("*") if f.is_file()}


def test_the_parked_name_maps_back_to_the_entry_folder(tmp_path: Path) -> None:
    assert parked_entry_target(tmp_path / ".tmp-old-0123456789abcdef-a1b2c3") == tmp_path / "0123456789abcdef"
    assert parked_entry_target(tmp_path / ".tmp-0123456789abcdef-a1b2c3") is None
    assert parked_entry_target(tmp_path / "0123456789abcdef") is None


def test_prune_restores_an_entry_parked_by_a_killed_replacement(project: Project,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    entry = sorted(entry_folders(project))[0]
    before = _tree(entry)
    parked = entry.parent / f".tmp-old-{entry.name}-a1b2c3"
    os.rename(entry, parked)  # exactly what a kill after the "moved-aside" step of a replacement leaves
    outcome = project.run("prune", "--force")  # the parked entry's iteration misses: force past the refusal
    assert outcome.code == 0, outcome.out + outcome.err
    assert "restored" in outcome.out
    assert not parked.exists() and _tree(entry) == before
    assert project.run("run").code == 0  # the paid answer replays again


def test_a_parked_folder_beside_a_landed_replacement_goes_to_the_trash(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    entry = sorted(entry_folders(project))[0]
    parked = entry.parent / f".tmp-old-{entry.name}-c0ffee"
    parked.mkdir()
    (parked / "entry.json").write_text("{}", encoding="utf-8")
    outcome = project.run("prune")
    assert outcome.code == 0, outcome.out + outcome.err
    assert not parked.exists() and entry.is_dir()
    trashed = [p for p in (project.results / "pruned").rglob(parked.name)]
    assert len(trashed) == 1 and (trashed[0] / "entry.json").read_text(encoding="utf-8") == "{}"
