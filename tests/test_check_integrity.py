"""Integrity guard: every entry of the tree parses, matches its folder and has both files intact."""

from __future__ import annotations

import json

import pytest
from check_support import check, entry_folders, healthy, messages

from conftest import Project


def test_intact_tree_passes(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("integrity")
    assert result.ok and result.summary == "3 of 3 entries intact"


def test_every_corrupt_entry_is_listed_with_its_reason_in_one_run(project: Project,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    farewell, greeting, globex = entry_folders(project)
    (farewell / "entry.json").write_text("{torn", encoding="utf-8")
    (greeting / "contents.data").unlink()
    payload = globex / "contents.data"
    payload.write_bytes(payload.read_bytes().replace(b"\n", b"\r\n"))  # what a text checkout would do
    outcome = project.run("check")
    assert outcome.code == 1
    assert "integrity   FAIL  0 of 3 entries intact" in outcome.out
    rel = {p: p.relative_to(project.root).as_posix() for p in (farewell, greeting, globex)}
    assert f"[integrity] {rel[farewell]}: corrupt entry: entry.json does not parse" in outcome.out
    assert f"[integrity] {rel[greeting]}: corrupt entry: contents.data is missing" in outcome.out
    assert (f"[integrity] {rel[globex]}: corrupt entry: contents.data bytes do not match contents_sha256 "
            "in entry.json (edited by hand, or line endings converted by git") in outcome.out
    assert ("fix: re-record it (python -m harness run --refresh-cache --scripted --scenario "
            "helper/globex/greeting)") in outcome.out


def test_a_full_key_that_does_not_match_its_folder_fails(project: Project,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    folder = entry_folders(project, "helper/acme/greeting")[0]
    moved = folder.rename(folder.with_name("0123456789abcdef"))
    found = messages(check(project), "integrity")
    assert len(found) == 1
    assert f"{moved.relative_to(project.root).as_posix()}: corrupt entry: full key {folder.name}... " \
           "does not match its folder prefix 0123456789abcdef" in found[0]


def test_an_entry_under_the_wrong_scenario_or_iteration_fails(project: Project,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    meta_file = entry_folders(project, "helper/acme/greeting")[0] / "entry.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    meta.update(scenario="helper/acme/farewell", iteration=3)
    meta_file.write_text(json.dumps(meta), encoding="utf-8")
    found = messages(check(project), "integrity")
    assert len(found) == 2
    assert "names scenario 'helper/acme/farewell' but sits under helper/acme/greeting" in found[0]
    assert "names iteration 3 but sits under 0" in found[1]


def test_leftovers_of_killed_writes_and_stray_files_are_listed(project: Project,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-cache/cache/helper/acme/greeting/0/.tmp-0123456789abcdef-a1b2c3/contents.data", "{}")
    project.write("eval-cache/cache/helper/acme/notes.txt", "left here by hand\n")
    found = messages(check(project), "integrity")
    assert len(found) == 2
    assert "greeting/0/.tmp-0123456789abcdef-a1b2c3: leftover temporary write" in found[0]
    assert "fix: python -m harness prune" in found[0]
    assert "helper/acme/notes.txt: a file outside any entry folder" in found[1]
