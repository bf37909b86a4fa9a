"""Git addressability guard with real git: tracked or addable, never ignored by any ignore source."""

from __future__ import annotations

from pathlib import Path

import pytest
from check_support import check, commit_all, healthy, init_repo, isolate_git, messages, two_tenants

from conftest import Project


def test_committed_tree_passes(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    result = check(project).of("git")
    assert result.ok, result.findings
    assert ", 0 untracked (addable), 0 ignored" in result.summary


def test_untracked_but_addable_files_pass(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.scenario("helper/acme/new-one", {"answer": "yes"})
    project.record("--scenario", "helper/acme/new-one")
    result = check(project).of("git")
    assert result.ok, result.findings
    assert "3 untracked (addable)" in result.summary  # scenario file, entry.json, contents.data


def test_a_gitignore_rule_fails_naming_file_and_rule(project: Project,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    two_tenants(project)
    init_repo(project, monkeypatch, commit=False)
    project.write(".gitignore", "eval-results/\n*.data\n")
    commit_all(project.root)
    found = messages(check(project), "git")
    assert len(found) == 3
    assert all("contents.data: ignored by git (.gitignore:2: *.data)" in f for f in found)
    assert "tracked" not in found[0]


def test_a_tracked_file_that_a_new_rule_ignores_still_fails(project: Project,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write("eval-cache/.gitignore", "*.json\n")
    found = messages(check(project), "git")
    assert found and all("(eval-cache/.gitignore:1: *.json); it is tracked, but its next re-record" in f
                         for f in found)


def test_a_negated_rule_is_not_an_ignore(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    project.write(".gitignore", "eval-results/\n*.data\n!eval-cache/**/*.data\n")
    assert check(project).of("git").ok


def test_info_exclude_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    healthy(project, monkeypatch)
    (project.root / ".git" / "info").mkdir(exist_ok=True)
    (project.root / ".git" / "info" / "exclude").write_text("eval-cache/cache/helper/globex/\n")
    found = messages(check(project), "git")
    assert len(found) == 2
    assert all("(.git/info/exclude:1: eval-cache/cache/helper/globex/)" in f for f in found)


def test_global_excludes_file_fails(project: Project, monkeypatch: pytest.MonkeyPatch,
                                    tmp_path_factory: pytest.TempPathFactory) -> None:
    healthy(project, monkeypatch)
    home = tmp_path_factory.mktemp("git-home")
    ignore = home / "global-ignore"
    ignore.write_text("# a developer's global ignore\nentry.json\n")
    config = home / "gitconfig"
    config.write_text(f"[core]\n\texcludesFile = {ignore.as_posix()}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    found = messages(check(project), "git")
    assert len(found) == 3
    assert all(f"{ignore.as_posix()}:2: entry.json" in f for f in found)


def test_not_a_git_repository_fails(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git(monkeypatch, project.root)
    two_tenants(project)
    found = messages(check(project), "git")
    assert found == ["[git] .: not a git repository; the git guards cannot observe the tree, and a guard "
                     "that cannot observe must not pass\n    fix: run the check inside the git checkout "
                     "that commits the cache (git init, or clone)"]


def test_refuses_an_empty_set(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    init_repo(project, monkeypatch)
    found = messages(check(project), "git")
    assert len(found) == 1 and "eval-cache: holds no file" in found[0] and "empty set" in found[0]


def test_python_bytecode_of_an_agent_module_is_no_finding(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run imports an agent's module from the datasets folder and Python writes its bytecode
    beside it (``__pycache__/*.pyc``, which every .gitignore ignores): no guard lists it. The
    examples' SDK agents failed ``check`` this way after a plain ``run`` (no
    PYTHONDONTWRITEBYTECODE)."""
    import importlib.util
    import py_compile

    healthy(project, monkeypatch)
    module = project.write("eval-datasets/helper/tools.py", "def lookup(order):\n    return order\n")
    project.write(".gitignore", "eval-results/\n__pycache__/\n")
    commit_all(project.root)
    cached = Path(importlib.util.cache_from_source(str(module)))
    py_compile.compile(str(module), cfile=str(cached), doraise=True)  # what an import writes
    stray = cached.parent / "notes.txt"  # anything else there is listed as before
    report = check(project)
    assert report.of("git").ok, report.of("git").findings
    assert " 0 ignored" in report.of("git").summary
    assert report.ok, [r.findings for r in report.results if not r.ok]
    stray.write_text("not bytecode\n", encoding="utf-8")
    found = messages(check(project), "git")
    assert len(found) == 1 and "__pycache__/notes.txt: ignored by git" in found[0], found
