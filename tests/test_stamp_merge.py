"""Two branches re-record different scenarios: ``git merge`` is clean, the merge replays green.

Real git, the real CLI in subprocesses, each branch recording on a different
day (``HARNESS_CLOCK``), as two pull requests would. Before the stamp lost its
``recorded_at``, every recording rewrote ``eval-cache/.eval-cache.json`` and
this merge conflicted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from check_support import commit_all, git, init_repo

from conftest import Project

STAMP = "eval-cache/.eval-cache.json"


def _harness(root: Path, *args: str, clock: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if clock is not None:
        env["HARNESS_CLOCK"] = clock
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _changed(root: Path, base: str, branch: str) -> list[str]:
    return git(root, "diff", "--name-only", base, branch).split()


def test_two_branches_rerecording_different_scenarios_merge_cleanly(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    root = project.root
    project.agent("helper")
    project.agent("scribe")
    for scenario_id in ("helper/acme/greeting", "helper/globex/greeting",
                        "scribe/acme/note", "scribe/globex/note"):
        project.scenario(scenario_id, {"answer": "yes"})
    init_repo(project, monkeypatch, commit=False)
    _ok(_harness(root, "run", "--refresh-cache", "--scripted", clock="2027-01-10T08:00:00Z"))
    commit_all(root, "seed the cache")
    base = git(root, "rev-parse", "HEAD").strip()

    # Branch prompt-change: helper's system prompt changes, so every helper key changes.
    git(root, "switch", "-q", "-c", "prompt-change")
    project.write("eval-datasets/helper/system.md",
                  "You are the {{tenant}} helper. Answer in JSON with a field answer. Be brief.\n")
    _ok(_harness(root, "run", "--refresh-cache", "--scripted", "--agent", "helper",
                 clock="2027-02-01T09:30:00Z"))
    _ok(_harness(root, "prune"))
    commit_all(root, "helper: shorter answers")

    # Branch answer-change: one scribe scenario gets a new recorded answer (same key, new entry).
    git(root, "switch", "-q", "-c", "answer-change", base)
    project.scenario("scribe/acme/note", {"answer": "noted"},
                     expect=[{"json_path": {"path": "answer", "equals": "noted"}}])
    _ok(_harness(root, "run", "--refresh-cache", "--scripted", "--scenario", "scribe/acme/note",
                 clock="2027-03-15T17:45:00Z"))
    commit_all(root, "scribe: acme notes say noted")

    prompt_files = _changed(root, base, "prompt-change")
    answer_files = _changed(root, base, "answer-change")
    assert any(f.startswith("eval-cache/cache/helper/") for f in prompt_files), prompt_files
    assert any(f.startswith("eval-cache/cache/scribe/acme/note/") for f in answer_files), answer_files
    assert STAMP not in prompt_files and STAMP not in answer_files
    assert not set(prompt_files) & set(answer_files)  # disjoint: nothing for git to reconcile

    git(root, "switch", "-q", "main")
    git(root, "merge", "-q", "--no-edit", "prompt-change")
    merged = subprocess.run(["git", "merge", "--no-edit", "answer-change"], cwd=root,
                            capture_output=True, text=True, check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert git(root, "status", "--porcelain") == ""

    before = project.cache_digest()
    out = _ok(_harness(root, "run"))
    assert "4 passed" in out, out
    _ok(_harness(root, "check"))
    assert project.cache_digest() == before
