"""``python -m harness prune [--dry-run]``: removes exactly the unused entries, and nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_support import check, entry_folders, healthy, two_tenants

from conftest import Project


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_dry_run_lists_the_orphans_and_deletes_nothing(project: Project) -> None:
    two_tenants(project)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    before = project.cache_digest()
    outcome = project.run("prune", "--dry-run")
    assert outcome.code == 0
    assert project.cache_digest() == before
    assert "would remove 1 unused entry and 0 temporary leftover(s)" in outcome.out
    assert "eval-cache/cache/helper/acme/farewell/0/" in outcome.out
    assert "nothing was deleted" in outcome.out


def test_prune_after_a_prompt_change_keeps_exactly_the_current_tree(project: Project,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-datasets/helper/system.md", "A reworded prompt for {{tenant}}. Answer in JSON.\n")
    old = entry_folders(project)
    project.record()
    (project.datasets / "helper/globex/greeting.yaml").unlink()  # its old and new entries become orphans
    leftover = project.write("eval-cache/cache/helper/acme/greeting/0/.tmp-0123456789abcdef-a1b2c3/x", "")
    stamp_before = (project.cache / ".eval-cache.json").read_bytes()
    kept = {f for f in _files(project.cache) if not any(f"/{o.name}/" in f"/{f}" for o in old)
            and "/globex/" not in f and ".tmp-" not in f}
    outcome = project.run("prune")
    assert outcome.code == 0
    assert "removed 4 unused entries and 1 temporary leftover(s)" in outcome.out
    assert _files(project.cache) == kept
    assert not (project.cache / "cache/helper/globex").exists()  # emptied parents go too
    assert (project.cache / "cache").is_dir() and not leftover.parent.exists()
    assert (project.cache / ".eval-cache.json").read_bytes() == stamp_before
    assert project.run("run").code == 0  # the remaining tree still replays green offline
    assert check(project).of("unused").ok


def test_prune_never_deletes_corrupt_entries(project: Project) -> None:
    two_tenants(project)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    torn = entry_folders(project, "helper/acme/farewell")[0]
    (torn / "entry.json").write_text("{torn", encoding="utf-8")
    outcome = project.run("prune")
    assert outcome.code == 0 and "removed 0 unused entries" in outcome.out
    assert torn.is_dir()


def test_prune_refuses_when_the_datasets_do_not_load(project: Project) -> None:
    two_tenants(project)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    project.write("eval-datasets/helper/acme/broken.yaml", "type: positive\n")
    before = project.cache_digest()
    outcome = project.run("prune")
    assert outcome.code == 2
    assert "eval-dataset-invalid" in outcome.err
    assert project.cache_digest() == before


def test_a_filtered_prune_only_touches_selected_scenarios(project: Project) -> None:
    two_tenants(project)
    (project.datasets / "helper/acme/farewell.yaml").unlink()
    (project.datasets / "helper/globex/greeting.yaml").unlink()
    acme_temp = project.write("eval-cache/cache/helper/acme/greeting/0/.tmp-0123456789abcdef-a1b2c3/x", "")
    stamp_temp = project.write("eval-cache/.eval-cache.json.tmp-4242", "{}")
    outcome = project.run("prune", "--tenant", "globex")
    assert "removed 1 unused entry and 0 temporary leftover(s)" in outcome.out
    assert not (project.cache / "cache/helper/globex").exists()
    assert (project.cache / "cache/helper/acme/farewell").is_dir()
    assert acme_temp.exists() and stamp_temp.exists()
    outcome = project.run("prune")
    assert "removed 1 unused entry and 2 temporary leftover(s)" in outcome.out
    assert not acme_temp.parent.exists() and not stamp_temp.exists()
    assert (project.cache / ".eval-cache.json").is_file()
