"""Helpers for the check and prune tests: real git repositories in temp folders, no mocks.

Git is isolated from the machine it runs on (no global or system config, no
global ignore file) so a developer's own ``core.excludesFile`` cannot make a
test pass or fail; the global-ignore test points ``GIT_CONFIG_GLOBAL`` at a
file of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Project
from harness.check import CheckReport, run_checks
from harness.loading.config import load_config
from harness.loading.selecting import Selection

GITATTRIBUTES = "eval-cache/** -text\neval-datasets/** text eol=lf\n"


def isolate_git(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """No system or global git config and no global ignore file for this test."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / ".git" / "no-xdg"))
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` and return stdout (fails the test on a non-zero exit)."""
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def init_repo(project: Project, monkeypatch: pytest.MonkeyPatch, *, attributes: str | None = GITATTRIBUTES,
              commit: bool = True) -> None:
    """``git init`` the project with a local identity, .gitignore for results, and commit everything."""
    isolate_git(monkeypatch, project.root)
    git(project.root, "init", "-q", "-b", "main")
    git(project.root, "config", "user.name", "Check Tests")
    git(project.root, "config", "user.email", "check-tests@example.invalid")
    git(project.root, "config", "commit.gpgsign", "false")
    project.write(".gitignore", "eval-results/\n")
    if attributes is not None:
        project.write(".gitattributes", attributes)
    if commit:
        commit_all(project.root, "seed")


def commit_all(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def two_tenants(project: Project) -> None:
    """One agent, two tenants, three recorded scenarios (no git)."""
    project.agent()
    project.scenario("helper/acme/greeting", {"answer": "yes"})
    project.scenario("helper/acme/farewell", {"answer": "yes"})
    project.scenario("helper/globex/greeting", {"answer": "yes"}, type="negative")
    outcome = project.record()
    assert outcome.code == 0, outcome.out


def healthy(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded project committed to a git repository: every guard passes."""
    two_tenants(project)
    init_repo(project, monkeypatch)


def check(project: Project, *, since: str | None = None, **filters: tuple[str, ...]) -> CheckReport:
    """Run every guard through the library API."""
    return run_checks(load_config(project.root), Selection(**filters), since=since)


def messages(report: CheckReport, guard: str) -> list[str]:
    """The rendered findings of one guard."""
    return [f.render() for f in report.of(guard).findings]


def entry_folders(project: Project, scenario_id: str | None = None) -> list[Path]:
    """Entry folders (optionally of one scenario), sorted."""
    base = project.cache / "cache"
    if scenario_id:
        base = base / scenario_id
    return sorted(p.parent for p in base.rglob("entry.json"))


def plant_entry(project: Project, source: Path, short: str, **meta: Any) -> Path:
    """Copy entry ``source`` into a sibling folder ``short`` with a matching full key and ``meta``."""
    target = source.parent / short
    shutil.copytree(source, target)
    data = json.loads((target / "entry.json").read_text(encoding="utf-8"))
    data["key"] = short + "0" * (64 - len(short))
    data.update(meta)
    (target / "entry.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    return target
