"""The cache's symlink walk started before the load: the same links, its errors kept, no race.

``run`` starts :class:`~harness.documents.links.SymlinkWalk` on the cache root
before it parses the datasets and reads it before the first call; these tests
hold it to exactly what the walk in the caller's thread finds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.core.errors import SymlinkError
from harness.documents import links
from harness.documents.links import SymlinkWalk, refuse_symlinks, symlinks_under


def _tree(root: Path) -> list[Path]:
    """A small cache-shaped tree with links at three depths; returns the links."""
    made = []
    for scenario in ("a/t/one", "a/t/two", "b/u/three"):
        folder = root / scenario / "0" / "0123456789abcdef"
        folder.mkdir(parents=True)
        (folder / "entry.json").write_text("{}")
    outside = root.parent / "outside"
    outside.mkdir()
    for link in (root / "a" / "t" / "linked", root / "b" / "u" / "three" / "0" / "x",
                 root / "a" / "t" / "one" / "0" / "0123456789abcdef" / "contents.data"):
        link.symlink_to(outside)
        made.append(link)
    return sorted(made)


def test_the_walk_in_its_thread_finds_what_the_caller_would(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    made = _tree(root)
    walk = SymlinkWalk(root)
    assert walk.links() == symlinks_under(root) == made
    assert walk.links() == made  # read twice: the same answer, the thread joined once


def test_refuse_names_every_link_the_walk_found(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    made = _tree(root)
    with pytest.raises(SymlinkError) as raised:
        refuse_symlinks(root, "eval-cache", walk=SymlinkWalk(root))
    assert f"{len(made)} symbolic link(s) found" in str(raised.value)
    assert all(str(link) in str(raised.value) for link in made)


def test_a_walk_of_another_root_is_not_used(tmp_path: Path) -> None:
    """A walk started on a clean folder never vouches for a cache that holds links."""
    clean = tmp_path / "clean"
    clean.mkdir()
    root = tmp_path / "cache"
    _tree(root)
    with pytest.raises(SymlinkError):
        refuse_symlinks(root, "eval-cache", walk=SymlinkWalk(clean))


def test_an_error_of_the_walk_reaches_the_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing that fails (an unreadable folder) fails the run that reads the walk, not a thread."""
    def failing(root: Path) -> list[Path]:
        raise PermissionError(13, "Permission denied", os.fspath(root))

    monkeypatch.setattr(links, "symlinks_under", failing)
    walk = SymlinkWalk(tmp_path)
    with pytest.raises(PermissionError):
        walk.links()


def test_no_links_no_refusal(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    (root / "a" / "t" / "one" / "0").mkdir(parents=True)
    refuse_symlinks(root, "eval-cache", walk=SymlinkWalk(root))
    assert SymlinkWalk(tmp_path / "absent").links() == []
