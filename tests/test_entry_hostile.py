"""Hostile entries: every one is a named reason in ``run`` and the SAME reason in ``check``.

Run and check share one verifier (:mod:`harness.cache.verify`), so each case
asserts the run's message and the integrity guard's finding carry the same
text; before, each of these ended in a traceback of one half or the other.
Symbolic links follow the one rule of :mod:`harness.documents.links`.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from check_support import check, entry_folders, messages

from conftest import Project


def _recorded(project: Project) -> Path:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    assert project.record().code == 0
    return entry_folders(project)[0]


def _edit_meta(field: str, value: object) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        meta = json.loads((folder / "entry.json").read_text())
        meta[field] = value
        (folder / "entry.json").write_text(json.dumps(meta))
    return damage


def _folder_instead_of(name: str) -> Callable[[Path], None]:
    def damage(folder: Path) -> None:
        (folder / name).unlink()
        (folder / name).mkdir()
        (folder / name / "x").write_text("x")
    return damage


CASES = {
    "key is a number": (_edit_meta("key", 12345), "entry.json has no valid 64-hex 'key' (got '12345')"),
    "key is null": (_edit_meta("key", None), "entry.json has no valid 64-hex 'key' (got 'None')"),
    "expires without a zone": (_edit_meta("expires", "2099-01-01T00:00:00"),
                               "has no time zone (write it with Z"),
    "created is a number": (_edit_meta("created", 5), "entry.json has no readable created/expires"),
    "contents.data is a folder": (_folder_instead_of("contents.data"),
                                  "contents.data is a folder, not a file"),
    "entry.json is a folder": (_folder_instead_of("entry.json"), "entry.json is a folder, not a file"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_entry_is_the_same_named_reason_in_run_and_check(project: Project, case: str) -> None:
    damage, reason = CASES[case]
    folder = _recorded(project)
    damage(folder)
    before = project.cache_digest()
    outcome = project.run("run")
    assert outcome.code == 1, outcome.out + outcome.err
    assert "Traceback" not in outcome.out + outcome.err
    assert "[corrupt] helper/acme/greeting" in outcome.out and reason in outcome.out, outcome.out
    assert "Re-record: python -m harness run --refresh-cache --scripted --scenario helper/acme/greeting" \
        in outcome.out
    found = messages(check(project), "integrity")
    assert any(reason in message for message in found), found
    assert project.cache_digest() == before  # nothing was touched by either


def _link_entry_folder(project: Project, folder: Path) -> Path:
    """Move the scenario's folder out of the tree and link it back in."""
    scenario = project.cache / "cache/helper/acme/greeting"
    outside = project.root / "elsewhere"
    shutil.move(scenario, outside)
    scenario.symlink_to(outside, target_is_directory=True)
    return scenario


def _link_payload(project: Project, folder: Path) -> Path:
    payload = folder / "contents.data"
    outside = project.root / "payload.data"
    shutil.move(payload, outside)
    payload.symlink_to(outside)
    return payload


@pytest.mark.parametrize("link", [_link_entry_folder, _link_payload])
def test_a_committed_symlink_in_the_cache_is_refused_by_run_and_check(
        project: Project, link: Callable[[Project, Path], Path]) -> None:
    """Both pass on the machine that made the link and break in a fresh clone: refused, named."""
    folder = _recorded(project)
    linked = link(project, folder)
    shown = linked.relative_to(project.root).as_posix()
    for jobs in ((), ("--jobs", "2")):  # with jobs, a helper walks the cache during the load
        outcome = project.run("run", *jobs)
        assert outcome.code == 2, outcome.out + outcome.err
        assert "eval-symlink: 1 symbolic link(s) found" in outcome.err and shown in outcome.err
        assert "is a symbolic link; links are not allowed under eval-cache/" in outcome.err
    report = check(project)
    assert not report.of("integrity").ok
    named = [m for m in messages(report, "integrity") if "symbolic link" in m
             and (shown in m or f"{linked.parent.relative_to(project.root).as_posix()}: corrupt entry: "
                                f"{linked.name} is a symbolic link" in m)]
    assert named, messages(report, "integrity")
