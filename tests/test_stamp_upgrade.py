"""An upgraded harness replays the committed cache green: only the cache format can invalidate it.

The harness package is copied next to the committed examples and its
``__version__`` bumped, then the real CLI runs in a subprocess that imports
the copy (asserted, so the test cannot pass by importing the original).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from check_support import commit_all, init_repo

from conftest import REPO_ROOT, Project

pytestmark = pytest.mark.slow(seconds=50)

BUMPED = "99.1.0"


def _bumped_harness(site: Path) -> Path:
    """A copy of the harness package whose ``__version__`` is :data:`BUMPED`."""
    package = site / "harness"
    shutil.copytree(REPO_ROOT / "harness", package, ignore=shutil.ignore_patterns("__pycache__"))
    init = package / "__init__.py"
    text, count = re.subn(r"(?m)^__version__\s*=.*$", f'__version__ = "{BUMPED}"',
                          init.read_text(encoding="utf-8"))
    assert count == 1, "harness/__init__.py no longer assigns __version__ on one line"
    init.write_text(text, encoding="utf-8")
    return package


def test_a_bumped_harness_version_replays_the_committed_cache_green(
        project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    site = tmp_path_factory.mktemp("site")
    package = _bumped_harness(site)
    shutil.copy(REPO_ROOT / "pyproject.toml", project.root / "pyproject.toml")
    shutil.copytree(REPO_ROOT / "eval-datasets", project.datasets)
    shutil.copytree(REPO_ROOT / "eval-cache", project.cache)
    init_repo(project, monkeypatch)
    env = {**os.environ, "PYTHONPATH": str(site)}

    def harness(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harness", *args], cwd=project.root, env=env,
                              capture_output=True, text=True, timeout=300, check=False)

    probe = subprocess.run([sys.executable, "-c", "import harness; print(harness.__version__, "
                            "harness.__file__)"], cwd=project.root, env=env,
                           capture_output=True, text=True, check=True)
    version, imported = probe.stdout.split()
    assert version == BUMPED and Path(imported).parent == package

    stamp = json.loads((project.cache / ".eval-cache.json").read_text(encoding="utf-8"))
    assert stamp["harness_version"] != BUMPED
    before = project.cache_digest()
    replay = harness("run", "-q")
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert "stale" not in replay.stdout + replay.stderr
    checked = harness("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert project.cache_digest() == before

    # Recording with the new version stamps the entries it writes, and only them.
    scenario = "ask-user-question/fitness-app/" + sorted(
        p.stem for p in (project.datasets / "ask-user-question/fitness-app").glob("*.yaml")
        if p.name != "tenant.yaml")[0]
    recorded = harness("run", "--refresh-cache", "--scripted", "--scenario", scenario)
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    entries = list((project.cache / "cache" / scenario).rglob("entry.json"))
    assert entries and all(json.loads(e.read_text(encoding="utf-8"))["harness_version"] == BUMPED
                           for e in entries)
    assert json.loads((project.cache / ".eval-cache.json").read_text(encoding="utf-8")) == stamp
    commit_all(project.root, "re-recorded with the upgraded harness")
    for command in (("run", "-q"), ("check",)):
        done = harness(*command)
        assert done.returncode == 0, done.stdout + done.stderr
