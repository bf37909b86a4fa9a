"""Writes that cannot happen are named errors, never tracebacks (issue 19, item 6).

A full disk is a real tmpfs of a few kilobytes mounted over the project's results or cache folder
(the tests need root for ``mount`` and are skipped otherwise); a read-only tree is a tmpfs
remounted read-only; a missing permission is a folder without the write bit (non-root only,
since root writes anyway). Standard output closed (``>&-``) or on ``/dev/full`` is a real
subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import Project

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


def _mount(folder: Path, *options: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(("size=64k", *options)),
                           "tmpfs", str(folder)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")


def _fill(folder: Path) -> None:
    """Leave no free byte on the tmpfs mounted at ``folder``."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.fixture
def mounts() -> Iterator[list[Path]]:
    mounted: list[Path] = []
    yield mounted
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _seeded(project: Project) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/second", {"answer": "yes"})


def _no_traceback(text: str) -> None:
    assert "Traceback" not in text, text


@ROOT_ONLY
def test_a_full_disk_under_the_record_writer_is_a_named_error(
        project: Project, mounts: list[Path]) -> None:
    _seeded(project)
    project.record()
    digest = project.cache_digest()
    _mount(project.results)
    mounts.append(project.results)
    _fill(project.results)
    outcome = project.run("run")
    assert outcome.code == 2, outcome.out + outcome.err
    assert "eval-write-failed: " in outcome.err and "the disk is full (ENOSPC)" in outcome.err
    assert "Fix: free space on that disk" in outcome.err
    assert project.cache_digest() == digest


@ROOT_ONLY
def test_a_full_disk_during_a_refresh_stops_the_run_with_a_named_error(
        project: Project, mounts: list[Path]) -> None:
    _seeded(project)
    _mount(project.cache)
    mounts.append(project.cache)
    _fill(project.cache)
    outcome = project.run("run", "--refresh-cache", "--scripted")
    assert outcome.code == 2, outcome.out + outcome.err
    assert "the cache entry cannot be written: the disk is full (ENOSPC)" in outcome.err
    assert not list(project.cache.rglob("entry.json"))
    assert not [p for p in project.cache.rglob("*") if p.name.startswith(".tmp-")]


@ROOT_ONLY
@pytest.mark.parametrize("tree", ["cache", "results"])
def test_a_read_only_tree_is_a_named_error(project: Project, mounts: list[Path],
                                           tree: str) -> None:
    _seeded(project)
    folder = project.cache if tree == "cache" else project.results
    _mount(folder)
    mounts.append(folder)
    project.record()
    subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
    outcome = project.run("run", "--refresh-cache", "--scripted")
    assert outcome.code == 2, outcome.out + outcome.err
    assert "eval-write-failed: " in outcome.err
    assert "the file system is read-only (EROFS)" in outcome.err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through missing permission bits")
def test_a_results_folder_without_permission_is_a_named_error(project: Project) -> None:
    _seeded(project)
    project.record()
    project.results.chmod(0o500)
    try:
        outcome = project.run("run")
    finally:
        project.results.chmod(0o700)
    assert outcome.code == 2 and "permission denied (EACCES)" in outcome.err


def test_a_report_path_that_is_a_folder_is_refused_before_the_run(project: Project) -> None:
    _seeded(project)
    project.record()
    runs = len(project.records())
    (project.root / "out").mkdir()
    outcome = project.run("run", "--report", f"html:{project.root / 'out'}")
    assert outcome.code == 2
    assert "is a folder; give the path of a file" in outcome.err
    assert len(project.records()) == runs  # refused before the run, not after a green one


@ROOT_ONLY
def test_a_report_path_on_a_read_only_tree_is_refused_before_the_run(
        project: Project, mounts: list[Path]) -> None:
    _seeded(project)
    project.record()
    target = project.root / "reports"
    _mount(target, "ro")
    mounts.append(target)
    outcome = project.run("run", "--report", f"html:{target / 'sub' / 'x.html'}")
    assert outcome.code == 2 and "is not writable (read-only or no permission)" in outcome.err


@pytest.mark.parametrize("redirect", ["> /dev/full", ">&-"])
def test_stdout_full_or_closed_keeps_the_exit_status_without_a_traceback(
        project: Project, redirect: str) -> None:
    _seeded(project)
    project.record()
    for command, status in (("run", 0), ("check", 1), ("docs", 0)):  # check: no git repository
        shell = f"{sys.executable} -m harness --project {project.root} {command} {redirect}"
        done = subprocess.run(["sh", "-c", shell], capture_output=True, text=True, timeout=120)
        _no_traceback(done.stderr)
        assert done.returncode == status, done.stderr
        assert "eval-output-failed: standard output " in done.stderr
